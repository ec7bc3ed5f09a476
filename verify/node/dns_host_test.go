package node

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/verify"
)

// dnsHostRun runs the dns layer on root with the DNS servers mapped to a
// closed loopback port: only the resolver files are judged here.
func dnsHostRun(t *testing.T, root string, nodelocal bool) ([]verify.Result, *DNSFacts) {
	t.Helper()
	env := &Env{
		FS: verify.FS{Root: root}, Host: "node1", Now: etcdTestNow, NetTimeout: 200 * time.Millisecond,
		Options: Options{Groups: []string{"kube_node", "k8s_cluster"}, EnableNodelocaldns: nodelocal,
			NodelocaldnsIP: "169.254.25.10", KubeServiceAddresses: "10.233.0.0/18", DNSDomain: "cluster.local"},
		AddrMap: map[string]string{"169.254.25.10:53": "127.0.0.1:9", "10.233.0.3:53": "127.0.0.1:9"},
	}
	res, facts, err := dnsLayer{}.Check(context.Background(), env)
	require.NoError(t, err)
	return res, facts.(*DNSFacts)
}

func dnsResult(t *testing.T, res []verify.Result, check string) verify.Result {
	t.Helper()
	for _, r := range res {
		if r.Check == check {
			return r
		}
	}
	t.Fatalf("no %s result in %s", check, etcdDump(res))
	return verify.Result{}
}

// stubLink makes /etc/resolv.conf the symlink Ubuntu ships:
// ../run/systemd/resolve/stub-resolv.conf, naming 127.0.0.53.
func stubLink(t *testing.T, root string) {
	t.Helper()
	dnsWrite(t, root, "run/systemd/resolve/stub-resolv.conf", "# This is /run/systemd/resolve/stub-resolv.conf managed by man:systemd-resolved(8).\nnameserver 127.0.0.53\noptions edns0 trust-ad\n")
	require.NoError(t, os.Remove(filepath.Join(root, "etc/resolv.conf")))
	require.NoError(t, os.Symlink("../run/systemd/resolve/stub-resolv.conf", filepath.Join(root, "etc/resolv.conf")))
}

// The generated Ubuntu node: systemd-resolved asks nodelocaldns and the
// DHCP resolver 10.10.0.1; the host does not depend on the cluster alone.
func TestDNSHostResolutionHealthy(t *testing.T) {
	root := dnsUbuntuNode(t)
	stubLink(t, root)
	res, f := dnsHostRun(t, root, true)
	r := dnsResult(t, res, "host_resolution")
	assert.Equal(t, verify.StatusOK, r.Status, r.Msg)
	assert.Equal(t, "systemd-resolved stub", f.HostPath.Origin)
	assert.Equal(t, "../run/systemd/resolve/stub-resolv.conf", f.HostPath.Link)
	assert.Equal(t, []string{"169.254.25.10", "10.10.0.1"}, f.HostPath.Upstreams)
	assert.Contains(t, r.Msg, "10.10.0.1 outside the cluster")
}

// kubespray#11416: nodelocaldns off, systemd-resolved's only server is
// CoreDNS's ClusterIP 10.233.0.3: the host depends on cluster DNS alone.
func TestDNSHostOnlyClusterDNSFails(t *testing.T) {
	root := dnsUbuntuNode(t)
	stubLink(t, root)
	dnsWrite(t, root, "etc/kubernetes/kubelet-config.yaml", dnsKubeletConfig([]string{"10.233.0.3"}, "cluster.local", "/run/systemd/resolve/resolv.conf"))
	dnsWrite(t, root, "etc/systemd/resolved.conf.d/kubespray.conf", "[Resolve]\nDNS=10.233.0.3\nDomains=default.svc.cluster.local svc.cluster.local\n")
	dnsWrite(t, root, "run/systemd/resolve/resolv.conf", "# managed by systemd-resolved\nnameserver 10.233.0.3\n")
	res, f := dnsHostRun(t, root, false)
	r := dnsResult(t, res, "host_resolution")
	assert.Equal(t, verify.StatusFail, r.Status)
	assert.Contains(t, r.Msg, "the host resolves names only through cluster DNS 10.233.0.3")
	assert.Contains(t, r.Msg, "kubespray#11416")
	assert.Contains(t, r.Remediation, "upstream_dns_servers")
	assert.Contains(t, r.Remediation, "enable_nodelocaldns: true")
	assert.Contains(t, r.Remediation, "systemctl restart systemd-resolved")
	assert.Equal(t, []string{"10.233.0.3"}, f.HostPath.Upstreams)
}

// kubelet handed the systemd-resolved stub file: the loopback nameserver's
// origin is named in the remedy.
func TestDNSLoopbackOriginNamed(t *testing.T) {
	t.Run("systemd-resolved stub", func(t *testing.T) {
		root := dnsUbuntuNode(t)
		stubLink(t, root)
		dnsWrite(t, root, "etc/kubernetes/kubelet-config.yaml", dnsKubeletConfig([]string{"169.254.25.10"}, "cluster.local", "/etc/resolv.conf"))
		res, _ := dnsHostRun(t, root, true)
		r := dnsResult(t, res, "pod_resolv_conf")
		assert.Equal(t, verify.StatusFail, r.Status)
		assert.Contains(t, r.Remediation, "systemd-resolved's stub listener (/etc/resolv.conf -> ../run/systemd/resolve/stub-resolv.conf)")
		assert.Contains(t, r.Remediation, "/run/systemd/resolve/resolv.conf")
	})
	t.Run("dhclient supersede", func(t *testing.T) {
		root := dnsUbuntuNode(t)
		require.NoError(t, os.RemoveAll(filepath.Join(root, "etc/systemd")))
		require.NoError(t, os.RemoveAll(filepath.Join(root, "run/systemd")))
		dnsWrite(t, root, "etc/kubernetes/kubelet-config.yaml", dnsKubeletConfig([]string{"169.254.25.10"}, "cluster.local", "/etc/resolv.conf"))
		dnsWrite(t, root, "etc/resolv.conf", "nameserver 127.0.0.1\nsearch default.svc.cluster.local\n")
		dnsWrite(t, root, "etc/dhcp/dhclient.conf", "request subnet-mask, routers;\nsupersede domain-name-servers 127.0.0.1;\n")
		res, f := dnsHostRun(t, root, true)
		r := dnsResult(t, res, "pod_resolv_conf")
		assert.Equal(t, verify.StatusFail, r.Status)
		assert.Contains(t, r.Remediation, "dhclient writes the loopback address (supersede domain-name-servers 127.0.0.1 in /etc/dhcp/dhclient.conf)")
		assert.Equal(t, "dhclient", f.HostPath.Origin)
	})
	t.Run("NetworkManager dnsmasq", func(t *testing.T) {
		root := dnsUbuntuNode(t)
		require.NoError(t, os.RemoveAll(filepath.Join(root, "etc/systemd")))
		require.NoError(t, os.RemoveAll(filepath.Join(root, "run/systemd")))
		dnsWrite(t, root, "etc/kubernetes/kubelet-config.yaml", dnsKubeletConfig([]string{"169.254.25.10"}, "cluster.local", "/etc/resolv.conf"))
		dnsWrite(t, root, "etc/resolv.conf", "# Generated by NetworkManager\nnameserver 127.0.1.1\n")
		dnsWrite(t, root, "etc/NetworkManager/conf.d/00-dns.conf", "[main]\ndns=dnsmasq\n")
		res, _ := dnsHostRun(t, root, true)
		r := dnsResult(t, res, "pod_resolv_conf")
		assert.Equal(t, verify.StatusFail, r.Status)
		assert.Contains(t, r.Remediation, "NetworkManager writes the loopback address")
		assert.Contains(t, r.Remediation, "dns=dnsmasq in /etc/NetworkManager/conf.d/00-dns.conf")
	})
}

// dns_mode coredns_dual: kubelet hands pods both CoreDNS service IPs and
// both answer; dns_mode manual: manual_dns_server is the cluster DNS, and
// an empty one fails.
func TestDNSModesDualAndManual(t *testing.T) {
	name := "kubernetes.default.svc.cluster.local"
	primary := harness.StartDNS(t, "127.0.0.1", name, "10.233.0.1", false)
	second := harness.StartDNS(t, "127.0.0.2", name, "10.233.0.1", false)
	run := func(t *testing.T, o Options, clusterDNS []string) ([]verify.Result, *DNSFacts) {
		t.Helper()
		root := dnsUbuntuNode(t)
		dnsWrite(t, root, "etc/kubernetes/kubelet-config.yaml", dnsKubeletConfig(clusterDNS, "cluster.local", "/run/systemd/resolve/resolv.conf"))
		o.Groups = []string{"kube_node", "k8s_cluster"}
		o.NodelocaldnsIP, o.KubeServiceAddresses, o.DNSDomain = "169.254.25.10", "10.233.0.0/18", "cluster.local"
		env := &Env{FS: verify.FS{Root: root}, Host: "node1", Now: etcdTestNow, NetTimeout: time.Second, Options: o,
			AddrMap: map[string]string{"10.233.0.3:53": primary.Addr, "10.233.0.4:53": second.Addr, "10.233.0.10:53": second.Addr}}
		res, facts, err := dnsLayer{}.Check(context.Background(), env)
		require.NoError(t, err)
		return res, facts.(*DNSFacts)
	}
	t.Run("coredns_dual", func(t *testing.T) {
		res, f := run(t, Options{DNSMode: "coredns_dual"}, []string{"10.233.0.3", "10.233.0.4"})
		assert.Equal(t, "10.233.0.4", f.SkydnsServerSecondary)
		for _, c := range []string{"kubelet_cluster_dns", "query_coredns", "query_coredns_secondary"} {
			r := dnsResult(t, res, c)
			assert.Equal(t, verify.StatusOK, r.Status, "%s: %s", c, r.Msg)
		}
		res, _ = run(t, Options{DNSMode: "coredns_dual"}, []string{"10.233.0.3"})
		r := dnsResult(t, res, "kubelet_cluster_dns")
		assert.Equal(t, verify.StatusFail, r.Status)
		assert.Contains(t, r.Msg, "skydns_server_secondary")
	})
	t.Run("manual", func(t *testing.T) {
		res, f := run(t, Options{DNSMode: "manual", ManualDNSServer: "10.233.0.10"}, []string{"10.233.0.10"})
		assert.Equal(t, "10.233.0.10", f.ManualDNSServer)
		for _, c := range []string{"kubelet_cluster_dns", "query_manual"} {
			r := dnsResult(t, res, c)
			assert.Equal(t, verify.StatusOK, r.Status, "%s: %s", c, r.Msg)
		}
		for _, r := range res {
			assert.NotEqual(t, "query_coredns", r.Check, "dns_mode manual deploys no CoreDNS")
		}
		res, _ = run(t, Options{DNSMode: "manual"}, []string{""})
		r := dnsResult(t, res, "dns_mode")
		assert.Equal(t, verify.StatusFail, r.Status)
		assert.Contains(t, r.Msg, "manual_dns_server is empty")
	})
}

// A plain /etc/resolv.conf naming 127.0.0.53 on a host with
// systemd-resolved (the shape of the kubespray node fixture) is the stub:
// the host's servers are systemd-resolved's.
func TestDNSHostPlainStubFile(t *testing.T) {
	root := dnsUbuntuNode(t)
	res, f := dnsHostRun(t, root, true)
	assert.Equal(t, "systemd-resolved stub", f.HostPath.Origin)
	assert.Equal(t, []string{"169.254.25.10", "10.10.0.1"}, f.HostPath.Upstreams)
	assert.Equal(t, verify.StatusOK, dnsResult(t, res, "host_resolution").Status)
}
