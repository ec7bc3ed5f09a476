package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/cluster/clustertest"
)

// 1,000 Nodes outside the inventory make a message that names ten of them
// and counts the rest; the result's JSON still lists all of them.
func TestNotInInventoryAbridged(t *testing.T) {
	o := threeNode()
	w := clustertest.Healthy(o, 4)
	var stray []string
	for i := range 1000 {
		stray = append(stray, fmt.Sprintf("stray%04d", i))
	}
	w.Nodes = append(w.Nodes, clustertest.Healthy(cluster.Options{KubeNode: stray}, 4).Nodes...)
	rep := run(t, o, w, ippool("10.233.64.0/18", "Never", "Always"))
	r := clustertest.Result(t, rep, "nodes", "not_in_inventory")
	assert.Equal(t, verify.StatusWarn, r.Status)
	assert.Contains(t, r.Msg, "1000 node(s) are not in the inventory's k8s_cluster: stray0000, stray0001")
	assert.Contains(t, r.Msg, "stray0009 and 990 more (1000 in all; full list in the JSON result)")
	assert.NotContains(t, r.Msg, "stray0010")
	assert.Less(t, len(r.Msg), 300)
	assert.Len(t, r.Actual, 1000)
}

func apiService(status, reason string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": cluster.MetricsAPIService},
		"spec":     map[string]any{"group": "metrics.k8s.io", "version": "v1beta1", "service": map[string]any{"namespace": "kube-system", "name": "metrics-server", "port": int64(443)}},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": "Available", "status": status, "reason": reason, "message": "the aggregator's message"}}},
	}}
}

// Each reason the aggregator gives for metrics-server's APIService not
// being Available gets the fix for that reason.
func TestMetricsAPIServiceRemedyPerReason(t *testing.T) {
	for _, tc := range []struct {
		reason, want, notWant string
	}{
		{"ServiceNotFound", "Service kube-system/metrics-server the APIService points at does not exist", "metrics_server_kubelet_insecure_tls"},
		{"MissingEndpoints", "metrics-server has no ready pod behind its Service", "does not exist"},
		{"EndpointsNotFound", "metrics-server has no ready pod behind its Service", "does not exist"},
		{"ServicePortError", "is not a port of Service kube-system/metrics-server", "no ready pod"},
		{"FailedDiscoveryCheck", "metrics_server_kubelet_insecure_tls", "does not exist"},
		{"ServiceAccessError", "RBAC", "no ready pod"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			o := threeNode()
			o.MetricsServerEnabled = true
			o.Defaults()
			w := clustertest.Healthy(o, 4)
			kube := clustertest.Fake()
			require.NoError(t, w.Apply(context.Background(), kube, 4))
			dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
				cluster.IPPoolGVR: "IPPoolList", cluster.APIServiceGVR: "APIServiceList"}, apiService("False", tc.reason))
			env := &cluster.Env{Kube: clustertest.Clientset(kube), Dynamic: dyn, Options: o, Server: "fake", CheckMode: true, Timeout: 5 * time.Second, LayerTimeout: 10 * time.Second}
			rep, err := cluster.Run(context.Background(), env, []string{"addons"}, nil)
			require.NoError(t, err)
			r := clustertest.Result(t, rep, "addons", "metrics_apiservice")
			assert.Equal(t, verify.StatusFail, r.Status)
			assert.Contains(t, r.Msg, "is not Available: "+tc.reason)
			assert.Contains(t, r.Remediation, tc.want)
			assert.NotContains(t, r.Remediation, tc.notWant)
		})
	}
}

// kube_override_hostname: the Nodes and static pods carry the override,
// the inventory its hostnames; node_names maps one to the other. Without
// it the hosts are missing and the Nodes are strays.
func TestKubeOverrideHostname(t *testing.T) {
	o := threeNode()
	names := map[string]string{"node1": "node1.example.org", "node2": "node2.example.org", "node3": "node3.example.org"}
	as := threeNode()
	for _, g := range []*[]string{&as.KubeControlPlane, &as.KubeNode, &as.Etcd} {
		var out []string
		for _, h := range *g {
			out = append(out, names[h])
		}
		*g = out
	}
	w := clustertest.Healthy(as, 4) // the cluster as the kubelets registered it

	o.NodeNames = names
	rep := run(t, o, w, ippool("10.233.64.0/18", "Never", "Always"))
	for _, n := range []string{"nodes", "kube_system", "cni"} {
		assert.Equal(t, verify.StatusOK, rep.Layers[n].Status, "layer %s: %+v", n, rep.Layers[n].Results)
	}

	o.NodeNames = nil
	rep = run(t, o, clustertest.Healthy(as, 4), ippool("10.233.64.0/18", "Never", "Always"))
	r := clustertest.Result(t, rep, "nodes", "registered")
	assert.Equal(t, verify.StatusFail, r.Status)
	assert.Contains(t, r.Remediation, "kube_override_hostname")
	r = clustertest.Result(t, rep, "nodes", "not_in_inventory")
	assert.Contains(t, r.Msg, "node1.example.org")

	// A taint fix names the Node, the message the host and its Node.
	o.NodeNames = names
	w = clustertest.Healthy(as, 4)
	w.Node("node2.example.org").Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	rep = run(t, o, w, ippool("10.233.64.0/18", "Never", "Always"))
	r = clustertest.Result(t, rep, "nodes", "taints")
	assert.Contains(t, r.Msg, "node2 (Node node2.example.org) is in kube_control_plane and kube_node")
	assert.Contains(t, r.Msg, "kubectl taint nodes node2.example.org ")
}

// dns_mode coredns_dual deploys a second CoreDNS (coredns-secondary);
// dns_mode manual deploys none, but nodelocaldns still runs.
func TestDNSModesInKubeSystem(t *testing.T) {
	o := threeNode()
	o.DNSMode = "coredns_dual"
	w := clustertest.Healthy(o, 4)
	rep := run(t, o, w, ippool("10.233.64.0/18", "Never", "Always"))
	assert.Equal(t, verify.StatusOK, clustertest.Result(t, rep, "kube_system", "coredns-secondary").Status)

	w = clustertest.Healthy(o, 4)
	w.Deployments = slices.DeleteFunc(w.Deployments, func(d *appsv1.Deployment) bool { return d.Name == "coredns-secondary" })
	rep = run(t, o, w, ippool("10.233.64.0/18", "Never", "Always"))
	r := clustertest.Result(t, rep, "kube_system", "coredns-secondary")
	assert.Equal(t, verify.StatusFail, r.Status)
	assert.Contains(t, r.Msg, "Deployment kube-system/coredns-secondary is missing")

	o = threeNode()
	o.DNSMode = "manual"
	rep = run(t, o, clustertest.Healthy(o, 4), ippool("10.233.64.0/18", "Never", "Always"))
	assert.Equal(t, verify.StatusOK, rep.Layers["kube_system"].Status, "%+v", rep.Layers["kube_system"].Results)
	assert.Equal(t, verify.StatusOK, clustertest.Result(t, rep, "kube_system", "nodelocaldns").Status)
	for _, r := range rep.Layers["kube_system"].Results {
		assert.NotEqual(t, "coredns", r.Check, "dns_mode manual deploys no CoreDNS")
	}
}
