package cluster

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/layercheck/layercheck/verify"
)

func init() { register("kube_system", func() Layer { return kubeSystemLayer{} }) }

type kubeSystemLayer struct{}

func (kubeSystemLayer) Name() string { return "kube_system" }

// KubeSystemFacts is the kube_system layer's facts: the workloads the
// inventory implies and those found.
type KubeSystemFacts struct {
	Expected []string `json:"expected"`
	// Found is the kube-system pods no DaemonSet or StatefulSet created
	// (static pods, Deployments' pods), by name: DaemonSets are judged
	// from their status, and their pods listed only when it falls short.
	Found           []string `json:"found"`
	CorednsReplicas int32    `json:"coredns_replicas"`
	CorednsExpected int      `json:"coredns_expected_replicas"`
}

func podReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podState(p *corev1.Pod) string {
	s := string(p.Status.Phase)
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			s += ", " + cs.Name + " " + w.Reason
		}
	}
	if !podReady(p) {
		s += ", not Ready"
	}
	return s
}

func ownedBy(p *corev1.Pod, kind, name string) bool {
	for _, r := range p.OwnerReferences {
		if r.Kind == kind && r.Name == name {
			return true
		}
	}
	return false
}

// checkDaemonSet wants DaemonSet name with a Ready pod on every node in
// nodes (the inventory hosts that are Nodes; allNodes is every Node by
// name). When the DaemonSet's status says it should run on every Node
// (desiredNumberScheduled >= allNodes) and runs Ready there (numberReady
// >= desiredNumberScheduled), that is the answer, without its pods; else
// the pods of kube-system are listed (pods) to name the nodes without a
// Ready pod. Only pods' error is returned.
func checkDaemonSet(ctx context.Context, check, name string, dss []appsv1.DaemonSet, pods func(context.Context) ([]corev1.Pod, error), nodes []string, allNodes map[string]*corev1.Node) (verify.Result, error) {
	var ds *appsv1.DaemonSet
	for i := range dss {
		if dss[i].Name == name {
			ds = &dss[i]
		}
	}
	if ds == nil {
		return verify.Result{Check: check, Status: verify.StatusFail,
			Msg:         fmt.Sprintf("DaemonSet kube-system/%s is missing", name),
			Remediation: fmt.Sprintf("rerun cluster.yml (the role that deploys %s); kubectl -n kube-system get ds shows what is there", name)}, nil
	}
	if st := ds.Status; int(st.DesiredNumberScheduled) >= len(allNodes) && st.NumberReady >= st.DesiredNumberScheduled {
		return daemonSetOK(check, name, nodes), nil
	}
	all, err := pods(ctx)
	if err != nil {
		return verify.Result{}, err
	}
	return checkDaemonSetPods(check, name, ds, all, nodes, allNodes), nil
}

func daemonSetOK(check, name string, nodes []string) verify.Result {
	return verify.Result{Check: check, Status: verify.StatusOK,
		Msg: fmt.Sprintf("DaemonSet kube-system/%s Ready on every node (%d)", name, len(nodes))}
}

// checkDaemonSetPods judges DaemonSet ds by its pods: a Ready one on every
// node in nodes, and its status counting as many Ready as desired. A status
// that desires more pods than there are Nodes (allNodes), while every pod
// is Ready and one runs on every Node, is the DaemonSet controller not yet
// counting a Node just deleted (remove-node.yml's last step): that is not
// a missing pod. Nor is a pod still bound to a Node that is gone: the pod
// garbage collector deletes it.
func checkDaemonSetPods(check, name string, ds *appsv1.DaemonSet, pods []corev1.Pod, nodes []string, allNodes map[string]*corev1.Node) verify.Result {
	readyOn := map[string]bool{}
	var bad []string
	for i := range pods {
		p := &pods[i]
		if !ownedBy(p, "DaemonSet", name) {
			continue
		}
		if _, ok := allNodes[p.Spec.NodeName]; !ok && p.Spec.NodeName != "" {
			continue
		}
		if podReady(p) {
			readyOn[p.Spec.NodeName] = true
		} else {
			bad = append(bad, fmt.Sprintf("%s on %s: %s", p.Name, p.Spec.NodeName, podState(p)))
		}
	}
	var missing []string
	for _, n := range nodes {
		if !readyOn[n] {
			missing = append(missing, n)
		}
	}
	st := ds.Status
	if len(missing) == 0 && len(bad) == 0 && st.NumberReady < st.DesiredNumberScheduled &&
		int(st.DesiredNumberScheduled) > len(allNodes) && len(readyOn) >= len(allNodes) {
		return verify.Result{Check: check, Status: verify.StatusOK,
			Msg: fmt.Sprintf("DaemonSet kube-system/%s Ready on every node (%d); its status still counts %d/%d ready for %d Node(s) gone (the DaemonSet controller has not caught up)",
				name, len(nodes), st.NumberReady, st.DesiredNumberScheduled, int(st.DesiredNumberScheduled)-len(allNodes))}
	}
	if len(missing) > 0 || st.NumberReady < st.DesiredNumberScheduled {
		sort.Strings(bad)
		return verify.Result{Check: check, Status: verify.StatusFail,
			Msg:      daemonSetFailMsg(name, st.NumberReady, st.DesiredNumberScheduled, missing, bad),
			Expected: nodes, Actual: missing, Evidence: bad,
			Remediation: fmt.Sprintf("kubectl -n kube-system describe ds %s; kubectl -n kube-system logs ds/%s on the listed nodes; a node taint not tolerated or an image pull failure is the usual cause", name, name)}
	}
	return daemonSetOK(check, name, nodes)
}

// daemonSetFailMsg names the nodes without a Ready pod, or, when every
// node has one, the pods that are not Ready.
func daemonSetFailMsg(name string, ready, desired int32, missing, bad []string) string {
	head := fmt.Sprintf("DaemonSet kube-system/%s: %d/%d ready", name, ready, desired)
	switch {
	case len(missing) > 0:
		return head + "; no Ready pod on " + verify.Abridge(missing)
	case len(bad) > 0:
		return head + "; not Ready: " + verify.Abridge(bad)
	default:
		return head + "; a Ready pod on every node, but the status counts fewer Ready than desired"
	}
}

// checkDeployment wants Deployment ns/name with every replica ready.
func checkDeployment(check, ns, name string, deps []appsv1.Deployment) (verify.Result, *appsv1.Deployment) {
	var d *appsv1.Deployment
	for i := range deps {
		if deps[i].Namespace == ns && deps[i].Name == name {
			d = &deps[i]
		}
	}
	if d == nil {
		return verify.Result{Check: check, Status: verify.StatusFail,
			Msg:         fmt.Sprintf("Deployment %s/%s is missing", ns, name),
			Remediation: fmt.Sprintf("rerun cluster.yml with the role that deploys %s enabled; kubectl -n %s get deploy shows what is there", name, ns)}, nil
	}
	want := desiredReplicas(d)
	if want == 0 {
		return verify.Result{Check: check, Status: verify.StatusFail,
			Msg:      fmt.Sprintf("Deployment %s/%s is scaled to 0 replicas: nothing serves it", ns, name),
			Expected: ">= 1 replica", Actual: 0,
			Remediation: fmt.Sprintf("kubectl -n %s scale deploy %s --replicas=1 (or rerun cluster.yml, which applies kubespray's replica count); look for whatever scaled it down (kubectl -n %s get events, an autoscaler)", ns, name, ns)}, d
	}
	if d.Status.ReadyReplicas < want || d.Status.AvailableReplicas < want {
		return verify.Result{Check: check, Status: verify.StatusFail,
			Msg:      fmt.Sprintf("Deployment %s/%s: %d/%d replicas ready", ns, name, d.Status.ReadyReplicas, want),
			Expected: want, Actual: d.Status.ReadyReplicas,
			Remediation: fmt.Sprintf("kubectl -n %s describe deploy %s; kubectl -n %s get pods -o wide; look for Pending pods (no schedulable node: check taints against kube_node) or crash loops", ns, name, ns)}, d
	}
	return verify.Result{Check: check, Status: verify.StatusOK,
		Msg: fmt.Sprintf("Deployment %s/%s: %d/%d replicas ready", ns, name, d.Status.ReadyReplicas, want)}, d
}

// controlPlaneComponents are the static pods kubeadm runs on every
// kube_control_plane host, named <component>-<node>.
var controlPlaneComponents = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"}

// awaitStaticPods waits, up to rolloutWait, while a control-plane static
// pod is there but not Ready, and returns kube-system's own pods as last
// read. cluster.yml's last play ("Apply resolv.conf changes now that
// cluster DNS is up") restarts kubelet and removes the kube-apiserver and
// kube-controller-manager pod sandboxes, and does not wait for them: right
// after it, verify.yml meets them ContainerCreating. A missing static pod is
// not waited for.
func (env *Env) awaitStaticPods(ctx context.Context, pods []corev1.Pod) ([]corev1.Pod, time.Duration) {
	restarting := func() bool {
		byName := map[string]*corev1.Pod{}
		for i := range pods {
			byName[pods[i].Name] = &pods[i]
		}
		for _, comp := range controlPlaneComponents {
			for _, h := range env.Options.KubeControlPlane {
				if p := byName[comp+"-"+env.inv.nodeName(h)]; p != nil && !podReady(p) {
					return true
				}
			}
		}
		return false
	}
	if !restarting() {
		return pods, 0
	}
	waited := poll(ctx, env.rolloutWait(ctx), restarting, func() {
		// kube-apiserver itself may be restarting: a failed read keeps
		// the pods last read and is tried again.
		if l, err := env.Kube.ListPods(ctx, "kube-system", metav1.ListOptions{LabelSelector: "!" + daemonPodLabel}); err == nil {
			pods = l.Items
		}
	})
	return pods, waited
}

// waitedFor says how long verify waited before judging, if it did.
func waitedFor(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf(" (still so after %s of waiting)", d.Round(time.Second))
}

// presentNodes is the Node names of the inventory's k8s_cluster hosts that
// are Nodes, in k8s_cluster order.
func presentNodes(inv *inventory, byName map[string]*corev1.Node) []string {
	var out []string
	for _, h := range inv.k8sCluster {
		if n := inv.nodeName(h); byName[n] != nil {
			out = append(out, n)
		}
	}
	return out
}

// dnsEnabled: kubespray deploys CoreDNS for dns_mode coredns and coredns_dual.
func (o *Options) dnsEnabled() bool { return o.DNSMode == "coredns" || o.DNSMode == "coredns_dual" }

// AutoscaledCoreDNS is what cluster-proportional-autoscaler's linear mode
// gives with kubespray's --default-params (kubespray v2.31.0
// roles/kubernetes-apps/ansible/templates/dns-autoscaler.yml.j2):
// max(ceil(cores/coresPerReplica), ceil(nodes/nodesPerReplica)), at least
// min, and at least 2 with preventSinglePointFailure (dns_min_replicas > 1)
// when there is more than one schedulable node.
func AutoscaledCoreDNS(o *Options, schedulableNodes int, cores int64) int {
	r := max(int(math.Ceil(float64(cores)/float64(o.DNSCoresPerReplica))), int(math.Ceil(float64(schedulableNodes)/float64(o.DNSNodesPerReplica))))
	if o.DNSMinReplicas > 1 && schedulableNodes > 1 {
		r = max(r, 2)
	}
	return max(r, o.DNSMinReplicas)
}

func (kubeSystemLayer) Check(ctx context.Context, env *Env) ([]verify.Result, any, error) {
	o := &env.Options
	nodes, err := env.snap.Nodes(ctx)
	if err != nil {
		return nil, nil, err
	}
	pods, err := env.snap.KubeSystemOwnPods(ctx)
	if err != nil {
		return nil, nil, err
	}
	dss, err := env.snap.DaemonSets(ctx)
	if err != nil {
		return nil, nil, err
	}
	deps, err := env.snap.Deployments(ctx)
	if err != nil {
		return nil, nil, err
	}
	byName, err := env.snap.NodeByName(ctx)
	if err != nil {
		return nil, nil, err
	}
	present := presentNodes(env.inv, byName)
	facts := &KubeSystemFacts{}
	var res []verify.Result

	// Static pods of the control plane: <component>-<node>.
	pods, waited := env.awaitStaticPods(ctx, pods)
	podByName := map[string]*corev1.Pod{}
	for i := range pods {
		podByName[pods[i].Name] = &pods[i]
		facts.Found = append(facts.Found, pods[i].Name)
	}
	sort.Strings(facts.Found)
	for _, comp := range controlPlaneComponents {
		facts.Expected = append(facts.Expected, comp)
		var bad []string
		for _, h := range o.KubeControlPlane {
			n := env.inv.nodeName(h)
			p := podByName[comp+"-"+n]
			switch {
			case p == nil:
				bad = append(bad, fmt.Sprintf("%s-%s missing", comp, n))
			case p.Spec.NodeName != n:
				bad = append(bad, fmt.Sprintf("%s-%s runs on %s", comp, n, p.Spec.NodeName))
			case !podReady(p):
				bad = append(bad, fmt.Sprintf("%s-%s: %s", comp, n, podState(p)))
			}
		}
		if len(bad) > 0 {
			res = append(res, verify.Result{Check: comp, Status: verify.StatusFail,
				Msg:      fmt.Sprintf("%s static pods: %s%s", comp, strings.Join(bad, "; "), waitedFor(waited)),
				Expected: o.KubeControlPlane, Evidence: bad,
				Remediation: fmt.Sprintf("on the control-plane host: ls /etc/kubernetes/manifests/%s.yaml; crictl ps -a --name %s; journalctl -u kubelet", comp, comp)})
		} else {
			r := verify.Result{Check: comp, Status: verify.StatusOK,
				Msg: fmt.Sprintf("%s Ready on every kube_control_plane host (%d)", comp, len(o.KubeControlPlane))}
			if waited > 0 {
				r.Msg += fmt.Sprintf(" after %s of waiting for the control plane's static pods to restart", waited.Round(time.Second))
			}
			res = append(res, r)
		}
	}

	// etcd: a host service (systemd) or kubeadm static pods.
	var etcdPods []string
	for i := range pods {
		p := &pods[i]
		if p.Labels["component"] == "etcd" || strings.HasPrefix(p.Name, "etcd-") {
			etcdPods = append(etcdPods, p.Name)
		}
	}
	switch o.EtcdDeploymentType {
	case "host", "docker":
		if len(etcdPods) > 0 {
			res = append(res, verify.Result{Check: "etcd", Status: verify.StatusFail,
				Msg:      fmt.Sprintf("etcd_deployment_type is %s but kube-system has etcd pod(s): %s", o.EtcdDeploymentType, strings.Join(etcdPods, ", ")),
				Expected: "no etcd pod", Actual: etcdPods,
				Remediation: "a second etcd runs as a static pod next to the host service: remove /etc/kubernetes/manifests/etcd.yaml on the listed hosts, or set etcd_deployment_type: kubeadm if that is the intended etcd"})
		} else {
			res = append(res, verify.Result{Check: "etcd", Status: verify.StatusOK,
				Msg: fmt.Sprintf("no etcd pod: etcd runs as a host service (etcd_deployment_type %s)", o.EtcdDeploymentType)})
		}
	case "kubeadm":
		facts.Expected = append(facts.Expected, "etcd")
		var bad []string
		for _, h := range o.Etcd {
			n := env.inv.nodeName(h)
			p := podByName["etcd-"+n]
			if p == nil || !podReady(p) {
				bad = append(bad, "etcd-"+n)
			}
		}
		if len(bad) > 0 {
			res = append(res, verify.Result{Check: "etcd", Status: verify.StatusFail,
				Msg:      "etcd_deployment_type is kubeadm but these etcd static pods are missing or not Ready: " + strings.Join(bad, ", "),
				Expected: o.Etcd, Actual: etcdPods,
				Remediation: "on the etcd host: ls /etc/kubernetes/manifests/etcd.yaml; crictl ps -a --name etcd"})
		} else {
			res = append(res, verify.Result{Check: "etcd", Status: verify.StatusOK, Msg: "etcd static pod Ready on every etcd host"})
		}
	}

	// DaemonSets on every node.
	var daemonsets []string
	daemonsets = append(daemonsets, "kube-proxy")
	if o.KubeNetworkPlugin == "calico" {
		daemonsets = append(daemonsets, "calico-node")
	}
	// nodelocaldns forwards to CoreDNS, or to manual_dns_server with
	// dns_mode manual (roles/kubernetes-apps/ansible/tasks/main.yml).
	if boolOr(o.EnableNodelocaldns, true) && (o.dnsEnabled() || o.DNSMode == "manual") {
		daemonsets = append(daemonsets, "nodelocaldns")
	}
	for _, name := range daemonsets {
		facts.Expected = append(facts.Expected, name)
		r, err := checkDaemonSet(ctx, name, name, dss, env.snap.KubeSystemPods, present, byName)
		if err != nil {
			return nil, nil, err
		}
		res = append(res, r)
	}

	// Deployments.
	var deployments []string
	if o.KubeNetworkPlugin == "calico" {
		deployments = append(deployments, "calico-kube-controllers")
	}
	autoscaler := boolOr(o.EnableDNSAutoscaler, true) && o.dnsEnabled()
	if o.dnsEnabled() {
		deployments = append(deployments, "coredns")
	}
	if o.DNSMode == "coredns_dual" {
		// The second CoreDNS on skydns_server_secondary: the same manifests
		// with coredns_ordinal_suffix "-secondary".
		deployments = append(deployments, "coredns-secondary")
	}
	if autoscaler {
		deployments = append(deployments, "dns-autoscaler")
	}
	for _, name := range deployments {
		facts.Expected = append(facts.Expected, name)
		r, d := env.awaitDeployment(ctx, name, "kube-system", name, deps)
		res = append(res, r)
		if name == "coredns" && d != nil {
			if d.Spec.Replicas != nil {
				facts.CorednsReplicas = *d.Spec.Replicas
			}
			want := o.CorednsReplicas
			how := "coredns_replicas (enable_dns_autoscaler is false)"
			if autoscaler {
				sched, cores := 0, int64(0)
				for _, n := range nodes {
					if n.Spec.Unschedulable {
						continue
					}
					sched++
					if q, ok := n.Status.Capacity[corev1.ResourceCPU]; ok {
						cores += q.Value()
					}
				}
				want = AutoscaledCoreDNS(o, sched, cores)
				how = fmt.Sprintf("dns-autoscaler's linear rule for %d schedulable nodes and %d cores (coresPerReplica %d, nodesPerReplica %d, min %d)",
					sched, cores, o.DNSCoresPerReplica, o.DNSNodesPerReplica, o.DNSMinReplicas)
			}
			facts.CorednsExpected = want
			if int(facts.CorednsReplicas) != want {
				res = append(res, verify.Result{Check: "coredns_replicas", Status: verify.StatusWarn,
					Msg:      fmt.Sprintf("CoreDNS has %d replicas, %s gives %d", facts.CorednsReplicas, how, want),
					Expected: want, Actual: facts.CorednsReplicas,
					Remediation: "kubectl -n kube-system logs deploy/dns-autoscaler; check dns_min_replicas, dns_nodes_per_replica and dns_cores_per_replica, or coredns_replicas without the autoscaler"})
			} else {
				res = append(res, verify.Result{Check: "coredns_replicas", Status: verify.StatusOK,
					Msg: fmt.Sprintf("CoreDNS has %d replicas as %s gives", want, how)})
			}
		}
	}
	return res, facts, nil
}
