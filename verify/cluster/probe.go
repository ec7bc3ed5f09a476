package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/layercheck/layercheck/verify"
)

func init() { register("probe", func() Layer { return probeLayer{} }) }

type probeLayer struct{}

func (probeLayer) Name() string { return "probe" }

// ProbeName is the name of the probe's Deployment and Service.
const ProbeName = "layercheck-probe"

// probePoll is how often the probes read again what they wait for (the
// Deployment's Ready replicas, the PVC's phase): a few cheap GETs a second
// for a few seconds, where each poll's wait was a good part of a settled
// cluster's verify.
const probePoll = 250 * time.Millisecond

var probeLabels = map[string]string{"app.kubernetes.io/name": ProbeName, "app.kubernetes.io/managed-by": "layercheck"}

// probeSelector selects what carries probeLabels: verify's probe namespaces.
var probeSelector = labels.SelectorFromSet(probeLabels)

// ProbeFacts is the probe layer's facts.
type ProbeFacts struct {
	Namespace string   `json:"namespace,omitempty"`
	Path      string   `json:"path,omitempty"` // cluster_ip or service_proxy
	Target    string   `json:"target,omitempty"`
	Pods      []string `json:"pods,omitempty"`
	Answered  []string `json:"answered,omitempty"`
	Requests  int      `json:"requests,omitempty"`
	// DNS is what the service_dns check saw (probe_dns.go).
	DNS *ProbeDNSFacts `json:"dns,omitempty"`
	// Timings says where the probe's time went, step by step.
	Timings *ProbeTimings `json:"timings_ms,omitempty"`
	// dialTarget is the Service's address as this host dials it (the
	// ClusterIP after addr_map), for the cluster_ip path.
	dialTarget string
	start      time.Time // the end of the last step Timings holds
}

// lap returns the milliseconds since the last step ended, and starts the
// next one.
func (f *ProbeFacts) lap() int64 {
	now := time.Now()
	d := now.Sub(f.start).Milliseconds()
	f.start = now
	return d
}

// ProbeTimings is each step of the probe in milliseconds, from the end of
// the one before. ReadyMS is kubelet's part, the probe's floor on a settled
// cluster: scheduling both pods, their sandboxes and containers started with
// the image present, and the first readiness probe that passes.
type ProbeTimings struct {
	CreateMS  int64 `json:"create"`  // namespace, Deployment and Service created
	ReadyMS   int64 `json:"ready"`   // both replicas Ready
	ServiceMS int64 `json:"service"` // both pods answered through the Service
	DNSMS     int64 `json:"dns"`     // the service_dns lookup from a pod
	CleanupMS int64 `json:"cleanup"` // the namespace's deletion asked
}

func randSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// createProbeNamespace creates a fresh namespace (generateName-like, but
// with our own suffix so the name is known before the call) or the
// configured probe_namespace, which must not exist yet.
func createProbeNamespace(ctx context.Context, env *Env, prefix string) (string, error) {
	name := prefix + randSuffix()
	if prefix == "layercheck-probe-" && env.Probe.Namespace != "" {
		name = env.Probe.Namespace
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: probeLabels}}
	_, err := env.Kube.CreateNamespace(ctx, ns)
	if apierrors.IsAlreadyExists(err) && waitGone(ctx, env, name) {
		// The configured probe_namespace, which the run before deleted
		// (runs do not wait for their namespace to go).
		_, err = env.Kube.CreateNamespace(ctx, ns)
	}
	if err != nil {
		if apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("probe namespace %s already exists: layercheck only uses a namespace it creates (delete it or set probe_namespace to another name)", name)
		}
		return "", errAPI(env, "create namespace "+name, err)
	}
	return name, nil
}

// waitGone waits, within probe_cleanup_timeout, for namespace name to go
// when it is one of verify's probe namespaces already deleted, and says
// whether it went.
func waitGone(ctx context.Context, env *Env, name string) bool {
	ctx, cancel := context.WithTimeout(ctx, env.Probe.cleanupTimeout())
	defer cancel()
	for {
		got, err := env.Kube.GetNamespace(ctx, name)
		if apierrors.IsNotFound(err) {
			return true
		}
		if err != nil || got.DeletionTimestamp == nil || !probeSelector.Matches(labels.Set(got.Labels)) || ctx.Err() != nil {
			return false
		}
		sleep(ctx, 300*time.Millisecond)
	}
}

// NamespaceStuck is a probe namespace that was not gone when the clean-up
// budget ran out: its phase, the finalizers holding it (metadata's, then
// spec's, e.g. "kubernetes" which the namespace controller of
// kube-controller-manager removes) and its conditions.
type NamespaceStuck struct {
	Namespace  string        `json:"namespace"`
	Phase      string        `json:"phase"`
	Finalizers []string      `json:"finalizers"`
	Conditions []string      `json:"conditions,omitempty"`
	Waited     time.Duration `json:"-"`
	// Err is why the deletion could not be asked or followed, if it could not.
	Err error `json:"-"`
}

func (e *NamespaceStuck) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("probe namespace %s not deleted: %v", e.Namespace, e.Err)
	}
	fin := "none"
	if len(e.Finalizers) > 0 {
		fin = strings.Join(e.Finalizers, ", ")
	}
	msg := fmt.Sprintf("probe namespace %s still exists %s after its deletion: phase %s, finalizers: %s", e.Namespace, e.Waited, e.Phase, fin)
	if len(e.Conditions) > 0 {
		msg += "; conditions: " + strings.Join(e.Conditions, "; ")
	}
	return msg
}

// Remedy is the fix for a namespace that does not go away.
func (e *NamespaceStuck) Remedy() string {
	ns := e.Namespace
	fix := fmt.Sprintf("delete it yourself: kubectl delete namespace %s; kubectl get namespace %s -o yaml shows what holds it. ", ns, ns)
	var meta bool
	for _, f := range e.Finalizers {
		if f != "kubernetes" {
			meta = true
		}
	}
	if meta {
		fix += fmt.Sprintf("A finalizer whose controller no longer runs never goes away by itself: once nothing needs it, kubectl patch namespace %s --type=merge -p '{\"metadata\":{\"finalizers\":null}}'. ", ns)
	}
	return fix + "Namespaces are emptied and finalized by kube-controller-manager's namespace controller: check it runs and is healthy on the control plane (crictl ps -a --name kube-controller-manager; kubectl -n kube-system logs kube-controller-manager-<host>), and that no APIService is unavailable (kubectl get apiservice: discovery failures block namespace deletion)."
}

// deleteNamespace asks the API server to delete ns, and does not wait for
// it to go: kube-controller-manager's namespace controller starts emptying
// a deleted namespace only after a fixed grace period of 5 s
// (namespaceDeletionGracePeriod, so that every API server has seen the
// deletion), which alone was more than the rest of a settled cluster's
// verify. The namespace is Terminating when this returns; the next run
// reports it if it is still there after probe_cleanup_timeout
// (earlierProbeNamespaces). It uses its own context so it runs after a
// timeout or cancellation of the probe.
func deleteNamespace(env *Env, ns string) error {
	ctx, cancel := context.WithTimeout(context.Background(), env.Timeout)
	defer cancel()
	// The namespace controller deletes what is inside; no propagation
	// policy, so no garbage-collector finalizer is added to the namespace.
	err := env.Kube.DeleteNamespace(ctx, ns)
	if err != nil && !apierrors.IsNotFound(err) {
		return &NamespaceStuck{Namespace: ns, Err: errAPI(env, "delete namespace", err)}
	}
	return nil
}

// stuckOf is what holds namespace n, deleted waited ago.
func stuckOf(n *corev1.Namespace, waited time.Duration) *NamespaceStuck {
	st := &NamespaceStuck{Namespace: n.Name, Phase: string(n.Status.Phase), Waited: waited}
	st.Finalizers = append(st.Finalizers, n.Finalizers...)
	for _, f := range n.Spec.Finalizers {
		st.Finalizers = append(st.Finalizers, string(f))
	}
	for _, c := range n.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			st.Conditions = append(st.Conditions, fmt.Sprintf("%s: %s", c.Type, c.Message))
		}
	}
	return st
}

// earlierProbeNamespaces reads the namespaces earlier runs' probes left
// (verify's labels), since a run does not wait for its own to go:
//   - one deleted more than probe_cleanup_timeout ago is stuck: a
//     probe_cleanup failure naming its phase, finalizers and conditions;
//   - one never deleted and older than a whole probe layer may take belongs
//     to a run that stopped before its clean-up (killed, or its API server
//     lost): deleted now, and said as a warning (in check mode only said);
//   - younger ones may be another run's (verify from two machines at once)
//     and are left alone.
//
// The ages are read against this host's clock, the namespaces' timestamps
// against the API server's. When the namespaces cannot be listed it says
// nothing: the probe's own calls then say what is wrong with the API.
func earlierProbeNamespaces(ctx context.Context, env *Env) []verify.Result {
	l, err := env.Kube.ListNamespaces(ctx, metav1.ListOptions{LabelSelector: probeSelector.String()})
	if err != nil {
		return nil
	}
	now := time.Now()
	var res []verify.Result
	for i := range l.Items {
		n := &l.Items[i]
		if n.DeletionTimestamp != nil {
			ago := now.Sub(n.DeletionTimestamp.Time).Round(time.Second)
			if ago <= env.Probe.cleanupTimeout() {
				continue
			}
			st := stuckOf(n, ago)
			res = append(res, verify.Result{Check: "probe_cleanup", Status: verify.StatusFail,
				Msg: "left by an earlier run: " + st.Error(), Evidence: st, Remediation: st.Remedy()})
			continue
		}
		age := now.Sub(n.CreationTimestamp.Time).Round(time.Second)
		if age <= env.probeLayerBudget() {
			continue
		}
		r := verify.Result{Check: "probe_cleanup", Status: verify.StatusWarn, Remediation: "kubectl delete namespace " + n.Name}
		what := fmt.Sprintf("probe namespace %s, created %s ago by a run that stopped before its clean-up", n.Name, age)
		if env.CheckMode {
			r.Msg = what + "; check mode: not deleted"
		} else if err := deleteNamespace(env, n.Name); err != nil {
			r.Status, r.Msg = verify.StatusFail, what+": "+err.Error()
		} else {
			r.Msg, r.Remediation = what+": deleted now", ""
		}
		res = append(res, r)
	}
	return res
}

func (probeLayer) Check(ctx context.Context, env *Env) ([]verify.Result, any, error) {
	res, facts, err := checkProbe(ctx, env)
	return append(res, earlierProbeNamespaces(ctx, env)...), facts, err
}

func checkProbe(ctx context.Context, env *Env) (res []verify.Result, _ *ProbeFacts, _ error) {
	facts := &ProbeFacts{}
	if env.CheckMode {
		return []verify.Result{{Check: "service", Status: verify.StatusSkipped,
			Msg: "check mode: the workload probe creates a namespace, a Deployment and a Service, so it is skipped; run without --check to prove a request through a Service"}}, facts, nil
	}
	if !boolOr(env.Probe.Enabled, true) {
		return []verify.Result{{Check: "service", Status: verify.StatusSkipped, Msg: "probe: false"}}, facts, nil
	}
	if r, blocked := namespaceDeletionBlocked(ctx, env, "service", "the workload probe"); blocked {
		return []verify.Result{r}, facts, nil
	}
	facts.Timings = &ProbeTimings{}
	facts.start = time.Now()
	ns, err := createProbeNamespace(ctx, env, "layercheck-probe-")
	if err != nil {
		return nil, facts, err
	}
	facts.Namespace = ns
	// The probe's own outcome is always reported; the clean-up, with its
	// own budget, is a result of its own.
	defer func() {
		facts.lap() // what the step that stopped the probe took
		res = append(res, cleanupResult(env, ns))
		facts.Timings.CleanupMS = facts.lap()
	}()
	// One budget, probe_timeout, for the Service and the name behind it.
	pctx, cancel := context.WithTimeout(ctx, env.Probe.timeout())
	defer cancel()
	r := runProbe(pctx, env, ns, facts)
	if r.Status != verify.StatusOK {
		return []verify.Result{r, {Check: "service_dns", Status: verify.StatusSkipped,
			Msg: "not run: the probe's Service did not answer (see service), so a pod's lookup of its name would say nothing more"}}, facts, nil
	}
	dns := probeDNS(pctx, env, ns, facts)
	facts.Timings.DNSMS = facts.lap()
	return []verify.Result{r, dns}, facts, nil
}

// namespaceDeletionBlocked reports, as result check, that a probe (what)
// is not run because a namespace created now could not be deleted: the
// namespace controller of kube-controller-manager deletes a namespace's
// content through every API group's discovery, and while an aggregated
// APIService is not Available it leaves the namespace Terminating
// (NamespaceDeletionDiscoveryFailure) until it is. Verify creates only
// what it removes, so it does not create the namespace then. On the
// kubespray v2.31.0 cluster, metrics-server scaled to 0 left both probe
// namespaces Terminating past the clean-up budget. When the APIServices
// cannot be listed, the probe runs as before.
func namespaceDeletionBlocked(ctx context.Context, env *Env, check, what string) (verify.Result, bool) {
	if env.Dynamic == nil {
		return verify.Result{}, false
	}
	down, settling, ok := downAPIServices(ctx, env)
	if !ok || len(down) == 0 {
		return verify.Result{}, false
	}
	// Right after cluster.yml metrics-server may still be starting (the
	// layers run side by side, so the addons layer may be waiting for it
	// too): an APIService whose Deployment is still rolling out, or has
	// just become Available, is waited for.
	if settling {
		poll(ctx, env.rolloutWait(ctx), func() bool { return settling && len(down) > 0 }, func() {
			if d, s, ok := downAPIServices(ctx, env); ok {
				down, settling = d, s
			}
		})
		if len(down) == 0 {
			return verify.Result{}, false
		}
	}
	return verify.Result{Check: check, Status: verify.StatusWarn,
		Msg: fmt.Sprintf("%s was not run: APIService %s not Available, so a namespace created now could not be deleted (kube-controller-manager leaves it Terminating with NamespaceDeletionDiscoveryFailure until every API group answers)",
			what, verify.Abridge(down)),
		Actual:      down,
		Remediation: "make the APIService Available first (kubectl get apiservice; for v1beta1.metrics.k8s.io, metrics-server's pods), or delete an APIService whose backend is gone; then run verify again"}, true
}

// downAPIServices lists the aggregated APIServices (those with a
// spec.service) that are not Available, as "name (reason)", and whether
// one of them is settling: the Deployment of its Service's name is still
// rolling out or has just become Available. ok is false when the
// APIServices cannot be listed.
func downAPIServices(ctx context.Context, env *Env) (down []string, settling, ok bool) {
	l, err := env.Dynamic.Resource(APIServiceGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, false, false
	}
	for _, as := range l.Items {
		// spec.service is {namespace, name, port}: port is a number, so
		// the map is not a string map.
		svc, _, _ := unstructured.NestedMap(as.Object, "spec", "service")
		if svc == nil {
			continue // served by kube-apiserver itself
		}
		svcNS, _ := svc["namespace"].(string)
		svcName, _ := svc["name"].(string)
		status, reason, _, _ := apiServiceAvailable(&as)
		if status == "True" {
			continue
		}
		down = append(down, fmt.Sprintf("%s (%s)", as.GetName(), reason))
		if d, err := env.Kube.GetDeployment(ctx, svcNS, svcName); err == nil && (rollingOut(d) || justAvailable(d, apiServiceSettle)) {
			settling = true
		}
	}
	sort.Strings(down)
	return down, settling, true
}

// cleanupResult deletes the probe namespace ns and says how that went: a
// probe_cleanup result naming the namespace, its phase and finalizers and
// the remedy when it is not gone within the clean-up budget.
func cleanupResult(env *Env, ns string) verify.Result {
	err := deleteNamespace(env, ns)
	if err == nil {
		return verify.Result{Check: "probe_cleanup", Status: verify.StatusOK, Msg: "probe namespace " + ns +
			" deleted (Terminating: kube-controller-manager's namespace controller removes it after its 5 s grace period; the next run reports it if it is not gone within probe_cleanup_timeout)"}
	}
	var st *NamespaceStuck
	if !errors.As(err, &st) {
		st = &NamespaceStuck{Namespace: ns, Err: err}
	}
	return verify.Result{Check: "probe_cleanup", Status: verify.StatusFail, Msg: st.Error(), Evidence: st, Remediation: st.Remedy()}
}

func runProbe(ctx context.Context, env *Env, ns string, facts *ProbeFacts) verify.Result {
	p := &env.Probe
	ctx, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	fail := func(msg, fix string) verify.Result {
		return verify.Result{Check: "service", Status: verify.StatusFail, Msg: msg, Evidence: facts, Remediation: fix}
	}
	replicas := int32(2)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: ProbeName, Labels: probeLabels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: probeLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: probeLabels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name: "netexec", Image: p.Image,
						Args:  []string{"netexec", "--http-port=" + strconv.Itoa(p.Port)},
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: int32(p.Port)}},
						// kubelet probes readiness every PeriodSeconds from the
						// pod's start, before the container runs: at the
						// default 10 s a pod up in one second was Ready up to
						// ten later, most of a settled cluster's verify.
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
							Path: "/hostname", Port: intstr.FromInt32(int32(p.Port))}}, PeriodSeconds: 1},
					}},
					TerminationGracePeriodSeconds: new(int64),
					// Spread the two replicas over two nodes when there are.
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100,
							PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname",
								LabelSelector: &metav1.LabelSelector{MatchLabels: probeLabels}}}}}},
				},
			},
		},
	}
	if _, err := env.Kube.CreateDeployment(ctx, ns, dep); err != nil {
		return fail("create probe Deployment: "+errAPI(env, "create deployment", err).Error(), "check that the admin kubeconfig may create Deployments")
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: ProbeName, Labels: probeLabels},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: probeLabels,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(int32(p.Port))}}},
	}
	created, err := env.Kube.CreateService(ctx, ns, svc)
	if err != nil {
		return fail("create probe Service: "+errAPI(env, "create service", err).Error(), "check kube_service_addresses has free addresses")
	}
	clusterIP := created.Spec.ClusterIP
	facts.Timings.CreateMS = facts.lap()

	// Wait for both replicas Ready.
	for {
		d, err := env.Kube.GetDeployment(ctx, ns, ProbeName)
		if err == nil && d.Status.ReadyReplicas >= replicas {
			break
		}
		if ctx.Err() != nil {
			ready := int32(0)
			if d != nil {
				ready = d.Status.ReadyReplicas
			}
			return fail(fmt.Sprintf("probe Deployment %s/%s: %d/%d replicas Ready after %s", ns, ProbeName, ready, replicas, p.timeout()),
				fmt.Sprintf("the pods never became Ready: image %s pullable from the nodes? (kubectl -n %s describe pods during a run; set probe_image to a mirror for offline clusters), schedulable nodes in kube_node?", p.Image, ns))
		}
		sleep(ctx, probePoll)
	}
	facts.Timings.ReadyMS = facts.lap()
	pods, err := env.Kube.ListPods(ctx, ns, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + ProbeName})
	if err != nil {
		return fail("list probe pods: "+errAPI(env, "list pods", err).Error(), "")
	}
	want := map[string]bool{}
	for _, pod := range pods.Items {
		if pod.DeletionTimestamp == nil && podReady(&pod) {
			want[pod.Name] = true
			facts.Pods = append(facts.Pods, pod.Name)
		}
	}
	sort.Strings(facts.Pods)

	path := p.Path
	target := net.JoinHostPort(clusterIP, "80")
	if m, ok := p.AddrMap[target]; ok {
		target = m
	} else if m, ok := p.AddrMap["cluster_ip:80"]; ok {
		target = m // tests: the ClusterIP is only known once the Service exists
	}
	if path == "auto" {
		path = "service_proxy"
		d := net.Dialer{Timeout: min(env.Timeout, 2*time.Second)}
		if c, err := d.DialContext(ctx, "tcp", target); err == nil {
			c.Close()
			path = "cluster_ip"
		}
	}
	facts.Path = path
	facts.dialTarget = target
	httpc := env.HTTP
	if httpc == nil {
		// A new connection per request: kube-proxy balances connections,
		// so a kept-alive one would ask the same pod every time.
		httpc = &http.Client{Timeout: env.Timeout, Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	}
	ask := func() (string, error) {
		if path == "cluster_ip" {
			facts.Target = "http://" + target + "/hostname (ClusterIP " + clusterIP + ", the kube-proxy path)"
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+target+"/hostname", nil)
			resp, err := httpc.Do(req)
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(io.LimitReader(resp.Body, 512))
			if resp.StatusCode != http.StatusOK {
				return "", fmt.Errorf("HTTP %d", resp.StatusCode)
			}
			return strings.TrimSpace(string(b)), err
		}
		facts.Target = fmt.Sprintf("%s/api/v1/namespaces/%s/services/http:%s:80/proxy/hostname (the API server's service proxy)", env.Server, ns, ProbeName)
		rctx, rcancel := context.WithTimeout(ctx, env.Timeout)
		defer rcancel()
		b, err := env.Kube.ServiceProxyGet(rctx, ns, "http", ProbeName, "80", "hostname", nil)
		return strings.TrimSpace(string(b)), err
	}
	answered := map[string]bool{}
	var lastErr error
	for len(answered) < len(want) || len(want) == 0 {
		if ctx.Err() != nil {
			break
		}
		facts.Requests++
		name, err := ask()
		if err != nil {
			lastErr = err
		} else if name != "" {
			answered[name] = true
		}
		if len(answered) < len(want) {
			sleep(ctx, 100*time.Millisecond)
		}
	}
	for n := range answered {
		facts.Answered = append(facts.Answered, n)
	}
	sort.Strings(facts.Answered)
	facts.Timings.ServiceMS = facts.lap()
	if len(want) > 0 && len(answered) >= len(want) {
		return verify.Result{Check: "service", Status: verify.StatusOK,
			Msg: fmt.Sprintf("Service %s/%s answered with both pod names (%s) via %s in %d request(s)", ns, ProbeName,
				strings.Join(facts.Answered, ", "), path, facts.Requests), Evidence: facts}
	}
	var missing []string
	for n := range want {
		if !answered[n] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	msg := fmt.Sprintf("Service %s/%s via %s: %d request(s) in %s answered by [%s], never by [%s]", ns, ProbeName, path, facts.Requests, p.timeout(),
		strings.Join(facts.Answered, ", "), strings.Join(missing, ", "))
	if lastErr != nil {
		msg += "; last error: " + lastErr.Error()
	}
	fix := "a pod that is Ready but never answers through the Service: kube-proxy rules (ipvsadm -Ln / iptables-save | grep " + ProbeName + ") or pod-to-pod traffic between nodes (calico encapsulation, a firewall dropping VXLAN udp/4789 or IPIP protocol 4)"
	if path == "service_proxy" {
		fix = "the API server could not reach that pod's IP: routes from the control plane to the pod network (calico on the control-plane nodes, a firewall between nodes), or kube-proxy/endpoints (kubectl -n NAMESPACE get endpointslices)"
	}
	return fail(msg, fix)
}
