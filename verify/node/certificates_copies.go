package node

import (
	"bytes"
	"fmt"
	"path"
	"time"

	"github.com/layercheck/layercheck/verify"
)

// TrustStoreEtcdCA are the files kubespray v2.31.0 copies etcd_cert_dir's
// ca.pem to, by OS family (Debian, RedHat, Flatcar, Suse, ClearLinux:
// roles/etcd/tasks/upd_ca_trust.yml), on etcd and control-plane hosts and
// on nodes whose network plugin talks to etcd.
var TrustStoreEtcdCA = []string{
	"/usr/local/share/ca-certificates/etcd-ca.crt",
	"/etc/pki/ca-trust/source/anchors/etcd-ca.crt",
	"/etc/ssl/certs/etcd-ca.pem",
	"/etc/pki/trust/anchors/etcd-ca.pem",
	"/usr/share/ca-certs/etcd-ca.pem",
}

// certCopies checks the copies kubespray makes of make-ssl-etcd.sh's
// certificates outside etcd_cert_dir: the etcd CA in the system trust
// store, and cilium's links in cilium_cert_dir when cilium keeps its state
// in etcd (roles/network_plugin/cilium/tasks/install.yml: ca_cert.crt,
// cert.crt, key.pem, hard links to ca.pem, node-<host>.pem and
// node-<host>-key.pem). A copy that differs from its source is stale: the
// source was regenerated and the copy was not. The trust store copy found
// is returned for the facts too.
func certCopies(env *Env) ([]CertCopy, []verify.Result) {
	o := env.Options
	if o.EtcdDeploymentType == "kubeadm" {
		return nil, nil // kubeadm's etcd CA is not copied anywhere
	}
	var res []verify.Result
	var copies []CertCopy
	caPath := path.Join(o.EtcdCertDir, "ca.pem")
	caData, caErr := env.Read(caPath)
	if caErr == nil {
		cp, r := trustStoreCopy(env, caPath, caData)
		if cp != nil {
			copies = append(copies, *cp)
		}
		res = append(res, r...)
	}
	if o.KubeNetworkPlugin == "cilium" && o.CiliumIdentityAllocationMode == "kvstore" && env.Host != "" {
		for _, l := range []struct{ src, dst string }{
			{"ca.pem", "ca_cert.crt"},
			{"node-" + env.Host + ".pem", "cert.crt"},
			{"node-" + env.Host + "-key.pem", "key.pem"},
		} {
			res = append(res, ciliumCopy(env, path.Join(o.EtcdCertDir, l.src), path.Join(o.CiliumCertDir, l.dst)))
		}
	}
	return copies, res
}

func trustStoreCopy(env *Env, caPath string, caData []byte) (*CertCopy, []verify.Result) {
	for _, p := range TrustStoreEtcdCA {
		data, err := env.Read(p)
		if err != nil {
			continue
		}
		got, _, gerr := parsePEMCerts(data)
		want, _, werr := parsePEMCerts(caData)
		if gerr != nil || werr != nil || len(got) == 0 || len(want) == 0 {
			return nil, []verify.Result{{Check: "trust_store_etcd_ca", Status: verify.StatusFail,
				Msg:         fmt.Sprintf("%s on %s is not a readable certificate", p, hostName(env)),
				Remediation: trustStoreFix(p)}}
		}
		days := int(got[0].NotAfter.Sub(env.Now) / (24 * time.Hour))
		cp := &CertCopy{Path: p, Source: caPath, SubjectCN: got[0].Subject.CommonName, IssuerCN: got[0].Issuer.CommonName,
			NotAfter: got[0].NotAfter.UTC(), DaysLeft: days, Current: bytes.Equal(got[0].Raw, want[0].Raw), Status: verify.StatusFail}
		if !cp.Current {
			return cp, []verify.Result{{Check: "trust_store_etcd_ca", Status: verify.StatusFail,
				Msg: fmt.Sprintf("the system trust store's etcd CA %s on %s is not %s (subject %s, serial %s vs %s): a stale copy of a regenerated etcd CA, so tools trusting the system store reject etcd",
					p, hostName(env), caPath, opensslName(got[0].RawSubject), got[0].SerialNumber.Text(16), want[0].SerialNumber.Text(16)),
				Expected: want[0].SerialNumber.Text(16), Actual: got[0].SerialNumber.Text(16),
				Remediation: trustStoreFix(p)}}
		}
		st := verify.StatusOK
		if days < env.Options.CertFailDays {
			st = verify.StatusFail
		} else if days < env.Options.CertWarnDays {
			st = verify.StatusWarn
		}
		cp.Status = st
		return cp, []verify.Result{{Check: "trust_store_etcd_ca", Status: st,
			Msg: fmt.Sprintf("the system trust store's etcd CA %s is %s (expires %s, %d days left)", p, caPath, got[0].NotAfter.UTC().Format(time.RFC3339), days)}}
	}
	return nil, nil // not every host gets the copy (see TrustStoreEtcdCA)
}

func trustStoreFix(p string) string {
	return "re-run kubespray's cluster.yml with --tags etcd-secrets (it copies etcd_cert_dir/ca.pem to " + p + " and runs update-ca-certificates / update-ca-trust), or copy it yourself and run that command"
}

func ciliumCopy(env *Env, src, dst string) verify.Result {
	fix := "re-run kubespray's cluster.yml with --tags network (Cilium | Link etcd certificates for cilium links " + src + " to " + dst + "), then restart cilium on this node: kubectl -n kube-system delete pod -l k8s-app=cilium --field-selector spec.nodeName=" + hostName(env)
	want, err := env.Read(src)
	if err != nil {
		return verify.Result{Check: "cilium_copy:" + dst, Status: verify.StatusSkipped,
			Msg: fmt.Sprintf("%s is missing, so its copy %s cannot be compared (the missing source is reported on its own)", src, dst)}
	}
	got, err := env.Read(dst)
	if err != nil {
		return verify.Result{Check: "cilium_copy:" + dst, Status: verify.StatusFail,
			Msg:         fmt.Sprintf("%s is missing on %s: cilium keeps its state in etcd (cilium_identity_allocation_mode kvstore) and reads its etcd certificates from cilium_cert_dir: %v", dst, hostName(env), verify.PathErr(err)),
			Expected:    src,
			Remediation: fix}
	}
	if !bytes.Equal(got, want) {
		return verify.Result{Check: "cilium_copy:" + dst, Status: verify.StatusFail,
			Msg:         fmt.Sprintf("%s on %s differs from %s: a stale copy (the etcd certificates were regenerated after kubespray linked them), so cilium-agent fails to reach etcd", dst, hostName(env), src),
			Expected:    src,
			Remediation: fix}
	}
	return verify.Result{Check: "cilium_copy:" + dst, Status: verify.StatusOK, Msg: fmt.Sprintf("%s is %s, as kubespray links it", dst, src)}
}
