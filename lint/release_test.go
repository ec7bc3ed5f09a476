package lint

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/testutil"
)

// lintDefault lints a tree the way the CLI does for an inventory outside
// any kubespray checkout, without --kubespray-version.
func lintDefault(t *testing.T, files map[string]string) *Report {
	t.Helper()
	dir := writeTree(t, files)
	inv, err := parser.Load(dir)
	require.NoError(t, err)
	cat, err := kubespray.ForInventory([]string{dir})
	require.NoError(t, err)
	require.True(t, cat.Default)
	r := Run(Input{Inventory: inv, Catalogue: cat})
	checkSeverities(t, r)
	return r
}

// The release an inventory was written for: the newest bundled release
// whose checksums have its kube_version; without one, the variables only
// some releases define; the default when nothing tells, or when no bundled
// release has the kube_version (said in the why).
func TestInferRelease(t *testing.T) {
	inv := func(vars string) map[string]string {
		return map[string]string{"hosts.ini": testutil.ThreeNodeINI, "group_vars/k8s_cluster/k8s-cluster.yml": vars}
	}
	r := lintDefault(t, inv("kube_version: v1.28.6\n"))
	assert.Contains(t, r.Catalogue, "bundled kubespray v2.26.1 ")
	assert.Equal(t, "inferred from what the inventory pins, as it lives in no kubespray checkout and no release was given: kube_version v1.28.6 (group_vars/k8s_cluster/k8s-cluster.yml:1:15) fits kubespray v2.24.x–v2.26.x; v2.26.1 is the newest bundled release that fits", r.CatalogueWhy)
	none(t, r, "version", "kube_version")
	assert.Equal(t, "2.16", r.AnsibleCore, "judged under the inferred release's ansible-core")

	// v2.28's default becomes an inferred v2.28.x–v2.30.x: the newest.
	r = lintDefault(t, inv("kube_version: 1.32.8\n"))
	assert.Contains(t, r.Catalogue, "bundled kubespray v2.30.0 ")
	none(t, r, "version", "kube_version")

	// Written with the v: the releases that write it so (v2.27.1 and
	// before), not the newer ones that would call the v a mistake.
	r = lintDefault(t, inv("kube_version: v1.31.1\n"))
	assert.Contains(t, r.Catalogue, "bundled kubespray v2.27.1 ")
	none(t, r, "version", "kube_version")

	// A patch no release has: its minor decides, and the version rule says the patch.
	r = lintDefault(t, inv("kube_version: 1.33.99\n"))
	assert.Contains(t, r.CatalogueWhy, "kube_version 1.33.99 (group_vars/k8s_cluster/k8s-cluster.yml:1:15) has no checksums in any bundled release; its minor 1.33 fits kubespray v2.29.x–v2.31.x")
	assert.Contains(t, r.Catalogue, "bundled kubespray v2.31.0 ")
	one(t, r, "version", "kube_version")

	// Nothing bundled fits: the default, saying so.
	r = lintDefault(t, inv("kube_version: v1.18.9\n"))
	assert.Contains(t, r.Catalogue, "bundled kubespray master ")
	assert.Equal(t, "the default, as the inventory lives in no kubespray checkout; kube_version v1.18.9 (group_vars/k8s_cluster/k8s-cluster.yml:1:15) fits no bundled kubespray release (they support Kubernetes 1.26 to 1.36): the release it was written for is not bundled", r.CatalogueWhy)
	assert.Contains(t, one(t, r, "version", "kube_version").Fix, "(no bundled kubespray release has kube_version v1.18.9)")

	// A Kubernetes minor only master has checksums for (1.36) is the
	// release master's galaxy.yml names (v2.32), judged under the
	// ansible-core its playbooks/ansible_version.yml accepts, and the
	// report says that v2.32 itself was not read.
	r = lintDefault(t, inv("kube_version: 1.36.2\n"))
	assert.Contains(t, r.Catalogue, "bundled kubespray master ")
	assert.Equal(t, "inferred from what the inventory pins, as it lives in no kubespray checkout and no release was given: kube_version 1.36.2 (group_vars/k8s_cluster/k8s-cluster.yml:1:15) fits kubespray master; master is the newest bundled release that fits; its galaxy.yml says 2.32.0: it stands in for kubespray v2.32.x", r.CatalogueWhy)
	assert.Contains(t, r.CatalogueNote, "kubespray v2.32.x itself was not read: this is kubespray's master of 2026-08-21 (commit 46dbdd39")
	assert.Equal(t, "2.18", r.AnsibleCore)
	assert.Contains(t, r.AnsibleCoreWhy, "kubespray master (standing in for v2.32.x) pins (playbooks/ansible_version.yml:8 accepts 2.18.0 ≤ x < 2.19.0)")
	none(t, r, "version", "kube_version")
	r = lintDefault(t, inv("kube_version: 1.36.99\n"))
	assert.Contains(t, r.CatalogueWhy, "its minor 1.36 fits kubespray master; master is the newest bundled release that fits; its galaxy.yml says 2.32.0: it stands in for kubespray v2.32.x")
	// 1.34 is v2.30's and v2.31's too: a release, no snapshot, stands in.
	r = lintDefault(t, inv("kube_version: 1.34.1\n"))
	assert.Contains(t, r.Catalogue, "bundled kubespray v2.31.0 ")
	assert.Empty(t, r.CatalogueNote)

	// Two hosts pinning two versions: the releases that have both.
	r = lintDefault(t, map[string]string{"hosts.ini": testutil.ThreeNodeINI,
		"group_vars/k8s_cluster/k8s-cluster.yml": "kube_version: v1.29.9\n", "host_vars/node3.yml": "kube_version: v1.30.6\n"})
	assert.Contains(t, r.Catalogue, "bundled kubespray v2.27.1 ")

	// No kube_version: a variable only older releases define.
	r = lintDefault(t, inv("kubelet_static_pod_path: /etc/kubernetes/manifests\n"))
	assert.Contains(t, r.Catalogue, "bundled kubespray v2.30.0 ")
	assert.Contains(t, r.CatalogueWhy, "of 1 variable(s) it sets that only some releases define (kubelet_static_pod_path), kubespray v2.30.0 defines 1")

	// Nothing tells: the default, as before.
	r = lintDefault(t, inv("kube_network_plugin: calico\n"))
	assert.Contains(t, r.Catalogue, "bundled kubespray master ")
	assert.Equal(t, "the default, as the inventory lives in no kubespray checkout", r.CatalogueWhy)
	assert.Equal(t, "2.19", r.AnsibleCore)

	// A release that was chosen decides: no inference.
	dir := writeTree(t, inv("kube_version: v1.28.6\n"))
	r = lintWith(t, "v2.31.0", dir)
	assert.Contains(t, r.Catalogue, "bundled kubespray v2.31.0 ")
	assert.Contains(t, one(t, r, "version", "kube_version").Fix, "(kube_version v1.28.6: kubespray v2.24.x–v2.26.x)")
}

// The release index embedded for the inference is the one the bundled
// catalogues make (go generate ./kubespray/... rebuilds both).
func TestReleaseIndexMatchesCatalogues(t *testing.T) {
	x, err := kubespray.Index()
	require.NoError(t, err)
	cats := map[string]*kubespray.Catalogue{}
	for _, v := range kubespray.Versions() {
		c, err := kubespray.Bundled(v)
		require.NoError(t, err)
		cats[v] = c
	}
	assert.Equal(t, kubespray.BuildIndex(cats), x, "kubespray/releases_index.json.gz is stale: run make generate")
}
