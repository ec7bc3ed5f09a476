package lint

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/testutil"
)

func lintRelease(t *testing.T, version, dir string) *Report {
	t.Helper()
	inv, err := parser.Load(dir)
	require.NoError(t, err)
	cat, err := kubespray.Bundled(version)
	require.NoError(t, err)
	r := Run(Input{Inventory: inv, Catalogue: cat})
	checkSeverities(t, r)
	return r
}

const groupsINI = `[kube_control_plane]
node1
[etcd]
node1
[kube_node]
%s
[calico_rr]
[k8s_cluster:children]
kube_control_plane
kube_node
calico_rr
`

// TestAssertTaskEmptyKubeNode: kubespray v2.24.3's 0040-verify-settings.yml
// stops when kube_node is empty ("Stop if either kube_control_plane or
// kube_node group is empty", a loop over both groups); v2.31.0's
// validate_inventory checks only kube_control_plane.
func TestAssertTaskEmptyKubeNode(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteTree(t, dir, map[string]string{"hosts.ini": strings.Replace(groupsINI, "%s", "", 1)})
	r := lintRelease(t, "v2.24.3", dir)
	f := one(t, r, "kubespray-preflight", "")
	assert.Equal(t, SeverityError, f.Severity)
	assert.Contains(t, f.Message, `"Stop if either kube_control_plane or kube_node group is empty" (roles/kubernetes/preinstall/tasks/0040-verify-settings.yml:4) for item kube_node`)
	assert.Equal(t, "hosts.ini:5:2", f.Where, "the kube_node group")
	assert.Contains(t, f.Fix, "put hosts under [kube_node]")
	none(t, lintRelease(t, "v2.31.0", dir), "kubespray-preflight", "")

	full := t.TempDir()
	testutil.WriteTree(t, full, map[string]string{"hosts.ini": strings.Replace(groupsINI, "%s", "node1", 1)})
	none(t, lintRelease(t, "v2.24.3", full), "kubespray-preflight", "")
}

// TestAssertTaskFoldsIntoTheRuleThatExplains: an assert a dedicated rule
// reports is said once, by that rule, which then names the assert's
// task and file:line.
func TestAssertTaskFoldsIntoTheRuleThatExplains(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteTree(t, dir, map[string]string{
		"hosts.ini":            strings.Replace(groupsINI, "%s", "node1", 1),
		"group_vars/all/a.yml": "kube_pods_subnet: 10.233.64.0\n",
	})
	r := lintRelease(t, "v2.31.0", dir)
	none(t, r, "kubespray-preflight", "")
	f := one(t, r, "network-cidr", "kube_pods_subnet")
	assert.Contains(t, f.Why, `roles/validate_inventory/tasks/main.yml:105, task "Check that kube_pods_subnet is a network range"`)
}

// TestVariableShapeKubeadmPatches: kubeadm_patches was a dict
// (enabled/source_dir/dest_dir) up to v2.26; v2.27 reads a list of
// {target, type, patch}.
func TestVariableShapeKubeadmPatches(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteTree(t, dir, map[string]string{
		"hosts.ini": strings.Replace(groupsINI, "%s", "node1", 1),
		"group_vars/k8s_cluster/k8s-cluster.yml": "kubeadm_patches:\n  enabled: true\n  source_dir: \"{{ inventory_dir }}/patches\"\n  dest_dir: /etc/kubernetes/patches\n" +
			"upstream_dns_servers: 8.8.8.8\n",
	})
	r := lintRelease(t, "v2.31.0", dir)
	f := one(t, r, "variable-shape", "kubeadm_patches")
	assert.Equal(t, SeverityError, f.Severity)
	assert.Equal(t, filepath.Join("group_vars", "k8s_cluster", "k8s-cluster.yml")+":2:3", f.Where)
	assert.Contains(t, f.Message, "kubeadm_patches is a dict (enabled, source_dir, dest_dir); kubespray v2.31.0 reads a list of {patch, target, type} (roles/kubernetes/kubeadm_common/tasks/main.yml:25)")
	assert.Contains(t, f.Why, "as a dict with dest_dir, enabled, source_dir up to v2.26.1")
	assert.Contains(t, f.Why, "v2.27.1 changed it")
	s := one(t, r, "variable-shape", "upstream_dns_servers")
	assert.Contains(t, s.Message, "upstream_dns_servers is a str; kubespray v2.31.0 reads a list")

	// the old form is right for the old release, and the new form for the new one
	none(t, lintRelease(t, "v2.26.1", dir), "variable-shape", "kubeadm_patches")
	ok := t.TempDir()
	testutil.WriteTree(t, ok, map[string]string{
		"hosts.ini": strings.Replace(groupsINI, "%s", "node1", 1),
		"group_vars/k8s_cluster/k8s-cluster.yml": "kubeadm_patches:\n  - target: kube-apiserver\n    type: strategic\n    patch:\n      metadata:\n        labels: {a: b}\n" +
			"upstream_dns_servers: [8.8.8.8]\n",
	})
	none(t, lintRelease(t, "v2.31.0", ok), "variable-shape", "")
	bad := t.TempDir()
	testutil.WriteTree(t, bad, map[string]string{
		"hosts.ini":                              strings.Replace(groupsINI, "%s", "node1", 1),
		"group_vars/k8s_cluster/k8s-cluster.yml": "kubeadm_patches:\n  - target: kube-apiserver\n    patchfile: x.yaml\n",
	})
	// A field the catalogue does not list is not reported: the shapes come
	// from defaults and tasks, and templates read more fields (a real
	// inventory's crio_registries entries have insecure, blocked, mirrors,
	// which registries.conf.j2 reads).
	none(t, lintRelease(t, "v2.31.0", bad), "variable-shape", "kubeadm_patches")
}
