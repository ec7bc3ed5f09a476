package node

// The etcd certificates make-ssl-etcd.sh lays down, as etcd.env names them.

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/layercheck/layercheck/verify"
)

// etcdCheckCerts checks that the TLS paths of etcd.env exist and hold this
// host's certificates as kubespray v2.31.0 roles/etcd/templates/make-ssl-etcd.sh.j2
// makes them: ca.pem (CN etcd-ca), member-<host>.pem (CN etcd-member-<host
// up to the first dot>, serving the client and peer URLs), admin-<host>.pem
// (CN etcd-admin-<host>), each signed by the CA, its key file matching. It
// returns the client TLS configuration (ETCDCTL_CACERT/CERT/KEY) for the live
// checks, or nil when that material is unusable.
func etcdCheckCerts(env *Env, ee *EtcdEnv, facts *EtcdFacts, add func(verify.Result)) *tls.Config {
	o := env.Options
	dir := o.EtcdCertDir
	if dir == "" {
		dir = etcdDefaultCertDir
	}
	host := env.Host
	short := etcdShortName(host)
	facts.Certificates = map[string]*EtcdCertFacts{}

	// Paths as etcd.env.j2 writes them.
	if host != "" {
		want := map[string]string{
			"ETCD_TRUSTED_CA_FILE":      dir + "/ca.pem",
			"ETCD_CERT_FILE":            dir + "/member-" + host + ".pem",
			"ETCD_KEY_FILE":             dir + "/member-" + host + "-key.pem",
			"ETCD_PEER_TRUSTED_CA_FILE": dir + "/ca.pem",
			"ETCD_PEER_CERT_FILE":       dir + "/member-" + host + ".pem",
			"ETCD_PEER_KEY_FILE":        dir + "/member-" + host + "-key.pem",
			"ETCDCTL_CACERT":            dir + "/ca.pem",
			"ETCDCTL_CERT":              dir + "/admin-" + host + ".pem",
			"ETCDCTL_KEY":               dir + "/admin-" + host + "-key.pem",
		}
		var diffs []string
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if v := ee.Vars[k]; v != "" && path.Clean(v) != path.Clean(want[k]) {
				diffs = append(diffs, fmt.Sprintf("%s %s=%s (kubespray writes %s)", ee.Where(etcdEnvPath, k), k, v, want[k]))
			}
		}
		if len(diffs) > 0 {
			add(verify.Result{Check: "tls_paths", Status: verify.StatusWarn,
				Msg:         "etcd.env TLS paths differ from kubespray's for this host and etcd_cert_dir " + dir + ": " + strings.Join(diffs, "; "),
				Evidence:    diffs,
				Remediation: "check etcd_cert_dir; " + etcdRemedyRerun})
		}
	}

	// CA.
	caPath := ee.TrustedCAFile
	if caPath == "" {
		caPath = ee.CtlCACert
	}
	var ca *x509.Certificate
	if caPath != "" {
		cf := &EtcdCertFacts{Path: caPath}
		facts.Certificates["ca"] = cf
		c, err := etcdReadCert(env, caPath)
		if err != nil {
			add(verify.Result{Check: "ca_certificate", Status: verify.StatusFail, Msg: fmt.Sprintf("etcd CA %s: %v", caPath, err), Remediation: etcdRemedyCerts})
		} else {
			ca = c
			etcdFillCert(cf, c, env.Now)
			var probs []string
			if !c.IsCA {
				probs = append(probs, "is not a CA certificate (basicConstraints CA:FALSE)")
			}
			if c.Subject.CommonName != "etcd-ca" {
				probs = append(probs, fmt.Sprintf("has CN %q, make-ssl-etcd.sh makes CN etcd-ca", c.Subject.CommonName))
			}
			for _, other := range []struct{ k, v string }{{"ETCD_PEER_TRUSTED_CA_FILE", ee.PeerTrustedCAFile}, {"ETCDCTL_CACERT", ee.CtlCACert}} {
				if other.v != "" && other.v != caPath {
					if oc, err := etcdReadCert(env, other.v); err != nil || !oc.Equal(c) {
						probs = append(probs, fmt.Sprintf("%s (%s) is not the same CA", other.k, other.v))
					}
				}
			}
			st, m := etcdExpiry(env, c)
			if len(probs) > 0 {
				st = verify.StatusFail
				m = strings.Join(probs, "; ")
			}
			add(verify.Result{Check: "ca_certificate", Status: st, Msg: fmt.Sprintf("etcd CA %s: %s", caPath, m), Evidence: cf, Remediation: etcdRemedyIf(st, etcdRemedyCerts)})
		}
	}

	// Member (server and peer) certificate.
	var hosts []string
	for _, list := range [][]string{ee.AdvertiseClientURLs, ee.ListenClientURLs, ee.InitialAdvertisePeerURLs, ee.CtlEndpoints} {
		for _, u := range list {
			if pu, err := url.Parse(u); err == nil && pu.Hostname() != "" && !slices.Contains(hosts, pu.Hostname()) {
				hosts = append(hosts, pu.Hostname())
			}
		}
	}
	if ee.CertFile != "" {
		etcdCheckLeaf(env, facts, add, "member", "member_certificate", ee.CertFile, ee.KeyFile, "etcd-member-"+short, ca, true, hosts)
		if ee.PeerCertFile != "" && ee.PeerCertFile != ee.CertFile {
			etcdCheckLeaf(env, facts, add, "peer", "peer_certificate", ee.PeerCertFile, ee.PeerKeyFile, "etcd-member-"+short, ca, true, hosts)
		}
	}
	// Admin (etcdctl client) certificate.
	var clientCert *tls.Certificate
	if ee.CtlCert != "" {
		if etcdCheckLeaf(env, facts, add, "admin", "admin_certificate", ee.CtlCert, ee.CtlKey, "etcd-admin-"+short, ca, false, nil) {
			if c, err := etcdKeyPair(env, ee.CtlCert, ee.CtlKey); err == nil {
				clientCert = &c
			}
		}
	}
	if ca == nil || clientCert == nil {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{*clientCert}, MinVersion: tls.VersionTLS12}
}

func etcdRemedyIf(st verify.Status, remedy string) string {
	if st == verify.StatusOK {
		return ""
	}
	return remedy
}

// etcdCheckLeaf checks one leaf certificate and its key; it reports whether
// the pair is usable (exists, parses, key matches, signed by ca).
func etcdCheckLeaf(env *Env, facts *EtcdFacts, add func(verify.Result), role, check, certPath, keyPath, wantCN string, ca *x509.Certificate, server bool, hosts []string) bool {
	cf := &EtcdCertFacts{Path: certPath, KeyPath: keyPath}
	facts.Certificates[role] = cf
	c, err := etcdReadCert(env, certPath)
	if err != nil {
		add(verify.Result{Check: check, Status: verify.StatusFail, Msg: fmt.Sprintf("%s certificate %s: %v", role, certPath, err), Remediation: etcdRemedyCerts})
		return false
	}
	etcdFillCert(cf, c, env.Now)
	var probs []string
	usable := true
	if env.Host != "" && c.Subject.CommonName != wantCN {
		probs = append(probs, fmt.Sprintf("CN is %q, this host's is %q (make-ssl-etcd.sh)", c.Subject.CommonName, wantCN))
	}
	if keyPath == "" {
		probs = append(probs, "no key file configured")
		usable = false
	} else if pub, err := etcdReadPublicKey(env, keyPath); err != nil {
		probs = append(probs, fmt.Sprintf("key %s: %v", keyPath, err))
		usable = false
	} else {
		m := publicEqual(c.PublicKey, pub)
		cf.KeyMatches = &m
		if !m {
			probs = append(probs, fmt.Sprintf("key %s does not belong to this certificate", keyPath))
			usable = false
		}
	}
	if ca != nil {
		pool := x509.NewCertPool()
		pool.AddCert(ca)
		if _, err := c.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: c.NotBefore.Add(time.Second), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			probs = append(probs, fmt.Sprintf("not signed by the etcd CA: %v", err))
			usable = false
		}
	}
	wantEKU := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if server {
		wantEKU = append(wantEKU, x509.ExtKeyUsageServerAuth)
	}
	if len(c.ExtKeyUsage) > 0 {
		for _, u := range wantEKU {
			if !slices.Contains(c.ExtKeyUsage, u) && !slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageAny) {
				probs = append(probs, fmt.Sprintf("extended key usage lacks %s", etcdEKUName(u)))
			}
		}
	}
	if server {
		for _, h := range hosts {
			if err := c.VerifyHostname(h); err != nil {
				probs = append(probs, fmt.Sprintf("does not cover %s, an address etcd.env serves on", h))
			}
		}
	}
	st, m := etcdExpiry(env, c)
	if len(probs) > 0 {
		st = verify.StatusFail
		m = strings.Join(probs, "; ")
	}
	if st == verify.StatusFail && (c.NotAfter.Before(env.Now) || env.Now.Before(c.NotBefore)) {
		usable = false
	}
	add(verify.Result{Check: check, Status: st, Msg: fmt.Sprintf("%s certificate %s (CN %s): %s", role, certPath, c.Subject.CommonName, m),
		Expected: wantCN, Actual: c.Subject.CommonName, Evidence: cf, Remediation: etcdRemedyIf(st, etcdRemedyCerts)})
	return usable
}

func etcdEKUName(u x509.ExtKeyUsage) string {
	switch u {
	case x509.ExtKeyUsageClientAuth:
		return "clientAuth"
	case x509.ExtKeyUsageServerAuth:
		return "serverAuth"
	}
	return fmt.Sprint(int(u))
}

// etcdExpiry judges validity at env.Now against cert_warn_days/cert_fail_days.
func etcdExpiry(env *Env, c *x509.Certificate) (verify.Status, string) {
	now := env.Now
	if now.IsZero() {
		now = time.Now()
	}
	warn, fail := env.Options.CertWarnDays, env.Options.CertFailDays
	if warn <= 0 {
		warn = 30
	}
	if fail <= 0 {
		fail = 7
	}
	days := int(c.NotAfter.Sub(now).Hours() / 24)
	switch {
	case now.Before(c.NotBefore):
		return verify.StatusFail, fmt.Sprintf("not valid before %s", c.NotBefore.UTC().Format(time.RFC3339))
	case now.After(c.NotAfter):
		return verify.StatusFail, fmt.Sprintf("expired on %s", c.NotAfter.UTC().Format(time.RFC3339))
	case days < fail:
		return verify.StatusFail, fmt.Sprintf("expires in %d day(s) (%s), below cert_fail_days %d", days, c.NotAfter.UTC().Format(time.RFC3339), fail)
	case days < warn:
		return verify.StatusWarn, fmt.Sprintf("expires in %d day(s) (%s), below cert_warn_days %d", days, c.NotAfter.UTC().Format(time.RFC3339), warn)
	}
	return verify.StatusOK, fmt.Sprintf("valid until %s", c.NotAfter.UTC().Format(time.RFC3339))
}

func etcdFillCert(cf *EtcdCertFacts, c *x509.Certificate, now time.Time) {
	if now.IsZero() {
		now = time.Now()
	}
	cf.SubjectCN = c.Subject.CommonName
	cf.IssuerCN = c.Issuer.CommonName
	cf.NotBefore = c.NotBefore.UTC()
	cf.NotAfter = c.NotAfter.UTC()
	cf.DaysLeft = int(c.NotAfter.Sub(now).Hours() / 24)
	cf.DNSNames = c.DNSNames
	for _, ip := range c.IPAddresses {
		cf.IPAddresses = append(cf.IPAddresses, ip.String())
	}
}

func etcdReadCert(env *Env, p string) (*x509.Certificate, error) {
	data, err := env.Read(p)
	if err != nil {
		return nil, etcdPathErr(err)
	}
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, errors.New("no PEM CERTIFICATE block")
		}
		if b.Type == "CERTIFICATE" {
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("certificate does not parse: %v", err)
			}
			return c, nil
		}
	}
}

// etcdReadPublicKey reads a private key file (PKCS#8, PKCS#1 or SEC 1) and
// returns only its public half; the private key never leaves this function.
func etcdReadPublicKey(env *Env, p string) (crypto.PublicKey, error) {
	data, err := env.Read(p)
	if err != nil {
		return nil, etcdPathErr(err)
	}
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, errors.New("no PEM private key block")
		}
		var k any
		switch b.Type {
		case "PRIVATE KEY":
			k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			k, err = x509.ParseECPrivateKey(b.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, errors.New("private key does not parse")
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("unsupported private key type %T", k)
		}
		return s.Public(), nil
	}
}

func etcdKeyPair(env *Env, certPath, keyPath string) (tls.Certificate, error) {
	c, err := env.Read(certPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	k, err := env.Read(keyPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(c, k)
}
