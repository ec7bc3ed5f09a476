package clusterverify

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/cluster/clustertest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRequestsConstantInNodeCount runs the read-only layers against the
// 3-node sample, then grows the same cluster (Nodes, their DaemonSet pods
// and the inventory's kube_node listing all of them) to each size of
// LAYERCHECK_BENCH_NODES (comma-separated, default "1000,5000") in the same
// API server and runs them again: the number of HTTP requests (counted by
// the client's wrapping RoundTripper) must be the same at every size, and
// every inventory node must be seen Ready. It asserts nothing about time;
// bench/cluster_requests.sh prints the times, memory and ratios it logs.
// Each size is run once to warm up (the first run of the process pays for
// what any run pays once), then LAYERCHECK_BENCH_RUNS times (default 5),
// each with a fresh client as cluster_facts makes it; the median time and
// the mean allocation are logged, so that one run slowed by the machine's
// other work does not make the ratio.
func TestRequestsConstantInNodeCount(t *testing.T) {
	sizes := []int{1000, 5000}
	if s := os.Getenv("LAYERCHECK_BENCH_NODES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 4 {
				t.Fatalf("LAYERCHECK_BENCH_NODES=%q: want numbers > 3, comma-separated", s)
			}
			sizes = append(sizes, n)
		}
		sort.Ints(sizes)
	}
	runs := 5
	if s := os.Getenv("LAYERCHECK_BENCH_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			t.Fatalf("LAYERCHECK_BENCH_RUNS=%q: want a number of runs, 1 to 1000", s)
		}
		runs = n
	}
	o := sample3(t)
	c := newCluster(t, o, setup{})
	off := false
	run := func(o cluster.Options) *cluster.Report {
		req := c.request(30)
		// This machine also runs the API server, etcd and the writer of
		// the simulated cluster: give each request room. The count, not
		// the time, is what this test asserts.
		req.Timeout = 120
		req.Options = o
		req.Probe.Enabled = &off
		rep, err := cluster.RunRequest(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	measure := func(o cluster.Options) *cluster.Report {
		rep := run(o)
		times := make([]time.Duration, runs)
		var alloc uint64
		var cpu, serverCPU time.Duration
		for i := range times {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			cpu0, server0 := cpuTime(t, os.Getpid()), cpuTime(t, c.S.cmd.Process.Pid)
			start := time.Now()
			r := run(o)
			times[i] = time.Since(start)
			cpu += cpuTime(t, os.Getpid()) - cpu0
			serverCPU += cpuTime(t, c.S.cmd.Process.Pid) - server0
			runtime.ReadMemStats(&after)
			alloc += after.TotalAlloc - before.TotalAlloc
			if r.Requests != rep.Requests {
				t.Errorf("API requests differ between runs on the same cluster: %d, then %d", rep.Requests, r.Requests)
			}
			rep = r
		}
		slices.Sort(times)
		nodes := rep.Layers["nodes"].Facts.(*cluster.NodeFacts)
		t.Logf("BENCH nodes=%d requests=%d time_ms=%.1f min_ms=%.1f runs=%d alloc_mib=%.1f cpu_ms=%.1f server_cpu_ms=%.1f status=%s", len(nodes.Found), rep.Requests,
			ms(times[len(times)/2]), ms(times[0]), runs, float64(alloc)/float64(runs)/(1<<20), ms(cpu)/float64(runs), ms(serverCPU)/float64(runs), rep.Status)
		return rep
	}
	small := measure(o)
	if small.Status == verify.StatusFail || small.Status == verify.StatusError {
		t.Fatalf("3-node run: %s\n%s", small.Status, dump(small))
	}
	if small.Requests == 0 {
		t.Fatal("3-node run counted no API request")
	}

	big := o
	big.KubeNode = append([]string{}, o.KubeNode...)
	have := 3
	for _, total := range sizes {
		growCluster(t, c, &big, have, total)
		have = total

		large := measure(big)
		nodes := large.Layers["nodes"].Facts.(*cluster.NodeFacts)
		if len(nodes.Ready) != total || len(nodes.Extra) != 0 {
			t.Fatalf("%d-node run saw %d Ready inventory nodes, %d outside the inventory\n%s", total, len(nodes.Ready), len(nodes.Extra), dump(large))
		}
		if large.Requests != small.Requests {
			t.Errorf("API requests grow with the node count: %d for 3 nodes, %d for %d nodes", small.Requests, large.Requests, total)
		}
		if large.Status == verify.StatusFail || large.Status == verify.StatusError {
			t.Errorf("%d-node run: %s\n%s", total, large.Status, dump(large))
		}
	}
}

// growCluster grows the cluster from have to total Nodes (node<have+1> to
// node<total>), each with its DaemonSet pods, written as their kubelets
// would, and adds them to big's kube_node and to the metrics backend.
func growCluster(tb testing.TB, c *Cluster, big *cluster.Options, have, total int) {
	tb.Helper()
	var extra []string
	for i := have + 1; i <= total; i++ {
		extra = append(extra, fmt.Sprintf("node%d", i))
	}
	big.KubeNode = append(big.KubeNode, extra...)
	grow := clustertest.Healthy(cluster.Options{KubeNode: extra, KubeControlPlane: nil}, 4)
	grow.DaemonSets = nil
	grow.Deployments = nil
	grow.Pods = nil
	for _, name := range []string{"kube-proxy", "calico-node", "nodelocaldns"} {
		grow.AddDaemonSet(name, extra)
	}
	grow.DaemonSets = nil // they exist; their status is updated below
	for _, p := range grow.Pods {
		p.Name = p.OwnerReferences[0].Name + "-" + p.Spec.NodeName
	}
	applyStart := time.Now()
	if err := grow.Apply(context.Background(), c.S.Kube, 32); err != nil {
		tb.Fatal(err)
	}
	// The DaemonSets' status now counts every node.
	for _, name := range []string{"kube-proxy", "calico-node", "nodelocaldns"} {
		cur, err := c.S.Kube.AppsV1().DaemonSets("kube-system").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			tb.Fatal(err)
		}
		n := int32(total)
		cur.Status.DesiredNumberScheduled, cur.Status.CurrentNumberScheduled, cur.Status.NumberReady, cur.Status.NumberAvailable, cur.Status.UpdatedNumberScheduled = n, n, n, n, n
		if _, err := c.S.Kube.AppsV1().DaemonSets("kube-system").UpdateStatus(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
	tb.Logf("wrote %d more nodes and %d pods in %s", len(extra), len(grow.Pods), time.Since(applyStart).Round(time.Millisecond))
	c.Metrics.Nodes = big.K8sCluster()
}

// BenchmarkClusterLayers runs the read-only layers (the probe off) against
// the 3-node sample grown to LAYERCHECK_BENCH_NODES Nodes (default 1000; 3
// is the sample as is), the inventory listing them all, each iteration a
// fresh client as cluster_facts makes it. It reports the API requests per
// run; TestRequestsConstantInNodeCount asserts that they do not grow.
func BenchmarkClusterLayers(b *testing.B) {
	n := 1000
	if s := os.Getenv("LAYERCHECK_BENCH_NODES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 3 {
			b.Fatalf("LAYERCHECK_BENCH_NODES=%q: want a number >= 3", s)
		}
	}
	o := sample3(b)
	c := newCluster(b, o, setup{})
	big := o
	big.KubeNode = append([]string{}, o.KubeNode...)
	if n > 3 {
		growCluster(b, c, &big, 3, n)
	}
	off := false
	var rep *cluster.Report
	for b.Loop() {
		req := c.request(30)
		req.Timeout = 120
		req.Options = big
		req.Probe.Enabled = &off
		var err error
		if rep, err = cluster.RunRequest(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		if rep.Status == verify.StatusFail || rep.Status == verify.StatusError {
			b.Fatalf("%d-node run: %s\n%s", n, rep.Status, dump(rep))
		}
	}
	b.ReportMetric(float64(rep.Requests), "requests/op")
	b.ReportMetric(float64(len(rep.Layers["nodes"].Facts.(*cluster.NodeFacts).Found)), "nodes")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// cpuTime is the CPU time that process pid's threads have used: the sum
// of their /proc/<pid>/task/<tid>/schedstat, in nanoseconds (a thread that
// ended is not counted; Go and kube-apiserver keep theirs).
func cpuTime(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var sum time.Duration
	for _, task := range tasks {
		b, err := os.ReadFile(dir + "/" + task.Name() + "/schedstat")
		if errors.Is(err, fs.ErrNotExist) {
			continue // the thread ended meanwhile
		}
		if err != nil {
			tb.Fatal(err)
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			tb.Fatalf("%s/%s/schedstat: %q", dir, task.Name(), b)
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			tb.Fatalf("%s/%s/schedstat: %v", dir, task.Name(), err)
		}
		sum += time.Duration(ns)
	}
	return sum
}
