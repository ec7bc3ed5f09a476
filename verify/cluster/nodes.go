package cluster

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/layercheck/layercheck/verify"
)

// Taints kubespray manages (kubespray v2.31.0 roles/kubernetes/control-plane
// removes the control-plane taint from hosts also in kube_node;
// roles/network_plugin/calico/rr taints calico_rr-only hosts).
const (
	taintControlPlane = "node-role.kubernetes.io/control-plane"
	taintCalicoRR     = "node-role.kubernetes.io/calico-rr"
)

func init() { register("nodes", func() Layer { return nodesLayer{} }) }

type nodesLayer struct{}

func (nodesLayer) Name() string { return "nodes" }

// NodeFacts is the nodes layer's facts.
type NodeFacts struct {
	Expected []string `json:"expected"`
	Found    []string `json:"found"`
	Ready    []string `json:"ready"`
	Extra    []string `json:"not_in_inventory,omitempty"`
}

func hasTaint(n *corev1.Node, key string, effect corev1.TaintEffect) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key && t.Effect == effect {
			return true
		}
	}
	return false
}

func nodeReady(n *corev1.Node) (bool, string) {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return true, ""
			}
			return false, fmt.Sprintf("Ready=%s (%s: %s)", c.Status, c.Reason, c.Message)
		}
	}
	return false, "no Ready condition (the kubelet never reported)"
}

func (nodesLayer) Check(ctx context.Context, env *Env) ([]verify.Result, any, error) {
	nodes, err := env.snap.Nodes(ctx)
	if err != nil {
		return nil, nil, err
	}
	byName, err := env.snap.NodeByName(ctx)
	if err != nil {
		return nil, nil, err
	}
	o, inv := &env.Options, env.inv
	facts := &NodeFacts{Expected: inv.k8sCluster}
	for _, n := range nodes {
		facts.Found = append(facts.Found, n.Name)
	}
	sort.Strings(facts.Found)
	var res []verify.Result
	add := func(r verify.Result) { res = append(res, r) }

	// Without kube_version in the inventory, the release that installed the
	// cluster gave the control plane and every kubelet its own default:
	// the kubelets are judged against the control plane.
	wantKubelet, wantWhat := o.KubeVersion, "kube_version "+o.KubeVersion
	if wantKubelet == "" {
		wantKubelet = env.serverVersion
		wantWhat = "the control plane's Kubernetes " + env.serverVersion + " (GET /version; kube_version is not set in the inventory)"
	}
	var missing, notReady, wrongVersion []string
	var details []string
	for _, h := range inv.k8sCluster {
		n := byName[inv.nodeName(h)]
		if n == nil {
			missing = append(missing, inv.label(h))
			continue
		}
		if ok, why := nodeReady(n); ok {
			facts.Ready = append(facts.Ready, h)
		} else {
			notReady = append(notReady, h)
			details = append(details, inv.label(h)+": "+why)
		}
		if kv := n.Status.NodeInfo.KubeletVersion; strings.TrimPrefix(kv, "v") != strings.TrimPrefix(wantKubelet, "v") {
			wrongVersion = append(wrongVersion, fmt.Sprintf("%s: kubelet %s", inv.label(h), kv))
		}
	}
	if len(missing) > 0 {
		add(verify.Result{Check: "registered", Status: verify.StatusFail,
			Msg:      fmt.Sprintf("%d inventory host(s) in k8s_cluster have no Node: %s", len(missing), verify.Abridge(missing)),
			Expected: inv.k8sCluster, Actual: facts.Found, Evidence: missing,
			Remediation: "run cluster.yml (or scale.yml) for these hosts with --limit; on the host, journalctl -u kubelet shows why it did not register; kubespray names Nodes after inventory_hostname unless kube_override_hostname is set (pass it per host in node_names)"})
	} else {
		add(verify.Result{Check: "registered", Status: verify.StatusOK,
			Msg: fmt.Sprintf("every k8s_cluster host (%d) is a Node", len(inv.k8sCluster))})
	}
	if len(notReady) > 0 {
		add(verify.Result{Check: "ready", Status: verify.StatusFail,
			Msg:         fmt.Sprintf("%d node(s) not Ready: %s", len(notReady), verify.AbridgeSemi(details)),
			Evidence:    details,
			Remediation: "on each node: systemctl status kubelet, journalctl -u kubelet; a NetworkPluginNotReady reason means the CNI (calico-node) is not running there"})
	} else if len(missing) < len(inv.k8sCluster) {
		add(verify.Result{Check: "ready", Status: verify.StatusOK, Msg: "every registered inventory node is Ready"})
	}
	switch {
	case wantKubelet == "":
		add(verify.Result{Check: "kubelet_version", Status: verify.StatusSkipped,
			Msg: "kube_version is not set in the inventory and the control plane's version is not known: the kubelets' versions are not judged"})
	case len(wrongVersion) > 0:
		add(verify.Result{Check: "kubelet_version", Status: verify.StatusFail,
			Msg:      fmt.Sprintf("kubelet version differs from %s: %s", wantWhat, verify.AbridgeSemi(wrongVersion)),
			Expected: wantKubelet, Actual: wrongVersion,
			Remediation: "run upgrade-cluster.yml with the intended kube_version, or set kube_version to what the cluster runs"})
	case len(missing) < len(inv.k8sCluster):
		add(verify.Result{Check: "kubelet_version", Status: verify.StatusOK, Msg: "every kubelet runs " + wantWhat})
	}

	// Taints follow the groups: the inventory is the scheduling policy.
	var taintBad []string
	for _, h := range o.KubeControlPlane {
		n := byName[inv.nodeName(h)]
		if n == nil {
			continue
		}
		has := hasTaint(n, taintControlPlane, corev1.TaintEffectNoSchedule)
		if inv.kubeNode[h] && has {
			taintBad = append(taintBad, fmt.Sprintf("%s is in kube_control_plane and kube_node but carries %s:NoSchedule (workloads will not be scheduled there); fix: kubectl taint nodes %s %s:NoSchedule-", inv.label(h), taintControlPlane, n.Name, taintControlPlane))
		}
		if !inv.kubeNode[h] && !has {
			taintBad = append(taintBad, fmt.Sprintf("%s is only in kube_control_plane but lacks %s:NoSchedule (workloads may land on it); fix: kubectl taint nodes %s %s=:NoSchedule, or add it to kube_node", inv.label(h), taintControlPlane, n.Name, taintControlPlane))
		}
	}
	for _, h := range o.CalicoRR {
		n := byName[inv.nodeName(h)]
		if n == nil || inv.kubeNode[h] || inv.controlPlane[h] {
			continue
		}
		if !hasTaint(n, taintCalicoRR, corev1.TaintEffectNoSchedule) {
			taintBad = append(taintBad, fmt.Sprintf("%s is only in calico_rr but lacks %s:NoSchedule; fix: kubectl taint nodes %s %s=:NoSchedule", inv.label(h), taintCalicoRR, n.Name, taintCalicoRR))
		}
	}
	if len(taintBad) > 0 {
		add(verify.Result{Check: "taints", Status: verify.StatusFail,
			Msg:         verify.AbridgeSemi(taintBad),
			Evidence:    taintBad,
			Remediation: "the inventory groups are the scheduling policy: rerun cluster.yml --tags control-plane for the listed hosts, or apply the kubectl taint command given for each"})
	} else if len(missing) < len(inv.k8sCluster) {
		add(verify.Result{Check: "taints", Status: verify.StatusOK, Msg: "control-plane and calico-rr taints match the inventory groups"})
	}

	// Each Node's podCIDR comes from kube-controller-manager's
	// cluster-cidr as kubeadm set it at init; kubespray re-renders the CNI's
	// network (flannel's net-conf.json) from kube_pods_subnet on every run,
	// so a kube_pods_subnet changed in the inventory leaves the Nodes'
	// podCIDRs outside the CNI's network (the day-2 machines' trap 2).
	var outside []string
	want, wantErr := netip.ParsePrefix(strings.Split(o.KubePodsSubnet, ",")[0])
	for _, h := range inv.k8sCluster {
		n := byName[inv.nodeName(h)]
		if n == nil || n.Spec.PodCIDR == "" || wantErr != nil {
			continue
		}
		if p, err := netip.ParsePrefix(n.Spec.PodCIDR); err == nil && p.Addr().Is4() == want.Addr().Is4() &&
			!(want.Contains(p.Addr()) && p.Bits() >= want.Bits()) {
			outside = append(outside, fmt.Sprintf("%s: %s", inv.label(h), n.Spec.PodCIDR))
		}
	}
	if len(outside) > 0 {
		add(verify.Result{Check: "pod_cidr", Status: verify.StatusFail,
			Msg:      fmt.Sprintf("%d node(s) have a podCIDR outside kube_pods_subnet %s (Node spec.podCIDR): %s", len(outside), o.KubePodsSubnet, verify.AbridgeSemi(outside)),
			Expected: o.KubePodsSubnet, Actual: outside,
			Remediation: "kube_pods_subnet cannot change on a running cluster (kubeadm gave the Nodes their podCIDRs at init, and kubespray re-renders the CNI's network from the inventory): set it back to the cluster's range and re-run cluster.yml"})
	} else if wantErr == nil && len(missing) < len(inv.k8sCluster) {
		add(verify.Result{Check: "pod_cidr", Status: verify.StatusOK, Msg: "every node's podCIDR is inside kube_pods_subnet " + o.KubePodsSubnet})
	}

	// A cordoned Node: kubespray's upgrade drains and cordons each node
	// and uncordons it only after its own successful pass, and only when
	// it found the node schedulable (roles/upgrade/pre-upgrade
	// needs_cordoning): a failed upgrade-cluster.yml leaves the node it was
	// on cordoned, and every later upgrade keeps it so.
	var cordoned []string
	failCordon := false
	for _, h := range inv.k8sCluster {
		if n := byName[inv.nodeName(h)]; n != nil && n.Spec.Unschedulable {
			cordoned = append(cordoned, inv.label(h))
			failCordon = failCordon || inv.kubeNode[h]
		}
	}
	if len(cordoned) > 0 {
		st := verify.StatusWarn
		if failCordon {
			st = verify.StatusFail // a kube_node host takes no new pods
		}
		add(verify.Result{Check: "schedulable", Status: st,
			Msg:    fmt.Sprintf("%d node(s) cordoned (Node spec.unschedulable): %s", len(cordoned), verify.Abridge(cordoned)),
			Actual: cordoned,
			Remediation: "kubectl uncordon NAME, unless cordoned on purpose: a failed upgrade-cluster.yml leaves the node it was draining cordoned, " +
				"and kubespray's later upgrades uncordon only nodes they found schedulable (roles/upgrade/pre-upgrade needs_cordoning; upgrade_node_always_cordon: true makes them cordon and uncordon every node)"})
	} else if len(missing) < len(inv.k8sCluster) {
		add(verify.Result{Check: "schedulable", Status: verify.StatusOK, Msg: "no inventory node is cordoned"})
	}

	for _, n := range nodes {
		if !inv.nodes[n.Name] {
			facts.Extra = append(facts.Extra, n.Name)
		}
	}
	sort.Strings(facts.Extra)
	if len(facts.Extra) > 0 {
		add(verify.Result{Check: "not_in_inventory", Status: verify.StatusWarn,
			Msg:         fmt.Sprintf("%d node(s) are not in the inventory's k8s_cluster: %s", len(facts.Extra), verify.Abridge(facts.Extra)),
			Actual:      facts.Extra,
			Remediation: "add them to the inventory (kube_node) so kubespray manages them, or remove them with remove-node.yml -e node=NAME"})
	}
	return res, facts, nil
}
