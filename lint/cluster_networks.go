package lint

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/clusterstate"
)

func init() {
	registerRule("cluster-network", SeverityError,
		"with the live cluster: kube_pods_subnet, kube_service_addresses, kube_network_node_prefix or cluster_name other than kubeadm's ClusterConfiguration, kube_proxy_mode other than kube-proxy's, kube_network_plugin other than the CNI that runs, calico settings other than the IPPool's and calico-config's, flannel_backend_type, flannel_vxlan_vni, flannel_vxlan_port and flannel_vxlan_direct_routing (warning) other than kube-flannel-cfg's net-conf.json, dns_mode or enable_nodelocaldns off while CoreDNS or nodelocaldns runs (warning), a CoreDNS or nodelocaldns the cluster lacks that the run deploys again (info)",
		checkClusterNetworks)
}

// kubeadmTask is where kubespray writes ClusterConfiguration from the
// inventory and uploads it.
const kubeadmTask = `roles/kubernetes/control-plane (kubeadm-config.yaml, then "Kubeadm | Upgrade first control plane node" and "Update kubeadm and kubelet configmaps after upgrade")`

// calicoCheckTask is kubespray's own comparison with the live IPPool.
const calicoCheckTask = `roles/network_plugin/calico/tasks/check.yml "Check if inventory match current cluster configuration" ("Your inventory doesn't match the current cluster configuration")`

// liveField is one value the cluster shows, with the object and field.
type liveField struct {
	val, what string
}

func checkClusterNetworks(c *checkCtx) []Finding {
	st := c.in.Cluster
	if st == nil {
		return nil
	}
	var out []Finding
	hosts := c.clusterHosts()
	// compareOn reports the targets of name on hosts that differ from got;
	// fix makes the fix from the one that sets name to got (nil: that one).
	compareOn := func(hosts []string, name string, got liveField, same func(inv, live string) bool, sev Severity, why string, fix func(set string) string) {
		if got.val == "" {
			return
		}
		for _, t := range c.targets(name, hosts, nil) {
			if same(t.text, got.val) {
				continue
			}
			f := c.clusterFinding("cluster-network", sev, t)
			f.Message = fmt.Sprintf("%s but the cluster has %s (%s)", c.inventoryValue(t), got.val, got.what)
			f.Why = why
			f.Fix = c.setFix(t, literalFor(got.val))
			if fix != nil {
				f.Fix = fix(f.Fix)
			}
			out = append(out, f)
		}
	}
	compare := func(name string, got liveField, same func(inv, live string) bool, sev Severity, why string) {
		compareOn(hosts, name, got, same, sev, why, nil)
	}
	equal := func(a, b string) bool { return a == b }
	if kc := st.KubeadmConfig; kc != nil {
		immutable := fmt.Sprintf("kubespray writes it into kubeadm's ClusterConfiguration (%s); it cannot change on a running cluster: Nodes keep their podCIDRs, Services their ClusterIPs, and the CNI its pool, so pods and Services of the new range do not route.", kubeadmTask)
		compare("kube_pods_subnet", liveField{kc.PodSubnet, clusterstate.KubeadmConfigMap + ".networking.podSubnet"}, inCIDRList, SeverityError, immutable)
		compare("kube_service_addresses", liveField{kc.ServiceSubnet, clusterstate.KubeadmConfigMap + ".networking.serviceSubnet"}, inCIDRList, SeverityError, immutable)
		compare("cluster_name", liveField{kc.ClusterName, clusterstate.KubeadmConfigMap + ".clusterName"}, equal, SeverityError,
			fmt.Sprintf("kubespray writes cluster_name into ClusterConfiguration.clusterName and, as dns_domain's default, the cluster DNS domain (%s): kubelets and CoreDNS would serve another domain than pods resolve.", kubeadmTask))
		if kc.NodeCIDRMaskSize != "" {
			compare("kube_network_node_prefix", liveField{kc.NodeCIDRMaskSize, clusterstate.KubeadmConfigMap + ".controllerManager.extraArgs node-cidr-mask-size-ipv4"}, equal, SeverityError,
				"kube-controller-manager allocates every Node's podCIDR with this mask; allocated podCIDRs never change, so new Nodes would get ranges of another size that can overlap the old ones.")
		}
	}
	if kc := st.KubeadmConfig; kc == nil || kc.NodeCIDRMaskSize == "" {
		if mask, node := nodeMask(st); mask != "" {
			compare("kube_network_node_prefix", liveField{mask, "Node " + node + " spec.podCIDR mask"}, equal, SeverityError,
				"kube-controller-manager allocates every Node's podCIDR with this mask; allocated podCIDRs never change, so new Nodes would get ranges of another size that can overlap the old ones.")
		}
	}
	if st.KubeProxyMode != nil {
		mode := *st.KubeProxyMode
		if mode == "" {
			mode = "iptables"
		}
		compare("kube_proxy_mode", liveField{mode, clusterstate.KubeProxyMap + " mode"}, equal, SeverityWarning,
			`kubespray rewrites the kube-proxy ConfigMap ("Update kube-proxy configmap after upgrade") and kube-proxy switches mode: the old mode's rules stay on every node until it is cleaned (kube-proxy --cleanup), and Services can answer twice or not at all meanwhile.`)
	}
	if !unread(st, "DaemonSets") {
		if plugin := runningPlugin(st); plugin != "" {
			compare("kube_network_plugin", liveField{plugin, "DaemonSet kube-system/" + cniDaemonSet[plugin]}, equal, SeverityError,
				"kubespray installs kube_network_plugin's DaemonSet beside the running one: two CNIs write the same nodes' CNI configuration and pod networking breaks; kubespray has no CNI migration.")
		}
	}
	c.calicoPool(st, compare)
	c.flannelConf(st, compareOn)
	if !unread(st, "Deployments") && !unread(st, "DaemonSets") {
		out = append(out, c.clusterDNS(st, compare)...)
	}
	return out
}

// calicoPool compares calico's settings with the IPPool and calico-config
// (compare appends the findings).
func (c *checkCtx) calicoPool(st *clusterstate.State, compare func(string, liveField, func(string, string) bool, Severity, string)) {
	if !c.anyHostWith("kube_network_plugin", "calico") {
		return
	}
	equal := func(a, b string) bool { return a == b }
	if p := st.IPPool; p != nil {
		obj := "IPPool " + p.Name + " (crd.projectcalico.org/v1) spec."
		compare("calico_ipip_mode", liveField{p.IPIPMode, obj + "ipipMode"}, equal, SeverityError, "kubespray stops at "+calicoCheckTask+", after the nodes were prepared.")
		compare("calico_vxlan_mode", liveField{p.VXLANMode, obj + "vxlanMode"}, equal, SeverityError, "kubespray stops at "+calicoCheckTask+", after the nodes were prepared.")
		// calico_pool_cidr when set (unset it is kube_pods_subnet, judged
		// against kubeadm-config above)
		compare("calico_pool_cidr", liveField{p.CIDR, obj + "cidr"}, inCIDRList, SeverityError, "kubespray stops at "+calicoCheckTask+", after the nodes were prepared.")
		if p.BlockSize > 0 {
			compare("calico_pool_blocksize", liveField{strconv.Itoa(p.BlockSize), obj + "blockSize"}, equal, SeverityError, "kubespray stops at "+calicoCheckTask+", after the nodes were prepared.")
		}
	}
	if st.CalicoBackend != nil {
		compare("calico_network_backend", liveField{*st.CalicoBackend, clusterstate.CalicoConfigMap + " calico_backend"}, equal, SeverityError,
			"kubespray rewrites calico-config and restarts calico-node with the other backend (bird for BGP, vxlan, none): cross-node pod traffic stops until every node runs the same one, and BGP peerings go away.")
	}
}

// anyHostWith reports whether some cluster host gets name = val.
func (c *checkCtx) anyHostWith(name, val string) bool { return len(c.hostsWith(name, val)) > 0 }

// cniDaemonSet is the kube-system DaemonSet each kube_network_plugin runs
// (kubespray roles/network_plugin/*/templates).
var cniDaemonSet = map[string]string{
	"calico": "calico-node", "flannel": "kube-flannel", "cilium": "cilium",
	"kube-ovn": "kube-ovn-cni", "kube-router": "kube-router",
}

// runningPlugin is the kube_network_plugin whose DaemonSet runs ("" for
// none or more than one).
func runningPlugin(st *clusterstate.State) string {
	found := ""
	for p, ds := range cniDaemonSet {
		if st.HasDaemonSet(ds) {
			if found != "" {
				return ""
			}
			found = p
		}
	}
	return found
}

// inCIDRList: the inventory's CIDR is one of kubeadm's comma-separated
// list (dual stack lists IPv4 and IPv6), compared as prefixes.
func inCIDRList(inv, list string) bool {
	a, err := netip.ParsePrefix(strings.TrimSpace(inv))
	if err != nil {
		return true // not a CIDR: the network-cidr rule says so
	}
	for _, s := range strings.Split(list, ",") {
		if b, err := netip.ParsePrefix(strings.TrimSpace(s)); err == nil && a.Masked() == b.Masked() {
			return true
		}
	}
	return false
}

// nodeMask is the mask of the first Node's spec.podCIDR (IPv4), with the
// Node's name.
func nodeMask(st *clusterstate.State) (mask, node string) {
	for _, n := range st.Nodes {
		for _, s := range strings.Split(n.PodCIDR, ",") {
			if p, err := netip.ParsePrefix(strings.TrimSpace(s)); err == nil && p.Addr().Is4() {
				return strconv.Itoa(p.Bits()), n.Name
			}
		}
	}
	return "", ""
}

// literalFor writes a live value as a YAML literal for a fix.
func literalFor(v string) string {
	if _, err := strconv.Atoi(v); err == nil {
		return v
	}
	if v == "true" || v == "false" {
		return v
	}
	return strconv.Quote(v)
}
