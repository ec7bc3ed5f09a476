package node

import (
	"context"
	"crypto"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/layercheck/layercheck/verify"
)

// The certificates layer reads every certificate kubespray leaves on a
// node, in three families:
//
//   - kubeadm: kube_cert_dir (/etc/kubernetes/ssl; /etc/kubernetes/pki is
//     kubespray's symlink to it and is not counted twice) and the client
//     certificates embedded in the kubeconfigs in kube_config_dir
//     (admin.conf, super-admin.conf, controller-manager.conf, scheduler.conf);
//     the ones `kubeadm certs check-expiration` lists carry its name.
//   - etcd-script: etcd_cert_dir (/etc/ssl/etcd/ssl), made by kubespray's
//     make-ssl-etcd.sh for certificates_duration (36500) days; kubeadm does
//     not see them.
//   - kubelet: /var/lib/kubelet/pki and kubelet.conf's client certificate,
//     which the kubelet rotates.
//
// With auto_renew_certificates: true, a kube_control_plane host must also
// have kubespray's renewal timer, k8s-certs-renew.timer, enabled, active
// and with a next run, and its script bin_dir/k8s-certs-renew.sh
// (certificates_renew.go).
//
// Each certificate gets its dates, whether it is signed by a CA found beside
// it and whether its key file holds the matching private key. No key
// material ever leaves this file: keys are only parsed to compare public
// halves; tokens in kubeconfigs are never read into facts.
//
// Time left follows `kubeadm certs check-expiration`: residual_seconds is
// not_after - now in whole seconds, truncated (its JSON residualTime);
// days_left is that duration in whole days rounded down, which is kubeadm's
// RESIDUAL TIME text below a year ("364d"); from a year on kubeadm prints
// whole years rounded down (days_left/365, "9y"). Both are checked against
// a kubeadm recording of the kubespray v2.31.0 node fixture (shared tests).
func init() { register("certificates", nil, func() Layer { return certificatesLayer{} }) }

type certificatesLayer struct{}

func (certificatesLayer) Name() string { return "certificates" }

// Certificate families.
const (
	FamilyKubeadm    = "kubeadm"
	FamilyEtcdScript = "etcd-script"
	FamilyKubelet    = "kubelet"
)

// CertInfo is one certificate in the facts. Times are RFC 3339 UTC.
type CertInfo struct {
	// Path is the node path; for a kubeconfig's embedded certificate it is
	// "<kubeconfig>#users[<name>].client-certificate-data".
	Path string `json:"path"`
	// RealPath is set when Path is reached through a symlink.
	RealPath string `json:"real_path,omitempty"`
	Family   string `json:"family"`
	// KubeadmName is the name `kubeadm certs check-expiration` uses.
	KubeadmName string `json:"kubeadm_name,omitempty"`
	// CAName is kubeadm's CA name of the signer (ca, front-proxy-ca, etcd-ca).
	CAName  string `json:"ca_name,omitempty"`
	Subject string `json:"subject"`
	Issuer  string `json:"issuer"`
	// SubjectCN and IssuerCN are the common names of Subject and Issuer
	// (the metrics label certificates with them).
	SubjectCN   string    `json:"subject_cn,omitempty"`
	IssuerCN    string    `json:"issuer_cn,omitempty"`
	Serial      string    `json:"serial"`
	IsCA        bool      `json:"is_ca"`
	DNSNames    []string  `json:"dns_names,omitempty"`
	IPAddresses []string  `json:"ip_addresses,omitempty"`
	NotBefore   time.Time `json:"not_before"`
	NotAfter    time.Time `json:"not_after"`
	// DaysLeft is floor((not_after - now) / 24h); negative once expired.
	DaysLeft int `json:"days_left"`
	// ResidualSeconds is not_after - now in whole seconds, as kubeadm's residualTime.
	ResidualSeconds int64 `json:"residual_seconds"`
	Expired         bool  `json:"expired"`
	// ChainsTo is the CA certificate (node path) whose key signed this one;
	// empty when none beside it did. Chained is false for a mis-chained one.
	ChainsTo string `json:"chains_to,omitempty"`
	Chained  bool   `json:"chained"`
	// KeyFile is where the private key is expected; KeyMatch is nil when no
	// key is there (or it cannot be parsed), else whether it matches.
	KeyFile  string        `json:"key_file,omitempty"`
	KeyMatch *bool         `json:"key_match"`
	Status   verify.Status `json:"status"`
	Problems []string      `json:"problems,omitempty"`
}

// FamilyInfo summarises one family.
type FamilyInfo struct {
	Count          int           `json:"count"`
	EarliestExpiry time.Time     `json:"earliest_expiry"`
	EarliestPath   string        `json:"earliest_path"`
	DaysLeft       int           `json:"days_left"`
	Status         verify.Status `json:"status"`
}

// CertificatesFacts are the certificates layer's facts.
type CertificatesFacts struct {
	Now          time.Time             `json:"now"`
	WarnDays     int                   `json:"warn_days"`
	FailDays     int                   `json:"fail_days"`
	Certificates []CertInfo            `json:"certificates"`
	Families     map[string]FamilyInfo `json:"families"`
	// Missing are expected files that are not there (node paths).
	Missing []string `json:"missing"`
	// Symlinks are directory links followed, e.g. /etc/kubernetes/pki -> /etc/kubernetes/ssl.
	Symlinks map[string]string `json:"symlinks,omitempty"`
	// TrustStoreCopies are the copies of make-ssl-etcd.sh's CA kubespray
	// puts in the system trust store (TrustStoreEtcdCA) found on this node.
	TrustStoreCopies []CertCopy `json:"trust_store_copies,omitempty"`
	// AutoRenew is what auto_renew_certificates installs, on a
	// kube_control_plane host when it is true (nil otherwise).
	AutoRenew *AutoRenewFacts `json:"auto_renew_certificates,omitempty"`
}

// CertCopy is a copy of a certificate outside its family's directory:
// Source is the file it was copied from, Current whether it still is
// that file's certificate.
type CertCopy struct {
	Path      string        `json:"path"`
	Source    string        `json:"source"`
	SubjectCN string        `json:"subject_cn,omitempty"`
	IssuerCN  string        `json:"issuer_cn,omitempty"`
	NotAfter  time.Time     `json:"not_after,omitzero"`
	DaysLeft  int           `json:"days_left"`
	Current   bool          `json:"current"`
	Status    verify.Status `json:"status"`
}

// The certificates layer's metrics: each certificate's not_after, labelled
// with its family and the tool that renews it, so alerts name the fix.
var seriesCertNotAfter = &verify.Series{Name: "layercheck_certificate_not_after_timestamp_seconds",
	Help:   "Time a certificate on this node expires (its not_after), in seconds since the Unix epoch; family kubeadm, etcd (make-ssl-etcd.sh), kubelet or trust_store_copy (the etcd CA in the system trust store), renewer the tool that renews it.",
	Labels: []string{"family", "path", "subject_cn", "issuer_cn", "renewer"}}

// The family label of the trust store copies of the etcd CA, and the
// renewer label of a family with no known renewer.
const (
	metricFamilyTrustStoreCopy = "trust_store_copy"
	metricRenewerUnknown       = "unknown"
)

// metricFamily maps a certificate family to its family label and its
// renewer label.
func metricFamily(f string) (family, renewer string) {
	switch f {
	case FamilyKubeadm:
		return "kubeadm", "kubeadm certs renew"
	case FamilyEtcdScript:
		return "etcd", "make-ssl-etcd.sh"
	case FamilyKubelet:
		return "kubelet", "kubelet rotation"
	}
	return f, metricRenewerUnknown
}

// Metrics sends the not_after of every certificate and trust store copy
// whose date was read.
func (f *CertificatesFacts) Metrics(_ *verify.LayerReport, send func(verify.Sample)) {
	if f == nil {
		return
	}
	for _, ci := range f.Certificates {
		if ci.NotAfter.IsZero() {
			continue
		}
		fam, renewer := metricFamily(ci.Family)
		send(verify.Sample{Series: seriesCertNotAfter, Value: float64(ci.NotAfter.Unix()),
			Labels: []string{fam, ci.Path, ci.SubjectCN, ci.IssuerCN, renewer}})
	}
	_, etcdRenewer := metricFamily(FamilyEtcdScript)
	for _, cp := range f.TrustStoreCopies {
		if cp.NotAfter.IsZero() {
			continue
		}
		send(verify.Sample{Series: seriesCertNotAfter, Value: float64(cp.NotAfter.Unix()),
			Labels: []string{metricFamilyTrustStoreCopy, cp.Path, cp.SubjectCN, cp.IssuerCN, etcdRenewer}})
	}
}

// TextDetail prints one line per certificate family with its earliest
// expiry and days left, under the layer's line in the text report: the
// figure an operator plans renewals by (kubeadm's leaves expire after a
// year, make-ssl-etcd.sh's after 100).
func (cf *CertificatesFacts) TextDetail(w io.Writer) {
	if cf == nil {
		return
	}
	names := make([]string, 0, len(cf.Families))
	for n := range cf.Families {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fi := cf.Families[n]
		fmt.Fprintf(w, "    %-12s %-5s %16s, earliest expiry %s, %d days left (%s)\n",
			n, fi.Status, verify.Plural(fi.Count, "certificate"), fi.EarliestExpiry.UTC().Format("2006-01-02"), fi.DaysLeft, fi.EarliestPath)
	}
}

// candidate is a certificate found on disk before judging it.
type candidate struct {
	info   CertInfo
	cert   *x509.Certificate
	cas    []caRef // possible issuers
	keyPEM []byte  // nil when no key; never leaves this file
	keyErr string
}

type caRef struct {
	path string
	cert *x509.Certificate
}

func (certificatesLayer) Check(ctx context.Context, env *Env) ([]verify.Result, any, error) {
	o := env.Options
	f := &CertificatesFacts{Now: env.Now.UTC(), WarnDays: o.CertWarnDays, FailDays: o.CertFailDays,
		Families: map[string]FamilyInfo{}, Missing: []string{}, Symlinks: map[string]string{}}
	var results []verify.Result
	seen := map[string]bool{} // real node paths already read
	var cands []*candidate

	// kubeadm PKI in kube_cert_dir and /etc/kubernetes/pki.
	certDir, err := env.Resolve(o.KubeCertDir)
	if err == nil {
		if certDir != path.Clean(o.KubeCertDir) {
			f.Symlinks[o.KubeCertDir] = certDir
		}
		cands = append(cands, scanCertDir(env, o.KubeCertDir, FamilyKubeadm, seen, &results)...)
	}
	pki := path.Join(o.KubeConfigDir, "pki")
	if r, err := env.Resolve(pki); err == nil && pki != path.Clean(o.KubeCertDir) {
		if r != pki {
			f.Symlinks[pki] = r
		}
		cands = append(cands, scanCertDir(env, pki, FamilyKubeadm, seen, &results)...)
	}
	// etcd-script PKI.
	if _, err := env.Resolve(o.EtcdCertDir); err == nil {
		cands = append(cands, scanCertDir(env, o.EtcdCertDir, FamilyEtcdScript, seen, &results)...)
	}
	// kubelet PKI.
	if _, err := env.Resolve("/var/lib/kubelet/pki"); err == nil {
		cands = append(cands, scanCertDir(env, "/var/lib/kubelet/pki", FamilyKubelet, seen, &results)...)
	}
	// kubeconfigs.
	kubeCA := caRefs(env, o.KubeCertDir, []string{"ca.crt"})
	if names, err := env.List(o.KubeConfigDir); err == nil {
		for _, n := range names {
			if !strings.HasSuffix(n, ".conf") {
				continue
			}
			if ctx.Err() != nil {
				return results, f, ctx.Err()
			}
			cands = append(cands, scanKubeconfig(env, path.Join(o.KubeConfigDir, n), kubeCA, &results)...)
		}
	}

	for _, c := range cands {
		judgeCert(env, c)
		f.Certificates = append(f.Certificates, c.info)
	}
	sort.Slice(f.Certificates, func(i, j int) bool { return f.Certificates[i].Path < f.Certificates[j].Path })

	// Families.
	for _, c := range f.Certificates {
		fi, ok := f.Families[c.Family]
		if !ok || c.NotAfter.Before(fi.EarliestExpiry) {
			fi.EarliestExpiry, fi.EarliestPath, fi.DaysLeft = c.NotAfter, c.Path, c.DaysLeft
		}
		fi.Count++
		if fi.Status == "" {
			fi.Status = verify.StatusOK
		}
		fi.Status = verify.Worse(fi.Status, c.Status)
		f.Families[c.Family] = fi
	}

	// Results: one per family, one per certificate with a problem.
	fams := make([]string, 0, len(f.Families))
	for n := range f.Families {
		fams = append(fams, n)
	}
	sort.Strings(fams)
	for _, n := range fams {
		fi := f.Families[n]
		results = append(results, verify.Result{Check: "family/" + n, Status: fi.Status,
			Msg: fmt.Sprintf("%d %s certificates on %s; earliest expiry %s (%s, %d days left)",
				fi.Count, n, hostName(env), fi.EarliestExpiry.Format(time.RFC3339), fi.EarliestPath, fi.DaysLeft),
			Actual: map[string]any{"earliest_expiry": fi.EarliestExpiry, "earliest_path": fi.EarliestPath, "days_left": fi.DaysLeft},
		})
	}
	for _, c := range f.Certificates {
		if c.Status == verify.StatusOK {
			continue
		}
		results = append(results, verify.Result{Check: "certificate:" + c.Path, Status: c.Status,
			Msg:         fmt.Sprintf("%s on %s: %s", c.Path, hostName(env), strings.Join(c.Problems, "; ")),
			Evidence:    map[string]any{"subject": c.Subject, "issuer": c.Issuer, "not_before": c.NotBefore, "not_after": c.NotAfter, "days_left": c.DaysLeft, "chains_to": c.ChainsTo, "key_match": c.KeyMatch},
			Remediation: certRemedy(c, env)})
	}

	// Copies outside etcd_cert_dir (trust store, cilium).
	copies, copyResults := certCopies(env)
	f.TrustStoreCopies = copies
	results = append(results, copyResults...)

	// Expected files: kubeadm's only where kubeadm has run, else one
	// result says its role has not run.
	kubeadmDone := kubeadmRan(env)
	if !kubeadmDone && (o.InGroup("kube_control_plane") || o.InGroup("kube_node")) {
		results = append(results, roleNotRun(env, kubeadmRole(env), "the kubeadm certificates and kubeconfigs are not checked"))
	}
	for _, want := range expectedCertFiles(env) {
		if env.Exists(want.path) || (want.kubeadm && !kubeadmDone) {
			continue
		}
		f.Missing = append(f.Missing, want.path)
		results = append(results, verify.Result{Check: "present:" + want.path, Status: verify.StatusFail,
			Msg:         fmt.Sprintf("%s is missing on %s (%s)", want.path, hostName(env), want.why),
			Expected:    want.path,
			Remediation: want.fix})
	}
	// auto_renew_certificates: the renewal timer and its script.
	certsAutoRenew(ctx, env, f, func(r verify.Result) { results = append(results, r) })
	if len(results) == 0 {
		results = append(results, verify.Result{Check: "found", Status: verify.StatusSkipped,
			Msg: fmt.Sprintf("no certificates found under %s, %s, %s or /var/lib/kubelet/pki on %s", o.KubeCertDir, o.EtcdCertDir, o.KubeConfigDir, hostName(env))})
	}
	return results, f, nil
}

func hostName(env *Env) string {
	if env.Host != "" {
		return env.Host
	}
	return "this node"
}

// scanCertDir reads the certificates of a directory tree (node path).
func scanCertDir(env *Env, dir, family string, seen map[string]bool, results *[]verify.Result) []*candidate {
	real, err := env.Resolve(dir)
	if err != nil {
		return nil
	}
	names, err := env.List(real)
	if err != nil {
		*results = append(*results, verify.Result{Check: "read:" + dir, Status: verify.StatusError, Msg: fmt.Sprintf("cannot list %s: %v", dir, verify.PathErr(err))})
		return nil
	}
	type file struct {
		disp, real string
		certs      []*x509.Certificate
		hasKey     bool
	}
	var files []file
	var subCands []*candidate
	// Symlinks first, so a file reached both ways is reported under its
	// link name (kubelet-client-current.pem) with its real path.
	sort.SliceStable(names, func(i, j int) bool {
		return isLink(env, path.Join(dir, names[i])) && !isLink(env, path.Join(dir, names[j]))
	})
	for _, n := range names {
		p := path.Join(dir, n)
		rp, err := env.Resolve(p)
		if err != nil {
			if certFileName(n) {
				*results = append(*results, verify.Result{Check: "read:" + p, Status: verify.StatusFail,
					Msg:         fmt.Sprintf("%s on %s cannot be opened: %v", p, hostName(env), verify.PathErr(err)),
					Remediation: "a dangling or looping symlink: point it at the current certificate (for kubelet-client-current.pem restart kubelet so it writes a new one) or remove it"})
			}
			continue
		}
		if isDir(env, rp) {
			if family == FamilyKubeadm && n == "etcd" { // stacked etcd: kube_cert_dir/etcd
				subCands = append(subCands, scanCertDir(env, p, family, seen, results)...)
			}
			continue
		}
		if !certFileName(n) || seen[rp] {
			continue
		}
		data, err := env.Read(p)
		if err != nil {
			*results = append(*results, verify.Result{Check: "read:" + p, Status: verify.StatusError, Msg: fmt.Sprintf("cannot read %s: %v", p, verify.PathErr(err))})
			continue
		}
		certs, hasKey, perr := parsePEMCerts(data)
		if perr != nil {
			*results = append(*results, verify.Result{Check: "parse:" + p, Status: verify.StatusFail,
				Msg:         fmt.Sprintf("%s on %s is not a readable certificate: %v", p, hostName(env), perr),
				Remediation: "restore the file from its source (kubeadm for " + "kube_cert_dir, make-ssl-etcd.sh for etcd_cert_dir) or remove it"})
			continue
		}
		if len(certs) == 0 {
			continue // a key-only .pem
		}
		seen[rp] = true
		files = append(files, file{p, rp, certs, hasKey})
	}
	// CAs beside the certificates (and CAs bundled in a file).
	var cas []caRef
	for _, fl := range files {
		for _, c := range fl.certs {
			if c.IsCA {
				cas = append(cas, caRef{fl.disp, c})
			}
		}
	}
	if family == FamilyKubelet { // the kubelet's client certificate is signed by the cluster CA
		cas = append(cas, caRefs(env, env.Options.KubeCertDir, []string{"ca.crt"})...)
	}
	if family == FamilyKubeadm && path.Base(dir) != "etcd" {
		// etcd_deployment_type kubeadm: apiserver-etcd-client.crt is signed
		// by kubeadm's etcd CA, which lives in the etcd/ subdirectory.
		cas = append(cas, caRefs(env, path.Join(dir, "etcd"), []string{"ca.crt"})...)
	}
	var out []*candidate
	for _, fl := range files {
		c := &candidate{cert: fl.certs[0], cas: cas}
		c.info = CertInfo{Path: fl.disp, Family: family}
		if fl.real != fl.disp {
			c.info.RealPath = fl.real
		}
		for _, extra := range fl.certs[1:] {
			c.cas = append(c.cas, caRef{fl.disp, extra})
		}
		base := path.Base(fl.disp)
		switch {
		case fl.hasKey:
			c.info.KeyFile = fl.disp
			c.keyPEM, _ = env.Read(fl.disp)
		case strings.HasSuffix(base, ".crt"):
			c.info.KeyFile = strings.TrimSuffix(fl.disp, ".crt") + ".key"
		case strings.HasSuffix(base, ".pem"):
			c.info.KeyFile = strings.TrimSuffix(fl.disp, ".pem") + "-key.pem"
		}
		if c.keyPEM == nil && c.info.KeyFile != "" {
			if k, err := env.Read(c.info.KeyFile); err == nil {
				c.keyPEM = k
			} else {
				c.info.KeyFile = ""
			}
		}
		if family == FamilyKubeadm {
			rel := strings.TrimPrefix(fl.disp, path.Clean(dir)+"/")
			if path.Base(path.Dir(fl.disp)) == "etcd" {
				rel = "etcd/" + path.Base(fl.disp)
			}
			c.info.KubeadmName = kubeadmCertName(rel)
		}
		out = append(out, c)
	}
	return append(out, subCands...)
}

func isLink(env *Env, nodePath string) bool {
	r, err := env.Resolve(path.Dir(nodePath))
	if err != nil {
		return false
	}
	fi, err := env.Files().Lstat(env.Path(path.Join(r, path.Base(nodePath))))
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

func isDir(env *Env, nodePath string) bool {
	fi, err := env.Stat(nodePath)
	return err == nil && fi.IsDir()
}

// certFileName says whether a file name is a certificate file kubeadm,
// make-ssl-etcd.sh or the kubelet writes (keys are skipped).
func certFileName(n string) bool {
	if strings.HasSuffix(n, "-key.pem") || strings.HasSuffix(n, ".key") {
		return false
	}
	return strings.HasSuffix(n, ".crt") || strings.HasSuffix(n, ".pem")
}

// parsePEMCerts returns the certificates of a PEM file and whether it also
// holds a private key (the kubelet's cert+key files).
func parsePEMCerts(data []byte) ([]*x509.Certificate, bool, error) {
	var certs []*x509.Certificate
	hasKey := false
	rest := data
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		switch {
		case b.Type == "CERTIFICATE":
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, false, fmt.Errorf("certificate %d: %v", len(certs)+1, err)
			}
			certs = append(certs, c)
		case strings.HasSuffix(b.Type, "PRIVATE KEY"):
			hasKey = true
		}
	}
	if len(certs) == 0 && hasKey {
		// a key saved under a certificate's name: never skipped quietly
		return nil, true, fmt.Errorf("holds a private key but no PEM CERTIFICATE block")
	}
	if len(certs) == 0 {
		return nil, false, fmt.Errorf("no PEM CERTIFICATE block")
	}
	return certs, hasKey, nil
}

// caRefs loads CA certificates of dir (node path) by file name.
func caRefs(env *Env, dir string, names []string) []caRef {
	var out []caRef
	for _, n := range names {
		p := path.Join(dir, n)
		data, err := env.Read(p)
		if err != nil {
			continue
		}
		certs, _, err := parsePEMCerts(data)
		if err != nil {
			continue
		}
		for _, c := range certs {
			out = append(out, caRef{p, c})
		}
	}
	return out
}

// kubeconfig is the part of a kubeconfig this layer reads.
type kubeconfig struct {
	Clusters []struct {
		Name    string `yaml:"name"`
		Cluster struct {
			CAData string `yaml:"certificate-authority-data"`
			CA     string `yaml:"certificate-authority"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string `yaml:"name"`
		User struct {
			CertData string `yaml:"client-certificate-data"`
			Cert     string `yaml:"client-certificate"`
			KeyData  string `yaml:"client-key-data"`
			Key      string `yaml:"client-key"`
		} `yaml:"user"`
	} `yaml:"users"`
}

// kubeadmKubeconfigs are the kubeconfigs `kubeadm certs check-expiration` lists.
var kubeadmKubeconfigs = map[string]bool{"admin.conf": true, "super-admin.conf": true, "controller-manager.conf": true, "scheduler.conf": true}

func scanKubeconfig(env *Env, file string, kubeCA []caRef, results *[]verify.Result) []*candidate {
	data, err := env.Read(file)
	if err != nil {
		*results = append(*results, verify.Result{Check: "read:" + file, Status: verify.StatusError, Msg: fmt.Sprintf("cannot read %s: %v", file, verify.PathErr(err))})
		return nil
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(data, &kc); err != nil {
		// yaml.v3 errors quote no values, only lines.
		*results = append(*results, verify.Result{Check: "parse:" + file, Status: verify.StatusFail,
			Msg: fmt.Sprintf("%s on %s is not a kubeconfig: %v", file, hostName(env), err)})
		return nil
	}
	base := path.Base(file)
	family := FamilyKubeadm
	if base == "kubelet.conf" || base == "bootstrap-kubelet.conf" {
		family = FamilyKubelet
	}
	cas := append([]caRef(nil), kubeCA...)
	for _, cl := range kc.Clusters {
		if cl.Cluster.CAData == "" {
			continue
		}
		if pemData, err := base64.StdEncoding.DecodeString(cl.Cluster.CAData); err == nil {
			if certs, _, err := parsePEMCerts(pemData); err == nil {
				for _, c := range certs {
					cas = append(cas, caRef{fmt.Sprintf("%s#clusters[%s].certificate-authority-data", file, cl.Name), c})
				}
			}
		}
	}
	var out []*candidate
	for _, u := range kc.Users {
		if u.User.CertData == "" {
			if u.User.Cert != "" && !env.Exists(u.User.Cert) {
				*results = append(*results, verify.Result{Check: "present:" + u.User.Cert, Status: verify.StatusFail,
					Msg:         fmt.Sprintf("%s (user %s) on %s names client-certificate %s, which is missing", file, u.Name, hostName(env), u.User.Cert),
					Remediation: "restart kubelet so it writes a new client certificate, or re-run cluster.yml for this host"})
			}
			continue
		}
		where := fmt.Sprintf("%s#users[%s].client-certificate-data", file, u.Name)
		pemData, err := base64.StdEncoding.DecodeString(u.User.CertData)
		var certs []*x509.Certificate
		if err == nil {
			certs, _, err = parsePEMCerts(pemData)
		}
		if err != nil || len(certs) == 0 {
			*results = append(*results, verify.Result{Check: "parse:" + where, Status: verify.StatusFail,
				Msg: fmt.Sprintf("%s on %s is not a base64 PEM certificate", where, hostName(env))})
			continue
		}
		c := &candidate{cert: certs[0], cas: cas, info: CertInfo{Path: where, Family: family}}
		if family == FamilyKubeadm && kubeadmKubeconfigs[base] {
			c.info.KubeadmName = base
		}
		if u.User.KeyData != "" {
			c.info.KeyFile = fmt.Sprintf("%s#users[%s].client-key-data", file, u.Name)
			if k, err := base64.StdEncoding.DecodeString(u.User.KeyData); err == nil {
				c.keyPEM = k
			}
		} else if u.User.Key != "" {
			c.info.KeyFile = u.User.Key
			c.keyPEM, _ = env.Read(u.User.Key)
		}
		out = append(out, c)
	}
	return out
}

// kubeadmCertName maps a path relative to kube_cert_dir to the name
// `kubeadm certs check-expiration` prints ("" when kubeadm does not list it).
func kubeadmCertName(rel string) string {
	switch rel {
	case "apiserver.crt", "apiserver-kubelet-client.crt", "front-proxy-client.crt", "apiserver-etcd-client.crt",
		"ca.crt", "front-proxy-ca.crt":
		n := strings.TrimSuffix(rel, ".crt")
		return n
	case "etcd/server.crt", "etcd/peer.crt", "etcd/healthcheck-client.crt", "etcd/ca.crt":
		return "etcd-" + strings.TrimSuffix(path.Base(rel), ".crt")
	}
	return ""
}

// judgeCert fills the facts of a candidate and its status.
func judgeCert(env *Env, c *candidate) {
	o := env.Options
	cert := c.cert
	in := &c.info
	in.Subject = opensslName(cert.RawSubject)
	in.Issuer = opensslName(cert.RawIssuer)
	in.SubjectCN, in.IssuerCN = cert.Subject.CommonName, cert.Issuer.CommonName
	in.Serial = cert.SerialNumber.Text(16)
	in.IsCA = cert.IsCA
	in.DNSNames = cert.DNSNames
	for _, ip := range cert.IPAddresses {
		in.IPAddresses = append(in.IPAddresses, ip.String())
	}
	in.NotBefore, in.NotAfter = cert.NotBefore.UTC(), cert.NotAfter.UTC()
	rem := cert.NotAfter.Sub(env.Now)
	in.DaysLeft = int(math.Floor(rem.Hours() / 24))
	in.ResidualSeconds = int64(rem / time.Second)
	in.Expired = env.Now.After(cert.NotAfter)
	in.Status = verify.StatusOK
	bad := func(s verify.Status, msg string) {
		in.Status = verify.Worse(in.Status, s)
		in.Problems = append(in.Problems, msg)
	}
	switch {
	case in.Expired:
		bad(verify.StatusFail, fmt.Sprintf("expired on %s (%s)", in.NotAfter.Format(time.RFC3339), expiredAgo(-rem)))
	case rem < time.Duration(o.CertFailDays)*24*time.Hour:
		bad(verify.StatusFail, fmt.Sprintf("expires on %s, in %d days (fail below %d)", in.NotAfter.Format(time.RFC3339), in.DaysLeft, o.CertFailDays))
	case rem < time.Duration(o.CertWarnDays)*24*time.Hour:
		bad(verify.StatusWarn, fmt.Sprintf("expires on %s, in %d days (warn below %d)", in.NotAfter.Format(time.RFC3339), in.DaysLeft, o.CertWarnDays))
	}
	if env.Now.Before(cert.NotBefore) {
		bad(verify.StatusFail, fmt.Sprintf("not valid before %s (check the node clock)", in.NotBefore.Format(time.RFC3339)))
	}
	// Chain: a self-signed CA chains to itself; others to a CA beside them.
	if cert.IsCA && string(cert.RawIssuer) == string(cert.RawSubject) && cert.CheckSignatureFrom(cert) == nil {
		in.Chained, in.ChainsTo = true, in.Path
	} else {
		for _, ca := range c.cas {
			if ca.cert.Equal(cert) {
				continue
			}
			if cert.CheckSignatureFrom(ca.cert) == nil {
				in.Chained, in.ChainsTo = true, ca.path
				break
			}
		}
		if !in.Chained {
			var where []string
			for _, ca := range c.cas {
				if ca.cert.IsCA && !ca.cert.Equal(cert) {
					where = append(where, ca.path)
				}
			}
			if len(where) == 0 {
				bad(verify.StatusFail, fmt.Sprintf("issuer %q not found beside it", in.Issuer))
			} else {
				bad(verify.StatusFail, fmt.Sprintf("not signed by %s (mis-chained: issuer %q)", strings.Join(uniq(where), ", "), in.Issuer))
			}
		}
	}
	if in.Family == FamilyKubeadm && in.Chained {
		if in.ChainsTo == in.Path {
			in.CAName = in.KubeadmName
		} else if strings.Contains(in.ChainsTo, "#clusters[") || strings.HasSuffix(in.ChainsTo, "/ca.crt") {
			in.CAName = "ca"
			if path.Base(path.Dir(in.ChainsTo)) == "etcd" {
				in.CAName = "etcd-ca"
			}
		} else if strings.HasSuffix(in.ChainsTo, "/front-proxy-ca.crt") {
			in.CAName = "front-proxy-ca"
		}
	}
	// Key: compare public halves only.
	if c.keyPEM != nil {
		pub, err := privateKeyPublic(c.keyPEM)
		c.keyPEM = nil
		if err == nil {
			m := publicEqual(pub, cert.PublicKey)
			in.KeyMatch = &m
			if !m {
				bad(verify.StatusFail, fmt.Sprintf("private key %s does not belong to this certificate", in.KeyFile))
			}
		} else {
			in.Problems = append(in.Problems, fmt.Sprintf("key %s not checked: %v", in.KeyFile, err))
		}
	}
}

func uniq(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// privateKeyPublic parses the first private key of a PEM text and returns
// its public key. Errors never quote key bytes.
func privateKeyPublic(data []byte) (crypto.PublicKey, error) {
	rest := data
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, fmt.Errorf("no PEM private key")
		}
		if !strings.HasSuffix(b.Type, "PRIVATE KEY") {
			continue
		}
		if strings.Contains(b.Type, "ENCRYPTED") || b.Headers["Proc-Type"] != "" {
			return nil, fmt.Errorf("key is encrypted")
		}
		var k any
		var err error
		switch b.Type {
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			k, err = x509.ParseECPrivateKey(b.Bytes)
		default:
			k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		}
		if err != nil {
			return nil, fmt.Errorf("cannot parse %s", b.Type)
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("unsupported key type %T", k)
		}
		return s.Public(), nil
	}
}

// publicEqual reports whether a is a public key equal to b.
func publicEqual(a, b crypto.PublicKey) bool {
	e, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && e.Equal(b)
}

var oidShort = map[string]string{
	"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.10": "O", "2.5.4.11": "OU",
	"2.5.4.5": "serialNumber", "1.2.840.113549.1.9.1": "emailAddress", "0.9.2342.19200300.100.1.25": "DC",
}

// opensslName renders a DER name in the order it is written, as
// `openssl x509 -subject` prints it: "O = system:nodes, CN = system:node:node1".
func opensslName(raw []byte) string {
	var seq pkix.RDNSequence
	if _, err := asn1.Unmarshal(raw, &seq); err != nil {
		return ""
	}
	var parts []string
	for _, rdn := range seq {
		for _, atv := range rdn {
			k := oidShort[atv.Type.String()]
			if k == "" {
				k = atv.Type.String()
			}
			parts = append(parts, fmt.Sprintf("%s = %v", k, atv.Value))
		}
	}
	return strings.Join(parts, ", ")
}

type wantFile struct {
	path, why, fix string
	// kubeadm: laid down by kubeadm (init or join), not make-ssl-etcd.sh.
	kubeadm bool
}

// expectedCertFiles lists what kubespray v2.31.0 puts on a host of the
// groups the host is in.
func expectedCertFiles(env *Env) []wantFile {
	o := env.Options
	h := env.Host
	var out []wantFile
	kubeFix := "re-run kubespray's cluster.yml for this host (its kubeadm init/join phases recreate missing control-plane certificates and kubeconfigs), or on the host: kubeadm init phase certs all --config " + path.Join(o.KubeConfigDir, "kubeadm-config.yaml")
	first := "the first etcd host"
	if len(o.EtcdMembers) > 0 {
		first = o.EtcdMembers[0]
	}
	etcdFix := "re-run kubespray's cluster.yml with --tags etcd: make-ssl-etcd.sh on " + first + " recreates missing etcd certificates and kubespray copies them to the etcd and control-plane hosts"
	cp := o.InGroup("kube_control_plane")
	if cp || o.InGroup("kube_node") {
		out = append(out, wantFile{path.Join(o.KubeCertDir, "ca.crt"), "cluster CA every node trusts", kubeFix, true},
			wantFile{path.Join(o.KubeConfigDir, "kubelet.conf"), "kubelet's kubeconfig", "re-run kubespray's cluster.yml for this host (kubeadm join writes kubelet.conf)", true})
	}
	if cp {
		for _, n := range []string{"ca.key", "apiserver.crt", "apiserver.key", "apiserver-kubelet-client.crt", "apiserver-kubelet-client.key",
			"front-proxy-ca.crt", "front-proxy-ca.key", "front-proxy-client.crt", "front-proxy-client.key", "sa.key", "sa.pub"} {
			out = append(out, wantFile{path.Join(o.KubeCertDir, n), "kubeadm control-plane PKI", kubeFix, true})
		}
		for _, n := range []string{"admin.conf", "controller-manager.conf", "scheduler.conf"} {
			out = append(out, wantFile{path.Join(o.KubeConfigDir, n), "kubeadm kubeconfig", kubeFix, true})
		}
		if o.EtcdDeploymentType == "kubeadm" {
			for _, n := range []string{"etcd/ca.crt", "etcd/server.crt", "etcd/peer.crt", "etcd/healthcheck-client.crt", "apiserver-etcd-client.crt"} {
				out = append(out, wantFile{path.Join(o.KubeCertDir, n), "kubeadm-managed etcd PKI", kubeFix, true})
			}
		} else if h != "" {
			for _, n := range []string{"ca.pem", "node-" + h + ".pem", "node-" + h + "-key.pem"} {
				out = append(out, wantFile{path.Join(o.EtcdCertDir, n), "the apiserver's etcd client certificate (kubeadm-config.yaml etcd.external)", etcdFix, false})
			}
		}
	}
	if o.InGroup("etcd") && o.EtcdDeploymentType != "kubeadm" && h != "" {
		for _, n := range []string{"ca.pem", "member-" + h + ".pem", "member-" + h + "-key.pem", "admin-" + h + ".pem", "admin-" + h + "-key.pem"} {
			out = append(out, wantFile{path.Join(o.EtcdCertDir, n), "etcd member certificates named in /etc/etcd.env", etcdFix, false})
		}
	}
	seen := map[string]bool{}
	var dedup []wantFile
	for _, w := range out {
		if !seen[w.path] {
			seen[w.path] = true
			dedup = append(dedup, w)
		}
	}
	return dedup
}

// certRemedy says how to fix a certificate of a family on a host of the
// groups this host is in: only a control-plane host has kubeadm's PKI to
// renew and static pods to restart; a worker holds copies made elsewhere,
// and an etcd client certificate there serves the network plugin.
func certRemedy(c CertInfo, env *Env) string {
	o := env.Options
	cp, etcd := o.InGroup("kube_control_plane"), o.InGroup("etcd")
	first := "the first etcd host"
	if len(o.EtcdMembers) > 0 {
		first = o.EtcdMembers[0]
	}
	switch c.Family {
	case FamilyKubeadm:
		if c.IsCA {
			return "this CA can only be renewed by hand: follow kubeadm's manual CA rotation (Kubernetes docs \"Manual Rotation of CA Certificates\"), then re-run kubespray's cluster.yml"
		}
		if !cp {
			return fmt.Sprintf("%s is not in kube_control_plane: this file is a copy of the control plane's; renew it on the first control-plane host (kubeadm certs renew all, or upgrade-cluster.yml) and re-run kubespray's cluster.yml --limit %s to copy it here; nothing on this host needs restarting but kubelet", hostName(env), hostName(env))
		}
		name := c.KubeadmName
		if name == "" {
			name = "all"
		}
		return fmt.Sprintf("on %s run `kubeadm certs renew %s` and restart the control-plane static pods (or let kubespray renew them: auto_renew_certificates: true, or upgrade-cluster.yml); check with `kubeadm certs check-expiration`", hostName(env), name)
	case FamilyEtcdScript:
		regen := "etcd certificates come from kubespray's make-ssl-etcd.sh, not kubeadm: remove the bad files from etcd_cert_dir on " + first + " and re-run kubespray's cluster.yml with --tags etcd so they are regenerated and copied"
		switch {
		case etcd:
			return regen + ", then restart etcd (systemctl restart etcd) on each etcd host, one at a time"
		case cp:
			return regen + " to this control-plane host, then restart kube-apiserver here (it reads node-" + hostName(env) + ".pem as its etcd client certificate): crictl stop the kube-apiserver container, kubelet starts it again"
		default:
			return regen + " to this worker (kubespray copies node-" + hostName(env) + ".pem to workers whose network plugin talks to etcd: calico with calico_datastore etcd, cilium with cilium_identity_allocation_mode kvstore), then restart the network plugin's pod on this node (kubectl -n kube-system delete pod -l k8s-app=calico-node or k8s-app=cilium --field-selector spec.nodeName=" + hostName(env) + "); no control-plane restart is needed"
		}
	case FamilyKubelet:
		return "the kubelet renews this itself (rotateCertificates: true): check that kubelet runs and reaches the API server, approve pending CSRs (kubectl get csr), or restart kubelet"
	}
	return ""
}

// expiredAgo says how long ago a certificate expired in whole days, as a
// person counts them: 25 hours is a day ago (DaysLeft, the floor of the
// days left, is -2 then).
func expiredAgo(ago time.Duration) string {
	days := int(ago / (24 * time.Hour))
	if days == 0 {
		return "less than a day ago"
	}
	return verify.Plural(days, "day") + " ago"
}
