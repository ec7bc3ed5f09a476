package clusterverify

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/cluster/clustertest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRequestsConstantInNodeCount runs the read-only layers against the
// 3-node sample and then against the same inventory grown to
// LAYERCHECK_BENCH_NODES nodes (default 1,000) in the same API server: the
// number of HTTP requests (counted by the client's wrapping RoundTripper)
// must be the same. bench/cluster_requests.sh prints the times.
func TestRequestsConstantInNodeCount(t *testing.T) {
	total := 1000
	if s := os.Getenv("LAYERCHECK_BENCH_NODES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 4 {
			t.Fatalf("LAYERCHECK_BENCH_NODES=%q: want a number > 3", s)
		}
		total = n
	}
	o := sample3(t)
	c := newCluster(t, o, setup{})
	off := false
	measure := func(o cluster.Options) (*cluster.Report, time.Duration) {
		req := c.request(30)
		req.Options = o
		req.Probe.Enabled = &off
		start := time.Now()
		rep, err := cluster.RunRequest(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return rep, time.Since(start)
	}
	small, dSmall := measure(o)
	if small.Status == verify.StatusFail || small.Status == verify.StatusError {
		t.Fatalf("3-node run: %s\n%s", small.Status, dump(small))
	}

	// Grow the cluster: nodes 4..total in kube_node, each with its
	// DaemonSet pods, written as their kubelets would.
	big := o
	var extra []string
	for i := 4; i <= total; i++ {
		extra = append(extra, fmt.Sprintf("node%d", i))
	}
	big.KubeNode = append(append([]string{}, o.KubeNode...), extra...)
	grow := clustertest.Healthy(cluster.Options{KubeNode: extra, KubeControlPlane: nil}, 4)
	grow.DaemonSets = nil
	grow.Deployments = nil
	grow.Pods = nil
	for _, name := range []string{"kube-proxy", "calico-node", "nodelocaldns"} {
		grow.AddDaemonSet(name, extra)
	}
	ds := grow.DaemonSets
	grow.DaemonSets = nil
	for i, p := range grow.Pods {
		p.Name = fmt.Sprintf("%s-big-%05d", p.OwnerReferences[0].Name, i)
	}
	applyStart := time.Now()
	if err := grow.Apply(context.Background(), c.S.Kube, 32); err != nil {
		t.Fatal(err)
	}
	// The DaemonSets' status now counts every node.
	for _, d := range ds {
		cur, err := c.S.Kube.AppsV1().DaemonSets("kube-system").Get(context.Background(), d.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := int32(total)
		cur.Status.DesiredNumberScheduled, cur.Status.CurrentNumberScheduled, cur.Status.NumberReady, cur.Status.NumberAvailable, cur.Status.UpdatedNumberScheduled = n, n, n, n, n
		if _, err := c.S.Kube.AppsV1().DaemonSets("kube-system").UpdateStatus(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("wrote %d more nodes and %d pods in %s", len(extra), len(grow.Pods), time.Since(applyStart).Round(time.Millisecond))
	c.Metrics.Nodes = big.K8sCluster()

	large, dLarge := measure(big)
	nodes := large.Layers["nodes"].Facts.(*cluster.NodeFacts)
	if len(nodes.Ready) != total {
		t.Fatalf("%d-node run saw %d Ready inventory nodes\n%s", total, len(nodes.Ready), dump(large))
	}
	t.Logf("BENCH nodes=3 requests=%d time=%s status=%s", small.Requests, dSmall.Round(time.Millisecond), small.Status)
	t.Logf("BENCH nodes=%d requests=%d time=%s status=%s", total, large.Requests, dLarge.Round(time.Millisecond), large.Status)
	if small.Requests != large.Requests || small.Requests == 0 {
		t.Errorf("API requests grow with the node count: %d for 3 nodes, %d for %d nodes", small.Requests, large.Requests, total)
	}
	if large.Status == verify.StatusFail || large.Status == verify.StatusError {
		t.Errorf("%d-node run: %s\n%s", total, large.Status, dump(large))
	}
}
