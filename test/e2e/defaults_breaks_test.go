//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/node"
)

// What the healthy cluster of kubespray's defaults must show beside every
// layer ok (E2E_CNI=calico).

// defaultsResult is a result the healthy defaults cluster must have, ok:
// Host "*" on every node, "cluster" in the cluster report.
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
	{"cluster", "cni", "calico-node", "calico-node Ready on every node"},
	{"cluster", "cni", "ippool_cidr", "the IPPool's CIDR is kube_pods_subnet"},
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

// workersThroughNginx checks, beside verify (no layer checks it), that
// the workers reach the API server through kubespray's nginx-proxy on
// localhost (loadbalancer_apiserver_localhost, true by default): their
// kubelet.conf names https://localhost:6443 and nginx-proxy-<node> is Ready.
// It returns what it saw, for the results.
func workersThroughNginx(t *testing.T) []string {
	t.Helper()
	var notes []string
	for _, n := range []string{"node2", "node3"} {
		out := onNode(t, n, "grep -E '^ *server:' /etc/kubernetes/kubelet.conf; test -f /etc/kubernetes/manifests/nginx-proxy.yml && echo manifest-present")
		if !strings.Contains(out, "server: https://localhost:6443") || !strings.Contains(out, "manifest-present") {
			t.Errorf("healthy %s: kubelet.conf does not name https://localhost:6443 or nginx-proxy.yml is not in the manifests:\n%s", n, out)
		}
		ready := onNode(t, "node1", kubectl("-n kube-system get pod nginx-proxy-"+n+` -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'`))
		if strings.TrimSpace(ready) != "True" {
			t.Errorf("healthy: nginx-proxy-%s is not Ready (%q)", n, ready)
		}
		notes = append(notes, fmt.Sprintf("%s: kubelet.conf names https://localhost:6443 and nginx-proxy-%s is Ready (checked by the e2e: no verify layer checks the workers' localhost load balancer)", n, n))
	}
	return notes
}
