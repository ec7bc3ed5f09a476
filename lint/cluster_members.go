package lint

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/clusterstate"
	"github.com/layercheck/layercheck/parser"
)

func init() {
	registerRule("cluster-membership", SeverityWarning,
		"with the live cluster: k8s_cluster hosts without a Node (what scale.yml adds: info), Nodes the inventory no longer lists, kube_control_plane Nodes not Ready (error), cordoned Nodes an upgrade keeps cordoned, a control-plane host in kube_node whose taint the run removes (info), a control-plane host without kubeadm's control-plane taint, node_labels a Node does not have, node_taints a Node lacks, etcd_deployment_type kubeadm while etcd runs outside kubeadm, or host while kubeadm's etcd static pod runs (error), etcd members holding the name or peer URL of a host being (re)added (error), members no etcd host accounts for, learners",
		checkClusterMembers)
	otherSeverity["cluster-membership"] = []Severity{SeverityError, SeverityInfo}
}

// controlPlaneTaint is the taint kubeadm puts on control-plane Nodes that
// kubespray leaves on hosts not also in kube_node.
const controlPlaneTaint = "node-role.kubernetes.io/control-plane:NoSchedule"

func checkClusterMembers(c *checkCtx) []Finding {
	st := c.in.Cluster
	if st == nil {
		return nil
	}
	out := append(c.etcdDeploymentType(st), c.etcdMembers(st)...)
	if unread(st, "Nodes") {
		return out
	}
	byName := make(map[string]*clusterstate.Node, len(st.Nodes))
	for i := range st.Nodes {
		byName[st.Nodes[i].Name] = &st.Nodes[i]
	}
	cluster := c.clusterHosts()
	cp, _ := c.groupHosts("kube_control_plane")
	kubeNode, _ := c.groupHosts("kube_node")
	inKubeNode := make(map[string]bool, len(kubeNode))
	for _, h := range kubeNode {
		inKubeNode[h] = true
	}
	nodeName := func(h string) string {
		if v, set := c.value(h, "kube_override_hostname"); set && judged(v) && v.Kind == parser.KindString && v.Str != "" {
			return v.Str
		}
		return h
	}
	var added []string
	listed := make(map[string]bool, len(cluster))
	for _, h := range cluster {
		n := nodeName(h)
		listed[n] = true
		if byName[n] == nil {
			added = append(added, h)
		}
	}
	if len(added) > 0 && len(added) < len(cluster) {
		out = append(out, Finding{Rule: "cluster-membership", Severity: SeverityInfo, Hosts: added,
			Message: fmt.Sprintf("%d k8s_cluster host(s) have no Node in the cluster (%s): scale.yml (or cluster.yml) joins them", len(added), namesOf(added)),
			Why:     "scale.yml runs kubeadm join on hosts without a Node; upgrade-cluster.yml expects every host to be a Node already.",
			Fix:     "run scale.yml --limit with these hosts to add them, or remove them from the inventory before an upgrade"})
	}
	var absent []string
	for _, n := range st.Nodes {
		if !listed[n.Name] {
			absent = append(absent, n.Name)
		}
	}
	if len(absent) > 0 && len(added) < len(cluster) {
		out = append(out, Finding{Rule: "cluster-membership", Severity: SeverityWarning,
			Message: fmt.Sprintf("%d Node(s) of the cluster are not in the inventory's k8s_cluster (%s): kubespray no longer manages them", len(absent), namesOf(absent)),
			Why:     "upgrade-cluster.yml and cluster.yml act only on inventory hosts: these Nodes keep their kubelet and runtime versions and fall behind the version skew the new control plane allows; their certificates and settings are no longer renewed.",
			Fix:     "add them back to the inventory (kube_node), or drain and remove them with remove-node.yml -e node=NAME while they are still listed"})
	}
	var notReady []string
	for _, h := range cp {
		if n := byName[nodeName(h)]; n != nil && !n.Ready {
			notReady = append(notReady, h+" ("+n.ReadyReason+")")
		}
	}
	if len(notReady) > 0 {
		out = append(out, Finding{Rule: "cluster-membership", Severity: SeverityError, Hosts: firstWords(notReady),
			Message: fmt.Sprintf("%d kube_control_plane Node(s) not Ready (Node status.conditions Ready): %s", len(notReady), namesOf(notReady)),
			Why:     "upgrade-cluster.yml drains and upgrades the control plane one node at a time: with a control-plane node already down, etcd and the API server lose their quorum or last replica during the upgrade.",
			Fix:     "bring these nodes back to Ready (journalctl -u kubelet on them) before upgrade-cluster.yml, or remove them with remove-node.yml"})
	}
	var untainted []string
	for _, h := range cp {
		n := byName[nodeName(h)]
		if n == nil || inKubeNode[h] || slices.Contains(n.Taints, controlPlaneTaint) {
			continue
		}
		untainted = append(untainted, h)
	}
	var toUntaint []string
	for _, h := range cp {
		if n := byName[nodeName(h)]; n != nil && inKubeNode[h] && slices.Contains(n.Taints, controlPlaneTaint) {
			toUntaint = append(toUntaint, h)
		}
	}
	if len(toUntaint) > 0 {
		out = append(out, Finding{Rule: "cluster-membership", Severity: SeverityInfo, Hosts: toUntaint,
			Message: fmt.Sprintf("%d kube_control_plane host(s) in kube_node carry the taint %s (Node spec.taints): %s; the run removes it and workloads will be scheduled there", len(toUntaint), controlPlaneTaint, namesOf(toUntaint)),
			Why:     `cluster.yml and upgrade-cluster.yml run roles/kubernetes/control-plane/tasks/kubeadm-setup.yml "Kubeadm | Remove taint for control plane node with node role" on every kube_control_plane host in kube_node.`,
			Fix:     "keep these hosts out of kube_node if the control plane should run no workloads"})
	}
	var cordoned []string
	for _, h := range cluster {
		if n := byName[nodeName(h)]; n != nil && n.Unschedulable {
			cordoned = append(cordoned, h)
		}
	}
	if len(cordoned) > 0 {
		out = append(out, Finding{Rule: "cluster-membership", Severity: SeverityWarning, Hosts: cordoned,
			Message: fmt.Sprintf("%d k8s_cluster host(s) are cordoned (Node spec.unschedulable): %s", len(cordoned), namesOf(cordoned)),
			Why:     "upgrade-cluster.yml cordons and drains each node and uncordons it afterwards only when it found the node schedulable (roles/upgrade/pre-upgrade \"needs_cordoning\"): a node left cordoned, by hand or by an upgrade that failed on it, stays cordoned after the upgrade and takes no new pods.",
			Fix:     "kubectl uncordon NAME before the run unless it is cordoned on purpose (or set upgrade_node_always_cordon: true, so that every node is cordoned and uncordoned)"})
	}
	out = append(out, c.nodeSettings(byName, nodeName)...)
	if len(untainted) > 0 {
		out = append(out, Finding{Rule: "cluster-membership", Severity: SeverityWarning, Hosts: untainted,
			Message: fmt.Sprintf("%d kube_control_plane host(s) not in kube_node lack the taint %s on their Node (spec.taints): %s", len(untainted), controlPlaneTaint, namesOf(untainted)),
			Why:     "kubeadm taints control-plane nodes and kubespray keeps the taint on hosts that are not also in kube_node: without it workloads run beside etcd and the API server, and the next kubeadm upgrade puts it back, evicting them.",
			Fix:     "put these hosts in kube_node too if they should run workloads, or restore the taint: kubectl taint node NAME " + controlPlaneTaint})
	}
	return out
}

// firstWords keeps each entry's first word (the host of "node1 (reason)").
func firstWords(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i], _, _ = strings.Cut(s, " ")
	}
	return out
}

// nodeSettings compares each host's node_labels and node_taints with its
// Node: kubespray labels Nodes on every run (roles/kubernetes/node-label,
// kubectl label --overwrite), so a label that differs changes where pods
// schedule; node_taints only reach kubelet's --register-with-taints, so a
// taint the Node lacks is never added to a Node that already exists.
func (c *checkCtx) nodeSettings(byName map[string]*clusterstate.Node, nodeName func(string) string) []Finding {
	var out []Finding
	for _, u := range c.uses("node_labels") {
		if !judged(u.judge) || u.judge.Kind != parser.KindMap || u.judge.Map == nil {
			continue
		}
		var diffs, affected []string
		seen := map[string]bool{}
		for _, h := range u.hosts {
			n := byName[nodeName(h)]
			if n == nil {
				continue
			}
			for _, k := range u.judge.Map.Keys {
				v, ok := scalarText(u.judge.Map.Get(k))
				if !ok {
					continue
				}
				if got, has := n.Labels[k]; !has || got != v {
					now := "absent"
					if has {
						now = strconv.Quote(got)
					}
					d := fmt.Sprintf("%s=%s (now %s)", k, v, now)
					if !seen[d] {
						seen[d] = true
						diffs = append(diffs, d)
					}
					if len(affected) == 0 || affected[len(affected)-1] != h {
						affected = append(affected, h)
					}
				}
			}
		}
		if len(affected) == 0 {
			continue
		}
		f := c.finding("cluster-membership", SeverityWarning, u)
		f.Hosts = affected
		f.Message = fmt.Sprintf("node_labels (%s) differ from the labels of %d Node(s) (Node metadata.labels: %s): %s",
			c.where(u.ours.Pos), len(affected), namesOf(affected), strings.Join(abridge(diffs, 5), ", "))
		f.Why = "kubespray labels the Nodes with node_labels on every run (roles/kubernetes/node-label, kubectl label --overwrite): pods whose nodeSelector or affinity uses these labels move or stop scheduling."
		f.Fix = "set node_labels to the labels the Nodes have, or accept the relabelling: the next run applies them"
		out = append(out, f)
	}
	for _, u := range c.uses("node_taints") {
		if !judged(u.judge) || u.judge.Kind != parser.KindList {
			continue
		}
		var missing, affected []string
		seen := map[string]bool{}
		for _, h := range u.hosts {
			n := byName[nodeName(h)]
			if n == nil {
				continue
			}
			lacks := false
			for _, t := range u.judge.List {
				want, ok := scalarText(t)
				if !ok || slices.Contains(n.Taints, want) {
					continue
				}
				lacks = true
				if !seen[want] {
					seen[want] = true
					missing = append(missing, want)
				}
			}
			if lacks {
				affected = append(affected, h)
			}
		}
		if len(affected) == 0 {
			continue
		}
		f := c.finding("cluster-membership", SeverityWarning, u)
		f.Hosts = affected
		f.Message = fmt.Sprintf("node_taints %s (%s) are not on %d Node(s) (Node spec.taints: %s)",
			strings.Join(missing, ", "), c.where(u.ours.Pos), len(affected), namesOf(affected))
		f.Why = "kubespray passes node_taints to kubelet's --register-with-taints, which applies them only when a Node registers: on Nodes that exist the taints never appear, and pods they should keep away keep running there."
		f.Fix = "taint the existing Nodes yourself (kubectl taint node NAME " + strings.Join(missing, " ") + "), or drop them from node_taints"
		out = append(out, f)
	}
	return out
}
