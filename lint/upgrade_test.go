package lint

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/testutil"
)

func lintUpgrade(t *testing.T, from, to, dir string) *Report {
	t.Helper()
	inv, err := parser.Load(dir)
	require.NoError(t, err)
	cat, err := kubespray.Bundled(to)
	require.NoError(t, err)
	old, err := kubespray.Bundled(from)
	require.NoError(t, err)
	r := Run(Input{Inventory: inv, Catalogue: cat, UpgradeFrom: old})
	checkSeverities(t, r)
	return r
}

func TestUpgradeMode(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.ini": testutil.ThreeNodeINI,
		// dashboard_enabled: a v2.30.0 setting (roles/kubespray_defaults)
		// that v2.31.0 no longer defines; enable_dual_stack_networks: v2.31.0
		// still maps it (ipv6_stack's default) and warns.
		"group_vars/k8s_cluster/main.yml": "dashboard_enabled: true\nenable_dual_stack_networks: false\n",
	})
	r := lintUpgrade(t, "v2.29.1", "v2.31.0", dir)
	assert.Len(t, find(r, "upgrade-path", ""), 1, "v2.29 → v2.31 skips v2.30:\n%s", dump(r))

	r = lintUpgrade(t, "v2.30", "v2.31", dir)
	none(t, r, "upgrade-path", "")
	f := one(t, r, "upgrade-removed", "dashboard_enabled")
	assert.Equal(t, "group_vars/k8s_cluster/main.yml:1:20", f.Where)
	assert.Equal(t, "dashboard_enabled is not defined by kubespray v2.31.0 any more (v2.30.0 had it at roles/kubespray_defaults/defaults/main/main.yml:441)", f.Message)
	// One finding for the deprecated variable, and it does not claim the
	// setting has no effect.
	none(t, r, "upgrade-removed", "enable_dual_stack_networks")
	d := one(t, r, "removed-variable", "enable_dual_stack_networks")
	assert.Equal(t, SeverityWarning, d.Severity)
	assert.Contains(t, d.Message, "kubespray still reads it, through the default of ipv6_stack (roles/kubespray_defaults/defaults/main/main.yml:273)")
	assert.NotContains(t, d.Why, "no effect")
	// v2.30.0 and v2.31.0 need different ansible-core.
	a := one(t, r, "upgrade-ansible", "")
	assert.Equal(t, "kubespray v2.31.0 needs ansible-core 2.18.0 ≤ x < 2.19.0 (v2.30.0 needed 2.17.3 ≤ x < 2.18.0)", a.Message)

	r = lintUpgrade(t, "v2.27.1", "v2.31.0", dir)
	p := one(t, r, "upgrade-path", "")
	assert.Equal(t, "upgrading from kubespray v2.27.1 to v2.31.0 skips 3 minor release(s)", p.Message)
	assert.Equal(t, "upgrade through v2.28.1 → v2.29.1 → v2.30.0 → v2.31.0, running upgrade-cluster.yml with each", p.Fix)

	r = lintUpgrade(t, "v2.31.0", "v2.29.1", dir)
	assert.Contains(t, one(t, r, "upgrade-path", "").Message, "this is a downgrade")

	// Without UpgradeFrom no upgrade rule speaks.
	r = lintWith(t, "v2.31.0", dir)
	for _, id := range []string{"upgrade-path", "upgrade-removed", "upgrade-default-changed", "upgrade-ansible"} {
		none(t, r, id, "")
	}
}

// A default the inventory relies on that changes: calico_vxlan_mode_ipv6
// is Never in v2.26.1 and Always in v2.31.0 (calico_defaults); cilium's
// changes are not said to a calico cluster.
func TestUpgradeDefaultChanged(t *testing.T) {
	dir := writeTree(t, map[string]string{"hosts.ini": testutil.ThreeNodeINI})
	r := lintUpgrade(t, "v2.26.1", "v2.31.0", dir)
	f := one(t, r, "upgrade-default-changed", "calico_vxlan_mode_ipv6")
	assert.Equal(t, SeverityWarning, f.Severity)
	assert.Equal(t, `the default of calico_vxlan_mode_ipv6 changes from "Never" (v2.26.1) to "Always" (v2.31.0), and this inventory does not set it`, f.Message)
	none(t, r, "upgrade-default-changed", "cilium_identity_allocation_mode")

	dir = writeTree(t, map[string]string{"hosts.ini": testutil.ThreeNodeINI, "group_vars/all/all.yml": "calico_vxlan_mode_ipv6: Never\n"})
	r = lintUpgrade(t, "v2.26.1", "v2.31.0", dir)
	none(t, r, "upgrade-default-changed", "calico_vxlan_mode_ipv6")
}

// The default kube_version kubespray computes from its checksums (the
// newest they list) moves with the release: said for an inventory that
// leaves it to kubespray, with how many Kubernetes minors it moves.
func TestUpgradeKubeVersionDefault(t *testing.T) {
	dir := writeTree(t, map[string]string{"hosts.ini": testutil.ThreeNodeINI})
	f := one(t, lintUpgrade(t, "v2.28.1", "v2.29.1", dir), "upgrade-default-changed", "kube_version")
	assert.Equal(t, SeverityWarning, f.Severity)
	assert.Equal(t, `the default kube_version changes from "1.32.8" (v2.28.1) to "1.33.7" (v2.29.1), and this inventory does not set it: one minor, Kubernetes 1.32 to 1.33`, f.Message)
	assert.Contains(t, f.Why, "roles/kubespray_defaults/defaults/main/main.yml")
	assert.Contains(t, f.Fix, `set kube_version: "1.32.8" (kubespray v2.29.1 has it)`)
	assert.NotEmpty(t, f.Where, "on a file")

	f = one(t, lintUpgrade(t, "v2.27.1", "v2.29.1", dir), "upgrade-default-changed", "kube_version")
	assert.Contains(t, f.Message, `changes from "v1.31.9" (v2.27.1) to "1.33.7" (v2.29.1)`)
	assert.Contains(t, f.Message, ": 2 minors, Kubernetes 1.31 to 1.33, which kubeadm cannot skip")

	// component versions computed the same way are in the info list
	var info *Finding
	for _, g := range find(lintUpgrade(t, "v2.28.1", "v2.29.1", dir), "upgrade-default-changed", "") {
		if g.Severity == SeverityInfo {
			info = &g
		}
	}
	require.NotNil(t, info)
	assert.Contains(t, info.Message, `containerd_version "2.0.6" → "2.1.5"`)
	assert.NotContains(t, info.Message, "kube_version")

	// An inventory that pins kube_version hears nothing of the default.
	dir = writeTree(t, map[string]string{"hosts.ini": testutil.ThreeNodeINI, "group_vars/all/all.yml": "kube_version: 1.32.8\n"})
	none(t, lintUpgrade(t, "v2.28.1", "v2.29.1", dir), "upgrade-default-changed", "kube_version")
}
