//go:build shared

package lint

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/testutil"
)

// TestUpgradeGolden lints kubespray v2.26.1's sample inventory (node1-node3
// enabled) for an upgrade to v2.31.0. Checked by hand against the two
// releases' files: the 4 skipped minors; kube_version v1.30.4
// (k8s-cluster.yml:20) below v2.31.0's kube_version_min_required 1.33.0
// and written with the v v2.31.0 dropped; the sample's own settings
// v2.31.0 no longer defines (cephfs/rbd provisioner, ingress_nginx, krew,
// ...); enable_dual_stack_networks (k8s-cluster.yml:101), still mapped to
// ipv6_stack by v2.31.0 and warned about; calico defaults that change
// (calico_vxlan_mode_ipv6 Never → Always, calico_node_cpu_limit 300m → 0);
// ansible-core 2.16.4–2.17 → 2.18.0–2.19; kubeadm_patches
// (k8s-cluster.yml:371), the sample's enabled/source_dir/dest_dir dict,
// which v2.27 made a list of {target, type, patch}.
func TestUpgradeGolden(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "sample")
	testutil.CopyTree(t, testutil.Shared(t, "kubespray", "v2.26.1", "inventory", "sample"), inv)
	testutil.EnableSampleNodes(t, filepath.Join(inv, "inventory.ini"), nil)
	r := lintUpgrade(t, "v2.26.1", "v2.31.0", inv)

	p := one(t, r, "upgrade-path", "")
	assert.Contains(t, p.Message, "skips 4 minor release(s)")
	v := one(t, r, "version", "kube_version")
	assert.Equal(t, "group_vars/k8s_cluster/k8s-cluster.yml:20:15", v.Where)
	d := one(t, r, "removed-variable", "enable_dual_stack_networks")
	assert.Equal(t, "group_vars/k8s_cluster/k8s-cluster.yml:101:29", d.Where)
	for _, n := range []string{"cephfs_provisioner_enabled", "rbd_provisioner_enabled", "ingress_nginx_enabled", "krew_enabled"} {
		one(t, r, "upgrade-removed", n)
	}
	one(t, r, "upgrade-default-changed", "calico_vxlan_mode_ipv6")
	one(t, r, "upgrade-ansible", "")
	one(t, r, "variable-shape", "kubeadm_patches")

	b, err := json.MarshalIndent(r, "", "  ")
	require.NoError(t, err)
	testutil.Golden(t, filepath.Join("testdata", "upgrade-v2.26.1-v2.31.0.golden.json"), append(b, '\n'), *update,
		"lint --kubespray-version v2.31.0 --upgrade-from v2.26.1 of kubespray v2.26.1's sample")
}
