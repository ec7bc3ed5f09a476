package lint

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/layercheck/layercheck/test/testutil"
)

// Each input-only check of kubespray, on a one-change inventory: it fires
// there and is silent on the same inventory without the change.
func TestInputChecks(t *testing.T) {
	cases := []struct {
		name, rule, variable string
		files                map[string]string
		message              string
	}{
		{"plugin none", "network-plugin-none", "kube_network_plugin",
			map[string]string{"group_vars/all/all.yml": "kube_network_plugin: none\n"}, "kube_network_plugin is none"},
		{"pods subnet too small", "pod-address-space", "kube_network_node_prefix",
			map[string]string{"group_vars/all/all.yml": "kube_network_plugin: flannel\nkube_pods_subnet: 10.233.64.0/23\nkube_network_node_prefix: 24\n"},
			"kube_pods_subnet 10.233.64.0/23 split into /24 per node gives 2 node ranges, but k8s_cluster has 3 hosts"},
		{"ipv6 pods subnet too small", "pod-address-space", "kube_network_node_prefix_ipv6",
			map[string]string{"group_vars/all/all.yml": "kube_network_plugin: cilium\nipv6_stack: true\nkube_pods_subnet_ipv6: fd85:ee78:d8a6:8607::1:0/119\nkube_network_node_prefix_ipv6: 120\n"},
			"kube_pods_subnet_ipv6 fd85:ee78:d8a6:8607::1:0/119 split into /120 per node gives 2 node ranges"},
		{"max pods", "pod-address-space", "kubelet_max_pods",
			map[string]string{"group_vars/all/all.yml": "kube_network_plugin: flannel\nkubelet_max_pods: 300\n"},
			"kubelet_max_pods 300 does not fit a /24 node range (254 pod addresses)"},
		{"bad hostname", "hostname", "",
			map[string]string{"hosts.ini": "[kube_control_plane]\nNode_1\n[etcd:children]\nkube_control_plane\n[kube_node]\nNode_1\n"},
			`host name "Node_1" is not a lower-case RFC 1123 name`},
		{"calico_rr without cluster_id", "calico-settings", "peer_with_calico_rr",
			map[string]string{"hosts.ini": testutil.ThreeNodeINI + "[calico_rr]\nrr1\n[k8s_cluster:children]\nkube_control_plane\nkube_node\ncalico_rr\n",
				"group_vars/all/all.yml": "peer_with_calico_rr: true\n"},
			"peer_with_calico_rr is on but cluster_id is not set"},
		{"calico_rr bad cluster_id", "calico-settings", "cluster_id",
			map[string]string{"group_vars/all/all.yml": "peer_with_calico_rr: true\ncluster_id: 10.0.0\n"},
			"cluster_id is not a valid IPv4 address"},
		{"calico pool name", "calico-settings", "calico_pool_name",
			map[string]string{"group_vars/all/all.yml": "calico_pool_name: \"my pool!\"\n"},
			`calico_pool_name "my pool!" is not 2-63 letters`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"hosts.ini": testutil.ThreeNodeINI}
			for k, v := range tc.files {
				files[k] = v
			}
			r := lintTree(t, writeTree(t, files))
			fs := find(r, tc.rule, tc.variable)
			if assert.Len(t, fs, 1, dump(r)) {
				assert.Contains(t, fs[0].Message, tc.message)
				assert.NotEmpty(t, fs[0].Fix)
			}
		})
	}
	// The clean three-node inventory: none of them.
	r := lintTree(t, writeTree(t, map[string]string{"hosts.ini": testutil.ThreeNodeINI}))
	for _, id := range []string{"network-plugin-none", "pod-address-space", "hostname", "calico-settings"} {
		none(t, r, id, "")
	}
}

// ipip and vxlan both Always break kubespray's two twin asserts of one
// task: one finding, naming both settings.
func TestOneFindingPerMistake(t *testing.T) {
	r := lintTree(t, writeTree(t, map[string]string{
		"hosts.ini":              testutil.ThreeNodeINI,
		"group_vars/all/all.yml": "calico_ipip_mode: Always\ncalico_vxlan_mode: Always\n",
	}))
	fs := find(r, "kubespray-assert", "")
	if assert.Len(t, fs, 1, dump(r)) {
		assert.Contains(t, fs[0].Message, "calico_vxlan_mode in ['Never'] (calico-ipip-excludes-vxlan), and the one that requires calico_ipip_mode in ['Never'] (calico-vxlan-excludes-ipip)")
		assert.Contains(t, fs[0].Why, "calico_ipip_mode = \"Always\", set at calico_ipip_mode (group_vars/all/all.yml:1:19)")
	}
}

// kubespray master stops on cilium with kube_owner other than root, and
// its default is "kube"; v2.31.0 has no such check.
func TestCiliumKubeOwner(t *testing.T) {
	dir := writeTree(t, map[string]string{"hosts.ini": testutil.ThreeNodeINI, "group_vars/k8s_cluster/main.yml": "kube_network_plugin: cilium\n"})
	f := one(t, lintWith(t, "master", dir), "cilium-kube-owner", "kube_network_plugin")
	assert.Equal(t, `kube_network_plugin is cilium but kube_owner is its default "kube", not root`, f.Message)
	assert.Contains(t, f.Why, "roles/kubernetes/preinstall/tasks/0040-verify-settings.yml:73")
	none(t, lintWith(t, "v2.31.0", dir), "cilium-kube-owner", "")
	dir = writeTree(t, map[string]string{"hosts.ini": testutil.ThreeNodeINI, "group_vars/k8s_cluster/main.yml": "kube_network_plugin: cilium\nkube_owner: root\n"})
	none(t, lintWith(t, "master", dir), "cilium-kube-owner", "")
}
