package verify

import (
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// dnsBehaviour is how a test DNS server answers kubernetes.default.svc.<domain> A.
type dnsBehaviour int32

const (
	dnsAnswer   dnsBehaviour = iota // A with the server's ip
	dnsEmpty                        // NOERROR, no answer
	dnsNXDomain                     // NXDOMAIN
	dnsServFail                     // SERVFAIL
	dnsSilent                       // never answers
)

// dnsTestServer is a real DNS server (miekg/dns) on a loopback address,
// whose behaviour a test can switch between queries.
type dnsTestServer struct {
	Addr     string
	name     string
	ip       atomic.Value // string
	behave   atomic.Int32
	Queries  atomic.Int32
	LastName atomic.Value // string
}

// startDNSServer serves UDP on host:0 (a 127.0.0.0/8 address) answering
// name A with ip; any other question gets NXDOMAIN.
func startDNSServer(t testing.TB, host, name, ip string) *dnsTestServer {
	t.Helper()
	pc, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatalf("listen udp %s: %v", host, err)
	}
	s := &dnsTestServer{Addr: pc.LocalAddr().String(), name: dns.Fqdn(name)}
	s.ip.Store(ip)
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, NotifyStartedFunc: func() { close(started) }, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		s.Queries.Add(1)
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		if len(r.Question) != 1 {
			m.Rcode = dns.RcodeFormatError
			_ = w.WriteMsg(m)
			return
		}
		q := r.Question[0]
		s.LastName.Store(q.Name)
		if q.Name != s.name || q.Qtype != dns.TypeA {
			m.Rcode = dns.RcodeNameError
			_ = w.WriteMsg(m)
			return
		}
		switch dnsBehaviour(s.behave.Load()) {
		case dnsSilent:
			return
		case dnsNXDomain:
			m.Rcode = dns.RcodeNameError
		case dnsServFail:
			m.Rcode = dns.RcodeServerFailure
		case dnsEmpty:
		case dnsAnswer:
			m.Answer = append(m.Answer, &dns.A{
				Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 5},
				A:   net.ParseIP(s.ip.Load().(string)),
			})
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("dns server did not start")
	}
	t.Cleanup(func() { _ = srv.Shutdown() })
	return s
}

func (s *dnsTestServer) set(b dnsBehaviour, ip string) {
	s.behave.Store(int32(b))
	s.ip.Store(ip)
}

// dnsWrite writes a node file under root.
func dnsWrite(t testing.TB, root, p, content string) {
	t.Helper()
	full := filepath.Join(root, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
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
