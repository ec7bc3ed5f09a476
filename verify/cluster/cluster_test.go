package cluster_test

// Fast feedback on the layers' logic with client-go's fake clientset; the
// real kube-apiserver scenarios are in test/clusterverify.

import (
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"

	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/cluster/clustertest"
)

// threeNode mirrors inventory-samples/kubespray-3node: node1-3 in
// kube_control_plane, etcd and kube_node; calico VXLAN; etcd on the hosts.
func threeNode() cluster.Options {
	hosts := []string{"node1", "node2", "node3"}
	return cluster.Options{KubeControlPlane: hosts, KubeNode: hosts, Etcd: hosts, KubeNetworkPlugin: "calico",
		CalicoVXLANMode: "Always", CalicoIPIPMode: "Never", EtcdDeploymentType: "host"}
}

func ippool(cidr, ipip, vxlan string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "crd.projectcalico.org/v1", "kind": "IPPool",
		"metadata": map[string]any{"name": "default-pool"},
		"spec":     map[string]any{"cidr": cidr, "ipipMode": ipip, "vxlanMode": vxlan, "natOutgoing": true},
	}}
	return u
}

func run(t *testing.T, o cluster.Options, w *clustertest.World, pool *unstructured.Unstructured) *cluster.Report {
	t.Helper()
	rep, _ := runFake(t, o, w, pool)
	return rep
}

// runFake is run, also returning the fake clientset with the actions it saw.
func runFake(t *testing.T, o cluster.Options, w *clustertest.World, pool *unstructured.Unstructured) (*cluster.Report, *fake.Clientset) {
	t.Helper()
	return runFakeWith(t, o, w, pool, nil)
}

// runFakeWith is runFake with prep called on the clientset once w is
// applied (to add reactors).
func runFakeWith(t *testing.T, o cluster.Options, w *clustertest.World, pool *unstructured.Unstructured, prep func(*fake.Clientset)) (*cluster.Report, *fake.Clientset) {
	t.Helper()
	ctx := context.Background()
	kube := clustertest.Fake()
	if err := w.Apply(ctx, kube, 4); err != nil {
		t.Fatal(err)
	}
	if prep != nil {
		prep(kube)
	}
	var objs []runtime.Object
	if pool != nil {
		objs = append(objs, pool)
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		cluster.IPPoolGVR: "IPPoolList", cluster.APIServiceGVR: "APIServiceList"}, objs...)
	o.Defaults()
	env := &cluster.Env{Kube: clustertest.Clientset(kube), Dynamic: dyn, Options: o, Server: "fake", CheckMode: true, Timeout: 5 * time.Second, LayerTimeout: 10 * time.Second}
	rep, err := cluster.Run(ctx, env, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep, kube
}

// podLists is the label selector of every list of pods the layers made.
func podLists(kube *fake.Clientset) []string {
	var out []string
	for _, a := range kube.Actions() {
		if l, ok := a.(k8stesting.ListAction); ok && a.GetResource().Resource == "pods" {
			out = append(out, l.GetListRestrictions().Labels.String())
		}
	}
	return out
}

func TestHealthyThreeNode(t *testing.T) {
	o := threeNode()
	rep := run(t, o, clustertest.Healthy(o, 4), ippool("10.233.64.0/18", "Never", "Always"))
	for _, n := range []string{"nodes", "kube_system", "cni"} {
		if rep.Layers[n].Status != verify.StatusOK {
			t.Errorf("layer %s: %s: %+v", n, rep.Layers[n].Status, rep.Layers[n].Results)
		}
	}
	if r := clustertest.Result(t, rep, "probe", "service"); r.Status != verify.StatusSkipped || !strings.Contains(r.Msg, "check mode") {
		t.Errorf("probe in check mode: %+v", r)
	}
	if r := clustertest.Result(t, rep, "kube_system", "coredns_replicas"); r.Status != verify.StatusOK {
		t.Errorf("coredns replicas: %+v", r)
	}
}

func TestTaintLeftOnWorker(t *testing.T) {
	o := threeNode()
	w := clustertest.Healthy(o, 4)
	w.Node("node2").Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	rep := run(t, o, w, ippool("10.233.64.0/18", "Never", "Always"))
	r := clustertest.Result(t, rep, "nodes", "taints")
	if r.Status != verify.StatusFail || !strings.Contains(r.Msg, "node2 is in kube_control_plane and kube_node") || !strings.Contains(r.Msg, "kubectl taint nodes node2") {
		t.Errorf("taint left on node2: %+v", r)
	}
}

func TestControlPlaneOnlyNeedsTaint(t *testing.T) {
	o := threeNode()
	o.KubeNode = []string{"node2", "node3"}
	w := clustertest.Healthy(o, 4)
	if r := clustertest.Result(t, run(t, o, w, ippool("10.233.64.0/18", "Never", "Always")), "nodes", "taints"); r.Status != verify.StatusOK {
		t.Errorf("healthy cp-only node1: %+v", r)
	}
	w = clustertest.Healthy(o, 4)
	w.Node("node1").Spec.Taints = nil
	r := clustertest.Result(t, run(t, o, w, ippool("10.233.64.0/18", "Never", "Always")), "nodes", "taints")
	if r.Status != verify.StatusFail || !strings.Contains(r.Msg, "node1 is only in kube_control_plane but lacks") {
		t.Errorf("untainted cp-only node1: %+v", r)
	}
}

func TestNodesMissingNotReadyExtraWrongVersion(t *testing.T) {
	o := threeNode()
	w := clustertest.Healthy(o, 4)
	w.Nodes = w.Nodes[:2] // node3 never registered
	w.Node("node2").Status.Conditions[0].Status = corev1.ConditionFalse
	w.Node("node2").Status.Conditions[0].Reason = "KubeletNotReady"
	w.Node("node1").Status.NodeInfo.KubeletVersion = "v1.34.2"
	extra := clustertest.Healthy(cluster.Options{KubeNode: []string{"stray"}, KubeControlPlane: []string{"stray"}}, 4).Node("stray")
	w.Nodes = append(w.Nodes, extra)
	rep := run(t, o, w, ippool("10.233.64.0/18", "Never", "Always"))
	for check, want := range map[string]string{
		"registered":       "node3",
		"ready":            "node2: Ready=False (KubeletNotReady",
		"kubelet_version":  "node1: kubelet v1.34.2",
		"not_in_inventory": "stray",
	} {
		r := clustertest.Result(t, rep, "nodes", check)
		if r.Status == verify.StatusOK || !strings.Contains(r.Msg, want) {
			t.Errorf("%s: want a finding naming %q, got %+v", check, want, r)
		}
	}
}

func TestEtcdPodWithHostDeployment(t *testing.T) {
	o := threeNode()
	w := clustertest.Healthy(o, 4)
	w.Pods = append(w.Pods, clustertest.StaticPod("etcd", "node1"))
	r := clustertest.Result(t, run(t, o, w, ippool("10.233.64.0/18", "Never", "Always")), "kube_system", "etcd")
	if r.Status != verify.StatusFail || !strings.Contains(r.Msg, "etcd-node1") {
		t.Errorf("etcd pod with etcd_deployment_type host: %+v", r)
	}
	o.EtcdDeploymentType = "kubeadm"
	w = clustertest.Healthy(o, 4)
	if r := clustertest.Result(t, run(t, o, w, ippool("10.233.64.0/18", "Never", "Always")), "kube_system", "etcd"); r.Status != verify.StatusOK {
		t.Errorf("kubeadm etcd pods: %+v", r)
	}
}

func TestCalicoPoolEncapsulation(t *testing.T) {
	o := threeNode()
	rep := run(t, o, clustertest.Healthy(o, 4), ippool("10.233.64.0/18", "Always", "Never"))
	r := clustertest.Result(t, rep, "cni", "ippool_encapsulation")
	if r.Status != verify.StatusFail || !strings.Contains(r.Msg, "ipipMode is Always, the inventory says Never") || !strings.Contains(r.Msg, "vxlanMode is Never, the inventory says Always") {
		t.Errorf("IPIP pool vs VXLAN inventory: %+v", r)
	}
	rep = run(t, o, clustertest.Healthy(o, 4), ippool("10.244.0.0/16", "Never", "Always"))
	if r := clustertest.Result(t, rep, "cni", "ippool_cidr"); r.Status != verify.StatusFail || !strings.Contains(r.Msg, "10.244.0.0/16") {
		t.Errorf("pool cidr: %+v", r)
	}
	rep = run(t, o, clustertest.Healthy(o, 4), nil)
	if r := clustertest.Result(t, rep, "cni", "ippool"); r.Status != verify.StatusFail || !strings.Contains(r.Msg, "not found") {
		t.Errorf("no pool: %+v", r)
	}
}

// The pool's CIDR as kubespray's calico role holds it: equal to
// calico_pool_cidr and within kube_pods_subnet (the e2e's break widens
// the pool to 10.233.0.0/17, which holds kube_pods_subnet), and its
// blockSize as calico_pool_blocksize (check.yml).
func TestCalicoPoolCIDRWithinPodsSubnet(t *testing.T) {
	o := threeNode()
	wide := ippool("10.233.0.0/17", "Never", "Always")
	r := clustertest.Result(t, run(t, o, clustertest.Healthy(o, 4), wide), "cni", "ippool_cidr")
	if r.Status != verify.StatusFail || !strings.Contains(r.Msg, "the inventory says 10.233.64.0/18 (calico_pool_cidr, default kube_pods_subnet)") ||
		!strings.Contains(r.Msg, "10.233.0.0/17 does not lie inside kube_pods_subnet 10.233.64.0/18") || !strings.Contains(r.Remediation, "kube_pods_subnet") {
		t.Errorf("pool wider than kube_pods_subnet: %+v", r)
	}
	// calico_pool_cidr set to the pool, outside kube_pods_subnet: kubespray
	// refuses it ("Ensure that calico_pool_cidr is within kube_pods_subnet").
	o.CalicoPoolCIDR = "10.233.0.0/17"
	r = clustertest.Result(t, run(t, o, clustertest.Healthy(o, 4), wide), "cni", "ippool_cidr")
	if r.Status != verify.StatusFail || strings.Contains(r.Msg, "the inventory says") || !strings.Contains(r.Msg, "does not lie inside kube_pods_subnet 10.233.64.0/18") {
		t.Errorf("calico_pool_cidr outside kube_pods_subnet: %+v", r)
	}
	// A calico_pool_cidr inside kube_pods_subnet is kubespray's to choose.
	o.CalicoPoolCIDR = "10.233.96.0/19"
	r = clustertest.Result(t, run(t, o, clustertest.Healthy(o, 4), ippool("10.233.96.0/19", "Never", "Always")), "cni", "ippool_cidr")
	if r.Status != verify.StatusOK || r.Msg != "IPPool cidr is 10.233.96.0/19, within kube_pods_subnet 10.233.64.0/18" {
		t.Errorf("pool inside kube_pods_subnet: %+v", r)
	}

	o = threeNode()
	pool := ippool("10.233.64.0/18", "Never", "Always")
	pool.Object["spec"].(map[string]any)["blockSize"] = int64(24)
	rep := run(t, o, clustertest.Healthy(o, 4), pool)
	if r := clustertest.Result(t, rep, "cni", "ippool_block_size"); r.Status != verify.StatusFail ||
		!strings.Contains(r.Msg, "IPPool default-pool has blockSize 24, the inventory says 26 (calico_pool_blocksize)") || !strings.Contains(r.Remediation, "calico_pool_blocksize: 24") {
		t.Errorf("blockSize 24: %+v", r)
	}
	o.CalicoPoolBlocksize = 24
	if r := clustertest.Result(t, run(t, o, clustertest.Healthy(o, 4), pool), "cni", "ippool_block_size"); r.Status != verify.StatusOK {
		t.Errorf("blockSize as the inventory says: %+v", r)
	}
	// A pool without blockSize (calico's default applies) is not judged.
	for _, res := range run(t, threeNode(), clustertest.Healthy(threeNode(), 4), ippool("10.233.64.0/18", "Never", "Always")).Layers["cni"].Results {
		if res.Check == "ippool_block_size" {
			t.Errorf("pool without blockSize: %+v", res)
		}
	}
	for _, tc := range []struct {
		inner, outer  string
		within, known bool
	}{
		{"10.233.64.0/18", "10.233.64.0/18", true, true},
		{"10.233.96.0/19", "10.233.64.0/18", true, true},
		{"10.233.0.0/17", "10.233.64.0/18", false, true},
		{"10.244.0.0/16", "10.233.64.0/18", false, true},
		{"fd85:ee78:d8a6:8607::1:0/112", "fd85:ee78:d8a6:8607::1:0/112", true, true},
		{"nonsense", "10.233.64.0/18", false, false},
	} {
		if w, k := cluster.CIDRWithin(tc.inner, tc.outer); w != tc.within || k != tc.known {
			t.Errorf("%s in %s: %v %v", tc.inner, tc.outer, w, k)
		}
	}
}

func TestDaemonSetMissingOnNode(t *testing.T) {
	o := threeNode()
	w := clustertest.Healthy(o, 4)
	var keep []*corev1.Pod
	for _, p := range w.Pods {
		if p.Name == "calico-node-00002" { // the one on node3
			p.Status.Phase = corev1.PodPending
			p.Status.Conditions = nil
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}
		}
		keep = append(keep, p)
	}
	w.Pods = keep
	// The DaemonSet controller counts the Ready pods in the status.
	for _, ds := range w.DaemonSets {
		if ds.Name == "calico-node" {
			ds.Status.NumberReady, ds.Status.NumberAvailable = 2, 2
		}
	}
	rep, kube := runFake(t, o, w, ippool("10.233.64.0/18", "Never", "Always"))
	r := clustertest.Result(t, rep, "kube_system", "calico-node")
	if r.Status != verify.StatusFail || !strings.Contains(r.Msg, "no Ready pod on node3") ||
		!slices.Contains(r.Evidence.([]string), "calico-node-00002 on node3: Pending, calico-node ImagePullBackOff, not Ready") {
		t.Errorf("calico-node not ready on node3: %+v", r)
	}
	if r := clustertest.Result(t, rep, "cni", "calico-node"); r.Status != verify.StatusFail {
		t.Errorf("cni layer calico-node: %+v", r)
	}
	// The pods are listed once, for both layers, to name the node.
	assert.ElementsMatch(t, []string{"!controller-revision-hash", ""}, podLists(kube))
}

// TestDaemonSetNotDesiredOnEveryNode: a DaemonSet whose status counts all
// its desired pods Ready but desires fewer than the Nodes (a taint it does
// not tolerate) is judged by its pods, which name the node left out.
func TestDaemonSetNotDesiredOnEveryNode(t *testing.T) {
	o := threeNode()
	w := clustertest.Healthy(o, 4)
	var keep []*corev1.Pod
	for _, p := range w.Pods {
		if p.Name != "nodelocaldns-00001" { // the one on node2
			keep = append(keep, p)
		}
	}
	w.Pods = keep
	for _, ds := range w.DaemonSets {
		if ds.Name == "nodelocaldns" {
			ds.Status.DesiredNumberScheduled, ds.Status.CurrentNumberScheduled, ds.Status.NumberReady, ds.Status.NumberAvailable, ds.Status.UpdatedNumberScheduled = 2, 2, 2, 2, 2
		}
	}
	rep := run(t, o, w, ippool("10.233.64.0/18", "Never", "Always"))
	r := clustertest.Result(t, rep, "kube_system", "nodelocaldns")
	assert.Equal(t, verify.StatusFail, r.Status, "%+v", r)
	assert.Contains(t, r.Msg, "DaemonSet kube-system/nodelocaldns: 2/2 ready; no Ready pod on node2")
}

// TestDaemonSetStatusLagsARemovedNode: right after remove-node.yml
// deleted node4's Node (measured on the day-2 machines), kube-proxy's and
// flannel's status still desired 4 pods with 3 Ready, while a Ready pod ran
// on each of the 3 Nodes: the controller's count lags, no pod is missing.
// One Node without its pod is still a failure.
func TestDaemonSetStatusLagsARemovedNode(t *testing.T) {
	o := threeNode()
	w := clustertest.Healthy(o, 4)
	for _, ds := range w.DaemonSets {
		if ds.Name == "kube-proxy" {
			ds.Status.DesiredNumberScheduled, ds.Status.CurrentNumberScheduled, ds.Status.UpdatedNumberScheduled = 4, 4, 4
		}
	}
	rep := run(t, o, w, ippool("10.233.64.0/18", "Never", "Always"))
	r := clustertest.Result(t, rep, "kube_system", "kube-proxy")
	assert.Equal(t, verify.StatusOK, r.Status, "%+v", r)
	assert.Contains(t, r.Msg, "its status still counts 3/4 ready for 1 Node(s) gone")

	// The pod of node4 itself, not Ready and still bound to the Node just
	// deleted, until the pod garbage collector deletes it (the day-2 run's
	// verify.yml right after remove-node.yml found it): not a missing pod.
	w = clustertest.Healthy(o, 4)
	for _, p := range w.Pods {
		if p.Name == "kube-proxy-00001" {
			gone := p.DeepCopy()
			gone.Name, gone.Spec.NodeName = "kube-proxy-gone4", "node4"
			gone.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
			w.Pods = append(w.Pods, gone)
			break
		}
	}
	for _, ds := range w.DaemonSets {
		if ds.Name == "kube-proxy" {
			ds.Status.DesiredNumberScheduled, ds.Status.CurrentNumberScheduled, ds.Status.UpdatedNumberScheduled = 4, 4, 4
		}
	}
	rep = run(t, o, w, ippool("10.233.64.0/18", "Never", "Always"))
	r = clustertest.Result(t, rep, "kube_system", "kube-proxy")
	assert.Equal(t, verify.StatusOK, r.Status, "%+v", r)
	assert.Contains(t, r.Msg, "its status still counts 3/4 ready for 1 Node(s) gone")

	w = clustertest.Healthy(o, 4)
	var keep []*corev1.Pod
	for _, p := range w.Pods {
		if p.Name != "kube-proxy-00001" { // the one on node2
			keep = append(keep, p)
		}
	}
	w.Pods = keep
	for _, ds := range w.DaemonSets {
		if ds.Name == "kube-proxy" {
			ds.Status.DesiredNumberScheduled, ds.Status.NumberReady = 4, 2
		}
	}
	rep = run(t, o, w, ippool("10.233.64.0/18", "Never", "Always"))
	r = clustertest.Result(t, rep, "kube_system", "kube-proxy")
	assert.Equal(t, verify.StatusFail, r.Status, "%+v", r)
	assert.Contains(t, r.Msg, "no Ready pod on node2")
}

// TestDaemonSetsJudgedFromStatus: when every DaemonSet's status counts a
// Ready pod on every Node, their pods (three or more per node) are not
// listed; only the pods no DaemonSet created, which are the found fact.
func TestDaemonSetsJudgedFromStatus(t *testing.T) {
	o := threeNode()
	rep, kube := runFake(t, o, clustertest.Healthy(o, 4), ippool("10.233.64.0/18", "Never", "Always"))
	for _, n := range []string{"kube-proxy", "calico-node", "nodelocaldns"} {
		r := clustertest.Result(t, rep, "kube_system", n)
		assert.Equal(t, verify.StatusOK, r.Status, "%+v", r)
		assert.Equal(t, "DaemonSet kube-system/"+n+" Ready on every node (3)", r.Msg)
	}
	assert.Equal(t, []string{"!controller-revision-hash"}, podLists(kube))
	found := rep.Layers["kube_system"].Facts.(*cluster.KubeSystemFacts).Found
	assert.Contains(t, found, "kube-apiserver-node1")
	for _, p := range found {
		assert.NotContains(t, p, "calico-node-", "a DaemonSet's pod in found")
	}
}

func TestAutoscaledCoreDNS(t *testing.T) {
	for _, c := range []struct {
		nodes int
		cores int64
		want  int
	}{{1, 4, 1}, {3, 12, 2}, {40, 160, 3}, {10, 1024, 4}, {1000, 4000, 63}} {
		o := cluster.Options{KubeNode: make([]string, c.nodes)}
		for i := range o.KubeNode {
			o.KubeNode[i] = string(rune('a' + i%26))
		}
		o.Defaults()
		o.DNSMinReplicas = min(2, c.nodes)
		if got := cluster.AutoscaledCoreDNS(&o, c.nodes, c.cores); got != c.want {
			t.Errorf("%d nodes, %d cores: %d replicas, want %d", c.nodes, c.cores, got, c.want)
		}
	}
}

func TestHelmReleases(t *testing.T) {
	o := threeNode()
	o.HelmEnabled = true
	ctx := context.Background()
	kube := clustertest.Fake()
	for _, s := range []struct{ ns, name, status, version string }{
		{"cert-manager", "cert-manager", "failed", "1"}, {"cert-manager", "cert-manager", "deployed", "2"},
		{"ingress", "ingress-nginx", "deployed", "1"}, {"ingress", "ingress-nginx", "failed", "2"},
	} {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "sh.helm.release.v1." + s.name + ".v" + s.version,
			Labels: map[string]string{"owner": "helm", "name": s.name, "status": s.status, "version": s.version}}}
		if _, err := kube.CoreV1().Secrets(s.ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	o.Defaults()
	env := &cluster.Env{Kube: clustertest.Clientset(kube), Options: o, Server: "fake", CheckMode: true}
	rep, err := cluster.Run(ctx, env, []string{"addons"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := clustertest.Result(t, rep, "addons", "helm")
	if r.Status != verify.StatusWarn || !strings.Contains(r.Msg, "listable (2), failed: ingress/ingress-nginx") {
		t.Errorf("helm: %+v", r)
	}
}

func TestRequestErrorsNameTheOption(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.conf")
	os.WriteFile(bad, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c\n"), 0o600)
	good := filepath.Join(dir, "good.conf")
	os.WriteFile(good, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"), 0o600)
	groups := cluster.Options{KubeControlPlane: []string{"node1"}, KubeNode: []string{"node1"}}
	for _, c := range []struct {
		req  cluster.Request
		want string
	}{
		{cluster.Request{Options: groups, Kubeconfig: bad}, "kubeconfig " + bad},
		{cluster.Request{Options: groups, Kubeconfig: good, Context: "nope"}, `context "nope" does not exist`},
		{cluster.Request{Options: groups, Kubeconfig: filepath.Join(dir, "missing")}, "option kubeconfig: stat " + filepath.Join(dir, "missing")},
		{cluster.Request{Kubeconfig: good}, "no host in k8s_cluster"},
		{cluster.Request{Options: cluster.Options{KubeNode: []string{"a"}, KubePodsSubnet: "10.233.64.0"}, Kubeconfig: good}, `option kube_pods_subnet: "10.233.64.0" is not a CIDR`},
		{cluster.Request{Options: groups, Kubeconfig: good, Probe: cluster.Probe{Path: "nodeport"}}, `option probe_path: "nodeport"`},
		{cluster.Request{Options: cluster.Options{KubeNode: []string{"a"}, CalicoPoolBlocksize: 33}, Kubeconfig: good}, "option calico_pool_blocksize: 33 is not a block size calico takes for an IPv4 pool (20-32)"},
		{cluster.Request{Options: groups, Kubeconfig: good, Probe: cluster.Probe{AddrMap: map[string]string{"10.233.0.10": "127.0.0.1:1"}}}, `option addr_map: "10.233.0.10" is not host:port`},
		{cluster.Request{Options: groups, Kubeconfig: good, Timeout: -1}, "option timeout: -1 seconds is out of range"},
		{cluster.Request{Options: groups, Kubeconfig: good, Layers: []string{"dns"}}, `unknown layer "dns" (known: nodes, kube_system, cni, addons, probe)`},
	} {
		_, err := cluster.RunRequest(context.Background(), &c.req)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error with %q, got %v", c.want, err)
		}
	}
}

func TestCalicoRRTaint(t *testing.T) {
	o := threeNode()
	o.CalicoRR = []string{"rr1"}
	pool := ippool("10.233.64.0/18", "Never", "Always")
	if r := clustertest.Result(t, run(t, o, clustertest.Healthy(o, 4), pool), "nodes", "taints"); r.Status != verify.StatusOK {
		t.Errorf("tainted calico_rr-only host: %+v", r)
	}
	w := clustertest.Healthy(o, 4)
	w.Node("rr1").Spec.Taints = nil
	rep := run(t, o, w, pool)
	if r := clustertest.Result(t, rep, "nodes", "taints"); r.Status != verify.StatusFail || !strings.Contains(r.Msg, "rr1 is only in calico_rr but lacks node-role.kubernetes.io/calico-rr:NoSchedule") {
		t.Errorf("untainted calico_rr-only host: %+v", r)
	}
	if r := clustertest.Result(t, rep, "kube_system", "calico-node"); r.Status != verify.StatusOK || !strings.Contains(r.Msg, "every node (4)") {
		t.Errorf("calico-node on the route reflector too: %+v", r)
	}
}

// A kubespray v2.30.0 cluster whose inventory sets no kube_version: its
// kubelets and control plane run v2.30.0's default, 1.34.3, which is no
// drift (verify once judged it against v2.31.0's 1.35.4). A kubelet left
// behind the control plane is still found, named against the control
// plane's version.
func TestKubeletsAgainstTheControlPlaneWithoutKubeVersion(t *testing.T) {
	o := threeNode()
	w := clustertest.Healthy(cluster.Options{KubeControlPlane: o.KubeControlPlane, KubeNode: o.KubeNode, Etcd: o.Etcd, KubeVersion: "1.34.3"}, 4)
	at := func(server string) func(*fake.Clientset) {
		return func(k *fake.Clientset) {
			k.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: server}
		}
	}
	rep, _ := runFakeWith(t, o, w, ippool("10.233.64.0/18", "Never", "Always"), at("v1.34.3"))
	r := clustertest.Result(t, rep, "nodes", "kubelet_version")
	assert.Equal(t, verify.StatusOK, r.Status, "%+v", r)
	assert.Equal(t, "every kubelet runs the control plane's Kubernetes v1.34.3 (GET /version; kube_version is not set in the inventory)", r.Msg)

	w.Node("node3").Status.NodeInfo.KubeletVersion = "v1.33.6"
	rep, _ = runFakeWith(t, o, w, ippool("10.233.64.0/18", "Never", "Always"), at("v1.34.3"))
	r = clustertest.Result(t, rep, "nodes", "kubelet_version")
	assert.Equal(t, verify.StatusFail, r.Status, "%+v", r)
	assert.Contains(t, r.Msg, "differs from the control plane's Kubernetes v1.34.3")
	assert.Contains(t, r.Msg, "node3: kubelet v1.33.6")
}

// What the day-2 machines showed: an upgrade-cluster.yml that failed on
// node1 after draining it left node1 cordoned, and kubespray's next,
// successful upgrade kept it so (it uncordons only nodes it found
// schedulable). A cordoned kube_node host fails; a control-plane-only one
// warns.
func TestCordonedNodes(t *testing.T) {
	o := threeNode()
	w := clustertest.Healthy(o, 4)
	rep := run(t, o, w, ippool("10.233.64.0/18", "Never", "Always"))
	assert.Equal(t, verify.StatusOK, clustertest.Result(t, rep, "nodes", "schedulable").Status)

	w.Node("node2").Spec.Unschedulable = true
	rep = run(t, o, w, ippool("10.233.64.0/18", "Never", "Always"))
	r := clustertest.Result(t, rep, "nodes", "schedulable")
	assert.Equal(t, verify.StatusFail, r.Status, "%+v", r)
	assert.Contains(t, r.Msg, "1 node(s) cordoned (Node spec.unschedulable): node2")
	assert.Contains(t, r.Remediation, "kubectl uncordon")
	assert.Contains(t, r.Remediation, "needs_cordoning")

	cpOnly := cluster.Options{KubeControlPlane: []string{"node1"}, KubeNode: []string{"node2", "node3"}, Etcd: []string{"node1"}}
	w = clustertest.Healthy(cpOnly, 4)
	w.Node("node1").Spec.Unschedulable = true
	rep = run(t, cpOnly, w, ippool("10.233.64.0/18", "Never", "Always"))
	r = clustertest.Result(t, rep, "nodes", "schedulable")
	assert.Equal(t, verify.StatusWarn, r.Status, "%+v", r)
}

// Trap 2 of the day-2 machines: kube_pods_subnet changed in the inventory
// from 10.233.64.0/18 to 10.234.64.0/18. cluster.yml finished, re-rendered
// flannel's network from the new value and left the Nodes' podCIDRs in the
// old range, which verify then did not see. The nodes layer says so.
func TestPodCIDROutsideKubePodsSubnet(t *testing.T) {
	o := threeNode()
	w := clustertest.Healthy(o, 4)
	for i, n := range w.Nodes {
		n.Spec.PodCIDR = fmt.Sprintf("10.233.%d.0/24", 64+i)
	}
	rep := run(t, o, w, ippool("10.233.64.0/18", "Never", "Always"))
	assert.Equal(t, verify.StatusOK, clustertest.Result(t, rep, "nodes", "pod_cidr").Status)

	o.KubePodsSubnet = "10.234.64.0/18"
	rep = run(t, o, w, ippool("10.234.64.0/18", "Never", "Always"))
	r := clustertest.Result(t, rep, "nodes", "pod_cidr")
	assert.Equal(t, verify.StatusFail, r.Status, "%+v", r)
	assert.Contains(t, r.Msg, "3 node(s) have a podCIDR outside kube_pods_subnet 10.234.64.0/18 (Node spec.podCIDR): node1: 10.233.64.0/24")
	assert.Contains(t, r.Remediation, "cannot change on a running cluster")
}
