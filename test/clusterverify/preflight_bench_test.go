package clusterverify

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/verify/cluster"
)

// growNodes adds kube_node Nodes node<from>..node<to> as preflightWorld
// writes them (Ready, kubelet v1.35.4, containerd 2.2.3, a /24 podCIDR),
// as their kubelets would: created, then their status written.
func growNodes(tb testing.TB, srv *APIServer, from, to int) {
	tb.Helper()
	ctx := context.Background()
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i := from; i <= to; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			name := "node" + strconv.Itoa(i)
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
				Spec: corev1.NodeSpec{PodCIDR: fmt.Sprintf("10.%d.%d.0/24", 64+i/256, i%256)}}
			c, err := srv.Kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
			if err == nil {
				c.Status = corev1.NodeStatus{
					Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}},
					NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.35.4", ContainerRuntimeVersion: "containerd://2.2.3"},
				}
				_, err = srv.Kube.CoreV1().Nodes().UpdateStatus(ctx, c, metav1.UpdateOptions{})
			}
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	require.NoError(tb, first)
}

// preflight reads the cluster and lints inv for master against it: what
// layercheck lint --kubeconfig does after loading the inventory.
func preflight(tb testing.TB, srv *APIServer, inv string, o cluster.Options) (*preflightRun, []lint.Finding) {
	tb.Helper()
	st, err := cluster.ReadStateRequest(context.Background(), &cluster.Request{Options: o, Kubeconfig: srv.Kubeconfig, Timeout: 60})
	require.NoError(tb, err)
	loaded, err := parser.Load(inv)
	require.NoError(tb, err)
	cat, err := kubespray.Bundled("master")
	require.NoError(tb, err)
	rep := lint.Run(lint.Input{Inventory: loaded, Catalogue: cat, Cluster: st})
	var fs []lint.Finding
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Rule, "cluster-") {
			fs = append(fs, f)
		}
	}
	return &preflightRun{requests: st.Requests, nodes: len(st.Nodes)}, fs
}

type preflightRun struct {
	requests int64
	nodes    int
}

func grownHosts(n int) string {
	if n <= 3 {
		return preflightHosts
	}
	return preflightHosts + "node[4:" + strconv.Itoa(n) + "]\n"
}

func grownOptions(n int) cluster.Options {
	o := preflightOptions()
	for i := 4; i <= n; i++ {
		o.KubeNode = append(o.KubeNode, "node"+strconv.Itoa(i))
	}
	return o
}

// TestPreflightRequestsConstant: the preflight's API requests are the same
// for 3 Nodes and for 300, and a grown cluster the inventory lists whole
// gives no finding.
func TestPreflightRequestsConstant(t *testing.T) {
	srv := preflightWorld(t, nil)
	small, fs := preflight(t, srv, preflightInventory(t, preflightHosts, ""), preflightOptions())
	require.Empty(t, fs)
	growNodes(t, srv, 4, 300)
	big, fs := preflight(t, srv, preflightInventory(t, grownHosts(300), ""), grownOptions(300))
	require.Empty(t, fs)
	require.Equal(t, 300, big.nodes)
	require.Equal(t, small.requests, big.requests, "API requests: %d for 3 nodes, %d for 300", small.requests, big.requests)
	t.Logf("preflight: %d API requests for 3 and for 300 nodes", big.requests)
}

// BenchmarkPreflight reads a cluster of LAYERCHECK_BENCH_NODES Nodes
// (default 1000; 3 is preflightWorld as built) and lints an inventory listing them all against it (the
// cluster read, the inventory load and lint.Run); bench/preflight.sh runs
// it. It reports the API requests per run, which must equal the 3-node
// count (TestPreflightRequestsConstant).
func BenchmarkPreflight(b *testing.B) {
	n := 1000
	if s := os.Getenv("LAYERCHECK_BENCH_NODES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 3 {
			b.Fatalf("LAYERCHECK_BENCH_NODES=%q: want a number >= 3", s)
		}
	}
	srv := preflightWorld(b, nil)
	growNodes(b, srv, 4, n)
	inv := preflightInventory(b, grownHosts(n), "")
	o := grownOptions(n)
	var last *preflightRun
	for b.Loop() {
		var fs []lint.Finding
		last, fs = preflight(b, srv, inv, o)
		if len(fs) > 0 {
			b.Fatalf("%d findings on the grown cluster: %+v", len(fs), fs[0])
		}
	}
	b.ReportMetric(float64(last.requests), "requests/op")
	b.ReportMetric(float64(last.nodes), "nodes")
}
