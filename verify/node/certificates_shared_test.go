//go:build shared

package node

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/test/testutil"
	"github.com/layercheck/layercheck/verify"
)

// The oracle was recorded with `kubeadm certs check-expiration` at
// 2026-11-30T14:22:06Z (expirationDate minus residualTime, the same for all
// nine rows); judged at that moment our figures must equal kubeadm's.
var oracleNow = time.Date(2026, 11, 30, 14, 22, 6, 0, time.UTC)

type kubeadmExpiration struct {
	Certificates []struct {
		Name              string    `json:"name"`
		ExpirationDate    time.Time `json:"expirationDate"`
		ResidualTime      int64     `json:"residualTime"`
		ExternallyManaged bool      `json:"externallyManaged"`
		CAName            string    `json:"caName"`
		Missing           bool      `json:"missing"`
	} `json:"certificates"`
	CertificateAuthorities []struct {
		Name              string    `json:"name"`
		ExpirationDate    time.Time `json:"expirationDate"`
		ResidualTime      int64     `json:"residualTime"`
		ExternallyManaged bool      `json:"externallyManaged"`
		Missing           bool      `json:"missing"`
	} `json:"certificateAuthorities"`
}

// kubeadmShortHuman is kubeadm's RESIDUAL TIME column
// (k8s.io/apimachinery duration.ShortHumanDuration): whole days below a
// year, whole years from then on, both rounded down.
func kubeadmShortHuman(days int) string {
	if days < 365 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dy", days/365)
}

func sharedNodeEnv(t *testing.T) *Env {
	t.Helper()
	root := t.TempDir()
	if err := harness.CopyTree(testutil.Shared(t, "fixtures", "node", "root"), root); err != nil {
		t.Fatal(err)
	}
	// kubespray's preinstall role links /etc/kubernetes/pki to kube_cert_dir;
	// the fixture leaves the link out. It must not count twice.
	if err := os.Symlink("/etc/kubernetes/ssl", root+"/etc/kubernetes/pki"); err != nil {
		t.Fatal(err)
	}
	o := Options{Groups: []string{"etcd", "kube_control_plane", "k8s_cluster"}, EtcdMembers: []string{"node1", "node2", "node3"}}
	o.Defaults()
	return &Env{FS: verify.FS{Root: root}, Host: "node1", Now: oracleNow, Options: o}
}

func TestCertificatesAgreeWithKubeadmCheckExpiration(t *testing.T) {
	env := sharedNodeEnv(t)
	res, facts, err := certificatesLayer{}.Check(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	f := facts.(*CertificatesFacts)
	if bad := failed(res); len(bad) > 0 {
		t.Fatalf("fixture node has failures: %+v", bad)
	}
	var oracle kubeadmExpiration
	data, err := os.ReadFile(testutil.Shared(t, "fixtures", "node", "oracle", "kubeadm-check-expiration.json"))
	must(t, err)
	must(t, json.Unmarshal(data, &oracle))
	byName := map[string]CertInfo{}
	for _, c := range f.Certificates {
		if c.KubeadmName != "" {
			if _, dup := byName[c.KubeadmName]; dup {
				t.Errorf("kubeadm name %s twice (pki symlink counted?)", c.KubeadmName)
			}
			byName[c.KubeadmName] = c
		}
	}
	text, err := os.ReadFile(testutil.Shared(t, "fixtures", "node", "oracle", "kubeadm-check-expiration.txt"))
	must(t, err)
	residualText := map[string]string{}
	for _, line := range strings.Split(string(text), "\n") {
		fs := strings.Fields(line)
		if len(fs) >= 7 && fs[0] != "CERTIFICATE" {
			residualText[fs[0]] = fs[6]
		}
	}
	seen := 0
	for _, o := range oracle.Certificates {
		c, ok := byName[o.Name]
		if !ok {
			t.Errorf("kubeadm lists %s; we do not", o.Name)
			continue
		}
		seen++
		if !c.NotAfter.Equal(o.ExpirationDate) || c.ResidualSeconds != o.ResidualTime || c.CAName != o.CAName || o.Missing {
			t.Errorf("%s: ours not_after %s residual %d ca %s; kubeadm %s %d %s", o.Name, c.NotAfter, c.ResidualSeconds, c.CAName, o.ExpirationDate, o.ResidualTime, o.CAName)
		}
		if got := kubeadmShortHuman(c.DaysLeft); got != residualText[o.Name] {
			t.Errorf("%s: residual %s, kubeadm text %s", o.Name, got, residualText[o.Name])
		}
	}
	for _, o := range oracle.CertificateAuthorities {
		c, ok := byName[o.Name]
		if !ok || !c.IsCA {
			t.Errorf("kubeadm lists CA %s; we do not", o.Name)
			continue
		}
		seen++
		if !c.NotAfter.Equal(o.ExpirationDate) || c.ResidualSeconds != o.ResidualTime || c.KeyMatch == nil || !*c.KeyMatch {
			t.Errorf("CA %s: ours %s %d key %v; kubeadm %s %d", o.Name, c.NotAfter, c.ResidualSeconds, c.KeyMatch, o.ExpirationDate, o.ResidualTime)
		}
		if got := kubeadmShortHuman(c.DaysLeft); got != residualText[o.Name] {
			t.Errorf("CA %s: residual %s, kubeadm text %s", o.Name, got, residualText[o.Name])
		}
	}
	if seen != len(byName) || seen != 9 {
		t.Errorf("we name %d kubeadm certificates, kubeadm lists %d (want 9 both): %v", len(byName), seen, keys(byName))
	}
	// kubelet.conf is not kubeadm's to list: it is in the kubelet family.
	if c := findCert(f, "/etc/kubernetes/kubelet.conf#users[system:node:node1].client-certificate-data"); c == nil || c.Family != FamilyKubelet || c.KubeadmName != "" {
		t.Errorf("kubelet.conf client cert: %+v", c)
	}
	if f.Families[FamilyKubeadm].EarliestExpiry != time.Date(2027, 11, 30, 14, 22, 3, 0, time.UTC) || f.Families[FamilyEtcdScript].Count != 10 {
		t.Errorf("families: %+v", f.Families)
	}
}

func keys(m map[string]CertInfo) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Subjects, issuers and dates agree with `openssl x509 -subject -issuer -dates`.
func TestCertificatesAgreeWithOpenSSL(t *testing.T) {
	env := sharedNodeEnv(t)
	_, facts, err := certificatesLayer{}.Check(context.Background(), env)
	must(t, err)
	f := facts.(*CertificatesFacts)
	fh, err := os.Open(testutil.Shared(t, "fixtures", "node", "oracle", "openssl-enddates.tsv"))
	must(t, err)
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Scan() // header
	const opensslTime = "Jan _2 15:04:05 2006 GMT"
	rows := 0
	for sc.Scan() {
		col := strings.Split(sc.Text(), "\t")
		if len(col) != 5 || strings.HasPrefix(col[0], "/usr/local/share/") { // trust-store copy: not ours to list
			continue
		}
		rows++
		c := findCert(f, col[0])
		if c == nil {
			t.Errorf("openssl row %s: not in our facts", col[0])
			continue
		}
		if c.Subject != col[1] || c.Issuer != col[2] || c.NotBefore.Format(opensslTime) != col[3] || c.NotAfter.Format(opensslTime) != col[4] {
			t.Errorf("%s: ours %q %q %q %q; openssl %q", col[0], c.Subject, c.Issuer, c.NotBefore.Format(opensslTime), c.NotAfter.Format(opensslTime), col[1:])
		}
	}
	if rows != 20 || len(f.Certificates) != rows {
		t.Errorf("openssl lists %d certificates, we list %d", rows, len(f.Certificates))
	}
}
