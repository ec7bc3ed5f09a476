package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// StartServices starts what a one-host tree's etcd and dns layers contact,
// on loopback: its etcd as a real server (unless etcdUp is false: then the
// etcd addresses lead to a closed loopback port) with its own copy of the
// member certificate, so a test may break the tree's files afterwards, and
// one real DNS server answering kubernetes.default.svc.<dns_domain> with
// kube_apiserver_ip over UDP and TCP for nodelocaldns and CoreDNS. It
// returns the address map (layercheck_verify_addr_map, --addr-map) from
// the addresses the layers contact to the loopback ones.
func StartServices(t testing.TB, tr *Tree, etcdUp bool) map[string]string {
	t.Helper()
	ca, cert, key := tr.EtcdFiles()
	srv := t.TempDir()
	for _, f := range []string{ca, cert, key} {
		data, err := os.ReadFile(tr.Path(f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(srv, filepath.Base(f)), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ip := tr.IP()
	cp, pp := FreePort(t), FreePort(t)
	if etcdUp {
		StartEtcd(t, filepath.Join(srv, filepath.Base(ca)), []EtcdMember{{
			Name: "etcd1", ClientPort: cp, PeerPort: pp, AdvertisePeer: "https://" + ip + ":2380",
			CertFile: filepath.Join(srv, filepath.Base(cert)), KeyFile: filepath.Join(srv, filepath.Base(key)),
		}})
	}
	c := tr.Config
	dnsAddr := StartDNS(t, "127.0.0.1", "kubernetes.default.svc."+c.DNSDomain, firstServiceIP(c.KubeServiceAddresses), true).Addr
	return map[string]string{
		"127.0.0.1:2379":         fmt.Sprintf("127.0.0.1:%d", cp),
		ip + ":2379":             fmt.Sprintf("127.0.0.1:%d", cp),
		ip + ":2380":             fmt.Sprintf("127.0.0.1:%d", pp),
		c.NodelocaldnsIP + ":53": dnsAddr,
		coreDNSIP(c.KubeServiceAddresses) + ":53": dnsAddr,
	}
}
