package harness

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
// It is drawn below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), so that the outgoing connections of
// tests running at the same time cannot take it before the server that
// is given it binds it; a port from the ephemeral range (":0") could be,
// and an embedded etcd then failed with "address already in use".
func FreePort(t testing.TB) int {
	t.Helper()
	low := ephemeralLow()
	for range 200 {
		port := 10000 + rand.IntN(low-10000)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		return port
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// ephemeralLow is the first port of the kernel's ephemeral range, or
// 32768 (Linux's default) where it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 11000 {
				return n
			}
		}
	}
	return 32768
}

// EtcdMember is one embedded etcd server of a test cluster.
type EtcdMember struct {
	Name       string
	ClientPort int
	PeerPort   int
	// AdvertisePeer is the peer URL the member announces (and the initial
	// cluster uses); the member listens on 127.0.0.1:PeerPort.
	AdvertisePeer string
	CertFile      string
	KeyFile       string
}

// StartEtcd starts the members as real etcd servers (go.etcd.io/etcd/server/v3/embed)
// serving TLS on loopback with client certificate authentication (clients
// and peers trust caFile), and waits up to 30s until each is ready. Servers
// stop at test cleanup or through the returned stop function.
func StartEtcd(t testing.TB, caFile string, members []EtcdMember) (stop func()) {
	t.Helper()
	var pairs []string
	for _, m := range members {
		pairs = append(pairs, m.Name+"="+m.AdvertisePeer)
	}
	var servers []*embed.Etcd
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		for _, e := range servers {
			e.Close()
		}
	}
	t.Cleanup(stop)
	mustURL := func(s string) url.URL {
		t.Helper()
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return *u
	}
	errc := make(chan error, len(members))
	for _, m := range members {
		dir := t.TempDir()
		cfg := embed.NewConfig()
		cfg.Name = m.Name
		cfg.Dir = filepath.Join(dir, "data")
		cfg.Logger = "zap"
		cfg.LogLevel = "error"
		cfg.LogOutputs = []string{filepath.Join(dir, "etcd.log")}
		cfg.ListenClientUrls = []url.URL{mustURL(fmt.Sprintf("https://127.0.0.1:%d", m.ClientPort))}
		cfg.AdvertiseClientUrls = cfg.ListenClientUrls
		cfg.ListenPeerUrls = []url.URL{mustURL(fmt.Sprintf("https://127.0.0.1:%d", m.PeerPort))}
		cfg.AdvertisePeerUrls = []url.URL{mustURL(m.AdvertisePeer)}
		cfg.InitialCluster = strings.Join(pairs, ",")
		cfg.InitialClusterToken = "k8s_etcd"
		cfg.ClusterState = embed.ClusterStateFlagNew
		tlsInfo := transport.TLSInfo{CertFile: m.CertFile, KeyFile: m.KeyFile, TrustedCAFile: caFile, ClientCertAuth: true}
		cfg.ClientTLSInfo = tlsInfo
		cfg.PeerTLSInfo = tlsInfo
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			stop()
			log, _ := os.ReadFile(filepath.Join(dir, "etcd.log"))
			t.Fatalf("start embedded etcd %s: %v (log: %s)", m.Name, err, log)
		}
		servers = append(servers, e)
		go func() {
			select {
			case <-e.Server.ReadyNotify():
				errc <- nil
			case err := <-e.Err():
				errc <- err
			case <-time.After(30 * time.Second):
				errc <- fmt.Errorf("etcd %s not ready after 30s", m.Name)
			}
		}()
	}
	for range members {
		if err := <-errc; err != nil {
			stop()
			t.Fatalf("embedded etcd: %v", err)
		}
	}
	return stop
}

// FixtureEtcdMembers describes the three etcd members of the kubespray
// v2.31.0 node1 fixture (hosts node1-3 at 10.10.0.11-13, member
// certificates member-node<i>.pem made by make-ssl-etcd.sh, in ssl) as
// loopback servers on free ports, and returns the addr_map that sends the
// fixture's client and peer addresses (and node1's 127.0.0.1:2379) to them.
func FixtureEtcdMembers(t testing.TB, ssl string) ([]EtcdMember, map[string]string) {
	t.Helper()
	addr := map[string]string{}
	var members []EtcdMember
	for i := 1; i <= 3; i++ {
		cp, pp := FreePort(t), FreePort(t)
		members = append(members, EtcdMember{
			Name: fmt.Sprintf("etcd%d", i), ClientPort: cp, PeerPort: pp,
			AdvertisePeer: fmt.Sprintf("https://127.0.0.1:%d", pp),
			CertFile:      filepath.Join(ssl, fmt.Sprintf("member-node%d.pem", i)),
			KeyFile:       filepath.Join(ssl, fmt.Sprintf("member-node%d-key.pem", i)),
		})
		addr[fmt.Sprintf("10.10.0.1%d:2380", i)] = fmt.Sprintf("127.0.0.1:%d", pp)
		addr[fmt.Sprintf("10.10.0.1%d:2379", i)] = fmt.Sprintf("127.0.0.1:%d", cp)
	}
	addr["127.0.0.1:2379"] = addr["10.10.0.11:2379"]
	return members, addr
}
