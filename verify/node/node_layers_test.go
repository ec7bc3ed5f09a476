package node

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/verify"
)

// now is the moment the test trees are made; every check passes it in.
var testNow = time.Date(2026, 11, 30, 14, 22, 6, 0, time.UTC)

func buildTree(t *testing.T, cfg harness.Config) *harness.Tree {
	t.Helper()
	if cfg.Now.IsZero() {
		cfg.Now = testNow
	}
	tr, err := harness.Build(t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func testEnv(tr *harness.Tree, now time.Time) *Env {
	o := Options{Groups: []string{"etcd", "kube_control_plane", "k8s_cluster"}, EtcdMembers: tr.Config.Hosts}
	o.Defaults()
	return &Env{FS: verify.FS{Root: tr.Root}, Host: tr.Config.Host, Now: now, Options: o, NetTimeout: time.Second}
}

func runCerts(t *testing.T, env *Env) ([]verify.Result, *CertificatesFacts) {
	t.Helper()
	res, facts, err := certificatesLayer{}.Check(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	return res, facts.(*CertificatesFacts)
}

func findCert(f *CertificatesFacts, p string) *CertInfo {
	for i := range f.Certificates {
		if f.Certificates[i].Path == p {
			return &f.Certificates[i]
		}
	}
	return nil
}

func failed(res []verify.Result) []verify.Result {
	var out []verify.Result
	for _, r := range res {
		if r.Status == verify.StatusFail || r.Status == verify.StatusError {
			out = append(out, r)
		}
	}
	return out
}

func TestCertificatesHealthy(t *testing.T) {
	tr := buildTree(t, harness.Config{})
	res, f := runCerts(t, testEnv(tr, testNow))
	if bad := failed(res); len(bad) > 0 {
		t.Fatalf("healthy tree has failures: %+v", bad)
	}
	// 5 kube_cert_dir certs + 4 kubeadm kubeconfigs; etcd: ca + 9 leaves;
	// kubelet: rotated client + serving cert. pki symlink not counted twice.
	want := map[string]int{FamilyKubeadm: 9, FamilyEtcdScript: 10, FamilyKubelet: 2}
	for fam, n := range want {
		if got := f.Families[fam].Count; got != n {
			t.Errorf("family %s: %d certificates, want %d", fam, got, n)
		}
	}
	if f.Symlinks["/etc/kubernetes/pki"] != "/etc/kubernetes/ssl" {
		t.Errorf("pki symlink not resolved inside root: %v", f.Symlinks)
	}
	for _, c := range f.Certificates {
		if strings.HasPrefix(c.Path, "/etc/kubernetes/pki/") {
			t.Errorf("%s counted through the pki symlink", c.Path)
		}
		if !c.Chained {
			t.Errorf("%s not chained", c.Path)
		}
	}
	api := findCert(f, "/etc/kubernetes/ssl/apiserver.crt")
	if api == nil || api.KubeadmName != "apiserver" || api.CAName != "ca" || api.KeyMatch == nil || !*api.KeyMatch {
		t.Fatalf("apiserver facts: %+v", api)
	}
	// made at testNow for 8760h: 365 whole days, as kubeadm's RESIDUAL TIME would say.
	if api.DaysLeft != 365 || api.ResidualSeconds != 365*24*3600 {
		t.Errorf("apiserver days_left %d residual %d", api.DaysLeft, api.ResidualSeconds)
	}
	fp := findCert(f, "/etc/kubernetes/ssl/front-proxy-client.crt")
	if fp == nil || fp.CAName != "front-proxy-ca" {
		t.Errorf("front-proxy-client: %+v", fp)
	}
	adm := findCert(f, "/etc/kubernetes/admin.conf#users[kubernetes-admin].client-certificate-data")
	if adm == nil || adm.KubeadmName != "admin.conf" || adm.Subject != "O = kubeadm:cluster-admins, CN = kubernetes-admin" || adm.KeyMatch == nil || !*adm.KeyMatch {
		t.Errorf("admin.conf: %+v", adm)
	}
	cur := findCert(f, "/var/lib/kubelet/pki/kubelet-client-current.pem")
	if cur == nil || cur.RealPath == "" || cur.Family != FamilyKubelet || cur.ChainsTo != "/etc/kubernetes/ssl/ca.crt" {
		t.Errorf("kubelet client: %+v", cur)
	}
	if fi := f.Families[FamilyEtcdScript]; fi.DaysLeft < 36499 {
		t.Errorf("etcd family days left %d", fi.DaysLeft)
	}
}

func TestCertificatesThresholdsAndChains(t *testing.T) {
	tr := buildTree(t, harness.Config{})
	// expired apiserver, short-lived (warn) front-proxy-client, etcd member
	// cert 3 days from expiry (fail), mis-chained admin cert.
	must(t, tr.ReissueLeaf("/etc/kubernetes/ssl/apiserver.crt", testNow.Add(-400*24*time.Hour), testNow.Add(-time.Hour), nil))
	must(t, tr.ReissueLeaf("/etc/kubernetes/ssl/front-proxy-client.crt", testNow.Add(-time.Hour), testNow.Add(20*24*time.Hour), nil))
	must(t, tr.ReissueLeaf("/etc/ssl/etcd/ssl/member-node1.pem", testNow.Add(-time.Hour), testNow.Add(3*24*time.Hour), nil))
	other, err := harness.NewCA(harness.ECDSAP256, "etcd-ca", testNow, testNow.Add(24*time.Hour*3650))
	must(t, err)
	must(t, tr.ReissueLeaf("/etc/ssl/etcd/ssl/admin-node1.pem", testNow.Add(-time.Hour), testNow.Add(365*24*time.Hour), other))
	// key mismatch: node-node1 key replaced by node-node2's.
	k2, err := os.ReadFile(tr.Path("/etc/ssl/etcd/ssl/node-node2-key.pem"))
	must(t, err)
	must(t, tr.WriteFile("/etc/ssl/etcd/ssl/node-node1-key.pem", k2, 0o600))

	res, f := runCerts(t, testEnv(tr, testNow))
	check := func(p string, st verify.Status, problem string) {
		t.Helper()
		c := findCert(f, p)
		if c == nil {
			t.Fatalf("%s not in facts", p)
		}
		if c.Status != st || !strings.Contains(strings.Join(c.Problems, "; "), problem) {
			t.Errorf("%s: status %s problems %q, want %s with %q", p, c.Status, c.Problems, st, problem)
		}
	}
	check("/etc/kubernetes/ssl/apiserver.crt", verify.StatusFail, "expired on")
	check("/etc/kubernetes/ssl/front-proxy-client.crt", verify.StatusWarn, "in 20 days (warn below 30)")
	check("/etc/ssl/etcd/ssl/member-node1.pem", verify.StatusFail, "in 3 days (fail below 7)")
	check("/etc/ssl/etcd/ssl/admin-node1.pem", verify.StatusFail, "mis-chained")
	check("/etc/ssl/etcd/ssl/node-node1.pem", verify.StatusFail, "does not belong")
	if c := findCert(f, "/etc/kubernetes/ssl/apiserver.crt"); !c.Expired || c.DaysLeft != -1 {
		t.Errorf("apiserver expired=%v days_left=%d", c.Expired, c.DaysLeft)
	}
	if fi := f.Families[FamilyEtcdScript]; fi.EarliestPath != "/etc/ssl/etcd/ssl/member-node1.pem" || fi.DaysLeft != 3 || fi.Status != verify.StatusFail {
		t.Errorf("etcd family: %+v", fi)
	}
	var remedies []string
	for _, r := range res {
		if r.Check == "certificate:/etc/kubernetes/ssl/apiserver.crt" {
			remedies = append(remedies, r.Remediation)
			if !strings.Contains(r.Msg, "node1") {
				t.Errorf("message names no host: %s", r.Msg)
			}
		}
	}
	if len(remedies) != 1 || !strings.Contains(remedies[0], "kubeadm certs renew apiserver") {
		t.Errorf("apiserver remediation: %q", remedies)
	}
	// Judged 10 days later, the 20-day cert is now within fail? no: 10 left -> warn; the 3-day one expired.
	_, f2 := runCerts(t, testEnv(tr, testNow.Add(10*24*time.Hour)))
	if c := findCert(f2, "/etc/kubernetes/ssl/front-proxy-client.crt"); c.Status != verify.StatusWarn || c.DaysLeft != 10 {
		t.Errorf("10 days later: %+v", c)
	}
	if c := findCert(f2, "/etc/ssl/etcd/ssl/member-node1.pem"); !c.Expired {
		t.Errorf("member-node1 not expired 10 days later")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCertificatesMissingAndBroken(t *testing.T) {
	tr := buildTree(t, harness.Config{})
	must(t, tr.Remove("/etc/ssl/etcd/ssl/member-node1.pem"))
	must(t, tr.WriteFile("/etc/kubernetes/ssl/front-proxy-client.crt", []byte("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n"), 0o644))
	res, f := runCerts(t, testEnv(tr, testNow))
	if len(f.Missing) != 1 || f.Missing[0] != "/etc/ssl/etcd/ssl/member-node1.pem" {
		t.Errorf("missing: %v", f.Missing)
	}
	var sawMissing, sawParse bool
	for _, r := range res {
		if r.Check == "present:/etc/ssl/etcd/ssl/member-node1.pem" && r.Status == verify.StatusFail && strings.Contains(r.Remediation, "make-ssl-etcd.sh on node1") {
			sawMissing = true
		}
		if strings.HasPrefix(r.Check, "parse:/etc/kubernetes/ssl/front-proxy-client.crt") && r.Status == verify.StatusFail {
			sawParse = true
		}
	}
	if !sawMissing || !sawParse {
		t.Errorf("missing=%v parse=%v in %+v", sawMissing, sawParse, res)
	}
}

func TestCertificatesRSAAndNoKeyMaterial(t *testing.T) {
	tr := buildTree(t, harness.Config{Keys: harness.RSA2048})
	// A kubeconfig with a bearer token (kubeadm's bootstrap-kubelet.conf shape).
	const token = "07401b.f395accd246ae52d"
	must(t, tr.WriteFile("/etc/kubernetes/bootstrap-kubelet.conf", []byte("apiVersion: v1\nkind: Config\nusers:\n- name: tls-bootstrap-token-user\n  user:\n    token: "+token+"\n"), 0o600))
	env := testEnv(tr, testNow)
	rep, err := Run(context.Background(), env, []string{"certificates", "install", "kubelet", "cni"}, nil)
	must(t, err)
	out, err := json.Marshal(rep)
	must(t, err)
	if rep.Layers["certificates"].Status != verify.StatusOK {
		t.Fatalf("certificates: %+v", rep.Layers["certificates"])
	}
	tr.AssertNoSecrets(t, string(out))
	if strings.Contains(string(out), token) || strings.Contains(string(out), "f395accd246ae52d") {
		t.Error("output contains the kubeconfig token")
	}
}

func TestInstallDrift(t *testing.T) {
	tr := buildTree(t, harness.Config{})
	env := testEnv(tr, testNow)
	res, facts, err := installLayer{}.Check(context.Background(), env)
	must(t, err)
	if bad := failed(res); len(bad) > 0 {
		t.Fatalf("healthy install: %+v", bad)
	}
	f := facts.(*InstallFacts)
	c := f.KubeadmConfig.Cluster
	if c.KubernetesVersion != "v1.35.4" || c.Networking.PodSubnet != "10.233.64.0/18" || len(c.Etcd.External.Endpoints) != 3 || f.KubeadmConfig.KubeProxy.Mode != "ipvs" {
		t.Errorf("parsed: %+v", f.KubeadmConfig)
	}
	if len(f.Releases) != 5 || !f.EtcdEnvPresent {
		t.Errorf("releases %v etcd.env %v", f.Releases, f.EtcdEnvPresent)
	}
	// Without kube_version the install record still says which Kubernetes
	// kubespray installed (after an upgrade: the new one).
	kv := resultCheck(res, "kubernetes_version")
	if kv == nil || kv.Status != verify.StatusOK || !strings.Contains(kv.Msg, "installs Kubernetes v1.35.4") {
		t.Errorf("kubernetes_version without kube_version: %+v", kv)
	}
	// Inventory drifts from the node: podSubnet and kube_version.
	env.Options.KubePodsSubnet = "10.244.0.0/16"
	env.Options.KubeVersion = "v1.35.4" // same, written with a v
	res, facts, err = installLayer{}.Check(context.Background(), env)
	must(t, err)
	if resultCheck(res, "kubernetes_version") != nil {
		t.Errorf("kubernetes_version beside drift:kube_version")
	}
	f = facts.(*InstallFacts)
	if len(f.Drift) != 1 || f.Drift[0].Variable != "kube_pods_subnet" || f.Drift[0].Installed != "10.233.64.0/18" {
		t.Fatalf("drift: %+v", f.Drift)
	}
	bad := failed(res)
	if len(bad) != 1 || !strings.Contains(bad[0].Msg, "podSubnet") || !strings.Contains(bad[0].Msg, "node1") || bad[0].Remediation == "" {
		t.Errorf("drift result: %+v", bad)
	}
	// Broken YAML names the file and line; a missing file is reported.
	must(t, tr.WriteFile("/etc/kubernetes/kubeadm-config.yaml", []byte("kind: ClusterConfiguration\nnetworking: [\n"), 0o640))
	res, _, err = installLayer{}.Check(context.Background(), env)
	must(t, err)
	if bad := failed(res); len(bad) != 1 || !strings.Contains(bad[0].Msg, "/etc/kubernetes/kubeadm-config.yaml") || !strings.Contains(bad[0].Msg, "line") {
		t.Errorf("bad yaml: %+v", bad)
	}
	must(t, tr.Remove("/etc/kubernetes/kubeadm-config.yaml"))
	must(t, tr.Remove("/etc/etcd.env"))
	_, facts, err = installLayer{}.Check(context.Background(), env)
	must(t, err)
	if m := facts.(*InstallFacts).Missing; len(m) != 2 {
		t.Errorf("missing: %v", m)
	}
}

func TestKubeletLayer(t *testing.T) {
	tr := buildTree(t, harness.Config{})
	env := testEnv(tr, testNow)
	res, facts, err := kubeletLayer{}.Check(context.Background(), env)
	must(t, err)
	if bad := failed(res); len(bad) > 0 {
		t.Fatalf("healthy kubelet: %+v", bad)
	}
	f := facts.(*KubeletFacts)
	if f.Config.ClusterDNS[0] != "169.254.25.10" || f.Config.CgroupDriver != "systemd" || f.ResolvConfNameservers[0] != "169.254.25.10" {
		t.Errorf("facts: %+v", f)
	}
	must(t, tr.SetResolvConf("127.0.0.53"))
	res, _, err = kubeletLayer{}.Check(context.Background(), env)
	must(t, err)
	bad := failed(res)
	if len(bad) != 1 || bad[0].Check != "resolv_conf" || !strings.Contains(bad[0].Msg, "127.0.0.53") || !strings.Contains(bad[0].Remediation, "kube_resolv_conf") {
		t.Errorf("loopback resolv.conf: %+v", bad)
	}
	env.Options.Groups = []string{"etcd"}
	if _, _, err := (kubeletLayer{}).Check(context.Background(), env); err == nil || !strings.Contains(err.Error(), "not applicable") {
		t.Errorf("etcd-only host: %v", err)
	}
}

func TestCNILayer(t *testing.T) {
	tr := buildTree(t, harness.Config{})
	env := testEnv(tr, testNow)
	res, facts, err := cniLayer{}.Check(context.Background(), env)
	must(t, err)
	if bad := failed(res); len(bad) > 0 {
		t.Fatalf("healthy cni: %+v", bad)
	}
	f := facts.(*CNIFacts)
	if len(f.Ports) != 1 || f.Ports[0].Port != 4789 || f.Ports[0].Protocol != "udp" {
		t.Errorf("ports: %+v", f.Ports)
	}
	env.Options.CalicoIPIPMode = "Always"
	env.Options.CalicoNetworkBackend = "bird"
	res, facts, err = cniLayer{}.Check(context.Background(), env)
	must(t, err)
	bad := failed(res)
	if len(bad) != 1 || bad[0].Check != "interface:tunl0" || !strings.Contains(bad[0].Msg, "calico_ipip_mode: Always") {
		t.Errorf("tunl0: %+v", bad)
	}
	if ps := portList(facts.(*CNIFacts).Ports); ps != "udp/4789, IP protocol 4, tcp/179" {
		t.Errorf("ports: %s", ps)
	}

	// A node tree copied for --root has no /sys: skipped, not an error.
	must(t, os.RemoveAll(tr.Path("/sys")))
	res, _, err = cniLayer{}.Check(context.Background(), env)
	must(t, err)
	if len(res) != 1 || res[0].Status != verify.StatusSkipped || !strings.Contains(res[0].Msg, "has no /sys/class/net") {
		t.Errorf("tree without /sys: %+v", res)
	}
	// On the node itself a missing /sys/class/net stays an error.
	live := *env
	live.Root = "/"
	live.Sys = missingSysFS{}
	if _, _, err := (cniLayer{}).Check(context.Background(), &live); err == nil || !strings.Contains(err.Error(), "cannot list /sys/class/net") {
		t.Errorf("node without /sys/class/net: %v", err)
	}
}

// missingSysFS is a node's file system without /proc/net/dev and
// /sys/class/net.
type missingSysFS struct{ verify.OSFS }

func (m missingSysFS) ReadFile(name string) ([]byte, error) {
	if name == "/proc/net/dev" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return m.OSFS.ReadFile(name)
}

func (missingSysFS) ReadDir(name string) ([]fs.DirEntry, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

func TestAddonsLayer(t *testing.T) {
	tr := buildTree(t, harness.Config{})
	env := testEnv(tr, testNow)
	if _, _, err := (addonsLayer{}).Check(context.Background(), env); err == nil {
		t.Fatal("addons with nothing enabled should be not applicable")
	}
	env.Options.HelmEnabled = true
	env.Options.LocalPathProvisionerEnabled = true
	res, facts, err := addonsLayer{}.Check(context.Background(), env)
	must(t, err)
	if len(failed(res)) != 2 {
		t.Fatalf("helm and claim root missing should fail: %+v", res)
	}
	// A Go binary stamped the way helm's Makefile does; never executed.
	src := t.TempDir()
	must(t, os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\nfunc main() { panic(\"must not run\") }\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(src, "go.mod"), []byte("module helm.sh/helm/v3\ngo 1.22\n"), 0o644))
	must(t, os.MkdirAll(tr.Path("/usr/local/bin"), 0o755))
	cmd := exec.Command("go", "build", "-o", tr.Path("/usr/local/bin/helm"), "-ldflags", "-X helm.sh/helm/v3/internal/version.version=v3.17.3", ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build fake helm: %v\n%s", err, b)
	}
	must(t, os.MkdirAll(tr.Path("/opt/local-path-provisioner"), 0o755))
	res, facts, err = addonsLayer{}.Check(context.Background(), env)
	must(t, err)
	if bad := failed(res); len(bad) > 0 {
		t.Fatalf("addons present: %+v", bad)
	}
	if h := facts.(*AddonsFacts).Helm; h.Version != "v3.17.3" || h.VersionSource != "ldflags" {
		t.Errorf("helm: %+v", h)
	}

	// A release build uses -trimpath, so the build information keeps no
	// -ldflags: the version then comes from `helm version --short` through
	// the verify.Cmder seam, and only when there is one.
	cmd = exec.Command("go", "build", "-trimpath", "-o", tr.Path("/usr/local/bin/helm"), "-ldflags", "-X helm.sh/helm/v3/internal/version.version=v3.17.3", ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build fake helm: %v\n%s", err, b)
	}
	_, facts, err = addonsLayer{}.Check(context.Background(), env)
	must(t, err)
	if h := facts.(*AddonsFacts).Helm; h.Version != "" || !h.Present {
		t.Errorf("trimpath helm without Cmder: %+v", h)
	}
	fc := &addonsFakeCmder{out: "v3.17.3+ge4da497\n"}
	env.Cmder = fc
	_, facts, err = addonsLayer{}.Check(context.Background(), env)
	must(t, err)
	if h := facts.(*AddonsFacts).Helm; h.Version != "v3.17.3" || h.VersionSource != "helm version --short" {
		t.Errorf("trimpath helm with Cmder: %+v", h)
	}
	if len(fc.calls) != 1 || fc.calls[0] != tr.Path("/usr/local/bin/helm")+" version --short" {
		t.Errorf("commands run: %q", fc.calls)
	}
}

// addonsFakeCmder answers every command with out and records the command lines.
type addonsFakeCmder struct {
	out   string
	calls []string
}

func (f *addonsFakeCmder) Command(_ context.Context, name string, args ...string) verify.Cmd {
	f.calls = append(f.calls, strings.Join(append([]string{name}, args...), " "))
	return addonsFakeCmd(f.out)
}

type addonsFakeCmd string

func (c addonsFakeCmd) Output() ([]byte, error) { return []byte(c), nil }

func TestSharedOracleHelpers(t *testing.T) {
	// opensslName keeps the written RDN order.
	tr := buildTree(t, harness.Config{})
	m, _ := filepath.Glob(tr.Path("/var/lib/kubelet/pki/kubelet-client-2*.pem"))
	if len(m) != 1 {
		t.Fatalf("kubelet client files: %v", m)
	}
	data, err := os.ReadFile(m[0])
	must(t, err)
	b, _ := pem.Decode(data)
	c, err := x509.ParseCertificate(b.Bytes)
	must(t, err)
	if got := opensslName(c.RawSubject); got != "O = system:nodes, CN = system:node:node1" {
		t.Errorf("subject %q", got)
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{KubeConfigDir: "/srv/kubernetes/", KubeServiceAddresses: "10.96.0.0/12,fd00::/108"}
	o.Defaults()
	if o.KubeCertDir != "/srv/kubernetes/ssl" || o.SkydnsServer != "10.96.0.3" || o.EtcdCertDir != "/etc/ssl/etcd/ssl" || o.CertWarnDays != 30 || o.CertFailDays != 7 {
		t.Errorf("derived defaults: %+v", o)
	}
	var d Options
	d.Defaults()
	if d.KubeCertDir != "/etc/kubernetes/ssl" || d.SkydnsServer != "10.233.0.3" || d.CalicoVXLANMode != "Always" || d.CalicoIPIPMode != "Never" {
		t.Errorf("kubespray v2.31.0 defaults: %+v", d)
	}
}

// TestCNIInterfacesFromProcNetDev is what the kubespray v2.31.0 flannel
// nodes (systemd-nspawn machines) had: /sys/class/net was the host's sysfs
// (eth0, ifb0, ifb1, lo) while the node's own network namespace, which
// /proc/net/dev shows, held flannel.1 and cni0. Reading /sys/class/net
// made a false "flannel.1 is missing" on every node.
func TestCNIInterfacesFromProcNetDev(t *testing.T) {
	tr := buildTree(t, harness.Config{Interfaces: []string{"eth0", "ifb0", "ifb1", "lo"}})
	env := testEnv(tr, testNow)
	env.Options.Groups = []string{"kube_node", "k8s_cluster"}
	env.Options.KubeNetworkPlugin = "flannel"
	res, _, err := cniLayer{}.Check(context.Background(), env)
	must(t, err)
	if bad := failed(res); len(bad) != 1 || bad[0].Check != "interface:flannel.1" {
		t.Fatalf("without /proc/net/dev the host's sysfs is all there is: %+v", res)
	}
	const procNetDev = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:  912300    8121    0    0    0     0          0         0   912300    8121    0    0    0     0       0          0
  eth0: 48813371   31260    0    0    0     0          0         0  4122018   25410    0    0    0     0       0          0
flannel.1:  125436    1120    0    0    0     0          0         0   118020    1094    0   12    0     0       0          0
  cni0:   31337     402    0    0    0     0          0         0    60211     380    0    0    0     0       0          0
vethb1d2c3e4:   12000     150    0    0    0     0          0         0    14000     160    0    0    0     0       0          0
`
	must(t, tr.WriteFile("/proc/net/dev", []byte(procNetDev), 0o444))
	res, facts, err := cniLayer{}.Check(context.Background(), env)
	must(t, err)
	if bad := failed(res); len(bad) > 0 {
		t.Fatalf("flannel.1 is in the node's /proc/net/dev: %+v", bad)
	}
	f := facts.(*CNIFacts)
	if f.InterfacesSource != "/proc/net/dev" || !slices.Equal(f.NodeInterfaces, []string{"cni0", "eth0", "flannel.1", "lo", "vethb1d2c3e4"}) {
		t.Errorf("facts: %s %v", f.InterfacesSource, f.NodeInterfaces)
	}
	// A /proc/net/dev that is not the kernel's table is an error naming it.
	must(t, tr.WriteFile("/proc/net/dev", []byte("eth0\n"), 0o444))
	if _, _, err := (cniLayer{}).Check(context.Background(), env); err == nil || !strings.Contains(err.Error(), "/proc/net/dev") {
		t.Errorf("garbled /proc/net/dev: %v", err)
	}
	must(t, tr.WriteFile("/proc/net/dev", []byte("Inter-|  Receive\n face |bytes\nnocolon\n"), 0o444))
	if _, _, err := (cniLayer{}).Check(context.Background(), env); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("line without a name: %v", err)
	}
}

// TestLocalPathClaimRootOnWorkers is what node2 of the kubespray v2.31.0
// cluster had: a kube_node that is not a control plane has no
// /opt/local-path-provisioner/ after cluster.yml, since kubespray creates
// it in a play on kube_control_plane only. That is not a failure there; it
// still is on a control plane host, and a file in its place is on any.
func TestLocalPathClaimRootOnWorkers(t *testing.T) {
	tr := buildTree(t, harness.Config{})
	env := testEnv(tr, testNow)
	env.Options.LocalPathProvisionerEnabled = true
	env.Options.Groups = []string{"kube_node", "k8s_cluster"}
	res, _, err := addonsLayer{}.Check(context.Background(), env)
	must(t, err)
	if len(res) != 1 || res[0].Status != verify.StatusOK || !strings.Contains(res[0].Msg, "kube_control_plane hosts only") {
		t.Errorf("worker without the claim root: %+v", res)
	}
	env.Options.Groups = []string{"kube_control_plane", "kube_node", "k8s_cluster"}
	res, _, err = addonsLayer{}.Check(context.Background(), env)
	must(t, err)
	if bad := failed(res); len(bad) != 1 || bad[0].Check != "local_path_claim_root" {
		t.Errorf("control plane without the claim root: %+v", res)
	}
	env.Options.Groups = []string{"kube_node", "k8s_cluster"}
	must(t, tr.WriteFile(env.Options.LocalPathProvisionerClaimRoot, []byte("x"), 0o644))
	res, _, err = addonsLayer{}.Check(context.Background(), env)
	must(t, err)
	if bad := failed(res); len(bad) != 1 || !strings.Contains(bad[0].Msg, "not a directory") {
		t.Errorf("worker with a file as claim root: %+v", res)
	}
}

// flannel's device is flannel.<flannel_vxlan_vni> on flannel_vxlan_port;
// host-gw has no tunnel; wireguard has flannel-wg.
func TestCNIFlannelBackends(t *testing.T) {
	tr := buildTree(t, harness.Config{Interfaces: []string{"eth0", "flannel.4096", "cni0"}})
	env := testEnv(tr, testNow)
	env.Options.Groups = []string{"kube_node", "k8s_cluster"}
	env.Options.KubeNetworkPlugin = "flannel"
	vni, port := 4096, 4789
	env.Options.FlannelVXLANVNI, env.Options.FlannelVXLANPort = &vni, &port
	res, facts, err := cniLayer{}.Check(context.Background(), env)
	must(t, err)
	if bad := failed(res); len(bad) > 0 {
		t.Fatalf("flannel.4096 present: %+v", bad)
	}
	if ps := portList(facts.(*CNIFacts).Ports); ps != "udp/4789" {
		t.Errorf("ports: %s", ps)
	}
	vni = 1
	res, _, err = cniLayer{}.Check(context.Background(), env)
	must(t, err)
	if bad := failed(res); len(bad) != 1 || bad[0].Check != "interface:flannel.1" || !strings.Contains(bad[0].Msg, "flannel_vxlan_vni: 1") {
		t.Errorf("flannel.1 missing: %+v", res)
	}
	env.Options.FlannelBackendType = "host-gw"
	res, facts, err = cniLayer{}.Check(context.Background(), env)
	must(t, err)
	if len(res) != 1 || res[0].Status != verify.StatusOK || !strings.Contains(res[0].Msg, "host-gw") || len(facts.(*CNIFacts).Interfaces) != 0 {
		t.Errorf("host-gw: %+v", res)
	}
	env.Options.FlannelBackendType = "udp"
	res, _, err = cniLayer{}.Check(context.Background(), env)
	must(t, err)
	if len(res) != 1 || res[0].Status != verify.StatusWarn || !strings.Contains(res[0].Msg, `"udp" is not one kubespray's flannel role configures`) {
		t.Errorf("udp: %+v", res)
	}
	env.Options.FlannelBackendType = "wireguard"
	res, _, err = cniLayer{}.Check(context.Background(), env)
	must(t, err)
	if bad := failed(res); len(bad) != 1 || bad[0].Check != "interface:flannel-wg" || !strings.Contains(bad[0].Remediation, "udp/51820") {
		t.Errorf("wireguard: %+v", res)
	}
}

// resultCheck is the result whose check is check, nil if none.
func resultCheck(res []verify.Result, check string) *verify.Result {
	for i := range res {
		if res[i].Check == check {
			return &res[i]
		}
	}
	return nil
}

// An expired certificate says how long ago in whole days: a day and an
// hour is a day, not two (the floor DaysLeft is -2 then).
func TestExpiredAgo(t *testing.T) {
	for ago, want := range map[time.Duration]string{
		time.Minute:             "less than a day ago",
		23 * time.Hour:          "less than a day ago",
		25 * time.Hour:          "1 day ago",
		48 * time.Hour:          "2 days ago",
		400*24*time.Hour + 3600: "400 days ago",
	} {
		if got := expiredAgo(ago); got != want {
			t.Errorf("expired %s ago: %q, want %q", ago, got, want)
		}
	}
}
