package node

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/verify"
)

// etcdStageTree is what kubespray's cluster.yml leaves on a control-plane
// and etcd host when it has run up to "Install etcd" (preinstall and the
// etcd role, with etcd_deployment_type: host) and no further, as on the
// node machines of test/e2e: etcd.env, make-ssl-etcd.sh's certificates and
// the resolver files; nothing of kubelet, kubeadm or the network plugin.
func etcdStageTree(t *testing.T) (*harness.Tree, *Env) {
	t.Helper()
	tr := buildTree(t, harness.Config{})
	for _, p := range []string{"/etc/kubernetes", "/var/lib/kubelet", "/opt/cni", "/etc/cni"} {
		must(t, os.RemoveAll(tr.Path(p)))
	}
	env := testEnv(tr, testNow)
	env.Options.Groups = []string{"etcd", "kube_control_plane", "kube_node", "k8s_cluster"}
	return tr, env
}

// One skipped result per layer names the role that has not run, instead of
// a failure per file it would have laid down.
func TestRoleNotRunSaidOncePerLayer(t *testing.T) {
	_, env := etcdStageTree(t)
	for _, tc := range []struct {
		layer Layer
		role  string
	}{
		{kubeletLayer{}, "kubernetes/node"},
		{certificatesLayer{}, "kubernetes/control-plane"},
		{installLayer{}, "kubernetes/control-plane"},
		{dnsLayer{}, "kubernetes/node"},
		{cniLayer{}, "network_plugin"},
	} {
		res, _, err := tc.layer.Check(context.Background(), env)
		must(t, err)
		if bad := failed(res); len(bad) > 0 {
			t.Errorf("%s: failures on a host where %s has not run: %+v", tc.layer.Name(), tc.role, bad)
		}
		var roles []verify.Result
		for _, r := range res {
			if strings.HasPrefix(r.Check, "role:") {
				roles = append(roles, r)
			}
		}
		if len(roles) != 1 || roles[0].Check != "role:"+tc.role || roles[0].Status != verify.StatusSkipped ||
			!strings.Contains(roles[0].Msg, "kubespray's "+tc.role+" role has not run on node1 (it lays down ") {
			t.Errorf("%s: want one skipped role:%s result, got %+v", tc.layer.Name(), tc.role, roles)
		}
	}

	// The etcd family is still judged, and a worker names kubeadm join.
	res, _, err := certificatesLayer{}.Check(context.Background(), env)
	must(t, err)
	if !hasCheck(res, "family/"+FamilyEtcdScript, verify.StatusOK) {
		t.Errorf("etcd-script family not judged: %+v", res)
	}
	env.Options.Groups = []string{"kube_node", "k8s_cluster"}
	res, _, err = certificatesLayer{}.Check(context.Background(), env)
	must(t, err)
	if !hasCheck(res, "role:kubernetes/kubeadm", verify.StatusSkipped) {
		t.Errorf("worker: want role:kubernetes/kubeadm skipped: %+v", res)
	}
}

// A role that ran in part is a mistake, judged file by file as before.
func TestRolePartlyRunStillFails(t *testing.T) {
	tr, env := etcdStageTree(t)
	must(t, tr.WriteFile("/usr/local/bin/kubelet", []byte("\x7fELF"), 0o755))
	res, _, err := kubeletLayer{}.Check(context.Background(), env)
	must(t, err)
	if !hasCheck(res, "config", verify.StatusFail) {
		t.Errorf("kubelet binary without its config: %+v", res)
	}
	must(t, tr.WriteFile("/etc/kubernetes/kubelet.conf", []byte("apiVersion: v1\nkind: Config\n"), 0o600))
	res, _, err = certificatesLayer{}.Check(context.Background(), env)
	must(t, err)
	if !hasCheck(res, "present:/etc/kubernetes/ssl/ca.crt", verify.StatusFail) || hasCheck(res, "role:kubernetes/control-plane", verify.StatusSkipped) {
		t.Errorf("kubelet.conf without the cluster CA: %+v", res)
	}
}

func hasCheck(res []verify.Result, check string, st verify.Status) bool {
	for _, r := range res {
		if r.Check == check && r.Status == st {
			return true
		}
	}
	return false
}
