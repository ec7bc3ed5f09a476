package cluster_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/cluster/clustertest"
)

// oneControlPlane is the v2.31.0 e2e cluster: node1 control plane and etcd,
// node1-3 kube_node, flannel, metrics-server enabled.
func oneControlPlane() cluster.Options {
	o := cluster.Options{KubeControlPlane: []string{"node1"}, KubeNode: []string{"node1", "node2", "node3"}, Etcd: []string{"node1"},
		KubeNetworkPlugin: "flannel", EtcdDeploymentType: "host", MetricsServerEnabled: true}
	o.Defaults()
	return o
}

// rollingOut is a Deployment the way the controller shows its first pod
// not yet ready: Progressing True, ReplicaSetUpdated.
func rollingOut(d *appsv1.Deployment) {
	d.Status.ReadyReplicas, d.Status.AvailableReplicas = 0, 0
	d.Status.Conditions = []appsv1.DeploymentCondition{
		{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable"},
		{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated", Message: `ReplicaSet "metrics-server-5d8f6c4b9" is progressing.`},
	}
}

func deployment(w *clustertest.World, ns, name string) *appsv1.Deployment {
	for _, d := range w.Deployments {
		if d.Namespace == ns && d.Name == name {
			return d
		}
	}
	return nil
}

// envFor is the Env of the fake cluster w with the metrics APIService as.
func envFor(t *testing.T, o cluster.Options, w *clustertest.World, wait time.Duration, apiStatus, apiReason string) (*cluster.Env, *fake.Clientset, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	kube := clustertest.Fake()
	require.NoError(t, w.Apply(context.Background(), kube, 4))
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		cluster.IPPoolGVR: "IPPoolList", cluster.APIServiceGVR: "APIServiceList"}, apiService(apiStatus, apiReason))
	env := &cluster.Env{Kube: clustertest.Clientset(kube), Dynamic: dyn, Options: o, Server: "fake", CheckMode: true,
		Timeout: 5 * time.Second, LayerTimeout: 30 * time.Second, RolloutWait: wait}
	return env, kube, dyn
}

// What verify.yml met right after kubespray v2.31.0's cluster.yml on the
// node machines: cluster.yml's last play had restarted kubelet and removed
// kube-controller-manager's pod sandbox (its mirror pod ContainerCreating,
// not Ready), metrics-server's first pod was not yet ready (Progressing,
// ReplicaSetUpdated) and its APIService said MissingEndpoints. All three
// came right within seconds; verify waits for them rather than failing.
func TestWaitsForWhatClusterYMLLeftRestarting(t *testing.T) {
	defer cluster.SetRolloutPoll(20 * time.Millisecond)()
	o := oneControlPlane()
	w := clustertest.Healthy(o, 4)
	rollingOut(deployment(w, "kube-system", "metrics-server"))
	for _, p := range w.Pods {
		if p.Name == "kube-controller-manager-node1" {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		}
	}
	env, kube, dyn := envFor(t, o, w, 10*time.Second, "False", "MissingEndpoints")
	// Ready after its first scrape, metrics-server lists no node until its
	// second: the first NodeMetricsLists are empty.
	nm := &nodeMetricsAfter{API: env.Kube, empty: 3}
	env.Kube = nm
	ctx := context.Background()
	// They come right while verify runs: the static pod first, then
	// metrics-server, then the aggregator.
	go func() {
		time.Sleep(150 * time.Millisecond)
		p, err := kube.CoreV1().Pods("kube-system").Get(ctx, "kube-controller-manager-node1", metav1.GetOptions{})
		if err == nil {
			healthy := clustertest.StaticPod("kube-controller-manager", "node1")
			p.Status = healthy.Status
			_, _ = kube.CoreV1().Pods("kube-system").UpdateStatus(ctx, p, metav1.UpdateOptions{})
		}
		time.Sleep(150 * time.Millisecond)
		d, err := kube.AppsV1().Deployments("kube-system").Get(ctx, "metrics-server", metav1.GetOptions{})
		if err == nil {
			d.Status.ReadyReplicas, d.Status.AvailableReplicas = 1, 1
			d.Status.Conditions[0] = appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
				Reason: "MinimumReplicasAvailable", LastTransitionTime: metav1.Now()}
			d.Status.Conditions[1].Reason = "NewReplicaSetAvailable"
			_, _ = kube.AppsV1().Deployments("kube-system").UpdateStatus(ctx, d, metav1.UpdateOptions{})
		}
		time.Sleep(150 * time.Millisecond)
		_, _ = dyn.Resource(cluster.APIServiceGVR).Update(ctx, apiService("True", "Passed"), metav1.UpdateOptions{})
	}()
	rep, err := cluster.Run(ctx, env, []string{"kube_system", "addons"}, nil)
	require.NoError(t, err)
	r := clustertest.Result(t, rep, "kube_system", "kube-controller-manager")
	assert.Equal(t, verify.StatusOK, r.Status, r.Msg)
	assert.Contains(t, r.Msg, "waiting for the control plane's static pods to restart")
	r = clustertest.Result(t, rep, "addons", "metrics_server")
	assert.Equal(t, verify.StatusOK, r.Status, r.Msg)
	assert.Contains(t, r.Msg, "after verify began waiting for its rollout")
	r = clustertest.Result(t, rep, "addons", "metrics_apiservice")
	assert.Equal(t, verify.StatusOK, r.Status, r.Msg)
	r = clustertest.Result(t, rep, "addons", "node_metrics")
	assert.Equal(t, verify.StatusOK, r.Status, r.Msg)
	assert.Equal(t, 4, nm.calls)
}

// nodeMetricsAfter answers metrics.k8s.io's NodeMetricsList: empty for the
// first empty calls, then with node1-3.
type nodeMetricsAfter struct {
	cluster.API
	empty, calls int
}

func (n *nodeMetricsAfter) RawGet(ctx context.Context, path string) ([]byte, error) {
	if path != "/apis/metrics.k8s.io/v1beta1/nodes" {
		return n.API.RawGet(ctx, path)
	}
	n.calls++
	if n.calls <= n.empty {
		return []byte(`{"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","items":[]}`), nil
	}
	return []byte(`{"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","items":[` +
		`{"metadata":{"name":"node1"}},{"metadata":{"name":"node2"}},{"metadata":{"name":"node3"}}]}`), nil
}

// nodeMetricsUnavailable answers metrics.k8s.io with the aggregator's 503
// for the first unavailable calls (client-go's error for it), then with
// node1-3.
type nodeMetricsUnavailable struct {
	nodeMetricsAfter
	unavailable int
}

func (n *nodeMetricsUnavailable) RawGet(ctx context.Context, path string) ([]byte, error) {
	if path == "/apis/metrics.k8s.io/v1beta1/nodes" && n.calls < n.unavailable {
		n.calls++
		return nil, apierrors.NewGenericServerResponse(http.StatusServiceUnavailable, "get", schema.GroupResource{}, "", "", 0, true)
	}
	return n.nodeMetricsAfter.RawGet(ctx, path)
}

// On the calico cluster right after cluster.yml, the metrics APIService
// said Available and the aggregator still answered its first GET with 503
// ("the server is currently unable to handle the request"): its proxy
// takes the APIService up a moment later. An APIService that has just
// turned Available is read again; one Available for long is judged at
// once.
func TestNodeMetricsWhileTheAggregatorTakesUpTheAPIService(t *testing.T) {
	defer cluster.SetRolloutPoll(20 * time.Millisecond)()
	o := oneControlPlane()
	w := clustertest.Healthy(o, 4)
	d := deployment(w, "kube-system", "metrics-server")
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
		Reason: "MinimumReplicasAvailable", LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))}}

	env, _, dyn := envFor(t, o, w, 10*time.Second, "True", "Passed")
	as := apiService("True", "Passed")
	conds := as.Object["status"].(map[string]any)["conditions"].([]any)
	conds[0].(map[string]any)["lastTransitionTime"] = time.Now().Add(-2 * time.Second).UTC().Format(time.RFC3339)
	_, err := dyn.Resource(cluster.APIServiceGVR).Update(context.Background(), as, metav1.UpdateOptions{})
	require.NoError(t, err)
	nm := &nodeMetricsUnavailable{nodeMetricsAfter: nodeMetricsAfter{API: env.Kube}, unavailable: 2}
	env.Kube = nm
	rep := runAddonsAtOnce(t, env)
	r := clustertest.Result(t, rep, "addons", "node_metrics")
	assert.Equal(t, verify.StatusOK, r.Status, r.Msg)
	assert.Equal(t, 3, nm.calls)

	// Available for an hour, and the aggregator still answers 503: that
	// is the answer.
	env, _, _ = envFor(t, o, w, 10*time.Second, "True", "Passed")
	nm = &nodeMetricsUnavailable{nodeMetricsAfter: nodeMetricsAfter{API: env.Kube}, unavailable: 100}
	env.Kube = nm
	rep = runAddonsAtOnce(t, env)
	r = clustertest.Result(t, rep, "addons", "node_metrics")
	assert.Equal(t, verify.StatusFail, r.Status)
	assert.Contains(t, r.Msg, "the server is currently unable to handle the request")
	assert.Equal(t, 1, nm.calls)
}

// runAddonsAtOnce runs the addons layer and asserts that it did not wait.
func runAddonsAtOnce(t *testing.T, env *cluster.Env) *cluster.Report {
	t.Helper()
	start := time.Now()
	rep, err := cluster.Run(context.Background(), env, []string{"addons"}, nil)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	return rep
}

// What is not rolling out is judged at once, whatever the wait allows:
// metrics-server scaled to 0 (a seeded break), and a Deployment whose
// rollout finished and later lost its pod. One that rolls out for longer
// than the wait fails and says so.
func TestNoWaitForWhatIsNotRollingOut(t *testing.T) {
	defer cluster.SetRolloutPoll(20 * time.Millisecond)()
	o := oneControlPlane()
	w := clustertest.Healthy(o, 4)
	d := deployment(w, "kube-system", "metrics-server")
	zero := int32(0)
	d.Spec.Replicas = &zero
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Conditions: []appsv1.DeploymentCondition{
		{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"}}}
	env, _, _ := envFor(t, o, w, time.Minute, "False", "MissingEndpoints")
	rep := runAddonsAtOnce(t, env)
	r := clustertest.Result(t, rep, "addons", "metrics_server")
	assert.Equal(t, verify.StatusFail, r.Status)
	assert.Contains(t, r.Msg, "scaled to 0 replicas")
	assert.Contains(t, r.Remediation, "--replicas=1")
	assert.NotContains(t, r.Msg, "waiting")
	assert.Equal(t, verify.StatusFail, clustertest.Result(t, rep, "addons", "metrics_apiservice").Status)

	// Finished, then its pod lost: Progressing stays NewReplicaSetAvailable.
	w = clustertest.Healthy(o, 4)
	d = deployment(w, "kube-system", "metrics-server")
	d.Status.ReadyReplicas, d.Status.AvailableReplicas = 0, 0
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"}}
	env, _, _ = envFor(t, o, w, time.Minute, "False", "MissingEndpoints")
	rep = runAddonsAtOnce(t, env)
	assert.Equal(t, verify.StatusFail, clustertest.Result(t, rep, "addons", "metrics_server").Status)

	// Available for an hour with its APIService not: the aggregator has had
	// its chances, and the APIService is judged at once.
	w = clustertest.Healthy(o, 4)
	d = deployment(w, "kube-system", "metrics-server")
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
		Reason: "MinimumReplicasAvailable", LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))}}
	env, _, _ = envFor(t, o, w, time.Minute, "False", "FailedDiscoveryCheck")
	rep = runAddonsAtOnce(t, env)
	assert.Equal(t, verify.StatusOK, clustertest.Result(t, rep, "addons", "metrics_server").Status)
	assert.Equal(t, verify.StatusFail, clustertest.Result(t, rep, "addons", "metrics_apiservice").Status)

	// Available for an hour and a node without metrics: a warning at once.
	env, _, _ = envFor(t, o, w, time.Minute, "True", "Passed")
	nm := &nodeMetricsAfter{API: env.Kube, empty: 100}
	env.Kube = nm
	rep = runAddonsAtOnce(t, env)
	assert.Equal(t, 1, nm.calls)
	assert.Equal(t, verify.StatusWarn, clustertest.Result(t, rep, "addons", "node_metrics").Status)

	// Still rolling out when the wait runs out.
	w = clustertest.Healthy(o, 4)
	rollingOut(deployment(w, "kube-system", "metrics-server"))
	env, _, _ = envFor(t, o, w, 300*time.Millisecond, "False", "MissingEndpoints")
	rep, err := cluster.Run(context.Background(), env, []string{"addons"}, nil)
	require.NoError(t, err)
	r = clustertest.Result(t, rep, "addons", "metrics_server")
	assert.Equal(t, verify.StatusFail, r.Status)
	assert.Contains(t, r.Msg, "still rolling out after")
	assert.Contains(t, r.Msg, "ReplicaSetUpdated")
}

// The PVC probe's pod was refused on the v2.31.0 cluster right after
// cluster.yml, while kube-controller-manager restarted and had not yet
// made the new namespace's "default" ServiceAccount. That refusal is
// retried; any other is not.
func TestProbePodWaitsForDefaultServiceAccount(t *testing.T) {
	kube := clustertest.Fake()
	refusals := 0
	saMissing := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "layercheck-probe-pvc",
		errors.New(`error looking up service account layercheck-pvc-e402850a/default: serviceaccount "default" not found`))
	kube.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if refusals < 3 {
			refusals++
			return true, nil, saMissing
		}
		return false, nil, nil
	})
	env := &cluster.Env{Kube: clustertest.Clientset(kube), Server: "fake", Timeout: time.Second}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "layercheck-probe-pvc"}}
	ctx := context.Background()
	require.NoError(t, cluster.CreatePodInNewNamespace(ctx, env, "layercheck-pvc-e402850a", pod, time.Now().Add(5*time.Second)))
	assert.Equal(t, 3, refusals)

	// Past the deadline the refusal is the answer.
	refusals = 0
	err := cluster.CreatePodInNewNamespace(ctx, env, "layercheck-pvc-e402850a", pod, time.Now())
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), `serviceaccount "default" not found`), err.Error())

	// Another refusal is not retried.
	kube = clustertest.Fake()
	calls := 0
	kube.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "x", errors.New("violates PodSecurity \"restricted:latest\""))
	})
	env.Kube = clustertest.Clientset(kube)
	require.Error(t, cluster.CreatePodInNewNamespace(ctx, env, "ns", pod, time.Now().Add(5*time.Second)))
	assert.Equal(t, 1, calls)
}

// With metrics-server scaled to 0 on the v2.31.0 cluster, both probe
// namespaces stayed Terminating (NamespaceDeletionDiscoveryFailure) past
// the clean-up budget: kube-controller-manager cannot delete a namespace
// while an aggregated APIService is not Available. The probes are then not
// run, and say why, rather than leave a namespace behind.
func TestProbesNotRunWhileAnAPIServiceIsDown(t *testing.T) {
	o := oneControlPlane()
	o.LocalPathProvisionerEnabled = true
	o.Defaults()
	w := clustertest.Healthy(o, 4)
	d := deployment(w, "kube-system", "metrics-server")
	zero := int32(0)
	d.Spec.Replicas = &zero
	env, kube, _ := envFor(t, o, w, time.Minute, "False", "MissingEndpoints")
	env.CheckMode = false
	rep, err := cluster.Run(context.Background(), env, []string{"probe", "addons"}, nil)
	require.NoError(t, err)
	for _, c := range []struct{ layer, check string }{{"probe", "service"}, {"addons", "pvc_bind"}} {
		r := clustertest.Result(t, rep, c.layer, c.check)
		assert.Equal(t, verify.StatusWarn, r.Status, r.Msg)
		assert.Contains(t, r.Msg, "v1beta1.metrics.k8s.io (MissingEndpoints) not Available")
		assert.Contains(t, r.Remediation, "make the APIService Available first")
	}
	for _, a := range kube.Actions() {
		if ca, ok := a.(k8stesting.CreateAction); ok && a.GetResource().Resource == "namespaces" {
			if ns, _ := ca.GetObject().(*corev1.Namespace); ns != nil && strings.HasPrefix(ns.Name, "layercheck-") {
				t.Errorf("a probe namespace was created: %s", ns.Name)
			}
		}
	}

	// Available: nothing in the way.
	env, _, _ = envFor(t, o, w, time.Minute, "True", "Passed")
	_, blocked := cluster.NamespaceDeletionBlocked(context.Background(), env, "service", "the workload probe")
	assert.False(t, blocked)
}

// The layers run side by side: right after cluster.yml the probe layer
// meets metrics-server's APIService MissingEndpoints while the Deployment
// is still rolling out. The probe waits for it rather than skip itself.
func TestProbeWaitsForAnAPIServiceStillStarting(t *testing.T) {
	defer cluster.SetRolloutPoll(20 * time.Millisecond)()
	o := oneControlPlane()
	w := clustertest.Healthy(o, 4)
	rollingOut(deployment(w, "kube-system", "metrics-server"))
	env, kube, dyn := envFor(t, o, w, 10*time.Second, "False", "MissingEndpoints")
	ctx := context.Background()
	go func() {
		time.Sleep(200 * time.Millisecond)
		d, err := kube.AppsV1().Deployments("kube-system").Get(ctx, "metrics-server", metav1.GetOptions{})
		if err == nil {
			d.Status.ReadyReplicas, d.Status.AvailableReplicas = 1, 1
			d.Status.Conditions = []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", LastTransitionTime: metav1.Now()},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"}}
			_, _ = kube.AppsV1().Deployments("kube-system").UpdateStatus(ctx, d, metav1.UpdateOptions{})
		}
		time.Sleep(200 * time.Millisecond)
		_, _ = dyn.Resource(cluster.APIServiceGVR).Update(ctx, apiService("True", "Passed"), metav1.UpdateOptions{})
	}()
	start := time.Now()
	r, blocked := cluster.NamespaceDeletionBlocked(ctx, env, "service", "the workload probe")
	assert.False(t, blocked, r.Msg)
	assert.GreaterOrEqual(t, time.Since(start), 400*time.Millisecond)
}

// What verify.yml met right after scale.yml --limit=node4 on the node
// machines: metrics-server long Available, node4 Ready seconds ago, and
// node4 not yet in the NodeMetricsList (metrics-server had not scraped its
// kubelet yet); `layercheck verify` 20 s later found it. A node that has
// just become Ready is read again; one Ready for long is judged at once.
func TestNodeMetricsWaitForANodeJustJoined(t *testing.T) {
	defer cluster.SetRolloutPoll(20 * time.Millisecond)()
	o := oneControlPlane()
	o.KubeNode = append(o.KubeNode, "node4")
	w := clustertest.Healthy(o, 4)
	for _, n := range w.Nodes {
		n.Status.Conditions[0].LastTransitionTime = metav1.NewTime(time.Now().Add(-time.Hour))
	}
	joined := w.Nodes[len(w.Nodes)-1]
	require.Equal(t, "node4", joined.Name)
	joined.Status.Conditions[0].LastTransitionTime = metav1.Now()
	env, _, _ := envFor(t, o, w, 10*time.Second, "True", "Passed")
	nm := &nodeMetricsList{API: env.Kube, lists: [][]string{{"node1", "node2", "node3"}, {"node1", "node2", "node3"}, {"node1", "node2", "node3", "node4"}}}
	env.Kube = nm
	rep, err := cluster.Run(context.Background(), env, []string{"addons"}, nil)
	require.NoError(t, err)
	r := clustertest.Result(t, rep, "addons", "node_metrics")
	assert.Equal(t, verify.StatusOK, r.Status, r.Msg)
	assert.Equal(t, 3, nm.calls)

	// Ready for an hour and still without metrics: a finding, at once.
	joined.Status.Conditions[0].LastTransitionTime = metav1.NewTime(time.Now().Add(-time.Hour))
	env, _, _ = envFor(t, o, w, 10*time.Second, "True", "Passed")
	nm = &nodeMetricsList{API: env.Kube, lists: [][]string{{"node1", "node2", "node3"}}}
	env.Kube = nm
	rep = runAddonsAtOnce(t, env)
	r = clustertest.Result(t, rep, "addons", "node_metrics")
	assert.Equal(t, verify.StatusWarn, r.Status, r.Msg)
	assert.Contains(t, r.Msg, "node4")
	assert.Equal(t, 1, nm.calls)
}

// nodeMetricsList answers the NodeMetricsList with lists[i] on call i (the
// last one after that).
type nodeMetricsList struct {
	cluster.API
	lists [][]string
	calls int
}

func (n *nodeMetricsList) RawGet(ctx context.Context, path string) ([]byte, error) {
	if path != "/apis/metrics.k8s.io/v1beta1/nodes" {
		return n.API.RawGet(ctx, path)
	}
	l := n.lists[min(n.calls, len(n.lists)-1)]
	n.calls++
	var items []string
	for _, name := range l {
		items = append(items, `{"metadata":{"name":"`+name+`"}}`)
	}
	return []byte(`{"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","items":[` + strings.Join(items, ",") + `]}`), nil
}

// A run does not wait for its probe namespaces to go, so the next reads
// what earlier runs left: deleted and still there past
// probe_cleanup_timeout is stuck (a failure); never deleted and older than
// a probe layer may run is a stopped run's, deleted now (a warning, only
// said in check mode); younger ones, or deleted ones still within the
// clean-up budget, may be another run's and are left alone, as is a
// namespace without verify's labels.
func TestEarlierProbeNamespaces(t *testing.T) {
	now := time.Now()
	ours := map[string]string{"app.kubernetes.io/name": cluster.ProbeName, "app.kubernetes.io/managed-by": "layercheck"}
	ns := func(name string, created time.Duration, deleted *time.Duration, lbl map[string]string) *corev1.Namespace {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbl, CreationTimestamp: metav1.NewTime(now.Add(-created))},
			Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
		if deleted != nil {
			at := metav1.NewTime(now.Add(-*deleted))
			n.DeletionTimestamp = &at
			n.Finalizers = []string{"example.com/hold"}
			n.Status.Phase = corev1.NamespaceTerminating
		}
		return n
	}
	long, short := 10*time.Minute, 10*time.Second
	objs := []runtime.Object{
		ns("layercheck-probe-stuck", time.Hour, &long, ours),
		ns("layercheck-pvc-going", time.Hour, &short, ours),
		ns("layercheck-probe-orphan", time.Hour, nil, ours),
		ns("layercheck-probe-running", time.Minute, nil, ours),
		ns("someone-elses", time.Hour, nil, map[string]string{"app.kubernetes.io/managed-by": "other"}),
	}
	for _, check := range []bool{true, false} {
		kube := fake.NewSimpleClientset(objs...)
		env := &cluster.Env{Kube: clustertest.Clientset(kube), Server: "fake", Timeout: time.Second, CheckMode: check,
			LayerTimeout: 30 * time.Second, Probe: cluster.Probe{Timeout: 120, CleanupTimeout: 60}}
		res := cluster.EarlierProbeNamespaces(context.Background(), env)
		require.Len(t, res, 2, "check mode %v: %+v", check, res)
		// In the API's order, by name.
		assert.Equal(t, verify.StatusFail, res[1].Status)
		assert.Regexp(t, `^left by an earlier run: probe namespace layercheck-probe-stuck still exists 10m0s after its deletion: phase Terminating, finalizers: example\.com/hold`, res[1].Msg)
		assert.Contains(t, res[1].Remediation, "kubectl patch namespace layercheck-probe-stuck")
		assert.Equal(t, verify.StatusWarn, res[0].Status)
		assert.Contains(t, res[0].Msg, "probe namespace layercheck-probe-orphan, created 1h0m0s ago by a run that stopped before its clean-up")
		_, err := kube.CoreV1().Namespaces().Get(context.Background(), "layercheck-probe-orphan", metav1.GetOptions{})
		if check {
			assert.Contains(t, res[0].Msg, "check mode: not deleted")
			assert.NoError(t, err, "check mode deleted a namespace")
		} else {
			assert.Contains(t, res[0].Msg, ": deleted now")
			assert.True(t, apierrors.IsNotFound(err), "the stopped run's namespace is still there: %v", err)
		}
		for _, left := range []string{"layercheck-pvc-going", "layercheck-probe-running", "someone-elses", "layercheck-probe-stuck"} {
			_, err := kube.CoreV1().Namespaces().Get(context.Background(), left, metav1.GetOptions{})
			assert.NoError(t, err, "%s was deleted", left)
		}
	}
}
