//go:build shared

package e2e

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/parser"
)

// The defaults cluster's inventory, written from kubespray v2.31.0's own
// sample in ../shared, without the node machines: what differs from the
// sample is exactly the settings, each a kubespray variable with its
// reason, kubespray's defaults are still there, and the lint finds no
// error in it.

func sharedKubespray(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "kubespray-full", "v2.31.0")
	if _, err := os.Stat(filepath.Join(dir, "inventory", "sample", "group_vars")); err != nil {
		t.Fatalf("kubespray v2.31.0's sample: %v (shared tests read ../shared)", err)
	}
	return dir
}

// harnessHosts is hosts.ini as test/nodes/nodes.sh writes it.
const harnessHosts = `# Written by test/nodes/nodes.sh: the node machines and how to reach them.
[all]
node1 ansible_host=192.0.2.11 ip=192.0.2.11 access_ip=192.0.2.11
node2 ansible_host=192.0.2.12 ip=192.0.2.12 access_ip=192.0.2.12
node3 ansible_host=192.0.2.13 ip=192.0.2.13 access_ip=192.0.2.13

[all:vars]
ansible_user=ansible
ansible_become=true
ansible_python_interpreter=/usr/bin/python3
ansible_ssh_private_key_file=/nodes/ssh/id_ed25519
ansible_ssh_common_args='-F none -o UserKnownHostsFile=/nodes/run/known_hosts -o StrictHostKeyChecking=yes -o ControlPath=/nodes/run/cp/%C'
`

// artefactsOut is what `E2E_CNI=calico artefacts.sh cluster` prints, in
// its format (the sums are made up).
const artefactsOut = `# kubespray v2.31.0 inventory variables for the artefacts under /cache/files
# (files_repo) and /cache/build (images); made by test/e2e/artefacts.sh cluster v2.31.0.
# The release's defaults for the rest: kube_version 1.35.4, etcd 3.6.10, containerd 2.2.3,
# calico 3.31.5 (from its source tree; its crds.yaml is the one calico_crds_checksums names),
# Not the release's default 1.35.0: sigs.k8s.io/cri-tools v1.35.0 is not on the Go module proxy.
crictl_version: "1.34.0"
# Not the release's default 0.8.1: sigs.k8s.io/metrics-server v0.8.1 is not on the Go module proxy.
metrics_server_version: "0.8.0"
# Not the release's default 0.0.32: only v0.0.30 of github.com/rancher/local-path-provisioner is on the Go module proxy.
local_path_provisioner_version: "0.0.30"
kubeadm_binary_checksum: "sha256:1111111111111111111111111111111111111111111111111111111111111111"
kubelet_binary_checksum: "sha256:2222222222222222222222222222222222222222222222222222222222222222"
kubectl_binary_checksum: "sha256:3333333333333333333333333333333333333333333333333333333333333333"
etcd_binary_checksum: "sha256:4444444444444444444444444444444444444444444444444444444444444444"
containerd_archive_checksum: "sha256:5555555555555555555555555555555555555555555555555555555555555555"
runc_binary_checksum: "sha256:6666666666666666666666666666666666666666666666666666666666666666"
cni_binary_checksum: "sha256:7777777777777777777777777777777777777777777777777777777777777777"
crictl_binary_checksum: "sha256:8888888888888888888888888888888888888888888888888888888888888888"
nerdctl_archive_checksum: "sha256:9999999999999999999999999999999999999999999999999999999999999999"
helm_archive_checksum: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
calicoctl_binary_checksum: "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
`

func testLab(t *testing.T) lab {
	t.Helper()
	built, err := artefactSettings(artefactsOut)
	require.NoError(t, err)
	return lab{FilesRepo: "http://192.0.2.1:8080", Registry: "192.0.2.1:5000", Resolver: "192.0.2.1", Nofile: 20000, Built: built}
}

// writeBoth writes the e2e inventory and the sample's under dir.
func writeBoth(t *testing.T, ksDir, dir string, settings []setting) (inv, sample string) {
	t.Helper()
	inv, err := writeSampleInventory(ksDir, filepath.Join(dir, "e2e"), []byte(harnessHosts), clusterGroups, settings)
	require.NoError(t, err)
	sample, err = writeSampleInventory(ksDir, filepath.Join(dir, "sample"), []byte(harnessHosts), clusterGroups, nil)
	require.NoError(t, err)
	return inv, sample
}

func TestDefaultsInventory(t *testing.T) {
	ksDir := sharedKubespray(t)
	cat, err := kubespray.Bundled("v2.31.0")
	require.NoError(t, err)
	settings := defaultsSettings(testLab(t))
	inv, sample := writeBoth(t, ksDir, t.TempDir(), settings)

	hosts := []string{"node1", "node2", "node3"}
	diffs, err := sampleDiff(sample, inv, hosts, settings, cat)
	require.NoError(t, err)
	assert.Empty(t, checkDiff(diffs, settings, cat), "the inventory differs from the sample in the settings alone")
	var names []string
	for _, d := range diffs {
		names = append(names, d.Name)
		assert.NotEmpty(t, d.Why, d.Name)
	}
	var want []string
	for _, s := range settings {
		want = append(want, s.Name)
	}
	assert.Equal(t, want, names, "one difference per setting, in the settings' order")

	// A variable the sample sets is edited where it sets it: the sample's
	// ipvs, and the add-ons off in addons.yml.
	k8s, err := os.ReadFile(filepath.Join(filepath.Dir(inv), "group_vars", "k8s_cluster", "k8s-cluster.yml"))
	require.NoError(t, err)
	assert.Contains(t, string(k8s), "# the sample: kube_proxy_mode: ipvs\nkube_proxy_mode: iptables\n")
	assert.Contains(t, string(k8s), "# test/e2e: this machine: its kernel has no IPVS")
	addons, err := os.ReadFile(filepath.Join(filepath.Dir(inv), "group_vars", "k8s_cluster", "addons.yml"))
	require.NoError(t, err)
	assert.Contains(t, string(addons), "\nhelm_enabled: true\n")
	e2e, err := os.ReadFile(filepath.Join(filepath.Dir(inv), "group_vars", "all", "e2e.yml"))
	require.NoError(t, err)
	assert.NotContains(t, string(e2e), "kube_proxy_mode", "set where the sample sets it, not again")
	assert.Contains(t, string(e2e), "# offline: the sha256 of the file artefacts.sh built into files_repo\ncalicoctl_binary_checksum:")

	// kubespray's defaults, as the sample and the roles give them, and what
	// the settings change, as a host gets them.
	loaded, err := parser.Load(inv)
	require.NoError(t, err)
	vars, err := hostVars(loaded, "node2")
	require.NoError(t, err)
	for name, v := range map[string]string{
		"kube_network_plugin": `"calico"`, "enable_nodelocaldns": `true`, "nodelocaldns_ip": `"169.254.25.10"`,
		"kube_pods_subnet": `"10.233.64.0/18"`, "dns_mode": `"coredns"`, "etcd_deployment_type": `"host"`,
		"kube_proxy_mode": `"iptables"`, "helm_enabled": `true`, "metrics_server_enabled": `true`,
		"local_path_provisioner_enabled": `true`, "calicoctl_binary_checksum": `"sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"`,
	} {
		assert.Equal(t, v, string(vars[name]), name)
	}
	for _, name := range []string{"enable_dns_autoscaler", "loadbalancer_apiserver_localhost", "calico_network_backend", "calico_vxlan_mode"} {
		assert.Nil(t, vars[name], "%s is left to kubespray's role defaults", name)
	}

	// The lint, with v2.31.0's catalogue, finds no error.
	rep := lint.Run(lint.Input{Inventory: loaded, Catalogue: cat})
	for _, f := range rep.Findings {
		t.Logf("lint: %s %s %s: %s", f.Severity, f.Rule, f.Variable, f.Message)
	}
	assert.Zero(t, rep.Errors, "lint errors in the defaults inventory")
}

// The list of differences catches a setting that changes nothing, one the
// settings do not explain, and a name kubespray does not define.
func TestDefaultsDiffCatches(t *testing.T) {
	ksDir := sharedKubespray(t)
	cat, err := kubespray.Bundled("v2.31.0")
	require.NoError(t, err)
	settings := []setting{
		{"kube_proxy_mode", "iptables", "no IPVS"},
		{"kube_network_plugin", "calico", "the sample's own"},
		{"kube_proxy_mod", "iptables", "a typo"},
	}
	inv, sample := writeBoth(t, ksDir, t.TempDir(), append(settings, setting{"upstream_dns_servers", []string{"192.0.2.1"}, "unlisted"}))
	diffs, err := sampleDiff(sample, inv, []string{"node1"}, settings, cat)
	require.NoError(t, err)
	bad := checkDiff(diffs, settings, cat)
	assert.Len(t, bad, 3, strings.Join(bad, "\n"))
	assert.True(t, slices.ContainsFunc(bad, func(s string) bool {
		return strings.HasPrefix(s, "kube_network_plugin is set to what the sample already gives it")
	}), bad)
	assert.True(t, slices.ContainsFunc(bad, func(s string) bool {
		return strings.HasPrefix(s, "kube_proxy_mod is not a variable of kubespray v2.31.0")
	}), bad)
	assert.True(t, slices.ContainsFunc(bad, func(s string) bool {
		return strings.HasPrefix(s, `upstream_dns_servers differs from the sample (unset, here ["192.0.2.1"]) and no setting says why`)
	}), bad)
	for _, d := range diffs {
		if d.Name == "upstream_dns_servers" {
			assert.Equal(t, "[] (roles/kubespray_defaults/defaults/main/main.yml)", d.Default)
		}
	}
}

// A value the sample writes over several lines is not edited in place.
func TestDefaultsEditRefusesBlockValues(t *testing.T) {
	ksDir := sharedKubespray(t)
	_, err := writeSampleInventory(ksDir, t.TempDir(), []byte(harnessHosts), clusterGroups,
		[]setting{{"kube_proxy_nodeport_addresses", []string{"192.0.2.0/24"}, "a test"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kube_proxy_nodeport_addresses is written over several lines")
}

func TestArtefactSettings(t *testing.T) {
	s, err := artefactSettings(artefactsOut)
	require.NoError(t, err)
	byName := map[string]setting{}
	for _, x := range s {
		byName[x.Name] = x
	}
	assert.Equal(t, "0.8.0", byName["metrics_server_version"].Value)
	assert.Equal(t, "offline: what artefacts.sh builds, not the release's default 0.8.1: sigs.k8s.io/metrics-server v0.8.1 is not on the Go module proxy.",
		byName["metrics_server_version"].Why)
	assert.Contains(t, byName["calicoctl_binary_checksum"].Why, "sha256")

	_, err = artefactSettings("kube_version: \"1.35.4\"\n")
	assert.ErrorContains(t, err, "printed kube_version without saying why")
	_, err = artefactSettings("- not a map\n")
	assert.ErrorContains(t, err, "no YAML map")
	_, err = artefactSettings("a: [\n")
	assert.ErrorContains(t, err, "no YAML")
}
