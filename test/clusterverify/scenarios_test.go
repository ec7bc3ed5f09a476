package clusterverify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/layercheck/layercheck/internal/app"
	"github.com/layercheck/layercheck/test/testutil"
	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/cluster/clustertest"
)

// sample3 is inventory-samples/kubespray-3node read as `layercheck cluster`
// reads it (groups after kubespray's dynamic groups, node1's hostvars).
func sample3(t testing.TB) cluster.Options {
	t.Helper()
	o, _, err := app.ClusterOptions([]string{testutil.RepoRoot() + "/inventory-samples/kubespray-3node"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return *o
}

// Cluster is a harness cluster built for an inventory.
type Cluster struct {
	S        *APIServer
	Kubelets *Kubelets
	Metrics  *MetricsServer
	Opts     cluster.Options
}

type setup struct {
	mutate      func(w *clustertest.World)
	ipip, vxlan string
	metricsDown bool
}

// newCluster starts an API server and writes the cluster the inventory
// implies (as a correct cluster.yml leaves it), changed by s.mutate.
func newCluster(t testing.TB, o cluster.Options, s setup) *Cluster {
	t.Helper()
	proxy := StartConnectProxy(t)
	srv := StartAPIServer(t, proxy.Addr)
	od := o
	od.Defaults()
	w := clustertest.Healthy(od, 4)
	if s.mutate != nil {
		s.mutate(w)
	}
	ctx := context.Background()
	if err := w.Apply(ctx, srv.Kube, 8); err != nil {
		t.Fatal(err)
	}
	if s.ipip == "" {
		s.ipip, s.vxlan = od.CalicoIPIPMode, od.CalicoVXLANMode
	}
	if od.KubeNetworkPlugin == "calico" {
		InstallIPPool(t, srv, od.CalicoPoolCIDR, s.ipip, s.vxlan)
	}
	c := &Cluster{S: srv, Opts: o}
	if od.MetricsServerEnabled {
		c.Metrics = StartMetricsServer(t, srv, od.K8sCluster(), !s.metricsDown)
		if s.metricsDown {
			WaitAPIService(t, srv, "False")
		} else {
			WaitAPIService(t, srv, "True")
		}
	}
	if od.HelmEnabled {
		HelmRelease(t, srv, "cert-manager", "cert-manager", "deployed")
	}
	c.Kubelets = StartKubelets(t, srv.Kube, od.KubeNode)
	return c
}

func (c *Cluster) request(probeTimeout float64) *cluster.Request {
	return &cluster.Request{Options: c.Opts, Kubeconfig: c.S.Kubeconfig, Timeout: 5,
		Probe: cluster.Probe{Path: "service_proxy", Port: freePort(), Timeout: probeTimeout}}
}

var portSeq = 18080

// freePort is the probe's container port: each scenario its own, so the
// fake pods' listeners on 127.0.0.N never meet an old one.
func freePort() int { portSeq++; return portSeq }

func (c *Cluster) run(t *testing.T, req *cluster.Request) *cluster.Report {
	t.Helper()
	rep, err := cluster.RunRequest(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	c.assertNoProbeNamespace(t)
	return rep
}

// assertNoProbeNamespace: the probe namespaces never survive a run for
// long: a run deletes them without waiting, and they go once emptied.
func (c *Cluster) assertNoProbeNamespace(t *testing.T) {
	t.Helper()
	var left []string
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := c.S.Kube.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=layercheck"})
		if err != nil {
			t.Fatal(err)
		}
		left = left[:0]
		for _, ns := range l.Items {
			if ns.DeletionTimestamp == nil {
				t.Errorf("probe namespace %s survived the run undeleted (phase %s)", ns.Name, ns.Status.Phase)
				return
			}
			left = append(left, ns.Name)
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("probe namespaces %v deleted but still there 30s after the run", left)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func dump(rep *cluster.Report) string {
	var b strings.Builder
	for _, n := range rep.OrderedLayers() {
		for _, r := range rep.Layers[n].Results {
			b.WriteString("  " + n + "/" + r.Check + " " + string(r.Status) + ": " + r.Msg + "\n")
		}
	}
	return b.String()
}

func TestHealthyThreeNode(t *testing.T) {
	c := newCluster(t, sample3(t), setup{})
	rep := c.run(t, c.request(30))
	if rep.Status != verify.StatusOK {
		t.Fatalf("healthy cluster: %s\n%s", rep.Status, dump(rep))
	}
	if rep.ServerVersion != KubeVersion {
		t.Errorf("server version %q, want %s", rep.ServerVersion, KubeVersion)
	}
	r := clustertest.Result(t, rep, "probe", "service")
	if !strings.Contains(r.Msg, "via service_proxy") {
		t.Errorf("probe does not say its path: %s", r.Msg)
	}
	pf := rep.Layers["probe"].Facts.(*cluster.ProbeFacts)
	if len(pf.Answered) != 2 || pf.Path != "service_proxy" {
		t.Errorf("probe facts: %+v", pf)
	}
	// A probe pod resolved the Service's name through its nameserver
	// (nodelocaldns_ip, read from the resolver's answer for an absent name).
	if r := clustertest.Result(t, rep, "probe", "service_dns"); r.Status != verify.StatusOK ||
		!regexp.MustCompile(`^a probe pod resolved layercheck-probe\.layercheck-probe-[0-9a-f]+\.svc\.cluster\.local through nameserver 169\.254\.25\.10 and reached the Service: layercheck-probe-[0-9]-[0-9]+ answered \(1 attempt\(s\)\)$`).MatchString(r.Msg) {
		t.Errorf("service_dns: %+v", r)
	}
	if r := clustertest.Result(t, rep, "addons", "metrics_apiservice"); r.Status != verify.StatusOK {
		t.Errorf("metrics: %+v", r)
	}
	if r := clustertest.Result(t, rep, "addons", "helm"); r.Status != verify.StatusOK || !strings.Contains(r.Msg, "1 release") {
		t.Errorf("helm: %+v", r)
	}
}

func TestControlPlaneTaintLeftOnWorker(t *testing.T) {
	c := newCluster(t, sample3(t), setup{mutate: func(w *clustertest.World) {
		w.Node("node3").Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	}})
	req := c.request(30)
	req.Layers = []string{"nodes"}
	rep := c.run(t, req)
	r := clustertest.Result(t, rep, "nodes", "taints")
	if r.Status != verify.StatusFail || !strings.Contains(r.Msg, "node3 is in kube_control_plane and kube_node but carries node-role.kubernetes.io/control-plane:NoSchedule") {
		t.Fatalf("taint on node3: %+v", r)
	}
}

func TestEtcdPodWithHostDeployment(t *testing.T) {
	c := newCluster(t, sample3(t), setup{mutate: func(w *clustertest.World) {
		w.Pods = append(w.Pods, clustertest.StaticPod("etcd", "node2"))
	}})
	req := c.request(30)
	req.Layers = []string{"kube_system"}
	rep := c.run(t, req)
	r := clustertest.Result(t, rep, "kube_system", "etcd")
	if r.Status != verify.StatusFail || !strings.Contains(r.Msg, "etcd_deployment_type is host but kube-system has etcd pod(s): etcd-node2") {
		t.Fatalf("etcd pod: %+v", r)
	}
	if rep.Layers["kube_system"].Status != verify.StatusFail {
		t.Errorf("layer status %s", rep.Layers["kube_system"].Status)
	}
}

func TestCalicoPoolIPIPWhileInventorySaysVXLAN(t *testing.T) {
	c := newCluster(t, sample3(t), setup{ipip: "Always", vxlan: "Never"})
	req := c.request(30)
	req.Layers = []string{"cni"}
	rep := c.run(t, req)
	r := clustertest.Result(t, rep, "cni", "ippool_encapsulation")
	if r.Status != verify.StatusFail || !strings.Contains(r.Msg, "ipipMode is Always, the inventory says Never") || !strings.Contains(r.Remediation, "calicoctl.sh patch ippool default-pool") {
		t.Fatalf("IPIP pool: %+v", r)
	}
	if r := clustertest.Result(t, rep, "cni", "ippool_cidr"); r.Status != verify.StatusOK {
		t.Errorf("cidr: %+v", r)
	}
}

// kubespray's flannel through the real API server: healthy, then
// NetworkPolicies flannel does not enforce (counted from one page of one:
// the server's remainingItemCount), then net-conf.json edited by hand.
func TestFlannelThroughAPIServer(t *testing.T) {
	o := sample3(t)
	o.KubeNetworkPlugin = "flannel"
	c := newCluster(t, o, setup{})
	req := c.request(30)
	req.Layers = []string{"cni"}
	rep := c.run(t, req)
	if rep.Layers["cni"].Status != verify.StatusOK {
		t.Fatalf("healthy flannel: %s\n%s", rep.Layers["cni"].Status, dump(rep))
	}

	ctx := context.Background()
	for _, ns := range []string{"team-a", "team-b"} {
		_, err := c.S.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for _, p := range [][2]string{{"team-a", "deny-all"}, {"team-a", "allow-dns"}, {"team-b", "deny-all"}} {
		_, err := c.S.Kube.NetworkingV1().NetworkPolicies(p[0]).Create(ctx, &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: p[0], Name: p[1]},
			Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	cm, err := c.S.Kube.CoreV1().ConfigMaps("kube-system").Get(ctx, cluster.FlannelConfigMap, metav1.GetOptions{})
	require.NoError(t, err)
	cm.Data[cluster.FlannelNetConfKey] = strings.Replace(cm.Data[cluster.FlannelNetConfKey], `"vxlan"`, `"host-gw"`, 1)
	_, err = c.S.Kube.CoreV1().ConfigMaps("kube-system").Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)

	rep = c.run(t, req)
	if r := clustertest.Result(t, rep, "cni", "network_policy"); r.Status != verify.StatusWarn ||
		r.Msg != "3 NetworkPolicies (first: team-a/allow-dns) are accepted by the API server and not enforced by flannel" {
		t.Errorf("policies: %+v", r)
	}
	r := clustertest.Result(t, rep, "cni", "flannel_backend")
	if r.Status != verify.StatusFail || !strings.Contains(r.Msg, "Backend.Type is host-gw, the inventory says vxlan (flannel_backend_type") ||
		!strings.Contains(r.Remediation, "rollout restart daemonset kube-flannel") {
		t.Errorf("backend: %+v", r)
	}
	if r := clustertest.Result(t, rep, "cni", "flannel_network"); r.Status != verify.StatusOK {
		t.Errorf("network: %+v", r)
	}
}

func TestMetricsAPIServiceUnavailable(t *testing.T) {
	c := newCluster(t, sample3(t), setup{metricsDown: true})
	req := c.request(30)
	req.Layers = []string{"addons"}
	rep := c.run(t, req)
	r := clustertest.Result(t, rep, "addons", "metrics_apiservice")
	if r.Status != verify.StatusFail || !strings.Contains(r.Msg, "is not Available: FailedDiscoveryCheck") {
		t.Fatalf("metrics APIService: %+v", r)
	}
}

func TestProbeOnlyOnePodAnswers(t *testing.T) {
	c := newCluster(t, sample3(t), setup{})
	c.Kubelets.Answer = func(i int) bool { return i == 0 }
	req := c.request(6)
	req.Layers = []string{"probe"}
	rep := c.run(t, req)
	r := clustertest.Result(t, rep, "probe", "service")
	pf := rep.Layers["probe"].Facts.(*cluster.ProbeFacts)
	if r.Status != verify.StatusFail || len(pf.Answered) != 1 || len(pf.Pods) != 2 || !strings.Contains(r.Msg, "never by [") {
		t.Fatalf("one pod answering: %+v\nfacts %+v", r, pf)
	}
	if r := clustertest.Result(t, rep, "probe", "probe_cleanup"); r.Status != verify.StatusOK {
		t.Errorf("cleanup: %+v", r)
	}
}

// The pods' DNS does not answer (nodelocaldns down on their node): the
// Service answers by its ClusterIP, its name does not resolve in a pod,
// and service_dns says the name, the nameserver and the resolver's error.
func TestProbeServiceDNSDown(t *testing.T) {
	c := newCluster(t, sample3(t), setup{})
	c.Kubelets.DNSDown.Store(true)
	req := c.request(5)
	req.Layers = []string{"probe"}
	rep := c.run(t, req)
	if r := clustertest.Result(t, rep, "probe", "service"); r.Status != verify.StatusOK {
		t.Fatalf("service: %+v", r)
	}
	r := clustertest.Result(t, rep, "probe", "service_dns")
	if r.Status != verify.StatusFail ||
		!regexp.MustCompile(`^a probe pod could not resolve layercheck-probe\.layercheck-probe-[0-9a-f]+\.svc\.cluster\.local through nameserver 169\.254\.25\.10: lookup \S+ on 169\.254\.25\.10:53: read udp \S+: i/o timeout \([0-9]+ attempt\(s\) in`).MatchString(r.Msg) ||
		!strings.Contains(r.Remediation, "query_nodelocaldns") {
		t.Errorf("DNS down: %+v", r)
	}
	if r := clustertest.Result(t, rep, "probe", "probe_cleanup"); r.Status != verify.StatusOK {
		t.Errorf("cleanup: %+v", r)
	}
	// The Service not answering: the name is not asked for.
	c.Kubelets.DNSDown.Store(false)
	c.Kubelets.Answer = func(int) bool { return false }
	rep = c.run(t, req)
	if r := clustertest.Result(t, rep, "probe", "service_dns"); r.Status != verify.StatusSkipped || !strings.Contains(r.Msg, "the probe's Service did not answer") {
		t.Errorf("no Service: %+v", r)
	}
}

func TestProbeTimesOutAndCleansUp(t *testing.T) {
	c := newCluster(t, sample3(t), setup{})
	c.Kubelets.RunPods = false
	req := c.request(4)
	req.Layers = []string{"probe"}
	start := time.Now()
	rep := c.run(t, req)
	r := clustertest.Result(t, rep, "probe", "service")
	if r.Status != verify.StatusFail || !strings.Contains(r.Msg, "0/2 replicas Ready after 4s") {
		t.Fatalf("probe timeout: %+v", r)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("probe with a 4s timeout took %s", d)
	}
}

// A probe namespace whose deletion never completes (a finalizer the test
// leaves on it, as a controller that no longer runs would): the run that
// made it deletes it and says so without waiting; the next run, once
// probe_cleanup_timeout has passed, reports it as a probe_cleanup failure
// naming the namespace, its phase and finalizers. The test then removes
// the finalizer and the namespace goes.
func TestProbeCleanupStuckNamespace(t *testing.T) {
	c := newCluster(t, sample3(t), setup{})
	c.Kubelets.RunPods = false
	const ns, hold = "layercheck-probe-stuck", "example.com/hold"
	req := c.request(3)
	req.Layers = []string{"probe"}
	req.Probe.Namespace = ns
	req.Probe.CleanupTimeout = 1
	// Put the finalizer on the namespace as soon as the probe creates it.
	ctx, cancel := context.WithCancel(context.Background())
	held := make(chan struct{})
	go func() {
		defer close(held)
		for ctx.Err() == nil {
			got, err := c.S.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if err == nil {
				got.Finalizers = append(got.Finalizers, hold)
				if _, err := c.S.Kube.CoreV1().Namespaces().Update(ctx, got, metav1.UpdateOptions{}); err == nil {
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	start := time.Now()
	rep, err := cluster.RunRequest(context.Background(), req)
	cancel()
	<-held
	require.NoError(t, err)

	probe := clustertest.Result(t, rep, "probe", "service")
	assert.Equal(t, verify.StatusFail, probe.Status)
	assert.Contains(t, probe.Msg, "0/2 replicas Ready after 3s")
	r := clustertest.Result(t, rep, "probe", "probe_cleanup")
	assert.Equal(t, verify.StatusOK, r.Status, r.Msg)
	assert.Contains(t, r.Msg, "probe namespace "+ns+" deleted (Terminating")
	assert.Less(t, time.Since(start), 3*time.Second+15*time.Second, "the run waited for its namespace to go")

	// The next run, past probe_cleanup_timeout, reports it.
	time.Sleep(1500 * time.Millisecond)
	req2 := c.request(3)
	req2.Layers = []string{"probe"}
	req2.Probe.CleanupTimeout = 1
	rep, err = cluster.RunRequest(context.Background(), req2)
	require.NoError(t, err)
	var stuck *verify.Result
	for i, res := range rep.Layers["probe"].Results {
		if res.Check == "probe_cleanup" && strings.Contains(res.Msg, ns) {
			stuck = &rep.Layers["probe"].Results[i]
		}
	}
	require.NotNil(t, stuck, "the next run does not report %s:\n%s", ns, dump(rep))
	assert.Equal(t, verify.StatusFail, stuck.Status)
	assert.Regexp(t, `^left by an earlier run: probe namespace `+ns+` still exists [0-9]+s after its deletion: phase Terminating, finalizers: `+regexp.QuoteMeta(hold), stuck.Msg)
	assert.Contains(t, stuck.Remediation, "kubectl patch namespace "+ns)
	assert.Contains(t, stuck.Remediation, "kube-controller-manager")
	st, ok := stuck.Evidence.(*cluster.NamespaceStuck)
	require.True(t, ok, "evidence %T", stuck.Evidence)
	assert.Equal(t, ns, st.Namespace)
	assert.Equal(t, "Terminating", st.Phase)
	assert.Contains(t, st.Finalizers, hold)
	for _, res := range rep.Layers["probe"].Results {
		assert.NotContains(t, res.Msg, "did not finish within", "the layer deadline must not be what reports")
	}

	// Remove the finalizer: the namespace goes, as the remedy says.
	got, err := c.S.Kube.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	require.NoError(t, err)
	got.Finalizers = nil
	_, err = c.S.Kube.CoreV1().Namespaces().Update(context.Background(), got, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := c.S.Kube.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, time.Minute, 200*time.Millisecond, "namespace %s still there after its finalizer was removed", ns)
	c.assertNoProbeNamespace(t)
}

func TestAPIServerStopped(t *testing.T) {
	c := newCluster(t, sample3(t), setup{})
	c.S.Stop()
	req := c.request(30)
	req.Timeout = 3
	start := time.Now()
	rep, err := cluster.RunRequest(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("run against a stopped API server took %s (timeout 3s)", d)
	}
	if rep.Status != verify.StatusError {
		t.Fatalf("status %s\n%s", rep.Status, dump(rep))
	}
	r := clustertest.Result(t, rep, "nodes", "api_server")
	// Nothing listens any more: said as a refusal, not as a silence.
	if !strings.Contains(r.Msg, "API server "+c.S.URL+" refused the connection") || strings.Contains(r.Msg, "did not answer") ||
		!strings.Contains(r.Remediation, "crictl ps -a --name kube-apiserver") {
		t.Errorf("message: %s\nfix: %s", r.Msg, r.Remediation)
	}
}

func TestCheckModeSkipsProbe(t *testing.T) {
	c := newCluster(t, sample3(t), setup{})
	req := c.request(30)
	req.CheckMode = true
	rep := c.run(t, req)
	if r := clustertest.Result(t, rep, "probe", "service"); r.Status != verify.StatusSkipped || !strings.Contains(r.Msg, "check mode") {
		t.Fatalf("check mode: %+v", r)
	}
	if rep.Status != verify.StatusOK {
		t.Errorf("status %s\n%s", rep.Status, dump(rep))
	}
}

func TestLocalPathProvisionerBindsProbePVC(t *testing.T) {
	o := sample3(t)
	o.LocalPathProvisionerEnabled = true
	c := newCluster(t, o, setup{})
	c.Kubelets.SetProvision(true)
	req := c.request(20)
	req.Layers = []string{"addons"}
	rep := c.run(t, req)
	if r := clustertest.Result(t, rep, "addons", "storage_class"); r.Status != verify.StatusOK || !strings.Contains(r.Msg, "local-path present (default: true, as configured)") {
		t.Errorf("storage class: %+v", r)
	}
	if r := clustertest.Result(t, rep, "addons", "local_path_provisioner"); r.Status != verify.StatusOK {
		t.Errorf("provisioner deployment: %+v", r)
	}
	if r := clustertest.Result(t, rep, "addons", "pvc_bind"); r.Status != verify.StatusOK || !strings.Contains(r.Msg, "bound to pvc-") {
		t.Errorf("pvc bind: %+v", r)
	}

	// The provisioner does nothing: the PVC stays Pending, the namespace
	// still goes.
	c.Kubelets.SetProvision(false)
	req = c.request(4)
	req.Layers = []string{"addons"}
	rep = c.run(t, req)
	if r := clustertest.Result(t, rep, "addons", "pvc_bind"); r.Status != verify.StatusFail || !strings.Contains(r.Msg, "still Pending after 4s") {
		t.Errorf("pvc never bound: %+v", r)
	}
}

// TestCLI runs `layercheck cluster -i inventory-samples/kubespray-3node
// --kubeconfig FILE` as an operator would: exit 0 and a one-line-per-layer
// report on the healthy cluster, exit 1 naming the fix on a broken one.
func TestCLI(t *testing.T) {
	bin := testutil.BuildCLI(t, t.TempDir())
	sample := filepath.Join(testutil.RepoRoot(), "inventory-samples", "kubespray-3node")
	run := func(c *Cluster, extra ...string) (string, int) {
		cmd := exec.Command(bin, append([]string{"cluster", "-i", sample, "--kubeconfig", c.S.Kubeconfig, "--probe-path", "service_proxy",
			"--probe-port", strconv.Itoa(freePort()), "--probe-timeout", "20s", "--timeout", "5s"}, extra...)...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		c.assertNoProbeNamespace(t)
		return string(out), code
	}
	c := newCluster(t, sample3(t), setup{})
	out, code := run(c)
	if code != 0 || !strings.Contains(out, "layercheck cluster: "+c.S.URL+" ("+KubeVersion+"): OK") || !regexp.MustCompile(`(?m)^  probe +ok `).MatchString(out) ||
		!strings.Contains(out, " API requests") {
		t.Errorf("healthy: exit %d\n%s", code, out)
	}
	b := newCluster(t, sample3(t), setup{ipip: "Always", vxlan: "Never"})
	out, code = run(b)
	if code != 1 || !strings.Contains(out, "[FAIL] cni ippool_encapsulation: IPPool default-pool: ipipMode is Always, the inventory says Never") || !strings.Contains(out, "fix: kubespray does not change") {
		t.Errorf("IPIP pool: exit %d\n%s", code, out)
	}

	// The same as metrics, on stdout and in DIR/layercheck_cluster.prom.
	dir := t.TempDir()
	out, code = run(b, "--format", "prometheus", "--textfile", dir, "--layer", "nodes", "--layer", "cni")
	file, err := os.ReadFile(filepath.Join(dir, "layercheck_cluster.prom"))
	if code != 1 || err != nil || string(file) != out {
		t.Fatalf("prometheus: exit %d, %v\n%s\nfile:\n%s", code, err, out, file)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := p.TextToMetricFamilies(strings.NewReader(out)); err != nil {
		t.Errorf("prometheus: %v\n%s", err, out)
	}
	for _, want := range []string{`layercheck_layer_status{layer="cni",scope="cluster",status="fail"} 1`, `layercheck_layer_status{layer="nodes",scope="cluster",status="ok"} 1`,
		`layercheck_last_run_timestamp_seconds{scope="cluster"} `} {
		if !strings.Contains(out, want) {
			t.Errorf("prometheus: no %s in\n%s", want, out)
		}
	}
}

// TestProbeThroughClusterIP takes the kube-proxy path (as from a node):
// probe_path cluster_ip, and auto, which uses the ClusterIP when it
// answers; the test's kube-proxy stands in for the ClusterIP.
func TestProbeThroughClusterIP(t *testing.T) {
	c := newCluster(t, sample3(t), setup{})
	kp := StartKubeProxy(t, c.Kubelets)
	for _, path := range []string{"cluster_ip", "auto"} {
		req := c.request(20)
		req.Layers = []string{"probe"}
		req.Probe.Path = path
		req.Probe.AddrMap = map[string]string{"cluster_ip:80": kp.Addr}
		rep := c.run(t, req)
		r := clustertest.Result(t, rep, "probe", "service")
		pf := rep.Layers["probe"].Facts.(*cluster.ProbeFacts)
		if r.Status != verify.StatusOK || pf.Path != "cluster_ip" || !strings.Contains(r.Msg, "via cluster_ip") || !strings.Contains(pf.Target, "the kube-proxy path") {
			t.Errorf("probe_path %s: %+v\nfacts %+v", path, r, pf)
		}
		if r := clustertest.Result(t, rep, "probe", "service_dns"); r.Status != verify.StatusOK || pf.DNS == nil || pf.DNS.Nameserver != "169.254.25.10" {
			t.Errorf("probe_path %s service_dns: %+v\nfacts %+v", path, r, pf.DNS)
		}
		// Where the probe's time went: every step timed, and together no
		// more than the layer took.
		if tm := pf.Timings; tm == nil {
			t.Errorf("probe_path %s: no timings in the probe's facts", path)
		} else if sum := tm.CreateMS + tm.ReadyMS + tm.ServiceMS + tm.DNSMS + tm.CleanupMS; tm.ReadyMS <= 0 || sum > rep.Layers["probe"].DurationMS {
			t.Errorf("probe_path %s: timings %+v (sum %d ms) against the layer's %d ms", path, *tm, sum, rep.Layers["probe"].DurationMS)
		}
	}
	// One pod does not answer: the failure names the kube-proxy path's fixes.
	c.Kubelets.Answer = func(i int) bool { return i == 1 }
	req := c.request(5)
	req.Layers = []string{"probe"}
	req.Probe.Path = "cluster_ip"
	req.Probe.AddrMap = map[string]string{"cluster_ip:80": kp.Addr}
	rep := c.run(t, req)
	if r := clustertest.Result(t, rep, "probe", "service"); r.Status != verify.StatusFail || !strings.Contains(r.Remediation, "kube-proxy rules") {
		t.Errorf("one pod via ClusterIP: %+v", r)
	}
}
