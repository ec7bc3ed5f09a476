package node

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/verify"
)

// etcdTestNow is the Env.Now of the etcd tests; the generated certificates
// are valid from 2020 to 2126, so real TLS handshakes (which use the wall
// clock) and the layer's own judgement (which uses Env.Now) both see them
// as valid.
var etcdTestNow = time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)

// etcdTestPKI makes certificates in the shape of kubespray v2.31.0
// roles/etcd/templates/make-ssl-etcd.sh.j2: a self-signed CA "etcd-ca",
// member-<host>.pem (CN etcd-member-<host>) and admin-<host>.pem (CN
// etcd-admin-<host>), leaves with clientAuth+serverAuth and the SAN list of
// openssl.conf.j2 (localhost, the etcd hosts, their IPs, 127.0.0.1, ::1),
// keys RSA-2048 in PKCS#8 files <name>-key.pem.
type etcdTestPKI struct {
	dir   string
	ca    *x509.Certificate
	caKey *rsa.PrivateKey
	dns   []string
	ips   []net.IP
	seq   int64
}

func newEtcdTestPKI(t testing.TB, dir string, hosts []string, ips []string) *etcdTestPKI {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := &etcdTestPKI{dir: dir, dns: append([]string{"localhost"}, hosts...), seq: 1}
	for _, s := range append(ips, "127.0.0.1", "::1") {
		p.ips = append(p.ips, net.ParseIP(s))
	}
	key := etcdTestKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(p.seq),
		Subject:               pkix.Name{CommonName: "etcd-ca"},
		NotBefore:             time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(2126, 1, 1, 0, 0, 0, 0, time.UTC),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p.ca, _ = x509.ParseCertificate(der)
	p.caKey = key
	p.write(t, "ca", der, key)
	return p
}

// etcdTestKey returns a fresh RSA-2048 key, as make-ssl-etcd.sh makes
// with certificates_key_size 2048.
func etcdTestKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (p *etcdTestPKI) write(t testing.TB, name string, der []byte, key *rsa.PrivateKey) {
	t.Helper()
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, name+".pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, name+"-key.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// leaf writes <kind>-<host>.pem and its key with CN etcd-<kind>-<host up
// to the first dot>.
func (p *etcdTestPKI) leaf(t testing.TB, kind, host string) {
	t.Helper()
	p.leafCN(t, kind+"-"+host, "etcd-"+kind+"-"+strings.SplitN(host, ".", 2)[0])
}

func (p *etcdTestPKI) leafCN(t testing.TB, name, cn string) {
	t.Helper()
	p.seq++
	key := etcdTestKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(p.seq),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(2126, 1, 1, 0, 0, 0, 0, time.UTC),
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		DNSNames:              p.dns,
		IPAddresses:           p.ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	p.write(t, name, der, key)
}

// etcdTestEnvFile renders /etc/etcd.env the way kubespray v2.31.0
// roles/etcd/templates/etcd.env.j2 does for host (inventory name) with
// member name and address ip, in a cluster of initialCluster.
func etcdTestEnvFile(host, name, ip, initialCluster string) string {
	d := "/etc/ssl/etcd/ssl"
	return fmt.Sprintf(`# Environment file for etcd 3.6.10
ETCD_DATA_DIR=/var/lib/etcd
ETCD_ADVERTISE_CLIENT_URLS=https://%[3]s:2379
ETCD_INITIAL_ADVERTISE_PEER_URLS=https://%[3]s:2380
ETCD_INITIAL_CLUSTER_STATE=existing
ETCD_METRICS=basic
ETCD_LISTEN_CLIENT_URLS=https://%[3]s:2379,https://127.0.0.1:2379
ETCD_ELECTION_TIMEOUT=5000
ETCD_HEARTBEAT_INTERVAL=250
ETCD_INITIAL_CLUSTER_TOKEN=k8s_etcd
ETCD_LISTEN_PEER_URLS=https://%[3]s:2380
ETCD_NAME=%[2]s
ETCD_PROXY=off
ETCD_INITIAL_CLUSTER=%[4]s

# TLS settings
ETCD_TRUSTED_CA_FILE=%[5]s/ca.pem
ETCD_CERT_FILE=%[5]s/member-%[1]s.pem
ETCD_KEY_FILE=%[5]s/member-%[1]s-key.pem
ETCD_CLIENT_CERT_AUTH=true

ETCD_PEER_TRUSTED_CA_FILE=%[5]s/ca.pem
ETCD_PEER_CERT_FILE=%[5]s/member-%[1]s.pem
ETCD_PEER_KEY_FILE=%[5]s/member-%[1]s-key.pem
ETCD_PEER_CLIENT_CERT_AUTH=True

# CLI settings
ETCDCTL_ENDPOINTS=https://127.0.0.1:2379
ETCDCTL_CACERT=%[5]s/ca.pem
ETCDCTL_KEY=%[5]s/admin-%[1]s-key.pem
ETCDCTL_CERT=%[5]s/admin-%[1]s.pem
`, host, name, ip, initialCluster, d)
}

// fakeSystemd is a verify.Systemd answering from a table (unit -> properties).
type fakeSystemd map[string]map[string]string

func (f fakeSystemd) Show(_ context.Context, unit string) (map[string]string, error) {
	if p, ok := f[unit]; ok {
		return p, nil
	}
	return map[string]string{"Id": unit, "LoadState": "not-found", "ActiveState": "inactive", "SubState": "dead"}, nil
}

var etcdRunning = fakeSystemd{"etcd.service": {
	"Id": "etcd.service", "LoadState": "loaded", "ActiveState": "active", "SubState": "running",
	"UnitFileState": "enabled", "MainPID": "4242",
}}

// etcdResults indexes results by check name (several per check possible).
func etcdResults(res []verify.Result) map[string][]verify.Result {
	m := map[string][]verify.Result{}
	for _, r := range res {
		m[r.Check] = append(m[r.Check], r)
	}
	return m
}

// etcdWorst is the worst status among the results of check.
func etcdWorst(t testing.TB, res []verify.Result, check string) (verify.Status, string) {
	t.Helper()
	rs := etcdResults(res)[check]
	if len(rs) == 0 {
		t.Fatalf("no %q result in %s", check, etcdDump(res))
	}
	st := verify.StatusOK
	var msgs []string
	for _, r := range rs {
		st = verify.Worse(st, r.Status)
		msgs = append(msgs, r.Msg)
	}
	return st, strings.Join(msgs, " | ")
}

func etcdDump(res []verify.Result) string {
	var b strings.Builder
	for _, r := range res {
		fmt.Fprintf(&b, "\n  [%s] %s: %s", r.Status, r.Check, r.Msg)
	}
	return b.String()
}
