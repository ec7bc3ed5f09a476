package harness

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// DNSBehaviour is how a test DNS server answers its name's A question.
type DNSBehaviour int32

// The behaviours of a DNSServer.
const (
	DNSAnswer   DNSBehaviour = iota // A with the server's ip
	DNSEmpty                        // NOERROR, no answer
	DNSNXDomain                     // NXDOMAIN
	DNSServFail                     // SERVFAIL
	DNSSilent                       // never answers
)

// DNSServer is a real DNS server (miekg/dns) on a loopback address that
// answers one name's A question with an address, as CoreDNS and
// nodelocaldns answer for kubernetes.default.svc.<dns_domain>; a test may
// switch its behaviour between queries. Any other question gets NXDOMAIN,
// a message with other than one question FORMERR.
type DNSServer struct {
	// Addr is the host:port it serves on.
	Addr     string
	name     string
	ip       atomic.Value // string
	behave   atomic.Int32
	Queries  atomic.Int32
	LastName atomic.Value // string
}

// StartDNS serves UDP on host:0 (a 127.0.0.0/8 address), and TCP on the
// same port when tcp is set, answering name A with ip, until the test ends.
func StartDNS(t testing.TB, host, name, ip string, tcp bool) *DNSServer {
	t.Helper()
	s := &DNSServer{name: dns.Fqdn(name)}
	s.ip.Store(ip)
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
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
		switch DNSBehaviour(s.behave.Load()) {
		case DNSSilent:
			return
		case DNSNXDomain:
			m.Rcode = dns.RcodeNameError
		case DNSServFail:
			m.Rcode = dns.RcodeServerFailure
		case DNSEmpty:
		case DNSAnswer:
			m.Answer = append(m.Answer, &dns.A{
				Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 5},
				A:   net.ParseIP(s.ip.Load().(string)),
			})
		}
		_ = w.WriteMsg(m)
	})
	var pc net.PacketConn
	var l net.Listener
	for i := 0; ; i++ {
		var err error
		pc, err = net.ListenPacket("udp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Fatalf("listen udp %s: %v", host, err)
		}
		if !tcp {
			break
		}
		l, err = net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			break
		}
		pc.Close()
		if i > 20 {
			t.Fatalf("no free udp+tcp port pair on %s: %v", host, err)
		}
	}
	s.Addr = pc.LocalAddr().String()
	servers := []*dns.Server{{PacketConn: pc, Handler: h}}
	if l != nil {
		servers = append(servers, &dns.Server{Listener: l, Handler: h})
	}
	for _, srv := range servers {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go func() { _ = srv.ActivateAndServe() }()
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("dns server did not start")
		}
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	return s
}

// Set switches the server's behaviour and the address it answers with.
func (s *DNSServer) Set(b DNSBehaviour, ip string) {
	s.behave.Store(int32(b))
	s.ip.Store(ip)
}
