package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/layercheck/layercheck/clusterstate"
	"github.com/layercheck/layercheck/verify"
)

// FlannelConfigMap is the kube-system ConfigMap kubespray's flannel reads
// its network from (kubespray v2.31.0 roles/network_plugin/flannel/
// templates/cni-flannel.yml.j2), and FlannelNetConfKey its key flannel
// reads at start.
const (
	FlannelConfigMap  = "kube-flannel-cfg"
	FlannelNetConfKey = "net-conf.json"
)

// FlannelBackendTypeAnnotation and FlannelBackendDataAnnotation are what a
// running flanneld (kube subnet manager, flannel pkg/subnet/kube) writes on
// its Node at start: the backend it runs and, for vxlan, its VNI and VTEP.
const (
	FlannelBackendTypeAnnotation = "flannel.alpha.coreos.com/backend-type"
	FlannelBackendDataAnnotation = "flannel.alpha.coreos.com/backend-data"
)

// flannelTemplate is the kubespray file that renders the ConfigMap.
const flannelTemplate = "roles/network_plugin/flannel/templates/cni-flannel.yml.j2"

// FlannelNetConf is flannel's net-conf.json, the fields kubespray writes;
// the lint's preflight reads the same (ReadState).
type FlannelNetConf = clusterstate.FlannelNetConf

// errNoNetConf: kube-flannel-cfg has no net-conf.json.
var errNoNetConf = fmt.Errorf("has no %s key", FlannelNetConfKey)

// parseFlannelNetConf reads net-conf.json out of kube-flannel-cfg's data
// (errNoNetConf without the key).
func parseFlannelNetConf(data map[string]string) (*FlannelNetConf, error) {
	text, ok := data[FlannelNetConfKey]
	if !ok {
		return nil, errNoNetConf
	}
	nc := &FlannelNetConf{}
	if err := json.Unmarshal([]byte(text), nc); err != nil {
		return nil, fmt.Errorf("%s is not JSON flannel can read (%v)", FlannelNetConfKey, err)
	}
	return nc, nil
}

// flannelReapply restores kubespray's ConfigMap from the inventory (the
// network tag runs roles/network_plugin, playbooks/cluster.yml) and makes
// flannel, which reads net-conf.json only at start, read it.
const flannelReapply = "ansible-playbook cluster.yml --tags network renders " + flannelTemplate + " from the inventory and applies it; " +
	"flannel reads net-conf.json only at start: then kubectl -n kube-system rollout restart daemonset kube-flannel (and kube-flannel-ds-<arch> on other architectures)"

// flannelChecks are flannel_backend and flannel_network: the kube-flannel-cfg
// ConfigMap's net-conf.json against the inventory.
func flannelChecks(ctx context.Context, env *Env, facts *CNIFacts) []verify.Result {
	o := &env.Options
	where := "ConfigMap kube-system/" + FlannelConfigMap
	both := func(msg, remedy string) []verify.Result {
		return []verify.Result{
			{Check: "flannel_backend", Status: verify.StatusFail, Msg: msg, Remediation: remedy},
			{Check: "flannel_network", Status: verify.StatusFail, Msg: msg, Remediation: remedy},
		}
	}
	cm, err := configMap(ctx, env, FlannelConfigMap)
	if apierrors.IsNotFound(err) {
		return both(where+" not found: flannel has no network configuration to start with", flannelReapply)
	}
	if err != nil {
		return both(fmt.Sprintf("%s: %v", where, errAPI(env, "get configmap", err)),
			"kubectl -n kube-system get configmap "+FlannelConfigMap+" -o yaml; the admin kubeconfig must be allowed to read ConfigMaps in kube-system")
	}
	nc, err := parseFlannelNetConf(cm.Data)
	if errors.Is(err, errNoNetConf) {
		return both(fmt.Sprintf("%s %v: flannel cannot start", where, err), flannelReapply)
	}
	if err != nil {
		return both(fmt.Sprintf("%s: %v: flannel cannot start", where, err), flannelReapply)
	}
	facts.FlannelNetConf = nc
	res := []verify.Result{flannelBackend(o, nc, where), flannelNetwork(o, nc, where)}
	nodes, err := env.snap.Nodes(ctx)
	if err != nil {
		return res
	}
	return append(res, flannelRunning(nodes, nc))
}

// flannelRunning is flannel_running_backend: the backend each flanneld
// runs (its Node's annotations) against net-conf.json. flannel reads
// net-conf.json only at start, and kubespray re-renders the ConfigMap
// without restarting the pods: after a backend change in the inventory,
// cluster.yml leaves the ConfigMap at the new backend and every flannel on
// the old one (seen on a v2.31.0 cluster moved from vxlan to host-gw).
func flannelRunning(nodes []corev1.Node, nc *FlannelNetConf) verify.Result {
	want := nc.Backend.Type
	wantVNI := deref(nc.Backend.VNI, 1)
	running := map[string][]string{} // "vxlan" or "vxlan VNI 4096" -> Nodes
	annotated := 0
	for i := range nodes {
		n := &nodes[i]
		got, ok := n.Annotations[FlannelBackendTypeAnnotation]
		if !ok {
			continue
		}
		annotated++
		what := got
		if got == "vxlan" && want == "vxlan" {
			var data struct{ VNI *int }
			if json.Unmarshal([]byte(n.Annotations[FlannelBackendDataAnnotation]), &data) == nil && data.VNI != nil && *data.VNI != wantVNI {
				what = fmt.Sprintf("vxlan VNI %d", *data.VNI)
			}
		}
		if what != want {
			running[what] = append(running[what], n.Name)
		}
	}
	r := verify.Result{Check: "flannel_running_backend", Status: verify.StatusOK}
	if annotated == 0 {
		r.Status = verify.StatusSkipped
		r.Msg = "no Node carries " + FlannelBackendTypeAnnotation + ": no flanneld has started on any Node yet"
		return r
	}
	if len(running) == 0 {
		r.Msg = fmt.Sprintf("flannel on %d Node(s) runs the %s backend %s says", annotated, want, FlannelConfigMap)
		return r
	}
	var bad []string
	for _, what := range slices.Sorted(maps.Keys(running)) {
		ns := running[what]
		slices.Sort(ns)
		bad = append(bad, fmt.Sprintf("%s on %s", what, strings.Join(ns, ", ")))
	}
	want = orDash(want)
	if nc.Backend.Type == "vxlan" {
		want = fmt.Sprintf("vxlan VNI %d", wantVNI)
	}
	r.Status = verify.StatusFail
	r.Msg = fmt.Sprintf("flannel runs %s (Node annotation %s), but %s %s says %s: flannel reads it only at start, and kubespray re-renders it without restarting flannel",
		joinSemi(bad), FlannelBackendTypeAnnotation, FlannelConfigMap, FlannelNetConfKey, want)
	r.Expected, r.Actual = want, running
	r.Remediation = "restart every flannel pod at once, in a window where cross-node pod traffic may stop: kubectl -n kube-system delete pod -l app=flannel " +
		"(a rolling restart mixes backends between nodes while it runs); if the ConfigMap's backend is not the one you want, set flannel_backend_type (flannel_vxlan_vni) back first and run cluster.yml --tags network"
	return r
}

func flannelBackend(o *Options, nc *FlannelNetConf, where string) verify.Result {
	b := nc.Backend
	inv := "flannel_backend_type " + o.FlannelBackendType
	remedy := func(bad string) string {
		return "set " + bad + " in the inventory to the running value if that is the one you want; else restore kubespray's: " + flannelReapply
	}
	if b.Type != o.FlannelBackendType {
		return verify.Result{Check: "flannel_backend", Status: verify.StatusFail,
			Msg:      fmt.Sprintf("%s %s Backend.Type is %s, the inventory says %s (flannel_backend_type, kubespray's default vxlan)", where, FlannelNetConfKey, orDash(b.Type), o.FlannelBackendType),
			Expected: o.FlannelBackendType, Actual: b.Type, Remediation: remedy("flannel_backend_type")}
	}
	if b.Type != "vxlan" {
		return verify.Result{Check: "flannel_backend", Status: verify.StatusOK, Msg: "flannel Backend.Type " + b.Type + " as the inventory says (" + inv + ")"}
	}
	// Absent fields are flannel's defaults: VNI 1, port 0 (the kernel's
	// 8472), no direct routing. Port 0 is 8472 on either side.
	port := func(p int) int {
		if p == 0 {
			return 8472
		}
		return p
	}
	got := map[string]any{"VNI": deref(b.VNI, 1), "Port": port(deref(b.Port, 0)), "DirectRouting": deref(b.DirectRouting, false)}
	want := map[string]any{"VNI": *o.FlannelVXLANVNI, "Port": port(*o.FlannelVXLANPort), "DirectRouting": o.FlannelVXLANDirectRouting}
	var bad, vars []string
	for _, f := range []struct{ field, variable string }{
		{"VNI", "flannel_vxlan_vni"}, {"Port", "flannel_vxlan_port"}, {"DirectRouting", "flannel_vxlan_direct_routing"},
	} {
		if got[f.field] != want[f.field] {
			bad = append(bad, fmt.Sprintf("Backend.%s is %v, the inventory says %v (%s)", f.field, got[f.field], want[f.field], f.variable))
			vars = append(vars, f.variable)
		}
	}
	if len(bad) > 0 {
		return verify.Result{Check: "flannel_backend", Status: verify.StatusFail,
			Msg:      fmt.Sprintf("%s %s vxlan backend: %s", where, FlannelNetConfKey, joinSemi(bad)),
			Expected: want, Actual: got, Remediation: remedy(strings.Join(vars, ", "))}
	}
	return verify.Result{Check: "flannel_backend", Status: verify.StatusOK,
		Msg: fmt.Sprintf("flannel Backend vxlan, VNI %v, port %v, DirectRouting %v as the inventory says", got["VNI"], got["Port"], got["DirectRouting"])}
}

func flannelNetwork(o *Options, nc *FlannelNetConf, where string) verify.Result {
	r := verify.Result{Check: "flannel_network", Status: verify.StatusFail, Expected: o.KubePodsSubnet, Actual: nc.Network}
	if nc.Network == "" {
		if nc.EnableIPv6 && !nc.EnableIPv4 {
			r.Status, r.Msg = verify.StatusSkipped, fmt.Sprintf("%s %s is IPv6-only (IPv6Network %s, ipv4_stack false): layercheck compares the IPv4 Network with kube_pods_subnet only", where, FlannelNetConfKey, nc.IPv6Network)
			return r
		}
		r.Msg = fmt.Sprintf("%s %s has no Network: flannel has no IPv4 pod network; the inventory says %s (kube_pods_subnet)", where, FlannelNetConfKey, o.KubePodsSubnet)
		r.Remediation = flannelReapply
		return r
	}
	got, err := netip.ParsePrefix(nc.Network)
	if err != nil {
		r.Msg = fmt.Sprintf("%s %s Network %q is not a CIDR; the inventory says %s (kube_pods_subnet)", where, FlannelNetConfKey, nc.Network, o.KubePodsSubnet)
		r.Remediation = flannelReapply
		return r
	}
	want, _ := netip.ParsePrefix(o.KubePodsSubnet) // Validate checked it
	if got.Masked() != want.Masked() {
		r.Msg = fmt.Sprintf("%s %s Network is %s, the inventory says %s (kube_pods_subnet)", where, FlannelNetConfKey, nc.Network, o.KubePodsSubnet)
		r.Remediation = "kube_pods_subnet is also the range the Nodes' podCIDRs come from (kubeadm-config networking.podSubnet), which cannot change on a running cluster: " +
			"if the ConfigMap was edited, restore kubespray's: " + flannelReapply + "; if the inventory's kube_pods_subnet changed, set it back to the cluster's (kubectl -n kube-system get configmap kubeadm-config -o yaml shows podSubnet)"
		return r
	}
	r.Status, r.Msg = verify.StatusOK, "flannel Network is "+nc.Network+", kube_pods_subnet"
	return r
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// flannelNetworkPolicies warns when NetworkPolicy objects exist that
// flannel, which has no policy engine, does not enforce. One page of one
// object: a real API server counts the rest (remainingItemCount).
func flannelNetworkPolicies(ctx context.Context, env *Env, facts *CNIFacts) verify.Result {
	rctx, cancel := context.WithTimeout(ctx, env.Timeout)
	defer cancel()
	l, err := env.Kube.ListNetworkPolicies(rctx, "", metav1.ListOptions{Limit: 1})
	if err != nil {
		return verify.Result{Check: "network_policy", Status: verify.StatusFail,
			Msg:         "NetworkPolicies not listable: " + errAPI(env, "list networkpolicies", err).Error(),
			Remediation: "kubectl get networkpolicy -A; the admin kubeconfig must be allowed to list networkpolicies.networking.k8s.io"}
	}
	n := len(l.Items)
	if n == 0 {
		facts.NetworkPolicies = ptr(0)
		return verify.Result{Check: "network_policy", Status: verify.StatusOK, Msg: "no NetworkPolicy objects; flannel would not enforce any"}
	}
	count := fmt.Sprint(n)
	if l.RemainingItemCount != nil {
		n += int(*l.RemainingItemCount)
		count = fmt.Sprint(n)
	} else if l.Continue != "" {
		count = fmt.Sprintf("more than %d", n)
	}
	facts.NetworkPolicies = ptr(n)
	first := l.Items[0].Namespace + "/" + l.Items[0].Name
	msg := fmt.Sprintf("%s NetworkPolicies (first: %s) are accepted by the API server and not enforced by flannel", count, first)
	if count == "1" {
		msg = fmt.Sprintf("1 NetworkPolicy (%s) is accepted by the API server and not enforced by flannel", first)
	}
	return verify.Result{Check: "network_policy", Status: verify.StatusWarn, Msg: msg, Actual: n,
		Remediation: "flannel has no policy engine: where the policies must hold, use a plugin that enforces them (kube_network_plugin: calico or cilium; kubespray has no CNI migration, so a new cluster); else delete the policies nobody relies on (kubectl get networkpolicy -A)"}
}
