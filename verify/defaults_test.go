package verify_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/node"
)

// The defaults the options carry in code are kubespray v2.31.0's own:
// filling the options from v2.31.0's catalogue first changes nothing.
func TestBuiltinDefaultsAreV2310sCatalogue(t *testing.T) {
	cat, err := kubespray.Bundled(verify.BuiltinDefaultsRelease)
	require.NoError(t, err)

	builtin := node.NewOptions()
	builtin.Defaults()
	fromCat := node.NewOptions()
	filled := verify.ReleaseDefaults(&fromCat, cat)
	fromCat.Defaults()
	assert.Equal(t, builtin, fromCat)
	assert.Subset(t, filled, []string{"nodelocaldns_ip", "kube_service_addresses", "kube_pods_subnet", "kube_proxy_mode",
		"kube_network_plugin", "calico_vxlan_mode", "flannel_vxlan_vni", "cilium_identity_allocation_mode", "dns_mode", "resolvconf_mode"})

	cb := cluster.Options{KubeControlPlane: []string{"cp1"}, KubeNode: []string{"w1"}, Etcd: []string{"cp1"}}
	cc := cb
	filled = verify.ReleaseDefaults(&cc, cat)
	cb.Defaults()
	cc.Defaults()
	assert.Equal(t, cb, cc)
	assert.Subset(t, filled, []string{"calico_pool_name", "dns_nodes_per_replica", "dns_cores_per_replica", "enable_nodelocaldns",
		"local_path_provisioner_namespace", "etcd_deployment_type"})
}

// A cluster built with an older release is judged by that release's
// defaults: kubespray v2.27.1 defaulted cilium_identity_allocation_mode to
// kvstore (etcd certificates linked for cilium) and pinned kube_version
// v1.31.9, where v2.28.1 and later default to crd and derive kube_version.
func TestDefaultsOfTheReleaseTheClusterWasBuiltWith(t *testing.T) {
	o := node.NewOptions()
	o.KubesprayVersion = "v2.27"
	o.Defaults()
	assert.Equal(t, "kvstore", o.CiliumIdentityAllocationMode)
	assert.Equal(t, "v1.31.9", o.KubeVersion)
	assert.Equal(t, "kubespray v2.27.1's defaults (kubespray_version v2.27)", o.DefaultsFrom)

	// inferred from kube_version: v2.27.1 is the newest release with
	// checksums for 1.29.10
	o = node.NewOptions()
	o.KubeVersion = "v1.29.10"
	o.Defaults()
	assert.Equal(t, "kvstore", o.CiliumIdentityAllocationMode)
	assert.Equal(t, "kubespray v2.27.1's defaults (the newest bundled kubespray release with checksums for kube_version v1.29.10)", o.DefaultsFrom)

	// A release whose defaults are v2.31.0's for every option is not said.
	for _, v := range []string{"v2.28.1", "v2.30", "v2.31.0", ""} {
		o = node.NewOptions()
		o.KubesprayVersion = v
		o.Defaults()
		assert.Equal(t, "crd", o.CiliumIdentityAllocationMode, v)
		assert.Empty(t, o.KubeVersion, v)
		assert.Empty(t, o.DefaultsFrom, v)
	}

	// What the inventory sets is never replaced.
	o = node.NewOptions()
	o.KubesprayVersion = "v2.27.1"
	o.CiliumIdentityAllocationMode = "crd"
	o.Defaults()
	assert.Equal(t, "crd", o.CiliumIdentityAllocationMode)

	// A version as written first: v2.27.1 writes the v, v2.28.1 and
	// v2.29.1 do not.
	assert.Equal(t, "v2.27.1", kubespray.ReleaseForKube("v1.31.9"))
	assert.Equal(t, "v2.29.1", kubespray.ReleaseForKube("1.31.9"))
	assert.Empty(t, kubespray.ReleaseForKube("1.99.0"))

	assert.ErrorContains(t, verify.CheckDefaultsRelease("v2.19.0"), `"v2.19.0" names no bundled kubespray release`)
	assert.NoError(t, verify.CheckDefaultsRelease("v2.30"))
}
