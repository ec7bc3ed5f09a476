//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/node"
)

// What the healthy cluster of kubespray's defaults must show beside every
// layer ok, and the breaks seeded on it (E2E_CNI=calico).

// defaultsResult is a result the healthy defaults cluster must have, ok:
// Host "*" on every node, "workers" on the nodes outside kube_control_plane
// (node2, node3), "cluster" in the cluster report.
type defaultsResult struct{ Host, Layer, Check, What string }

// defaultsOK names, for each part of kubespray's defaults a verify check
// covers, the check that must have run and passed, so that a layer that
// skipped it (an option read wrong, a plugin not recognised) is caught
// although the layer is ok. What has no check is in docs/e2e.md.
var defaultsOK = []defaultsResult{
	{"*", "dns", "query_nodelocaldns", "nodelocaldns answers on nodelocaldns_ip on every node"},
	{"*", "dns", "query_coredns", "CoreDNS answers on its service IP behind it"},
	{"*", "dns", "kubelet_cluster_dns", "kubelet hands pods nodelocaldns_ip"},
	{"*", "cni", "interface:vxlan.calico", "calico's VXLAN interface on every node"},
	{"*", "cni", "interface_up:vxlan.calico", "calico's VXLAN interface up on every node"},
	{"workers", "kubelet", "localhost_lb:manifest", "nginx-proxy's static pod on the workers (loadbalancer_apiserver_localhost)"},
	{"workers", "kubelet", "localhost_lb:listen", "nginx.conf listens on 127.0.0.1:loadbalancer_apiserver_port"},
	{"workers", "kubelet", "localhost_lb:upstreams", "nginx.conf balances over kube_control_plane"},
	{"workers", "kubelet", "localhost_lb:kubelet_conf", "the workers' kubelet.conf names https://localhost:6443"},
	{"workers", "kubelet", "localhost_lb:connect", "the API server answers TLS on the workers' 127.0.0.1:6443"},
	{"cluster", "cni", "calico-node", "calico-node Ready on every node"},
	{"cluster", "cni", "ippool_cidr", "the IPPool's CIDR is kube_pods_subnet"},
	{"cluster", "cni", "ippool_block_size", "the IPPool's blockSize is calico_pool_blocksize"},
	{"cluster", "probe", "service_dns", "a probe pod resolves the probe Service through the cluster DNS (nodelocaldns)"},
	{"cluster", "cni", "ippool_encapsulation", "the IPPool's encapsulation is calico_vxlan_mode/calico_ipip_mode"},
	{"cluster", "kube_system", "calico-kube-controllers", "calico-kube-controllers running"},
	{"cluster", "kube_system", "nodelocaldns", "the nodelocaldns DaemonSet Ready on every node"},
	{"cluster", "kube_system", "coredns", "CoreDNS running"},
	{"cluster", "kube_system", "dns-autoscaler", "dns-autoscaler running"},
	{"cluster", "kube_system", "coredns_replicas", "CoreDNS scaled as dns-autoscaler's linear rule gives"},
}

// defaultsHealthy checks defaultsOK in one tool's reports.
func defaultsHealthy(t *testing.T, nodes map[string]*node.Report, c *cluster.Report) {
	t.Helper()
	for _, w := range defaultsOK {
		var reps map[string]*verify.LayerReport
		switch w.Host {
		case "cluster":
			if c != nil {
				reps = map[string]*verify.LayerReport{"cluster": c.Layers[w.Layer]}
			}
		default:
			reps = map[string]*verify.LayerReport{}
			for h, rep := range nodes {
				if w.Host == "workers" && h == "node1" {
					continue
				}
				reps[h] = rep.Layers[w.Layer]
			}
		}
		if len(reps) == 0 {
			t.Errorf("healthy: no report to find %s/%s (%s) in", w.Layer, w.Check, w.What)
		}
		for h, lr := range reps {
			if st := resultStatus(lr, w.Check); st != verify.StatusOK {
				t.Errorf("healthy %s: %s/%s is %s, want ok (%s)%s", h, w.Layer, w.Check, st, w.What, failing(lr))
			}
		}
	}
}

// resultStatus is the status of a layer's result check, "absent" when the
// layer has none.
func resultStatus(lr *verify.LayerReport, check string) verify.Status {
	if lr == nil {
		return "absent"
	}
	for _, r := range lr.Results {
		if r.Check == check {
			return r.Status
		}
	}
	return "absent"
}

// workersThroughNginx checks, beside verify (whose kubelet layer checks
// the workers' files and port: localhost_lb, in defaultsOK), that the
// workers reach the API server through kubespray's nginx-proxy on
// localhost (loadbalancer_apiserver_localhost, true by default): their
// kubelet.conf names https://localhost:6443 and nginx-proxy-<node> is Ready.
// It returns what it saw, for the results.
func workersThroughNginx(t *testing.T) []string {
	t.Helper()
	var notes []string
	for _, n := range []string{"node2", "node3"} {
		out := onNode(t, n, "grep -E '^ *server:' /etc/kubernetes/kubelet.conf; test -f /etc/kubernetes/manifests/nginx-proxy.yml && echo manifest-present; true")
		ready := strings.TrimSpace(onNode(t, "node1", kubectl("-n kube-system get pod nginx-proxy-"+n+` -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>&1 || true`)))
		ok := strings.Contains(out, "server: https://localhost:6443") && strings.Contains(out, "manifest-present") && ready == "True"
		if !ok {
			t.Errorf("healthy %s: kubelet.conf does not name https://localhost:6443, nginx-proxy.yml is not in the manifests or nginx-proxy-%s is not Ready (%q):\n%s", n, n, ready, out)
			notes = append(notes, fmt.Sprintf("%s does NOT reach the API server through nginx-proxy on localhost (checked by the e2e beside the kubelet layer's localhost_lb checks)", n))
			continue
		}
		notes = append(notes, fmt.Sprintf("%s: kubelet.conf names https://localhost:6443 and nginx-proxy-%s is Ready (checked by the e2e beside the kubelet layer's localhost_lb checks)", n, n))
	}
	return notes
}

// calicoBreaks are the breaks of kubespray's defaults, seeded in this
// order between the flannel e2e's breaks that hold for both clusters.
func calicoBreaks() []brk {
	return []brk{
		{
			// calico-node restarts felix when the pools' encapsulation
			// changes; with no VXLAN pool left it deletes vxlan.calico,
			// and this kernel has no IPIP, so pods on different nodes
			// lose each other until the pool is set back.
			Name: "the IPPool's encapsulation changed from VXLAN to IPIP",
			Seed: func(t *testing.T, _ *stage) {
				patchPool(t, `{"spec":{"ipipMode":"Always","vxlanMode":"Never"}}`)
				// What felix does is awaited, not judged: the break is
				// the pool's.
				if !awaitLink(t, "vxlan.calico", false) {
					t.Logf("vxlan.calico is still on a node two minutes after the pool left VXLAN")
				}
				settleCalicoNode(t)
			},
			Restore: func(t *testing.T, _ *stage) {
				patchPool(t, `{"spec":{"ipipMode":"Never","vxlanMode":"Always"}}`)
				if !awaitLink(t, "vxlan.calico", true) {
					t.Fatal("vxlan.calico is not back on every node two minutes after the pool is VXLAN again")
				}
				onNode(t, "node1", kubectl("-n kube-system rollout status daemonset calico-node --timeout=300s"))
				waitDNS(t)
			},
			Host: "cluster", Layer: "cni", Status: verify.StatusFail,
			Check: regexp.MustCompile(`^ippool_encapsulation$`), Remedy: regexp.MustCompile(`calicoctl\.sh patch ippool default-pool`),
			// CoreDNS, the probe's pods and metrics-server answer or not by
			// the node kube-proxy sends a request to; calico-node's
			// readiness follows felix's retries of an IPIP device.
			Chance: []string{"dns", "kube_system", "probe", "addons"},
		},
		{
			// A CIDR that holds kube_pods_subnet's blocks, so pod traffic
			// is routed as before while the pool no longer matches.
			Name: "the IPPool's CIDR no longer kube_pods_subnet (10.233.0.0/17 for 10.233.64.0/18)",
			Seed: func(t *testing.T, _ *stage) {
				patchPool(t, `{"spec":{"cidr":"10.233.0.0/17"}}`)
			},
			Restore: func(t *testing.T, _ *stage) {
				patchPool(t, `{"spec":{"cidr":"10.233.64.0/18"}}`)
			},
			Host: "cluster", Layer: "cni", Status: verify.StatusFail,
			Check: regexp.MustCompile(`^ippool_cidr$`), Remedy: regexp.MustCompile(`kube_pods_subnet`),
		},
		{
			// The DaemonSet no longer schedules on node2 (a node
			// affinity on a label only node2 has): its pod there is
			// deleted, the others roll.
			Name: "calico-node stopped on node2",
			Seed: func(t *testing.T, _ *stage) { excludeFromDaemonSet(t, "calico-node", "k8s-app=calico-node", "node2") },
			Restore: func(t *testing.T, _ *stage) {
				includeDaemonSet(t, "calico-node", "node2")
				waitDNS(t)
			},
			Host: "cluster", Layer: "cni", Status: verify.StatusFail,
			Check: regexp.MustCompile(`^calico-node$`), Remedy: regexp.MustCompile(`describe ds calico-node`),
			// A probe pod placed on node2 gets no route without felix.
			Chance: []string{"probe"},
		},
		{
			// The DaemonSet no longer schedules on node3. node-cache, told
			// to stop, takes its address down with its link (the link
			// comes back without it where nodes.sh nodelocaldns keeps
			// one); killed before it could, it leaves the address, which
			// is then deleted: no node-cache is left there to add it back.
			Name: "nodelocaldns's address 169.254.25.10 gone from node3",
			Seed: func(t *testing.T, _ *stage) {
				excludeFromDaemonSet(t, "nodelocaldns", "k8s-app=node-local-dns", "node3")
				onNode(t, "node3", "ip addr del 169.254.25.10/32 dev nodelocaldns 2>/dev/null || true")
				waitNoAddress(t, "node3", "169.254.25.10")
			},
			Restore: func(t *testing.T, _ *stage) {
				includeDaemonSet(t, "nodelocaldns", "node3")
				waitDNS(t)
			},
			Host: "node3", Layer: "dns", Status: verify.StatusFail,
			Check: regexp.MustCompile(`^query_nodelocaldns$`), Remedy: regexp.MustCompile(`ip addr show nodelocaldns`),
		},
		{
			// kubelet stops the static pod; node2's kubelet then reaches
			// no API server (its kubelet.conf names localhost:6443) and
			// node2 turns NotReady after the node monitor's grace period
			// (kube_controller_node_monitor_grace_period, 40 s). node2's
			// kubelet layer names the missing manifest (and nothing
			// answering on 127.0.0.1:6443); nodes/ready fails as well.
			Name: "nginx-proxy's static pod removed from node2 (a worker)",
			Seed: func(t *testing.T, _ *stage) {
				onNode(t, "node2", "mv /etc/kubernetes/manifests/nginx-proxy.yml /etc/kubernetes/nginx-proxy.yml.e2e")
				waitNodeReady(t, "node2", false)
			},
			Restore: func(t *testing.T, _ *stage) {
				onNode(t, "node2", "mv /etc/kubernetes/nginx-proxy.yml.e2e /etc/kubernetes/manifests/nginx-proxy.yml")
				waitNodeReady(t, "node2", true)
				onNode(t, "node1", kubectl("-n kube-system wait --for=condition=Ready pod/nginx-proxy-node2 --timeout=180s")+" && "+
					kubectl("-n kube-system rollout status deployment coredns --timeout=300s"))
				waitMetrics(t)
				waitDNS(t)
			},
			Host: "node2", Layer: "kubelet", Status: verify.StatusFail,
			Check: regexp.MustCompile(`^localhost_lb:manifest$`), Remedy: regexp.MustCompile(`loadbalancer/nginx-proxy\.yml`),
			// metrics-server's APIService, if its pod is on node2, turns
			// unavailable when the aggregator next checks it (and the
			// probe is not run while it is).
			Chance: []string{"addons", "probe"},
		},
	}
}

// patchPool patches kubespray's IPPool (calico_pool_name default-pool)
// through calico's CRD, as `kubectl edit ippool` would.
func patchPool(t *testing.T, patch string) {
	t.Helper()
	onNode(t, "node1", kubectl("patch ippools.crd.projectcalico.org default-pool --type merge -p "+shellQuote(patch)))
}

// excludeLabel marks the node a DaemonSet is kept off.
const excludeLabel = "layercheck-e2e/excluded"

// excludeFromDaemonSet keeps kube-system DaemonSet ds (pods labelled
// selector) off node: a required node affinity on a label only node gets.
// It returns once the rollout is done and node runs none of its pods.
func excludeFromDaemonSet(t *testing.T, ds, selector, node string) {
	t.Helper()
	affinity := `{"spec":{"template":{"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":` +
		`{"nodeSelectorTerms":[{"matchExpressions":[{"key":"` + excludeLabel + `","operator":"DoesNotExist"}]}]}}}}}}}`
	onNode(t, "node1", kubectl("label node "+node+" "+excludeLabel+"=true --overwrite")+" && "+
		kubectl("-n kube-system patch daemonset "+ds+" --type merge -p "+shellQuote(affinity))+" && "+
		kubectl("-n kube-system rollout status daemonset "+ds+" --timeout=600s"))
	var out string
	for i := 0; i < 60; i++ {
		out = onNode(t, "node1", kubectl("-n kube-system get pods -l "+selector+" --field-selector spec.nodeName="+node+" -o name"))
		if strings.TrimSpace(out) == "" {
			return
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatalf("%s still runs on %s two minutes after its rollout:\n%s", ds, node, out)
}

// includeDaemonSet undoes excludeFromDaemonSet and waits for the rollout.
func includeDaemonSet(t *testing.T, ds, node string) {
	t.Helper()
	onNode(t, "node1", kubectl("-n kube-system patch daemonset "+ds+` --type json -p '[{"op":"remove","path":"/spec/template/spec/affinity"}]'`)+" && "+
		kubectl("label node "+node+" "+excludeLabel+"-")+" && "+
		kubectl("-n kube-system rollout status daemonset "+ds+" --timeout=600s"))
}

// settleCalicoNode waits out calico-node's readiness probe (6 failures 10 s
// apart) after felix restarted, so that both tools judge the same state.
func settleCalicoNode(t *testing.T) {
	t.Helper()
	time.Sleep(70 * time.Second)
}

// awaitLink waits up to two minutes for every node to have (present) or
// lack link name, and says whether they do.
func awaitLink(t *testing.T, name string, present bool) bool {
	t.Helper()
	for _, n := range []string{"node1", "node2", "node3"} {
		ok := false
		for i := 0; i < 60 && !ok; i++ {
			out := onNode(t, n, "ip -o link show "+name+" 2>&1 || true")
			if ok = strings.Contains(out, name+":") == present; !ok {
				time.Sleep(2 * time.Second)
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// waitNoAddress waits until node has no address addr.
func waitNoAddress(t *testing.T, node, addr string) {
	t.Helper()
	var out string
	for i := 0; i < 60; i++ {
		out = onNode(t, node, "ip -o addr show")
		if !strings.Contains(out, " "+addr+"/") {
			return
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatalf("%s still has %s after two minutes:\n%s", node, addr, out)
}

// waitNodeReady waits until node's Ready condition is True (ready) or not.
func waitNodeReady(t *testing.T, node string, ready bool) {
	t.Helper()
	var st string
	for i := 0; i < 90; i++ {
		st = strings.TrimSpace(onNode(t, "node1", kubectl("get node "+node+` -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'`)))
		if (st == "True") == ready {
			return
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatalf("node %s: Ready is %q after three minutes, want ready=%v", node, st, ready)
}

// waitDNS waits until both tiers of cluster DNS answer on every node:
// nodelocaldns on 169.254.25.10 and CoreDNS on its service IP, which
// crosses the pod network from the nodes CoreDNS does not run on.
func waitDNS(t *testing.T) {
	t.Helper()
	for _, n := range []string{"node1", "node2", "node3"} {
		for _, server := range []string{"169.254.25.10", "10.233.0.3"} {
			var out string
			ok := false
			for i := 0; i < 60 && !ok; i++ {
				out = onNode(t, n, "dig +short +time=2 +tries=1 @"+server+" kubernetes.default.svc.cluster.local 2>&1 || true")
				if ok = strings.TrimSpace(out) == "10.233.0.1"; !ok {
					time.Sleep(2 * time.Second)
				}
			}
			if !ok {
				t.Fatalf("%s: %s does not answer kubernetes.default.svc.cluster.local with 10.233.0.1 after three minutes:\n%s", n, server, out)
			}
		}
	}
}
