package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/layercheck/layercheck/verify"
)

func init() { register("addons", func() Layer { return addonsLayer{} }) }

type addonsLayer struct{}

func (addonsLayer) Name() string { return "addons" }

// APIServiceGVR is the aggregator's APIService (apiregistration.k8s.io/v1).
var APIServiceGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// MetricsAPIService is the APIService metrics-server registers.
const MetricsAPIService = "v1beta1.metrics.k8s.io"

// AddonsFacts is the addons layer's facts.
type AddonsFacts struct {
	MetricsAPIService string   `json:"metrics_apiservice,omitempty"` // Available condition: True, or False/<reason>
	NodeMetrics       int      `json:"node_metrics,omitempty"`
	StorageClass      string   `json:"storage_class,omitempty"`
	PVCBound          *bool    `json:"pvc_bound,omitempty"`
	HelmReleases      []string `json:"helm_releases,omitempty"`
	// Timings is each add-on's checks in milliseconds; they run side by
	// side.
	Timings AddonsTimings `json:"timings_ms"`
}

// AddonsTimings is how long each add-on's checks took, in milliseconds.
type AddonsTimings struct {
	MetricsServer int64 `json:"metrics_server,omitempty"`
	LocalPath     int64 `json:"local_path_provisioner,omitempty"` // the PVC probe with it
	Helm          int64 `json:"helm,omitempty"`
}

func (addonsLayer) Check(ctx context.Context, env *Env) ([]verify.Result, any, error) {
	o := &env.Options
	facts := &AddonsFacts{}
	var res []verify.Result
	if !o.MetricsServerEnabled && !o.LocalPathProvisionerEnabled && !o.HelmEnabled {
		return []verify.Result{{Check: "enabled", Status: verify.StatusSkipped,
			Msg: "no add-on layercheck checks is enabled (metrics_server_enabled, local_path_provisioner_enabled, helm_enabled)"}}, facts, nil
	}
	// What waits for the add-ons to start gets LayerTimeout and
	// RolloutWait of the layer's budget, so that the PVC probe keeps its
	// own (probe_timeout and probe_cleanup_timeout).
	waitCtx, cancel := context.WithTimeout(ctx, env.LayerTimeout+env.RolloutWait)
	defer cancel()
	// The add-ons are checked side by side (each writes its own facts):
	// the PVC probe's pods take seconds that the metrics checks need not
	// wait for. Their results keep this order.
	var metrics, localPath, helm []verify.Result
	var wg sync.WaitGroup
	timed := func(enabled bool, ms *int64, check func()) {
		if !enabled {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			check()
			*ms = time.Since(start).Milliseconds()
		}()
	}
	timed(o.MetricsServerEnabled, &facts.Timings.MetricsServer, func() { metrics = checkMetricsServer(waitCtx, env, facts) })
	timed(o.LocalPathProvisionerEnabled, &facts.Timings.LocalPath, func() { localPath = checkLocalPath(ctx, waitCtx, env, facts) })
	timed(o.HelmEnabled, &facts.Timings.Helm, func() { helm = []verify.Result{checkHelm(ctx, env, facts)} })
	wg.Wait()
	res = slices.Concat(res, metrics, localPath, helm)
	return res, facts, nil
}

func checkMetricsServer(ctx context.Context, env *Env, facts *AddonsFacts) []verify.Result {
	var res []verify.Result
	deps, err := env.snap.Deployments(ctx)
	if err != nil {
		return []verify.Result{{Check: "metrics_server", Status: verify.StatusError, Msg: err.Error()}}
	}
	r, dep := env.awaitDeployment(ctx, "metrics_server", "kube-system", "metrics-server", deps)
	res = append(res, r)

	status, reason, message, availableSince, err := metricsAPIServiceAvailable(ctx, env)
	if err != nil {
		return append(res, verify.Result{Check: "metrics_apiservice", Status: verify.StatusFail,
			Msg:         fmt.Sprintf("APIService %s: %v", MetricsAPIService, errAPI(env, "get apiservice", err)),
			Remediation: "rerun cluster.yml --tags metrics_server; kubectl get apiservice " + MetricsAPIService})
	}
	// The aggregator judges the APIService again once the pod behind it is
	// ready (at the latest on its 30 s resync): with metrics-server just
	// become Available, a not yet Available APIService is read again for a
	// while.
	if status != "True" && r.Status == verify.StatusOK && justAvailable(dep, apiServiceSettle) {
		poll(ctx, min(apiServiceSettle, env.rolloutWait(ctx)), func() bool { return status != "True" && err == nil }, func() {
			status, reason, message, availableSince, err = metricsAPIServiceAvailable(ctx, env)
		})
		if err != nil {
			return append(res, verify.Result{Check: "metrics_apiservice", Status: verify.StatusFail,
				Msg: fmt.Sprintf("APIService %s: %v", MetricsAPIService, errAPI(env, "get apiservice", err))})
		}
	}
	if status != "True" {
		facts.MetricsAPIService = status + "/" + reason
		return append(res, verify.Result{Check: "metrics_apiservice", Status: verify.StatusFail,
			Msg:      fmt.Sprintf("APIService %s is not Available: %s (%s)", MetricsAPIService, reason, message),
			Expected: "Available=True", Actual: fmt.Sprintf("Available=%s reason=%s", status, reason),
			Remediation: APIServiceRemedy(reason)})
	}
	facts.MetricsAPIService = "True"
	res = append(res, verify.Result{Check: "metrics_apiservice", Status: verify.StatusOK, Msg: "APIService " + MetricsAPIService + " Available"})

	n, missing, err := readNodeMetrics(ctx, env)
	// metrics-server is ready after its first scrape but has a node's
	// metrics only after its second, metric resolution (15 s in kubespray)
	// later: just after it became Available, missing nodes are read again.
	// A node that has just joined (scale.yml) has metrics only after the
	// scrape after its kubelet became Ready: read again too. And the
	// aggregator's proxy takes up an APIService that has just turned
	// Available a moment after its status says so: until then it answers
	// 503 (met on the calico cluster right after cluster.yml), read again.
	settling := func() bool {
		return justAvailable(dep, nodeMetricsSettle) || time.Since(availableSince) < nodeMetricsSettle
	}
	more := func() bool {
		return (err == nil && len(missing) > 0) || apierrors.IsServiceUnavailable(err)
	}
	if more() && (settling() || err == nil && justReady(ctx, env, missing, nodeMetricsSettle)) {
		poll(ctx, min(nodeMetricsSettle, env.rolloutWait(ctx)), more, func() {
			n, missing, err = readNodeMetrics(ctx, env)
		})
	}
	switch {
	case errors.Is(err, errNotNodeMetrics):
		return append(res, verify.Result{Check: "node_metrics", Status: verify.StatusFail, Msg: "node metrics: " + err.Error()})
	case err != nil:
		return append(res, verify.Result{Check: "node_metrics", Status: verify.StatusFail,
			Msg:         "node metrics not readable: " + errAPI(env, "GET /apis/metrics.k8s.io/v1beta1/nodes", err).Error(),
			Remediation: "kubectl top nodes; kubectl -n kube-system logs deploy/metrics-server (it scrapes each kubelet on port 10250)"})
	}
	facts.NodeMetrics = n
	if len(missing) > 0 {
		return append(res, verify.Result{Check: "node_metrics", Status: verify.StatusWarn,
			Msg:    fmt.Sprintf("node metrics readable for %d node(s) but not for %s", n, verify.Abridge(missing)),
			Actual: missing, Remediation: "kubectl -n kube-system logs deploy/metrics-server shows the scrape errors for these kubelets"})
	}
	return append(res, verify.Result{Check: "node_metrics", Status: verify.StatusOK,
		Msg: fmt.Sprintf("node metrics readable for every node (%d)", n)})
}

// justReady reports whether one of the hosts (inventory labels, as
// readNodeMetrics gives them) is a Node whose Ready condition turned true
// less than within ago.
func justReady(ctx context.Context, env *Env, labels []string, within time.Duration) bool {
	byName, err := env.snap.NodeByName(ctx)
	if err != nil {
		return false
	}
	for _, h := range env.inv.k8sCluster {
		if !slices.Contains(labels, env.inv.label(h)) {
			continue
		}
		n := byName[env.inv.nodeName(h)]
		if n == nil {
			continue
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && time.Since(c.LastTransitionTime.Time) < within {
				return true
			}
		}
	}
	return false
}

// nodeMetricsSettle is how long after metrics-server became Available
// nodes missing from its NodeMetricsList are read again: two scrapes at
// kubespray's 15 s metric resolution, with room.
var nodeMetricsSettle = 60 * time.Second

// errNotNodeMetrics is a metrics API answer that is not a NodeMetricsList.
var errNotNodeMetrics = errors.New("not a NodeMetricsList")

// readNodeMetrics lists metrics.k8s.io's NodeMetrics: how many there are,
// and the k8s_cluster hosts without one.
func readNodeMetrics(ctx context.Context, env *Env) (int, []string, error) {
	body, err := env.Kube.RawGet(ctx, "/apis/metrics.k8s.io/v1beta1/nodes")
	if err != nil {
		return 0, nil, err
	}
	var list struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := jsonUnmarshal(body, &list); err != nil {
		return 0, nil, fmt.Errorf("%w: %v", errNotNodeMetrics, err)
	}
	have := map[string]bool{}
	for _, it := range list.Items {
		have[it.Metadata.Name] = true
	}
	var missing []string
	for _, h := range env.inv.k8sCluster {
		if !have[env.inv.nodeName(h)] {
			missing = append(missing, env.inv.label(h))
		}
	}
	return len(list.Items), missing, nil
}

// apiServiceSettle is how long a not yet Available metrics APIService is
// read again when metrics-server is ready: more than the aggregator's
// 30 s resync.
var apiServiceSettle = 45 * time.Second

// metricsAPIServiceAvailable reads the metrics APIService's Available
// condition, and since when it has had that status.
func metricsAPIServiceAvailable(ctx context.Context, env *Env) (status, reason, message string, since time.Time, err error) {
	as, err := env.Dynamic.Resource(APIServiceGVR).Get(ctx, MetricsAPIService, metav1.GetOptions{})
	if err != nil {
		return "", "", "", time.Time{}, err
	}
	status, reason, message, since = apiServiceAvailable(as)
	return status, reason, message, since, nil
}

// apiServiceAvailable is an APIService's Available condition (Unknown,
// NoCondition while the aggregator has not judged it) and its
// lastTransitionTime (zero when absent or unreadable).
func apiServiceAvailable(as *unstructured.Unstructured) (status, reason, message string, since time.Time) {
	conds, _, _ := unstructured.NestedSlice(as.Object, "status", "conditions")
	status, reason, message = "Unknown", "NoCondition", "the aggregator has not judged it yet"
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Available" {
			status, _ = m["status"].(string)
			reason, _ = m["reason"].(string)
			message, _ = m["message"].(string)
			since = time.Time{}
			if ts, ok := m["lastTransitionTime"].(string); ok {
				since, _ = time.Parse(time.RFC3339, ts)
			}
		}
	}
	return status, reason, message, since
}

// APIServiceRemedy is the fix for metrics-server's APIService when its
// Available condition is False with reason, as kube-aggregator's
// availability controller sets it (k8s.io/kube-aggregator
// pkg/controllers/status/remote: ServiceNotFound, ServiceAccessError,
// ServicePortError, EndpointsNotFound, EndpointsAccessError,
// MissingEndpoints, FailedDiscoveryCheck).
func APIServiceRemedy(reason string) string {
	const ns = "kube-system"
	switch reason {
	case "ServiceNotFound":
		return "the Service kube-system/metrics-server the APIService points at does not exist: rerun cluster.yml --tags metrics_server (or kubectl -n " + ns + " get svc metrics-server; a manual deletion removes it)"
	case "ServicePortError":
		return "the APIService's port is not a port of Service kube-system/metrics-server: kubectl get apiservice " + MetricsAPIService + " -o yaml and kubectl -n " + ns + " get svc metrics-server -o yaml must agree (443); rerun cluster.yml --tags metrics_server"
	case "EndpointsNotFound", "MissingEndpoints":
		return "metrics-server has no ready pod behind its Service: kubectl -n " + ns + " get pods -l app.kubernetes.io/name=metrics-server -o wide; kubectl -n " + ns + " logs deploy/metrics-server (a crash loop, or Pending for lack of a schedulable node)"
	case "ServiceAccessError", "EndpointsAccessError":
		return "kube-apiserver could not read the Service or its endpoints: its RBAC or its informer is broken; kubectl -n " + ns + " logs of kube-apiserver on the control plane"
	case "FailedDiscoveryCheck":
		return "kube-apiserver cannot reach metrics-server's pod or gets no valid answer: routes from the control plane to the pod network (calico on control-plane nodes, a firewall between nodes), or metrics-server not serving (kubectl -n " + ns + " logs deploy/metrics-server; set metrics_server_kubelet_insecure_tls: true when the kubelets' serving certificates are not signed by the cluster CA)"
	}
	return "kubectl get apiservice " + MetricsAPIService + " -o yaml shows the aggregator's message; kubectl -n " + ns + " describe deploy metrics-server"
}

// checkLocalPath checks local-path-provisioner: its StorageClass and
// Deployment (waited for within waitCtx), then the PVC probe (ctx).
func checkLocalPath(ctx, waitCtx context.Context, env *Env, facts *AddonsFacts) []verify.Result {
	o := &env.Options
	var res []verify.Result
	sc, err := env.Kube.GetStorageClass(ctx, o.LocalPathProvisionerStorageClass)
	if err != nil {
		res = append(res, verify.Result{Check: "storage_class", Status: verify.StatusFail,
			Msg:         fmt.Sprintf("StorageClass %s: %v", o.LocalPathProvisionerStorageClass, errAPI(env, "get storageclass", err)),
			Remediation: "rerun cluster.yml --tags local-path-provisioner"})
	} else {
		facts.StorageClass = sc.Name
		wantDefault := boolOr(o.LocalPathProvisionerIsDefault, true)
		isDefault := sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true"
		if isDefault != wantDefault {
			res = append(res, verify.Result{Check: "storage_class", Status: verify.StatusFail,
				Msg:      fmt.Sprintf("StorageClass %s is-default-class is %t, local_path_provisioner_is_default_storageclass says %t", sc.Name, isDefault, wantDefault),
				Expected: wantDefault, Actual: isDefault,
				Remediation: fmt.Sprintf("kubectl annotate storageclass %s storageclass.kubernetes.io/is-default-class=%t --overwrite, or fix the inventory value", sc.Name, wantDefault)})
		} else {
			res = append(res, verify.Result{Check: "storage_class", Status: verify.StatusOK,
				Msg: fmt.Sprintf("StorageClass %s present (default: %t, as configured)", sc.Name, isDefault)})
		}
	}
	deps, err := env.snap.Deployments(ctx)
	if err == nil {
		r, _ := env.awaitDeployment(waitCtx, "local_path_provisioner", o.LocalPathProvisionerNamespace, "local-path-provisioner", deps)
		res = append(res, r)
	}
	if env.CheckMode || !boolOr(env.Probe.Enabled, true) {
		why := "check mode"
		if !env.CheckMode {
			why = "probe: false"
		}
		return append(res, verify.Result{Check: "pvc_bind", Status: verify.StatusSkipped,
			Msg: "probe PVC not created (" + why + "): binding by local-path-provisioner not proven"})
	}
	return append(res, pvcProbe(ctx, waitCtx, env, facts))
}

// pvcProbe creates a PVC on the local-path class and a pod that mounts it
// (local-path binds WaitForFirstConsumer), waits for Bound, and deletes
// its namespace whatever happens; an APIService in the way of that
// deletion is waited for within waitCtx.
func pvcProbe(ctx, waitCtx context.Context, env *Env, facts *AddonsFacts) (r verify.Result) {
	o := &env.Options
	r = verify.Result{Check: "pvc_bind"}
	if r, blocked := namespaceDeletionBlocked(waitCtx, env, "pvc_bind", "the PVC probe"); blocked {
		return r
	}
	ns, err := createProbeNamespace(ctx, env, "layercheck-pvc-")
	if err != nil {
		r.Status, r.Msg = verify.StatusError, err.Error()
		return r
	}
	defer func() {
		if derr := deleteNamespace(env, ns); derr != nil {
			r.Status = verify.Worse(r.Status, verify.StatusFail)
			r.Msg += "; " + derr.Error()
		}
	}()
	sc := o.LocalPathProvisionerStorageClass
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "layercheck-probe", Labels: probeLabels},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: &sc,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}},
		},
	}
	if _, err := env.Kube.CreatePVC(ctx, ns, pvc); err != nil {
		r.Status, r.Msg = verify.StatusFail, "create probe PVC: "+errAPI(env, "create pvc", err).Error()
		return r
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "layercheck-probe-pvc", Labels: probeLabels},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "pause", Image: env.Probe.Image, Args: []string{"pause"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name}}}},
			TerminationGracePeriodSeconds: new(int64),
		},
	}
	deadline := time.Now().Add(env.Probe.timeout())
	if err := createPodInNewNamespace(ctx, env, ns, pod, deadline); err != nil {
		r.Status, r.Msg = verify.StatusFail, "create probe pod: "+errAPI(env, "create pod", err).Error()
		return r
	}
	phase := corev1.ClaimPending
	for time.Now().Before(deadline) && ctx.Err() == nil {
		got, err := env.Kube.GetPVC(ctx, ns, pvc.Name)
		if err == nil {
			phase = got.Status.Phase
			if phase == corev1.ClaimBound {
				bound := true
				facts.PVCBound = &bound
				r.Status, r.Msg = verify.StatusOK, fmt.Sprintf("probe PVC on %s bound to %s", sc, got.Spec.VolumeName)
				return r
			}
		}
		sleep(ctx, probePoll)
	}
	bound := false
	facts.PVCBound = &bound
	r.Status = verify.StatusFail
	r.Msg = fmt.Sprintf("probe PVC on StorageClass %s still %s after %s", sc, phase, env.Probe.timeout())
	r.Remediation = "kubectl -n " + o.LocalPathProvisionerNamespace + " logs deploy/local-path-provisioner; check local_path_provisioner_claim_root exists and is writable on the nodes"
	return r
}

func checkHelm(ctx context.Context, env *Env, facts *AddonsFacts) verify.Result {
	// helm v3 keeps each release revision in a Secret labelled owner=helm
	// (its default storage driver), name=<release>, status=<status>,
	// version=<revision>. Only their metadata is read, never the release.
	type record struct{ ns, name, status, version string }
	var records []record
	sel := metav1.ListOptions{LabelSelector: "owner=helm"}
	if env.Metadata != nil {
		l, err := env.Metadata.Resource(corev1.SchemeGroupVersion.WithResource("secrets")).List(ctx, sel)
		if err != nil {
			return helmUnlistable(env, err)
		}
		for _, s := range l.Items {
			records = append(records, record{s.Namespace, s.Labels["name"], s.Labels["status"], s.Labels["version"]})
		}
	} else {
		l, err := env.Kube.ListSecrets(ctx, "", sel)
		if err != nil {
			return helmUnlistable(env, err)
		}
		for _, s := range l.Items {
			records = append(records, record{s.Namespace, s.Labels["name"], s.Labels["status"], s.Labels["version"]})
		}
	}
	latest := map[string]string{}
	rev := map[string]int{}
	var failed []string
	for _, r := range records {
		key := r.ns + "/" + r.name
		v, _ := strconv.Atoi(r.version)
		if _, seen := latest[key]; !seen || v > rev[key] {
			latest[key], rev[key] = r.status, v
		}
	}
	for k, st := range latest {
		facts.HelmReleases = append(facts.HelmReleases, k)
		if st == "failed" {
			failed = append(failed, k)
		}
	}
	sort.Strings(facts.HelmReleases)
	sort.Strings(failed)
	if len(failed) > 0 {
		return verify.Result{Check: "helm", Status: verify.StatusWarn,
			Msg:         fmt.Sprintf("helm releases listable (%d), failed: %s", len(latest), strings.Join(failed, ", ")),
			Actual:      facts.HelmReleases,
			Remediation: "helm history RELEASE -n NAMESPACE shows why; helm rollback or helm upgrade --install again"}
	}
	return verify.Result{Check: "helm", Status: verify.StatusOK,
		Msg: fmt.Sprintf("helm releases listable: %d release(s) in helm's storage secrets", len(latest)), Actual: facts.HelmReleases}
}

func helmUnlistable(env *Env, err error) verify.Result {
	return verify.Result{Check: "helm", Status: verify.StatusFail,
		Msg:         "helm releases not listable: " + errAPI(env, "list secrets owner=helm", err).Error(),
		Remediation: "helm list -A on the control plane; the admin kubeconfig must be allowed to list secrets"}
}

// createPodInNewNamespace creates a pod in a namespace just created. The
// ServiceAccount admission plugin refuses a pod until kube-controller-
// manager has made the namespace's "default" ServiceAccount, which takes a
// moment, and longer while kube-controller-manager restarts (cluster.yml's
// last plays change its static pod): that refusal is retried every
// probePoll until deadline. The ServiceAccount usually follows the
// namespace within a fraction of a second, so the first attempt is
// usually refused, and a retry at rolloutPoll (2 s) was most of the PVC
// probe's wait on a settled cluster.
func createPodInNewNamespace(ctx context.Context, env *Env, ns string, pod *corev1.Pod, deadline time.Time) error {
	for {
		_, err := env.Kube.CreatePod(ctx, ns, pod)
		if err == nil || !defaultServiceAccountMissing(err) || !time.Now().Add(probePoll).Before(deadline) {
			return err
		}
		sleep(ctx, probePoll)
		if ctx.Err() != nil {
			return err
		}
	}
}

// defaultServiceAccountMissing is the ServiceAccount admission plugin's
// refusal of a pod whose namespace has no "default" ServiceAccount yet.
func defaultServiceAccountMissing(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), `serviceaccount "default" not found`)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
