package harness

import (
	"crypto/x509"
	"os"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 30, 14, 22, 6, 0, time.UTC)

func readCert(t *testing.T, tr *Tree, p string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(tr.Path(p))
	if err != nil {
		t.Fatal(err)
	}
	c, err := firstCert(data)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return c
}

func TestBuildShapes(t *testing.T) {
	if _, err := Build(t.TempDir(), Config{}); err == nil || !strings.Contains(err.Error(), "Now is required") {
		t.Fatalf("Build without Now: %v", err)
	}
	tr, err := Build(t.TempDir(), Config{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	// kubeadm: CA 87600h, leaves 8760h, notBefore backdated 5 minutes.
	ca := readCert(t, tr, "/etc/kubernetes/ssl/ca.crt")
	api := readCert(t, tr, "/etc/kubernetes/ssl/apiserver.crt")
	if !ca.NotAfter.Equal(now.Add(87600*time.Hour)) || !api.NotAfter.Equal(now.Add(8760*time.Hour)) || !api.NotBefore.Equal(now.Add(-5*time.Minute)) {
		t.Errorf("kubeadm validity: ca %s api %s..%s", ca.NotAfter, api.NotBefore, api.NotAfter)
	}
	if err := api.CheckSignatureFrom(ca); err != nil {
		t.Errorf("apiserver not signed by ca: %v", err)
	}
	// make-ssl-etcd.sh: 36500 days, SANs with loopback for etcd on 127.0.0.1.
	m := readCert(t, tr, "/etc/ssl/etcd/ssl/member-node1.pem")
	if !m.NotAfter.Equal(now.Add(36500*24*time.Hour)) || m.Subject.CommonName != "etcd-member-node1" || m.VerifyHostname("127.0.0.1") != nil || m.VerifyHostname("10.10.0.11") != nil {
		t.Errorf("etcd member cert: %s %s %v", m.Subject, m.NotAfter, m.IPAddresses)
	}
	if l, err := os.Readlink(tr.Path("/etc/kubernetes/pki")); err != nil || l != "/etc/kubernetes/ssl" {
		t.Errorf("pki link: %q %v", l, err)
	}
	for _, p := range []string{"/etc/etcd.env", "/etc/kubernetes/kubeadm-config.yaml", "/etc/kubernetes/kubelet-config.yaml", "/run/systemd/resolve/resolv.conf",
		"/sys/class/net/vxlan.calico", "/tmp/releases/kubeadm-1.35.4-amd64", "/var/lib/kubelet/pki/kubelet-client-current.pem", "/etc/kubernetes/admin.conf"} {
		if _, err := os.Lstat(tr.Path(p)); err != nil {
			t.Errorf("missing %s", p)
		}
	}
	// Variants: expired leaf with the same key; mis-chained leaf.
	if err := tr.ReissueLeaf("/etc/kubernetes/ssl/apiserver.crt", now.Add(-48*time.Hour), now.Add(-24*time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	exp := readCert(t, tr, "/etc/kubernetes/ssl/apiserver.crt")
	if !exp.NotAfter.Before(now) || exp.CheckSignatureFrom(ca) != nil || len(exp.DNSNames) != len(api.DNSNames) {
		t.Errorf("reissued: %s %v", exp.NotAfter, exp.DNSNames)
	}
	other, err := NewCA(ECDSAP256, "kubernetes", now, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.ReissueLeaf("/etc/kubernetes/ssl/apiserver.crt", now, now.Add(time.Hour), other); err != nil {
		t.Fatal(err)
	}
	if readCert(t, tr, "/etc/kubernetes/ssl/apiserver.crt").CheckSignatureFrom(ca) == nil {
		t.Error("mis-chained cert still verifies against the cluster CA")
	}
	if err := tr.ReissueLeaf("/etc/kubernetes/kubeadm-config.yaml", now, now, nil); err == nil {
		t.Error("reissuing a non-certificate should fail")
	}
}
