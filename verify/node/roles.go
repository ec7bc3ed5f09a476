package node

import (
	"fmt"
	"path"
	"strings"

	"github.com/layercheck/layercheck/verify"
)

// A layer that reads what a kubespray role lays down says once that the
// role has not run on a host, instead of one failure per missing file: on
// a host where cluster.yml stopped early, or ran only its etcd part, a
// missing kubelet-config.yaml is not a mistake of its own but the sign that
// roles/kubernetes/node never ran there. A role has run when any file it
// always lays down is there; a host with some of them and not others is a
// mistake, and the layers judge each file as before.

// kubesprayRole is a role of kubespray v2.31.0's cluster.yml and the files
// it always lays down on a host of its groups.
type kubesprayRole struct {
	// Name is the role's path under kubespray's roles/.
	Name string
	// Lays says in words what it lays down, for the report.
	Lays string
	// Marks are files it always lays down (any one shows it has run).
	Marks func(o Options) []string
}

var (
	// roleNode: roles/kubernetes/node (kubelet, its unit and config).
	roleNode = kubesprayRole{
		Name: "kubernetes/node",
		Lays: "kubelet (bin_dir/kubelet), kubelet.service, kubelet.env and /etc/kubernetes/kubelet-config.yaml",
		Marks: func(o Options) []string {
			return []string{KubeletConfigPath, path.Join(o.KubeConfigDir, "kubelet.env"), path.Join(o.BinDir, "kubelet"), "/etc/systemd/system/kubelet.service"}
		},
	}
	// roleControlPlane: roles/kubernetes/control-plane, which runs kubeadm
	// init (or join --control-plane) on kube_control_plane hosts.
	roleControlPlane = kubesprayRole{
		Name: "kubernetes/control-plane",
		Lays: "kubeadm-config.yaml, kubeadm's control-plane PKI in kube_cert_dir, admin.conf, controller-manager.conf, scheduler.conf and the static pod manifests",
		Marks: func(o Options) []string {
			return []string{path.Join(o.KubeConfigDir, "kubeadm-config.yaml"), path.Join(o.KubeConfigDir, "admin.conf"),
				path.Join(o.KubeCertDir, "apiserver.crt"), path.Join(o.KubeConfigDir, "manifests", "kube-apiserver.yaml")}
		},
	}
	// roleKubeadm: roles/kubernetes/kubeadm, kubeadm join on the other
	// Kubernetes nodes.
	roleKubeadm = kubesprayRole{
		Name: "kubernetes/kubeadm",
		Lays: "kubelet.conf and the cluster CA (kube_cert_dir/ca.crt), by kubeadm join",
		Marks: func(o Options) []string {
			return []string{path.Join(o.KubeConfigDir, "kubelet.conf"), path.Join(o.KubeCertDir, "ca.crt")}
		},
	}
	// roleNetworkPlugin: roles/network_plugin (its cni role unpacks the
	// CNI plugins into /opt/cni/bin; the plugin's pods write its
	// configuration into /etc/cni/net.d).
	roleNetworkPlugin = kubesprayRole{
		Name: "network_plugin",
		Lays: "the CNI plugins in /opt/cni/bin and the network plugin's configuration in /etc/cni/net.d",
		Marks: func(o Options) []string {
			marks := []string{"/opt/cni/bin/loopback", "/opt/cni/bin/portmap", "/etc/cni/net.d/10-calico.conflist", "/etc/cni/net.d/10-flannel.conflist",
				"/etc/cni/net.d/05-cilium.conflist", "/etc/cni/net.d/10-kuberouter.conflist", "/etc/cni/net.d/10-macvlan.conf"}
			if p := o.KubeNetworkPlugin; p != "" && p != "none" && p != "cni" {
				marks = append(marks, path.Join("/opt/cni/bin", p))
			}
			return marks
		},
	}
)

// roleRan says whether the role has run on the host: one of its marks is
// there.
func roleRan(env *Env, r kubesprayRole) bool {
	for _, m := range r.Marks(env.Options) {
		if env.Exists(m) {
			return true
		}
	}
	return false
}

// kubeadmRole is the role that runs kubeadm on this host: control-plane on
// kube_control_plane hosts, kubeadm (join) on the others.
func kubeadmRole(env *Env) kubesprayRole {
	if env.Options.InGroup("kube_control_plane") {
		return roleControlPlane
	}
	return roleKubeadm
}

// kubeadmRan says whether kubeadm has run on this host: init, join
// --control-plane or join leave some of these behind.
func kubeadmRan(env *Env) bool {
	return roleRan(env, roleControlPlane) || roleRan(env, roleKubeadm)
}

// roleNotRun is the one result a layer gives for a role that has not run
// on the host: skipped, saying what the role would have laid down; the
// files looked for are its evidence (shown with -v).
func roleNotRun(env *Env, r kubesprayRole, what string) verify.Result {
	return verify.Result{
		Check:  "role:" + r.Name,
		Status: verify.StatusSkipped,
		Msg:    fmt.Sprintf("kubespray's %s role has not run on %s (it lays down %s): %s", r.Name, hostName(env), r.Lays, what),
		Evidence: map[string]any{
			"looked_for": r.Marks(env.Options),
			"found":      []string{},
		},
		Remediation: "if cluster.yml stopped before " + r.Name + ", or ran with --tags or --limit that left it out, run cluster.yml for this host; " +
			"a host that should carry no " + strings.TrimPrefix(r.Name, "kubernetes/") + " belongs in other groups",
	}
}
