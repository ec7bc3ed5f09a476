//go:build shared

package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/verify"
)

// TestDNSLayerFixture checks the DNS files of the kubespray v2.31.0 node1
// fixture (Ubuntu 24.04, nodelocaldns, no upstream_dns_servers): the healthy
// case. Nothing may fail; the one warning is the resolver-loop risk
// kubespray's defaults leave (kubelet hands pods
// /run/systemd/resolve/resolv.conf, which names nodelocaldns itself).
func TestDNSLayerFixture(t *testing.T) {
	root := etcdCopyFixture(t, "etc/kubernetes/kubelet-config.yaml", "etc/resolv.conf",
		"etc/systemd/resolved.conf.d/kubespray.conf", "run/systemd/resolve/resolv.conf")
	name := "kubernetes.default.svc.cluster.local"
	nodelocal := harness.StartDNS(t, "127.0.0.1", name, "10.233.0.1", false)
	coredns := harness.StartDNS(t, "127.0.0.2", name, "10.233.0.1", false)
	env := &Env{
		FS: verify.FS{Root: root}, Host: "node1", Now: time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC), NetTimeout: time.Second,
		Options: Options{Groups: []string{"kube_control_plane", "etcd", "k8s_cluster"}, EnableNodelocaldns: true,
			NodelocaldnsIP: "169.254.25.10", KubeServiceAddresses: "10.233.0.0/18", DNSDomain: "cluster.local",
			DNSMode: "coredns", ResolvconfMode: "host_resolvconf"},
		AddrMap: map[string]string{"169.254.25.10:53": nodelocal.Addr, "10.233.0.3:53": coredns.Addr},
	}
	res, facts, err := dnsLayer{}.Check(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		switch {
		case r.Check == "pod_resolv_conf":
			if r.Status != verify.StatusWarn || !strings.Contains(r.Msg, "loop risk: /run/systemd/resolve/resolv.conf") ||
				!strings.Contains(r.Msg, "besides 10.10.0.1") || !strings.Contains(r.Remediation, "set upstream_dns_servers") {
				t.Errorf("pod_resolv_conf: [%s] %s (%s)", r.Status, r.Msg, r.Remediation)
			}
		case r.Status != verify.StatusOK:
			t.Errorf("false alarm on the healthy fixture: [%s] %s: %s", r.Status, r.Check, r.Msg)
		}
	}
	f := facts.(*DNSFacts)
	if f.Kubelet.ResolvConf != "/run/systemd/resolve/resolv.conf" || f.HostResolvConf.Nameservers[0] != "127.0.0.53" ||
		f.SystemdResolved.DNS[0] != "169.254.25.10" || f.ForwardTarget != "/etc/resolv.conf" {
		t.Errorf("facts %+v kubelet %+v", f, f.Kubelet)
	}

	// The same tree with upstream_dns_servers set reports no risk.
	env.Options.UpstreamDNSServers = []string{"10.10.0.1"}
	res, _, _ = dnsLayer{}.Check(context.Background(), env)
	for _, r := range res {
		if r.Status != verify.StatusOK {
			t.Errorf("with upstream_dns_servers: [%s] %s: %s", r.Status, r.Check, r.Msg)
		}
	}
}
