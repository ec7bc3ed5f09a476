package node

import (
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
)

// dnsWrite writes a node file under root.
func dnsWrite(t testing.TB, root, p, content string) {
	t.Helper()
	testutil.WriteTree(t, root, map[string]string{p: content})
}

// dnsKubeletConfig is the DNS part of kubelet-config.yaml as kubespray
// v2.31.0 roles/kubernetes/node/templates/kubelet-config.v1beta1.yaml.j2
// renders it.
func dnsKubeletConfig(clusterDNS []string, domain, resolvConf string) string {
	s := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n" +
		"staticPodPath: /etc/kubernetes/manifests\nclusterDomain: " + domain + "\nclusterDNS:\n"
	for _, d := range clusterDNS {
		s += "- " + d + "\n"
	}
	return s + "resolvConf: \"" + resolvConf + "\"\n"
}

// dnsUbuntuNode writes what kubespray v2.31.0 leaves on an Ubuntu 24.04
// node with defaults (nodelocaldns, no upstream_dns_servers) after
// cluster.yml: the kubelet config, the systemd-resolved drop-in
// (resolved.conf.j2 with dns_late), the stub /etc/resolv.conf and the
// resolv.conf systemd-resolved publishes for programs that bypass it.
func dnsUbuntuNode(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	dnsWrite(t, root, "etc/kubernetes/kubelet-config.yaml", dnsKubeletConfig([]string{"169.254.25.10"}, "cluster.local", "/run/systemd/resolve/resolv.conf"))
	dnsWrite(t, root, "etc/systemd/resolved.conf.d/kubespray.conf", "[Resolve]\nDNS=169.254.25.10\nFallbackDNS=\nDomains=default.svc.cluster.local svc.cluster.local\nDNSSEC=no\nCache=no-negative\n")
	dnsWrite(t, root, "etc/resolv.conf", "nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch default.svc.cluster.local svc.cluster.local\n")
	dnsWrite(t, root, "run/systemd/resolve/resolv.conf", "# managed by systemd-resolved\nnameserver 169.254.25.10\nnameserver 10.10.0.1\nsearch default.svc.cluster.local svc.cluster.local\n")
	return root
}
