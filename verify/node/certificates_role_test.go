package node

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/verify"
)

func certResult(res []verify.Result, check string) (verify.Result, bool) {
	for _, r := range res {
		if r.Check == check {
			return r, true
		}
	}
	return verify.Result{}, false
}

func certByPath(f *CertificatesFacts, p string) (CertInfo, bool) {
	for _, c := range f.Certificates {
		if c.Path == p {
			return c, true
		}
	}
	return CertInfo{}, false
}

// etcd_deployment_type kubeadm: kubeadm's etcd CA sits in kube_cert_dir's
// etcd/ subdirectory and signs apiserver-etcd-client.crt one level up; a
// correctly signed one is ok, not mis-chained.
func TestCertificatesKubeadmEtcdCAInSubdirectory(t *testing.T) {
	tr := buildTree(t, harness.Config{})
	etcdCA, err := harness.NewCA(tr.Config.Keys, "etcd-ca", testNow.Add(-time.Hour), testNow.Add(10*365*24*time.Hour))
	require.NoError(t, err)
	require.NoError(t, tr.WriteFile("/etc/kubernetes/ssl/etcd/ca.crt", etcdCA.CertPEM(), 0o644))
	cert, key, err := etcdCA.Issue(tr.Config.Keys, harness.Leaf{CN: "kube-apiserver-etcd-client", Client: true,
		NotBefore: testNow.Add(-time.Hour), NotAfter: testNow.Add(365 * 24 * time.Hour)}, nil)
	require.NoError(t, err)
	require.NoError(t, tr.WriteFile("/etc/kubernetes/ssl/apiserver-etcd-client.crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o644))
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	require.NoError(t, tr.WriteFile("/etc/kubernetes/ssl/apiserver-etcd-client.key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))

	env := testEnv(tr, testNow)
	env.Options.EtcdDeploymentType = "kubeadm"
	res, facts := runCerts(t, env)
	c, ok := certByPath(facts, "/etc/kubernetes/ssl/apiserver-etcd-client.crt")
	require.True(t, ok, "apiserver-etcd-client.crt not read")
	assert.True(t, c.Chained, "problems: %v", c.Problems)
	assert.Equal(t, "/etc/kubernetes/ssl/etcd/ca.crt", c.ChainsTo)
	assert.Equal(t, verify.StatusOK, c.Status, "problems: %v", c.Problems)
	_, bad := certResult(res, "certificate:/etc/kubernetes/ssl/apiserver-etcd-client.crt")
	assert.False(t, bad)
}

// An expired etcd client certificate (node-<host>.pem) gets the fix for
// the host's role: on a worker, the network plugin's pod, never the
// control plane's static pods or etcd; on a control-plane host,
// kube-apiserver.
func TestCertificatesEtcdClientRemedyFitsRole(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		groups     []string
		notWant    []string
	}{
		{"worker", "to this worker", []string{"kube_node", "k8s_cluster"}, []string{"static pods", "kube-apiserver", "restart etcd"}},
		{"control plane", "restart kube-apiserver here", []string{"kube_control_plane", "k8s_cluster"}, []string{"to this worker", "restart etcd"}},
		{"etcd", "restart etcd", []string{"etcd", "kube_control_plane", "k8s_cluster"}, []string{"to this worker"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := buildTree(t, harness.Config{})
			p := "/etc/ssl/etcd/ssl/node-node1.pem"
			require.NoError(t, tr.ReissueLeaf(p, testNow.Add(-400*24*time.Hour), testNow.Add(-24*time.Hour), tr.EtcdCA))
			env := testEnv(tr, testNow)
			env.Options.Groups = tc.groups
			res, _ := runCerts(t, env)
			r, ok := certResult(res, "certificate:"+p)
			require.True(t, ok, "no result for the expired %s", p)
			assert.Equal(t, verify.StatusFail, r.Status)
			assert.Contains(t, r.Remediation, tc.want)
			for _, nw := range tc.notWant {
				assert.NotContains(t, r.Remediation, nw)
			}
		})
	}
}

// cilium with its state in etcd reads hard links of the etcd certificates
// in cilium_cert_dir: links that match are ok, a stale or missing copy
// fails naming the file.
func TestCertificatesCiliumCopies(t *testing.T) {
	tr := buildTree(t, harness.Config{})
	for src, dst := range map[string]string{"ca.pem": "ca_cert.crt", "node-node1.pem": "cert.crt", "node-node1-key.pem": "key.pem"} {
		require.NoError(t, os.MkdirAll(tr.Path("/etc/cilium/certs"), 0o750))
		require.NoError(t, os.Link(tr.Path("/etc/ssl/etcd/ssl/"+src), tr.Path("/etc/cilium/certs/"+dst)))
	}
	env := testEnv(tr, testNow)
	env.Options.KubeNetworkPlugin, env.Options.CiliumIdentityAllocationMode = "cilium", "kvstore"
	res, _ := runCerts(t, env)
	for _, dst := range []string{"ca_cert.crt", "cert.crt", "key.pem"} {
		r, ok := certResult(res, "cilium_copy:/etc/cilium/certs/"+dst)
		require.True(t, ok, "%s not checked", dst)
		assert.Equal(t, verify.StatusOK, r.Status, r.Msg)
	}

	// Regenerated source, old copy: stale. Missing key: missing.
	require.NoError(t, os.Remove(tr.Path("/etc/cilium/certs/cert.crt")))
	old, err := os.ReadFile(tr.Path("/etc/ssl/etcd/ssl/node-node2.pem"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(tr.Path("/etc/cilium/certs/cert.crt"), old, 0o644))
	require.NoError(t, os.Remove(tr.Path("/etc/cilium/certs/key.pem")))
	res, _ = runCerts(t, env)
	r, _ := certResult(res, "cilium_copy:/etc/cilium/certs/cert.crt")
	assert.Equal(t, verify.StatusFail, r.Status)
	assert.Contains(t, r.Msg, "differs from /etc/ssl/etcd/ssl/node-node1.pem: a stale copy")
	assert.Contains(t, r.Remediation, "--tags network")
	r, _ = certResult(res, "cilium_copy:/etc/cilium/certs/key.pem")
	assert.Equal(t, verify.StatusFail, r.Status)
	assert.Contains(t, r.Msg, "/etc/cilium/certs/key.pem is missing")
	assert.NotContains(t, r.Msg+r.Remediation, "PRIVATE KEY")

	// calico (the default): no cilium copies are expected.
	env.Options.KubeNetworkPlugin = "calico"
	res, _ = runCerts(t, env)
	for _, r := range res {
		assert.False(t, strings.HasPrefix(r.Check, "cilium_copy:"), r.Check)
	}
}

// The etcd CA kubespray copies into the system trust store must be
// etcd_cert_dir's ca.pem; a different one is a stale copy.
func TestCertificatesTrustStoreEtcdCA(t *testing.T) {
	tr := buildTree(t, harness.Config{})
	env := testEnv(tr, testNow)
	res, _ := runCerts(t, env)
	r, ok := certResult(res, "trust_store_etcd_ca")
	require.True(t, ok)
	assert.Equal(t, verify.StatusOK, r.Status, r.Msg)
	assert.Contains(t, r.Msg, "/usr/local/share/ca-certificates/etcd-ca.crt is /etc/ssl/etcd/ssl/ca.pem")

	require.NoError(t, tr.WriteFile("/usr/local/share/ca-certificates/etcd-ca.crt", tr.KubeCA.CertPEM(), 0o640))
	res, _ = runCerts(t, env)
	r, _ = certResult(res, "trust_store_etcd_ca")
	assert.Equal(t, verify.StatusFail, r.Status)
	assert.Contains(t, r.Msg, "is not /etc/ssl/etcd/ssl/ca.pem")
	assert.Contains(t, r.Remediation, "--tags etcd-secrets")
}

// The layer's facts add one line per certificate family to the text
// report, with its earliest expiry and days left; nil facts add none.
func TestCertificatesTextFamilies(t *testing.T) {
	tr := buildTree(t, harness.Config{})
	rep, err := Run(context.Background(), testEnv(tr, testNow), []string{"certificates"}, nil)
	require.NoError(t, err)
	f := rep.Layers["certificates"].Facts.(*CertificatesFacts)
	var d verify.TextDetailer = f
	var b bytes.Buffer
	d.TextDetail(&b)
	out := b.String()
	require.NotEmpty(t, f.Families)
	assert.Len(t, strings.Split(strings.TrimSuffix(out, "\n"), "\n"), len(f.Families), "one line per family:\n%s", out)
	for name, fi := range f.Families {
		var line string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), name+" ") {
				line = l
			}
		}
		require.NotEmpty(t, line, "no line for family %s in\n%s", name, out)
		assert.Contains(t, line, "earliest expiry "+fi.EarliestExpiry.UTC().Format("2006-01-02"))
		assert.Contains(t, line, " days left")
		assert.Contains(t, line, fi.EarliestPath)
	}
	assert.Contains(t, out, "etcd-script")
	assert.Contains(t, out, "kubeadm")
	b.Reset()
	(*CertificatesFacts)(nil).TextDetail(&b)
	assert.Empty(t, b.String())
}

// A node is judged by the defaults of the release its cluster was built
// with: kubespray v2.27.1 defaulted cilium_identity_allocation_mode to
// kvstore, so a cilium node it built must hold the etcd certificates'
// copies in cilium_cert_dir; v2.28.1 and v2.31.0 default to crd and link
// none. The inventory sets neither the mode nor, for v2.31.0, the release.
func TestNodeJudgedByItsReleasesDefaults(t *testing.T) {
	tr := buildTree(t, harness.Config{}) // no cilium copies
	run := func(release, kubeVersion string) *Report {
		req := Request{Options: NewOptions(), Root: tr.Root, Host: tr.Config.Host, Now: testNow.Format(time.RFC3339), Layers: []string{"certificates"}}
		req.Groups, req.EtcdMembers = []string{"etcd", "kube_control_plane", "k8s_cluster"}, tr.Config.Hosts
		req.KubeNetworkPlugin, req.KubesprayVersion, req.KubeVersion = "cilium", release, kubeVersion
		f := false
		req.Systemd = &f
		rep, err := RunRequest(context.Background(), &req)
		require.NoError(t, err)
		return rep
	}
	copies := func(rep *Report) (n int, failed int) {
		for _, r := range rep.Layers["certificates"].Results {
			if strings.HasPrefix(r.Check, "cilium_copy:") {
				n++
				if r.Status == verify.StatusFail {
					failed++
				}
			}
		}
		return n, failed
	}
	for _, tc := range []struct{ release, kube, defaults string }{
		{"v2.27.1", "", "kubespray v2.27.1's defaults (kubespray_version v2.27.1)"},
		{"", "v1.31.9", "kubespray v2.27.1's defaults (the newest bundled kubespray release with checksums for kube_version v1.31.9)"},
	} {
		rep := run(tc.release, tc.kube)
		n, failed := copies(rep)
		assert.Equal(t, 3, n, "%+v: kvstore, the release's default, links ca_cert.crt, cert.crt and key.pem", tc)
		assert.Equal(t, 3, failed, "%+v: none of them is there", tc)
		assert.Equal(t, tc.defaults, rep.Defaults)
	}
	for _, release := range []string{"v2.28.1", "v2.31.0", ""} {
		rep := run(release, "")
		n, _ := copies(rep)
		assert.Zero(t, n, "%s: crd, the release's default, links no copies", release)
		assert.Empty(t, rep.Defaults, release)
	}
}
