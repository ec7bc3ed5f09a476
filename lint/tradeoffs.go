package lint

import (
	"fmt"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
)

func init() {
	registerRule("metrics-server-tls", SeverityWarning,
		"metrics_server_enabled with metrics_server_kubelet_insecure_tls true (warning), or false without kubelet_rotate_server_certificates (error)",
		checkMetricsServerTLS)
	registerRule("local-path-provisioner", SeverityWarning,
		"local_path_provisioner_enabled: volumes live on one node's disk",
		checkLocalPath)
	registerRule("certificates-duration", SeverityWarning,
		"certificates_duration changed: it affects only the certificates kubespray's scripts make (etcd, calico), never kubeadm's",
		checkCertificatesDuration)
}

// enabledUses returns the uses of a boolean the user set to true (a real
// bool, or a str/int spelling true: string-as-bool reports the spelling).
func enabledUses(c *checkCtx, name string) []use {
	var out []use
	for _, u := range c.uses(name) {
		if b, ok := truthy(u.judge); ok && b && judged(u.judge) {
			out = append(out, u)
		}
	}
	return out
}

func checkMetricsServerTLS(c *checkCtx) []Finding {
	var out []Finding
	for _, u := range enabledUses(c, "metrics_server_enabled") {
		type key struct{ insecure, rotate *parser.Value }
		groups := map[key][]string{}
		var order []key
		ins := map[key]bool{}
		vals := map[key][2]*parser.Value{}
		for _, h := range u.hosts {
			iv, iset := c.value(h, "metrics_server_kubelet_insecure_tls")
			rv, _ := c.value(h, "kubelet_rotate_server_certificates")
			k := key{iv, rv}
			if _, seen := groups[k]; !seen {
				order = append(order, k)
			}
			groups[k] = append(groups[k], h)
			ins[k] = iset
			vals[k] = [2]*parser.Value{iv, rv}
		}
		for _, k := range order {
			iv, rv := vals[k][0], vals[k][1]
			insecure, ok1 := truthy(iv)
			if iv == nil || !judged(iv) || !ok1 {
				continue
			}
			at := u
			at.hosts = groups[k]
			if ins[k] {
				at = use{name: "metrics_server_kubelet_insecure_tls", ours: iv, judge: iv, hosts: groups[k]}
			}
			if insecure {
				f := c.finding("metrics-server-tls", SeverityWarning, at)
				f.Message = "metrics-server does not verify the kubelets' serving certificates (metrics_server_kubelet_insecure_tls is true, kubespray's default)"
				f.Why = "kubespray then runs metrics-server with --kubelet-insecure-tls, so anything answering on a node's kubelet port is trusted."
				f.Fix = fixText("metrics_server_kubelet_insecure_tls", "false", originOf(at)) + " together with kubelet_rotate_server_certificates: true (kubelet serving certificates signed by the cluster CA)"
				out = append(out, f)
				continue
			}
			rotate, ok2 := truthy(rv)
			if rv != nil && judged(rv) && ok2 && !rotate {
				f := c.finding("metrics-server-tls", SeverityError, at)
				f.Message = "metrics_server_kubelet_insecure_tls is false but kubelet_rotate_server_certificates is not enabled"
				f.Why = "without kubelet_rotate_server_certificates each kubelet serves a self-signed certificate, which metrics-server (run without --kubelet-insecure-tls) cannot verify: it scrapes no node, `kubectl top` and the HorizontalPodAutoscaler stop working."
				f.Fix = "kubelet_rotate_server_certificates: true (kubespray then also deploys kubelet-csr-approver), or " + fixText("metrics_server_kubelet_insecure_tls", "true", originOf(at))
				out = append(out, f)
			}
		}
	}
	return out
}

func checkLocalPath(c *checkCtx) []Finding {
	var out []Finding
	for _, u := range enabledUses(c, "local_path_provisioner_enabled") {
		f := c.finding("local-path-provisioner", SeverityWarning, u)
		f.Message = "local_path_provisioner_enabled: persistent volumes live on one node's disk"
		f.Why = "a local-path volume is a directory on the node that first ran the pod: the pod is pinned to that node, and the data is lost with the node's disk (no replication, no capacity limit)."
		f.Fix = "keep it for development or data you can rebuild; use a replicated storage class for the rest"
		out = append(out, f)
	}
	return out
}

func checkCertificatesDuration(c *checkCtx) []Finding {
	d := c.cat.Lookup("certificates_duration")
	def := defaultValue(d0(d))
	var out []Finding
	for _, u := range c.uses("certificates_duration") {
		if !judged(u.judge) {
			continue
		}
		if def != nil && u.judge.Display() == def.Display() {
			continue
		}
		f := c.finding("certificates-duration", SeverityWarning, u)
		f.Message = fmt.Sprintf("certificates_duration = %s changes only the certificates kubespray's own scripts make", u.judge.Display())
		f.Why = "kubespray uses it in make-ssl-etcd.sh (etcd CA, member, admin and node certificates, etcd_deployment_type host/docker) and make-ssl-calico.sh (calico typha/apiserver); kubeadm's control plane and kubelet client certificates stay valid one year whatever it says (renew them with auto_renew_certificates or kubeadm certs renew)."
		f.Fix = "keep it if the etcd certificates are what you meant; for kubeadm's certificates set auto_renew_certificates: true"
		out = append(out, f)
	}
	return out
}

// d0 is d, or kubespray v2.31.0's certificates_duration default when the
// catalogue lacks it (roles/kubespray_defaults/defaults/main/main.yml).
func d0(d *kubespray.Var) *kubespray.Var {
	if d != nil {
		return d
	}
	return &kubespray.Var{Name: "certificates_duration", Type: "int", Default: 36500,
		File: "roles/kubespray_defaults/defaults/main/main.yml"}
}
