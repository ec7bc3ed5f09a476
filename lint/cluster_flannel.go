package lint

import (
	"fmt"
	"strconv"

	"github.com/layercheck/layercheck/clusterstate"
)

// flannelTask is where kubespray renders and applies kube-flannel-cfg.
const flannelTask = `roles/network_plugin/flannel ("Flannel | Create Flannel manifests" renders templates/cni-flannel.yml.j2, "Flannel | Start Resources" applies it)`

// flannelVXLANPort is the port flannel's vxlan backend uses for Port 0
// (the kernel's default).
const flannelVXLANPort = "8472"

// flannelConf compares flannel's settings with kube-flannel-cfg's
// net-conf.json on the hosts whose kube_network_plugin is flannel.
func (c *checkCtx) flannelConf(st *clusterstate.State, compareOn func([]string, string, liveField, func(string, string) bool, Severity, string, func(string) string)) {
	nc := st.Flannel
	if nc == nil {
		return
	}
	hosts := c.hostsWith("kube_network_plugin", "flannel")
	if len(hosts) == 0 {
		return
	}
	equal := func(a, b string) bool { return a == b }
	field := clusterstate.FlannelConfigMap + " Backend."
	restart := func(what string) string {
		return fmt.Sprintf("kubespray re-renders kube-system/kube-flannel-cfg from the inventory and applies it (%s), but flannel reads net-conf.json only at start: the running flannel pods keep the cluster's %s until they restart, node by node when the DaemonSet rolls (a new flannel_image_tag, as in an upgrade) or at a node's reboot, and nodes on different %s cannot reach each other's pods.", flannelTask, what, what)
	}
	onPurpose := func(set, device string) string {
		return set + " (the running value); to change it on purpose: run cluster.yml --tags network with the new value, then restart every flannel pod at once (kubectl -n kube-system delete pod -l app=flannel) in a window where cross-node pod traffic stops" + device
	}
	oldDevice := ""
	if nc.Backend.Type == "vxlan" {
		oldDevice = fmt.Sprintf(", and delete the old vxlan device on each node (ip link del flannel.%d, as roles/network_plugin/flannel/tasks/reset.yml does for flannel.1)", deref(nc.Backend.VNI, 1))
	}
	compareOn(hosts, "flannel_backend_type", liveField{nc.Backend.Type, field + "Type"}, equal, SeverityError, restart("backend"),
		func(set string) string { return onPurpose(set, oldDevice) })
	if nc.Backend.Type != "vxlan" {
		return
	}
	vxlan := hostsIn(hosts, c.hostsWith("flannel_backend_type", "vxlan"))
	if len(vxlan) == 0 {
		return
	}
	vni := deref(nc.Backend.VNI, 1)
	compareOn(vxlan, "flannel_vxlan_vni", liveField{strconv.Itoa(vni), field + "VNI" + absent(nc.Backend.VNI == nil, "flannel's default 1")}, equal, SeverityError, restart("VXLAN VNI"),
		func(set string) string { return onPurpose(set, oldDevice) })
	port := func(p string) string {
		if p == "0" {
			return flannelVXLANPort
		}
		return p
	}
	compareOn(vxlan, "flannel_vxlan_port", liveField{port(strconv.Itoa(deref(nc.Backend.Port, 0))), field + "Port" + absent(nc.Backend.Port == nil, "the kernel's default 8472")},
		func(inv, live string) bool { return port(inv) == live }, SeverityError, restart("VXLAN port"),
		func(set string) string { return onPurpose(set, "") })
	compareOn(vxlan, "flannel_vxlan_direct_routing", liveField{strconv.FormatBool(deref(nc.Backend.DirectRouting, false)), field + "DirectRouting" + absent(nc.Backend.DirectRouting == nil, "flannel's default false")}, equal, SeverityWarning,
		fmt.Sprintf("kubespray re-renders kube-system/kube-flannel-cfg from the inventory and applies it (%s), but flannel reads net-conf.json only at start: flannel pods that restart route to nodes of the same subnet directly, the others through VXLAN, until every one has restarted.", flannelTask),
		func(set string) string { return onPurpose(set, "") })
	// kube_pods_subnet is judged against kubeadm's podSubnet when that was
	// read; flannel's Network is the one place left otherwise.
	if kc := st.KubeadmConfig; (kc == nil || kc.PodSubnet == "") && nc.Network != "" {
		compareOn(hosts, "kube_pods_subnet", liveField{nc.Network, clusterstate.FlannelConfigMap + " Network"}, inCIDRList, SeverityError,
			"kubespray writes kube_pods_subnet into net-conf.json's Network ("+flannelTask+") and kubeadm's podSubnet; it cannot change on a running cluster: Nodes keep the podCIDRs allocated from the running range, and flannel pods restarted with the new Network do not route them.", nil)
	}
}

// absent says, after a field's name, that net-conf.json does not set it.
func absent(is bool, dflt string) string {
	if !is {
		return ""
	}
	return " absent: " + dflt
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// hostsIn keeps the hosts of a that are also in b, in a's order.
func hostsIn(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, h := range b {
		in[h] = true
	}
	var out []string
	for _, h := range a {
		if in[h] {
			out = append(out, h)
		}
	}
	return out
}
