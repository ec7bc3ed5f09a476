// Package clusterverify runs the cluster layers (verify/cluster, the
// cluster_facts module, `layercheck cluster` and playbooks/verify.yml)
// against a real kube-apiserver and etcd on loopback.
//
// kube-apiserver is built once by `make kube-harness` (test/kubeharness)
// into .cache/kube/<version>/; etcd is embedded in the test process. What
// kubelets and controllers would do is done by the test as they do it:
// Nodes, pods, DaemonSets and Deployments get their status written with
// UpdateStatus (clustertest.World), the probe's pods are answered by HTTP
// servers the test runs on 127.0.0.x, and a small namespace finalizer
// plays kube-controller-manager's namespace controller. The API server's
// own machinery is real: CRDs (calico's IPPool), the aggregator's
// availability controller (metrics-server's APIService), the service proxy.
//
// Pod IPs are in kube_pods_subnet as in a real cluster, because the API
// server refuses loopback addresses in Endpoints and EndpointSlices
// (ValidateEndpointIP). The API server reaches them through its egress
// selector (EgressSelectorConfiguration, "cluster" over HTTP CONNECT on a
// unix socket, as with konnectivity), pointed at a CONNECT proxy the test
// runs that maps pod IP 10.233.64.N to 127.0.0.N.
package clusterverify

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/layercheck/layercheck/test/testutil"
)

// KubeVersion is the kube-apiserver test/kubeharness builds (kubespray
// v2.31.0's kube_version).
const KubeVersion = "v1.35.4"

var (
	// prefixSeq gives each API server its own etcd prefix: its own cluster.
	prefixSeq atomic.Int64
	etcdOnce  sync.Once
	etcdURL   string
	etcdErr   error
	etcd      *embed.Etcd
	etcdDir   string
)

// TestMain stops the shared etcd and removes its data directory (a few
// hundred MB), and the collection's directory with its built modules (about
// 50 MB), when the tests are done; left behind, every run added them to the
// temporary directory.
func TestMain(m *testing.M) {
	code := m.Run()
	if etcd != nil {
		etcd.Close()
	}
	if etcdDir != "" {
		_ = os.RemoveAll(etcdDir)
	}
	if collDir != "" {
		_ = os.RemoveAll(collDir)
	}
	os.Exit(code)
}

// sharedEtcd starts one embedded etcd for the whole test binary; each API
// server gets its own --etcd-prefix.
func sharedEtcd(t testing.TB) string {
	t.Helper()
	etcdOnce.Do(func() {
		dir, err := os.MkdirTemp("", "clusterverify-etcd-")
		if err != nil {
			etcdErr = err
			return
		}
		etcdDir = dir
		cfg := embed.NewConfig()
		cfg.Dir = dir
		cfg.LogLevel = "error"
		cfg.Logger = "zap"
		cl, pl := freeAddr(t, "127.0.0.1"), freeAddr(t, "127.0.0.1")
		cu, _ := url.Parse("http://" + cl)
		pu, _ := url.Parse("http://" + pl)
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
		cfg.InitialCluster = cfg.Name + "=" + pu.String()
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			etcdErr = err
			return
		}
		etcd = e
		select {
		case <-e.Server.ReadyNotify():
			etcdURL = cu.String()
		case <-time.After(30 * time.Second):
			etcdErr = fmt.Errorf("embedded etcd not ready within 30s")
		}
	})
	if etcdErr != nil {
		t.Fatalf("embedded etcd: %v", etcdErr)
	}
	return etcdURL
}

func freeAddr(t testing.TB, ip string) string {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// APIServer is a running kube-apiserver with an admin client.
type APIServer struct {
	URL        string
	Kubeconfig string
	Config     *rest.Config
	Kube       kubernetes.Interface
	Dynamic    dynamic.Interface
	Dir        string
	cmd        *exec.Cmd
	done       chan struct{}
	log        string
}

// kubeAPIServerBin is the binary `make kube-harness` builds; its absence
// fails the test.
func kubeAPIServerBin(t testing.TB) string {
	t.Helper()
	p := filepath.Join(testutil.RepoRoot(), ".cache", "kube", KubeVersion, "kube-apiserver")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("kube-apiserver %s not built: run `make kube-harness` (test/kubeharness/build.sh, several minutes the first time): %v", KubeVersion, err)
	}
	return p
}

type pki struct {
	ca    *x509.Certificate
	caKey *ecdsa.PrivateKey
	dir   string
	seq   int64
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeKey(t testing.TB, path string, k *ecdsa.PrivateKey) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, path, "PRIVATE KEY", der)
}

func newPKI(t testing.TB, dir string) *pki {
	p := &pki{dir: dir, caKey: newKey(t), seq: 1}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &p.caKey.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	p.ca, _ = x509.ParseCertificate(der)
	writePEM(t, filepath.Join(dir, "ca.crt"), "CERTIFICATE", der)
	return p
}

// leaf writes <name>.crt/.key signed by the CA and returns the PEM data.
func (p *pki) leaf(t testing.TB, name, cn string, orgs []string, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	p.seq++
	k := newKey(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(p.seq), Subject: pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &k.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(p.dir, name+".crt"), "CERTIFICATE", der)
	writeKey(t, filepath.Join(p.dir, name+".key"), k)
	kd, _ := x509.MarshalPKCS8PrivateKey(k)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd})
}

// StartAPIServer starts kube-apiserver on 127.0.0.1 with a fresh PKI, its
// own etcd prefix, RBAC, no admission plugin that needs a controller
// (ServiceAccount is off), aggregator routing to endpoints, and the
// egress selector's "cluster" traffic through proxyAddr (HTTP CONNECT).
// It writes an admin kubeconfig (client certificate in system:masters).
func StartAPIServer(t testing.TB, proxyAddr string) *APIServer {
	t.Helper()
	bin := kubeAPIServerBin(t)
	etcd := sharedEtcd(t)
	dir := t.TempDir()
	p := newPKI(t, dir)
	p.leaf(t, "apiserver", "kube-apiserver", nil, true)
	p.leaf(t, "admin", "kubernetes-admin", []string{"system:masters"}, false)
	sa := newKey(t)
	saDER, err := x509.MarshalECPrivateKey(sa)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, "sa.key"), "EC PRIVATE KEY", saDER)
	saPub, _ := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	writePEM(t, filepath.Join(dir, "sa.pub"), "PUBLIC KEY", saPub)
	egress := fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
`, proxyAddr)
	if err = os.WriteFile(filepath.Join(dir, "egress.yaml"), []byte(egress), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t, "127.0.0.1")
	_, port, _ := net.SplitHostPort(addr)
	s := &APIServer{URL: "https://" + addr, Dir: dir, done: make(chan struct{}), log: filepath.Join(dir, "kube-apiserver.log")}
	args := []string{
		"--etcd-servers=" + etcd,
		"--etcd-prefix=/registry-" + strconv.FormatInt(prefixSeq.Add(1), 10) + "-" + strconv.Itoa(os.Getpid()),
		"--bind-address=127.0.0.1",
		"--secure-port=" + port,
		"--advertise-address=192.0.2.1", // a label only: no endpoint reconciler writes it
		"--endpoint-reconciler-type=none",
		"--tls-cert-file=" + filepath.Join(dir, "apiserver.crt"),
		"--tls-private-key-file=" + filepath.Join(dir, "apiserver.key"),
		"--client-ca-file=" + filepath.Join(dir, "ca.crt"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.233.0.0/18",
		"--disable-admission-plugins=ServiceAccount",
		"--enable-aggregator-routing=true",
		"--egress-selector-config-file=" + filepath.Join(dir, "egress.yaml"),
		"--cert-dir=" + filepath.Join(dir, "certs"),
		"--profiling=false",
		"--v=1",
	}
	logf, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	// Killed with the test binary, even when it is killed itself.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start kube-apiserver: %v", err)
	}
	go func() { s.cmd.Wait(); logf.Close(); close(s.done) }()
	t.Cleanup(s.Stop)

	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: harness
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: admin
  user:
    client-certificate: %s
    client-key: %s
contexts:
- name: admin@harness
  context: {cluster: harness, user: admin}
current-context: admin@harness
`, s.URL, filepath.Join(dir, "ca.crt"), filepath.Join(dir, "admin.crt"), filepath.Join(dir, "admin.key"))
	s.Kubeconfig = filepath.Join(dir, "admin.conf")
	if err := os.WriteFile(s.Kubeconfig, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	cfg.WarningHandler = rest.NoWarnings{} // v1 Endpoints' deprecation, written on purpose
	cfg.Timeout = 30 * time.Second
	s.Config = cfg
	s.Kube = kubernetes.NewForConfigOrDie(cfg)
	s.Dynamic = dynamic.NewForConfigOrDie(cfg)

	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		body, err := s.Kube.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Raw()
		cancel()
		if err == nil && strings.TrimSpace(string(body)) == "ok" {
			break
		}
		select {
		case <-s.done:
			t.Fatalf("kube-apiserver exited during start-up:\n%s", s.tail())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("kube-apiserver not ready within 90s (%v):\n%s", err, s.tail())
		}
		time.Sleep(250 * time.Millisecond)
	}
	return s
}

func (s *APIServer) tail() string {
	b, _ := os.ReadFile(s.log)
	lines := strings.Split(string(b), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}

// Stop kills the API server and waits for it.
func (s *APIServer) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Kill()
	<-s.done
}

// PodIP is the pod IP the fake kubelet gives pod number n (1..200): in
// kube_pods_subnet, mapped by the CONNECT proxy to 127.0.0.n.
func PodIP(n int) string { return fmt.Sprintf("10.233.64.%d", n) }

// ConnectProxy is the egress proxy on a unix socket (the API server's
// HTTP CONNECT over TCP always wants TLS; over a socket it does not):
// CONNECT 10.233.64.N:P is tunnelled to 127.0.0.N:P; anything else is
// refused with 403.
type ConnectProxy struct {
	Addr string
	l    net.Listener
	wg   sync.WaitGroup
}

// StartConnectProxy listens on a unix socket in a fresh directory.
func StartConnectProxy(t testing.TB) *ConnectProxy {
	t.Helper()
	dir, err := os.MkdirTemp("", "cv-egress-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", filepath.Join(dir, "egress.sock"))
	if err != nil {
		t.Fatal(err)
	}
	p := &ConnectProxy{Addr: filepath.Join(dir, "egress.sock"), l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	t.Cleanup(func() { l.Close() })
	return p
}

func (p *ConnectProxy) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\n\r\n")
		return
	}
	host, port, err := net.SplitHostPort(req.Host)
	ip := net.ParseIP(host).To4()
	if err != nil || ip == nil || ip[0] != 10 || ip[1] != 233 || ip[2] != 64 {
		io.WriteString(c, "HTTP/1.1 403 Forbidden\r\n\r\nonly pod IPs 10.233.64.N are tunnelled\n")
		return
	}
	target := net.JoinHostPort(fmt.Sprintf("127.0.0.%d", ip[3]), port)
	up, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n"+err.Error()+"\n")
		return
	}
	defer up.Close()
	_ = c.SetDeadline(time.Time{})
	io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, br); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
}
