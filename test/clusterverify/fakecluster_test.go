package clusterverify

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/layercheck/layercheck/verify/cluster"
)

// ipSeq hands out 127.0.0.N (and pod IP 10.233.64.N) numbers, unique in
// the test binary so scenarios never share a listener.
var ipSeq atomic.Int32

func init() { ipSeq.Store(9) }

func nextIP(t testing.TB) int {
	n := int(ipSeq.Add(1))
	if n > 250 {
		t.Fatal("out of 127.0.0.N addresses for pods")
	}
	return n
}

// Kubelets plays, for the probe's objects, what the kubelets, the
// Deployment and EndpointSlice controllers and the namespace controller of
// a real cluster do: it runs the probe Deployment's pods as HTTP servers
// on 127.0.0.N answering /hostname with the pod name (agnhost netexec),
// writes the pods' and the Deployment's status and the Service's
// Endpoints and EndpointSlice, and finalizes terminating namespaces after
// deleting what is in them.
type Kubelets struct {
	Kube kubernetes.Interface
	// RunPods false leaves the probe's pods unscheduled (the probe times out).
	RunPods bool
	// Answer says whether the i-th pod (0, 1) answers HTTP; a Ready pod
	// that does not answer is what a broken pod network looks like.
	Answer func(i int) bool
	Nodes  []string
	// Provision binds PVCs of the local-path class as
	// local-path-provisioner and the PV controller do; SetProvision
	// changes it between runs.
	Provision atomic.Bool
	// steps counts the loop's finished steps (SetProvision waits on it).
	steps atomic.Int64
	// Nameserver is the server the pods' resolver asks (their
	// resolv.conf: kubelet's clusterDNS, nodelocaldns_ip by default);
	// DNSDown makes every lookup time out there.
	Nameserver string
	DNSDown    atomic.Bool

	t       testing.TB
	mu      sync.Mutex
	handled map[string][]podRun // namespace -> pods
	stop    chan struct{}
	done    chan struct{}
}

type podRun struct {
	name, ip string
	port     int
	srv      *http.Server
}

// StartKubelets starts the loop; it stops at test cleanup.
func StartKubelets(t testing.TB, kube kubernetes.Interface, nodes []string) *Kubelets {
	k := &Kubelets{Kube: kube, RunPods: true, Answer: func(int) bool { return true }, Nodes: nodes, t: t, Nameserver: "169.254.25.10",
		handled: map[string][]podRun{}, stop: make(chan struct{}), done: make(chan struct{})}
	go k.loop()
	t.Cleanup(func() {
		close(k.stop)
		<-k.done
		k.mu.Lock()
		defer k.mu.Unlock()
		for _, pods := range k.handled {
			for _, p := range pods {
				if p.srv != nil {
					p.srv.Close()
				}
			}
		}
	})
	return k
}

// SetProvision sets Provision and returns once a whole step of the loop has
// run with it: a step already under way may still bind a claim that a run
// started after the change created (its API calls answer late when the
// machine is busy).
func (k *Kubelets) SetProvision(on bool) {
	k.Provision.Store(on)
	n := k.steps.Load()
	for deadline := time.Now().Add(30 * time.Second); k.steps.Load() < n+2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			k.t.Fatalf("fake kubelets: no step in 30s after Provision=%v", on)
		}
	}
}

func (k *Kubelets) loop() {
	defer close(k.done)
	tick := time.NewTicker(150 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := k.step(ctx); err != nil {
			k.t.Logf("fake kubelets: %v", err)
		}
		cancel()
		k.steps.Add(1)
	}
}

func (k *Kubelets) step(ctx context.Context) error {
	deps, err := k.Kube.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=layercheck"})
	if err != nil {
		return err
	}
	for i := range deps.Items {
		d := &deps.Items[i]
		k.mu.Lock()
		_, seen := k.handled[d.Namespace]
		k.mu.Unlock()
		if seen || d.DeletionTimestamp != nil {
			continue
		}
		if err := k.runDeployment(ctx, d); err != nil {
			return err
		}
	}
	// Endpoints for the probe Service once it exists.
	k.mu.Lock()
	var nss []string
	for ns, pods := range k.handled {
		if len(pods) > 0 {
			nss = append(nss, ns)
		}
	}
	k.mu.Unlock()
	for _, ns := range nss {
		if err := k.writeEndpoints(ctx, ns); err != nil {
			return err
		}
	}
	// local-path-provisioner and the PV controller: bind the probe's PVC
	// once a pod uses it (WaitForFirstConsumer).
	if k.Provision.Load() {
		if err := k.bindClaims(ctx); err != nil {
			return err
		}
	}
	// The namespace controller: empty terminating namespaces, finalize.
	nsl, err := k.Kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range nsl.Items {
		ns := &nsl.Items[i]
		if ns.DeletionTimestamp == nil {
			continue
		}
		if err := k.finalize(ctx, ns); err != nil {
			return err
		}
	}
	return nil
}

func (k *Kubelets) runDeployment(ctx context.Context, d *appsv1.Deployment) error {
	var runs []podRun
	if !k.RunPods {
		k.mu.Lock()
		k.handled[d.Namespace] = nil
		k.mu.Unlock()
		return nil
	}
	replicas := int(*d.Spec.Replicas)
	port := int(d.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort)
	for i := 0; i < replicas; i++ {
		n := nextIP(k.t)
		name := fmt.Sprintf("%s-%d-%s", d.Name, i, strconv.Itoa(n))
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.Namespace, Labels: d.Spec.Template.Labels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: d.Name + "-rs", UID: "rs-" + d.UID}}},
			Spec: d.Spec.Template.Spec,
		}
		pod.Spec.NodeName = k.Nodes[i%len(k.Nodes)]
		created, err := k.Kube.CoreV1().Pods(d.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create probe pod: %w", err)
		}
		run := podRun{name: name, ip: PodIP(n), port: port}
		if k.Answer(i) {
			l, err := net.Listen("tcp", net.JoinHostPort(fmt.Sprintf("127.0.0.%d", n), strconv.Itoa(port)))
			if err != nil {
				return fmt.Errorf("pod %s listener: %w", name, err)
			}
			mux := http.NewServeMux()
			mux.HandleFunc("/hostname", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, name) })
			mux.HandleFunc("/dial", k.dialHandler())
			run.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
			go run.srv.Serve(l)
		}
		created.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: run.ip, PodIPs: []corev1.PodIP{{IP: run.ip}},
			HostIP:     "10.0.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.ContainersReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: pod.Spec.Containers[0].Name, Ready: true, Image: pod.Spec.Containers[0].Image,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}}
		if _, err := k.Kube.CoreV1().Pods(d.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("probe pod status: %w", err)
		}
		runs = append(runs, run)
	}
	k.mu.Lock()
	k.handled[d.Namespace] = runs
	k.mu.Unlock()
	cur, err := k.Kube.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	r := int32(replicas)
	cur.Status = appsv1.DeploymentStatus{ObservedGeneration: cur.Generation, Replicas: r, ReadyReplicas: r, AvailableReplicas: r, UpdatedReplicas: r}
	_, err = k.Kube.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	return err
}

// dialHandler is agnhost netexec's /dial (k8s.io/kubernetes
// test/images/agnhost/netexec dialHandler) in a probe pod: the
// host is resolved by the cluster DNS as a pod's resolver sees it (a
// Service's <name>.<namespace>.svc.cluster.local, nothing else), with
// the error text Go's resolver gives, which netexec answers with 400;
// a resolved Service is asked for request on one of its pods, and the
// answer is netexec's JSON.
func (k *Kubelets) dialHandler() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		host, request := q.Get("host"), q.Get("request")
		if request == "" {
			http.Error(w, "request parameter not specified. <nil>", http.StatusBadRequest)
			return
		}
		server := net.JoinHostPort(k.Nameserver, "53")
		if k.DNSDown.Load() {
			http.Error(w, fmt.Sprintf("host and/or port param are invalid. lookup %s on %s: read udp 10.233.64.9:41234->%s: i/o timeout", host, server, server), http.StatusBadRequest)
			return
		}
		svc, svcNS, ok := strings.Cut(strings.TrimSuffix(strings.TrimSuffix(host, "."), ".svc.cluster.local"), ".")
		exists := false
		if ok && !strings.Contains(svcNS, ".") {
			_, err := k.Kube.CoreV1().Services(svcNS).Get(r.Context(), svc, metav1.GetOptions{})
			exists = err == nil
		}
		if !exists {
			http.Error(w, fmt.Sprintf("host and/or port param are invalid. lookup %s on %s: no such host", host, server), http.StatusBadRequest)
			return
		}
		k.mu.Lock()
		pods := k.handled[svcNS]
		k.mu.Unlock()
		out := map[string][]string{}
		for _, p := range pods {
			if p.srv == nil {
				continue
			}
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.%s:%d/%s", strings.TrimPrefix(p.ip, "10.233.64."), p.port, request))
			if err != nil {
				out["errors"] = append(out["errors"], err.Error())
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			out["responses"] = append(out["responses"], string(b))
			break
		}
		if len(out) == 0 {
			out["errors"] = []string{"Get \"http://" + host + ":80/" + request + "\": dial tcp: connection refused"}
		}
		b, _ := json.Marshal(out)
		fmt.Fprint(w, string(b))
	}
}

func (k *Kubelets) writeEndpoints(ctx context.Context, ns string) error {
	svc, err := k.Kube.CoreV1().Services(ns).Get(ctx, cluster.ProbeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := k.Kube.DiscoveryV1().EndpointSlices(ns).Get(ctx, svc.Name+"-probe", metav1.GetOptions{}); err == nil {
		return nil
	}
	k.mu.Lock()
	runs := k.handled[ns]
	k.mu.Unlock()
	return WriteEndpoints(ctx, k.Kube, svc, runs[0].port, runs)
}

// WriteEndpoints writes what the endpoints and EndpointSlice controllers
// would for svc: one address per pod, all ready.
func WriteEndpoints(ctx context.Context, kube kubernetes.Interface, svc *corev1.Service, port int, pods []podRun) error {
	var addrs []corev1.EndpointAddress
	var eps []discoveryv1.Endpoint
	yes := true
	for _, p := range pods {
		addrs = append(addrs, corev1.EndpointAddress{IP: p.ip, TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: svc.Namespace, Name: p.name}})
		eps = append(eps, discoveryv1.Endpoint{Addresses: []string{p.ip}, Conditions: discoveryv1.EndpointConditions{Ready: &yes},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: svc.Namespace, Name: p.name}})
	}
	pname := svc.Spec.Ports[0].Name
	p32 := int32(port)
	proto := corev1.ProtocolTCP
	e := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace},
		Subsets: []corev1.EndpointSubset{{Addresses: addrs, Ports: []corev1.EndpointPort{{Name: pname, Port: p32, Protocol: proto}}}}}
	if _, err := kube.CoreV1().Endpoints(svc.Namespace).Create(ctx, e, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("endpoints %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	es := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: svc.Name + "-probe", Namespace: svc.Namespace,
		Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: eps,
		Ports: []discoveryv1.EndpointPort{{Name: &pname, Port: &p32, Protocol: &proto}}}
	if _, err := kube.DiscoveryV1().EndpointSlices(svc.Namespace).Create(ctx, es, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("endpointslice %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	return nil
}

func (k *Kubelets) finalize(ctx context.Context, ns *corev1.Namespace) error {
	zero := int64(0)
	del := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	name := ns.Name
	c := k.Kube
	if err := c.AppsV1().Deployments(name).DeleteCollection(ctx, del, metav1.ListOptions{}); err != nil {
		return err
	}
	if err := c.CoreV1().Pods(name).DeleteCollection(ctx, del, metav1.ListOptions{}); err != nil {
		return err
	}
	svcs, err := c.CoreV1().Services(name).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, s := range svcs.Items {
		if err := c.CoreV1().Services(name).Delete(ctx, s.Name, del); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	if err := c.CoreV1().Endpoints(name).DeleteCollection(ctx, del, metav1.ListOptions{}); err != nil {
		return err
	}
	if err := c.DiscoveryV1().EndpointSlices(name).DeleteCollection(ctx, del, metav1.ListOptions{}); err != nil {
		return err
	}
	if err := c.CoreV1().PersistentVolumeClaims(name).DeleteCollection(ctx, del, metav1.ListOptions{}); err != nil {
		return err
	}
	k.mu.Lock()
	for _, p := range k.handled[name] {
		if p.srv != nil {
			p.srv.Close()
		}
	}
	delete(k.handled, name)
	k.mu.Unlock()
	ns.Spec.Finalizers = nil
	if _, err := c.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("finalize namespace %s: %w", name, err)
	}
	return nil
}

// MetricsServer is a metrics.k8s.io backend on 127.0.0.N (pod IP
// 10.233.64.N) registered as kube-system/metrics-server and APIService
// v1beta1.metrics.k8s.io; Healthy false makes its discovery answer 503.
type MetricsServer struct {
	Healthy atomic.Bool
	Nodes   []string
}

// StartMetricsServer runs the backend over TLS and registers it.
func StartMetricsServer(t testing.TB, s *APIServer, nodes []string, healthy bool) *MetricsServer {
	t.Helper()
	m := &MetricsServer{Nodes: nodes}
	m.Healthy.Store(healthy)
	n := nextIP(t)
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:0", n))
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	cert, key := newPKI(t, t.TempDir()).leaf(t, "metrics", "metrics-server", nil, true)
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/apis/metrics.k8s.io/v1beta1", func(w http.ResponseWriter, r *http.Request) {
		if !m.Healthy.Load() {
			http.Error(w, "metrics-server: no metrics scraped yet", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "metrics.k8s.io/v1beta1",
			"resources": []map[string]any{
				{"name": "nodes", "singularName": "", "namespaced": false, "kind": "NodeMetrics", "verbs": []string{"get", "list"}},
				{"name": "pods", "singularName": "", "namespaced": true, "kind": "PodMetrics", "verbs": []string{"get", "list"}}}})
	})
	mux.HandleFunc("/apis/metrics.k8s.io/v1beta1/nodes", func(w http.ResponseWriter, r *http.Request) {
		// Typed, as metrics-server's generated encoding is: maps (sorted
		// keys, reflection per value) made this fake, which shares the
		// test process with the client, a tenth of a 1,000-node run's CPU.
		type usage struct {
			CPU    string `json:"cpu"`
			Memory string `json:"memory"`
		}
		type item struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Timestamp string `json:"timestamp"`
			Window    string `json:"window"`
			Usage     usage  `json:"usage"`
		}
		now := time.Now().UTC().Format(time.RFC3339)
		items := make([]item, len(m.Nodes))
		for i, n := range m.Nodes {
			items[i].Metadata.Name = n
			items[i].Timestamp, items[i].Window, items[i].Usage = now, "10s", usage{CPU: "100m", Memory: "512Mi"}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(struct {
			Kind       string   `json:"kind"`
			APIVersion string   `json:"apiVersion"`
			Metadata   struct{} `json:"metadata"`
			Items      []item   `json:"items"`
		}{Kind: "NodeMetricsList", APIVersion: "metrics.k8s.io/v1beta1", Items: items})
	})
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}}, ReadHeaderTimeout: 5 * time.Second}
	go srv.ServeTLS(l, "", "")
	t.Cleanup(func() { srv.Close() })

	ctx := context.Background()
	p, _ := strconv.Atoi(port)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "metrics-server", Namespace: "kube-system"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"k8s-app": "metrics-server"},
			Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(int32(p))}}}}
	svc, err = s.Kube.CoreV1().Services("kube-system").Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteEndpoints(ctx, s.Kube, svc, p, []podRun{{name: "metrics-server-0", ip: PodIP(n), port: p}}); err != nil {
		t.Fatal(err)
	}
	as := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": cluster.MetricsAPIService},
		"spec": map[string]any{"group": "metrics.k8s.io", "version": "v1beta1", "insecureSkipTLSVerify": true,
			"groupPriorityMinimum": int64(100), "versionPriority": int64(100),
			"service": map[string]any{"namespace": "kube-system", "name": "metrics-server", "port": int64(443)}},
	}}
	if _, err := s.Dynamic.Resource(cluster.APIServiceGVR).Create(ctx, as, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return m
}

// WaitAPIService waits until the aggregator's availability controller set
// Available to want, and returns the condition's reason.
func WaitAPIService(t testing.TB, s *APIServer, want string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		u, err := s.Dynamic.Resource(cluster.APIServiceGVR).Get(context.Background(), cluster.MetricsAPIService, metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				m := c.(map[string]any)
				if m["type"] == "Available" && m["status"] == want {
					r, _ := m["reason"].(string)
					return r
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("APIService %s never Available=%s: %v %v", cluster.MetricsAPIService, want, u, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallIPPool installs calico's IPPool CRD (crd.projectcalico.org/v1,
// cluster-scoped, as calico's manifests declare it) and the pool.
func InstallIPPool(t testing.TB, s *APIServer, cidr, ipip, vxlan string) {
	t.Helper()
	ctx := context.Background()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "ippools.crd.projectcalico.org"},
		"spec": map[string]any{"group": "crd.projectcalico.org", "scope": "Cluster",
			"names": map[string]any{"kind": "IPPool", "listKind": "IPPoolList", "plural": "ippools", "singular": "ippool"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"spec": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}},
	}}
	if _, err := s.Dynamic.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "crd.projectcalico.org/v1", "kind": "IPPool", "metadata": map[string]any{"name": "default-pool"},
		"spec": map[string]any{"cidr": cidr, "ipipMode": ipip, "vxlanMode": vxlan, "natOutgoing": true, "blockSize": int64(26)}}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := s.Dynamic.Resource(cluster.IPPoolGVR).Create(ctx, pool, metav1.CreateOptions{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("create IPPool (CRD not established?): %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// HelmRelease writes a helm v3 release record (a Secret owner=helm).
func HelmRelease(t testing.TB, s *APIServer, ns, name, status string) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1." + name + ".v1", Namespace: ns,
		Labels: map[string]string{"owner": "helm", "name": name, "status": status, "version": "1"}},
		Type: "helm.sh/release.v1", Data: map[string][]byte{"release": []byte("H4sI")}}
	if _, err := s.Kube.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (k *Kubelets) bindClaims(ctx context.Context) error {
	pvcs, err := k.Kube.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=layercheck"})
	if err != nil {
		return err
	}
	for i := range pvcs.Items {
		pvc := &pvcs.Items[i]
		if pvc.Status.Phase == corev1.ClaimBound || pvc.DeletionTimestamp != nil || pvc.Spec.StorageClassName == nil {
			continue
		}
		pods, err := k.Kube.CoreV1().Pods(pvc.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		used := false
		for _, p := range pods.Items {
			for _, v := range p.Spec.Volumes {
				if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name {
					used = true
				}
			}
		}
		if !used {
			continue
		}
		name := "pvc-" + string(pvc.UID)
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": "rancher.io/local-path"}},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      pvc.Spec.Resources.Requests,
				AccessModes:                   pvc.Spec.AccessModes,
				StorageClassName:              *pvc.Spec.StorageClassName,
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
				ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
				PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/opt/local-path-provisioner/" + name}},
			},
		}
		if _, err := k.Kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create PV: %w", err)
		}
		pvc.Spec.VolumeName = name
		upd, err := k.Kube.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("bind PVC: %w", err)
		}
		upd.Status.Phase = corev1.ClaimBound
		upd.Status.Capacity = pvc.Spec.Resources.Requests
		upd.Status.AccessModes = pvc.Spec.AccessModes
		if _, err := k.Kube.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("PVC status: %w", err)
		}
	}
	return nil
}

// KubeProxy plays kube-proxy for the probe's ClusterIP: a TCP listener on
// 127.0.0.1 that spreads connections round-robin over the Ready pods of
// the probe Service (answering or not), as kube-proxy's rules do.
type KubeProxy struct {
	Addr string
	k    *Kubelets
	next atomic.Int64
}

// StartKubeProxy listens on 127.0.0.1.
func StartKubeProxy(t testing.TB, k *Kubelets) *KubeProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &KubeProxy{Addr: l.Addr().String(), k: k}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
	return p
}

func (p *KubeProxy) forward(c net.Conn) {
	defer c.Close()
	p.k.mu.Lock()
	var backends []string
	for _, runs := range p.k.handled {
		for _, r := range runs {
			backends = append(backends, net.JoinHostPort("127.0.0."+strings.TrimPrefix(r.ip, "10.233.64."), strconv.Itoa(r.port)))
		}
	}
	p.k.mu.Unlock()
	sort.Strings(backends)
	if len(backends) == 0 {
		return
	}
	to := backends[int(p.next.Add(1))%len(backends)]
	up, err := net.DialTimeout("tcp", to, 5*time.Second)
	if err != nil {
		return // a pod that does not listen: the client sees a reset
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
}
