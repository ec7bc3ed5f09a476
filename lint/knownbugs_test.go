package lint

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/test/testutil"
)

// knownBugCase shows one entry: the inventory's group_vars/all.yml (and
// INI host lines) meet it on an affected release; the fixed release, and
// the same release with the changed setting, do not.
type knownBugCase struct {
	vars      string // group_vars/all/all.yml
	hostVars  string // appended to the three-node INI's [all] section
	affected  []string
	fixed     []string // releases outside the range, same inventory
	variable  string   // the finding's variable
	hosts     []string // the hosts reported
	unmet     string   // a group_vars/all/all.yml the entry does not meet
	unmetRels []string // releases the unmet inventory is linted with
}

var knownBugCases = map[string]knownBugCase{
	"kubeadm-upgrade-skip-phases-swapped": {
		vars:     "kube_version: 1.31.4\n",
		affected: []string{"v2.28.1"}, fixed: []string{"v2.27.1", "v2.29.1"},
		variable: "kube_version", hosts: []string{"node1", "node2", "node3"},
		unmet: "kube_version: 1.32.8\n", unmetRels: []string{"v2.28.1"},
	},
	"containerd-registry-auth-ignored": {
		vars:     "containerd_registry_auth:\n  - registry: registry.example.com\n    username: puller\n    password: secret\n",
		affected: []string{"v2.28.1", "v2.31.0", "master"}, fixed: []string{"v2.27.1"},
		variable: "containerd_registry_auth", hosts: []string{"node1", "node2", "node3"},
		unmet:     "containerd_version: 1.7.28\ncontainerd_registry_auth:\n  - registry: registry.example.com\n    username: puller\n    password: secret\n",
		unmetRels: []string{"v2.28.1"},
	},
	"certs-renew-every-run": {
		vars:     "auto_renew_certificates: true\nauto_renew_certificates_systemd_calendar: \"*-*-* 03:00:00\"\n",
		affected: []string{"v2.29.1", "v2.30.0", "v2.31.0"}, fixed: []string{"v2.28.1", "master"},
		variable: "auto_renew_certificates", hosts: []string{"node1", "node2", "node3"},
		unmet: "auto_renew_certificates: true\n", unmetRels: []string{"v2.31.0"},
	},
	"eviction-hard-control-plane-ignored": {
		vars:     "eviction_hard_control_plane:\n  memory.available: 200Mi\n",
		affected: []string{"v2.27.1", "v2.31.0"}, fixed: []string{"v2.26.1"},
		variable: "eviction_hard_control_plane", hosts: []string{"node1", "node2", "node3"},
		unmet: "eviction_hard_control_plane: {}\n", unmetRels: []string{"v2.31.0"},
	},
	"metallb-strict-arp-without-kube-proxy": {
		vars:     "metallb_enabled: true\nkube_proxy_remove: true\n",
		affected: []string{"v2.24.3", "v2.31.0"}, fixed: []string{"master"},
		variable: "metallb_enabled", hosts: []string{"node1", "node2", "node3"},
		unmet: "metallb_enabled: true\nkube_proxy_remove: true\nkube_proxy_strict_arp: true\n", unmetRels: []string{"v2.31.0"},
	},
	"kube-vip-strict-arp-without-kube-proxy": {
		vars:     "kube_vip_enabled: true\nkube_vip_arp_enabled: true\nkube_proxy_remove: true\n",
		affected: []string{"v2.24.3", "v2.31.0"}, fixed: []string{"master"},
		variable: "kube_vip_enabled", hosts: []string{"node1", "node2", "node3"},
		unmet: "kube_vip_enabled: true\nkube_vip_arp_enabled: true\nkube_proxy_remove: true\nkube_proxy_mode: nftables\n", unmetRels: []string{"v2.31.0"},
	},
	"etcd-events-start-errors-inverted": {
		vars:     "etcd_events_cluster_enabled: true\n",
		affected: []string{"v2.24.3", "v2.31.0"}, fixed: []string{"master"},
		variable: "etcd_events_cluster_enabled", hosts: []string{"node1", "node2", "node3"},
		unmet: "etcd_events_cluster_enabled: true\netcd_deployment_type: kubeadm\n", unmetRels: []string{"v2.31.0"},
	},
	"control-plane-ready-wait-without-cni": {
		vars:     "kube_network_plugin: cni\n",
		affected: []string{"v2.30.0", "v2.31.0"}, fixed: []string{"v2.29.1", "master"},
		variable: "kube_network_plugin", hosts: []string{"node1", "node2", "node3"},
		unmet: "kube_network_plugin: calico\n", unmetRels: []string{"v2.31.0"},
	},
	"etcd-ipv6-address-unbracketed": {
		hostVars: "node1 ip=fd00::1\n",
		affected: []string{"v2.24.3", "v2.27.1"}, fixed: []string{"v2.28.1"},
		variable: "ip", hosts: []string{"node1"},
		unmet: "etcd_address: 10.0.0.1\n", unmetRels: []string{"v2.27.1"},
	},
	"apiserver-lb-domain-undefined": {
		vars:     "loadbalancer_apiserver_localhost: false\n",
		affected: []string{"v2.30.0"}, fixed: []string{"v2.29.1", "v2.31.0"},
		variable: "loadbalancer_apiserver_localhost", hosts: []string{"node1", "node2", "node3"},
		unmet: "loadbalancer_apiserver_localhost: false\nloadbalancer_apiserver:\n  address: 10.0.0.10\n  port: 6443\n", unmetRels: []string{"v2.30.0"},
	},
}

// knownBugInventory is the three-node inventory with vars and host lines.
func knownBugInventory(t *testing.T, vars, hostVars string) string {
	t.Helper()
	files := map[string]string{"hosts.ini": testutil.ThreeNodeINI + "[all]\n" + hostVars}
	if vars != "" {
		files["group_vars/all/all.yml"] = vars
	}
	return writeTree(t, files)
}

func knownBugFindings(r *Report, id string) []Finding {
	var out []Finding
	for _, f := range find(r, "known-bug", "") {
		if strings.Contains(f.Message, "("+id+", ") {
			out = append(out, f)
		}
	}
	return out
}

func TestKnownBugsTable(t *testing.T) {
	bugs, err := loadKnownBugs(knownBugsYAML)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(bugs), 10)
	for _, b := range bugs {
		_, ok := knownBugCases[b.ID]
		assert.True(t, ok, "entry %s has no unit case", b.ID)
		assert.True(t, len(b.Evidence.Fixed) > 0 || len(b.Evidence.Lacks) > 0, "entry %s shows no fixed or lacking side", b.ID)
		assert.True(t, b.FixedIn == "" || b.FixedIn == "master" || kubespray.IsRelease(b.FixedIn), "entry %s fixed_in %q", b.ID, b.FixedIn)
		if b.FixedIn != "" {
			// the fixing release lies outside the affected range
			v, ok := parseKver(b.FixedIn)
			if b.FixedIn == "master" {
				cat, err := kubespray.Bundled("master")
				require.NoError(t, err)
				v, ok = parseKver(cat.Galaxy)
			}
			require.True(t, ok)
			assert.False(t, inRange(v, b.affected), "entry %s: its fixing release %s is in its range %q", b.ID, b.FixedIn, b.Affected)
		}
	}
	assert.Len(t, knownBugCases, len(bugs), "a unit case names no entry")
}

func TestKnownBugs(t *testing.T) {
	bugs, err := knownBugs()
	require.NoError(t, err)
	for _, b := range bugs {
		tc := knownBugCases[b.ID]
		t.Run(b.ID, func(t *testing.T) {
			dir := knownBugInventory(t, tc.vars, tc.hostVars)
			for _, rel := range tc.affected {
				fs := knownBugFindings(lintWith(t, rel, dir), b.ID)
				require.Len(t, fs, 1, "%s on %s", b.ID, rel)
				f := fs[0]
				assert.Equal(t, b.Severity, f.Severity)
				assert.Equal(t, tc.variable, f.Variable, rel)
				assert.Equal(t, tc.hosts, f.Hosts, rel)
				assert.NotEmpty(t, f.Where, "the finding names where %s is set", f.Variable)
				assert.Contains(t, f.Why, f.Variable+" = ")
				assert.Contains(t, f.Why, b.URL)
				if b.Issue > 0 {
					assert.Contains(t, f.Message, "kubespray#")
				}
				assert.Equal(t, b.Fix, f.Fix)
			}
			for _, rel := range tc.fixed {
				assert.Empty(t, knownBugFindings(lintWith(t, rel, dir), b.ID), "%s on %s", b.ID, rel)
			}
			unmet := knownBugInventory(t, tc.unmet, "")
			for _, rel := range tc.unmetRels {
				assert.Empty(t, knownBugFindings(lintWith(t, rel, unmet), b.ID), "%s on %s with %q", b.ID, rel, tc.unmet)
			}
		})
	}
}

// A value from the release's default is said as such; a templated value
// decides nothing.
func TestKnownBugDefaultsAndTemplates(t *testing.T) {
	dir := knownBugInventory(t, "containerd_registry_auth:\n  - registry: r.example\n    username: u\n    password: p\n", "")
	f := knownBugFindings(lintWith(t, "v2.28.1", dir), "containerd-registry-auth-ignored")
	require.Len(t, f, 1)
	assert.Contains(t, f[0].Why, "containerd_version = 2.0.6 (the release's default, ")
	assert.Contains(t, f[0].Why, `container_manager = "containerd" (the release's default, roles/`)
	assert.Equal(t, "group_vars/all/all.yml:2:3", f[0].Where)

	dir = knownBugInventory(t, "auto_renew_certificates: \"{{ renew | default(true) }}\"\nauto_renew_certificates_systemd_calendar: daily\n", "")
	assert.Empty(t, knownBugFindings(lintWith(t, "v2.31.0", dir), "certs-renew-every-run"))
}

func TestKnownBugConditions(t *testing.T) {
	bad := []string{
		"- {id: a, affected: \"<v2.32.0\", severity: warning, symptom: s, fix: f, url: u, evidence: {affected: [{at: x, has: y}]}, when: {var: x}}",
		"- {id: a, affected: \"<v2.32.0\", severity: warning, symptom: s, fix: f, url: u, evidence: {affected: [{at: x, has: y}]}, when: {var: x, equals: 1, set: true}}",
		"- {id: a, affected: \"<v2.32.0\", severity: warning, symptom: s, fix: f, url: u, evidence: {affected: [{at: x, has: y}]}, when: {all: []}}",
		"- {id: a, affected: \"<v2.32.0\", severity: warning, symptom: s, fix: f, url: u, evidence: {affected: [{at: x, has: y}]}, when: {var: x, version: \"~1.2\"}}",
		"- {id: a, affected: \"v2.32.0\", severity: warning, symptom: s, fix: f, url: u, evidence: {affected: [{at: x, has: y}]}, when: {var: x, set: true}}",
		"- {id: a, affected: \"<v2.32.0\", severity: info, symptom: s, fix: f, url: u, evidence: {affected: [{at: x, has: y}]}, when: {var: x, set: true}}",
		"- {id: a, affected: \"<v2.32.0\", severity: warning, symptom: s, fix: f, url: u, evidence: {affected: [{at: x, has: y}]}, when: {var: x, set: true}, extra: 1}",
	}
	for _, y := range bad {
		_, err := loadKnownBugs([]byte(y))
		assert.Error(t, err, y)
	}
	r, err := parseRange(">=v2.28.0 <2.29.0")
	require.NoError(t, err)
	for v, want := range map[string]bool{"2.27.1": false, "v2.28.0": true, "2.28.9": true, "2.29.0": false} {
		k, _ := parseKver(v)
		assert.Equal(t, want, inRange(k, r), v)
	}
}

// A checkout is matched by its galaxy.yml version, the bundled master by
// the version it claims.
func TestCatalogueRelease(t *testing.T) {
	v, what, ok := catalogueRelease(&kubespray.Catalogue{Name: "kubespray checkout at /src", Galaxy: "2.28.1"})
	require.True(t, ok)
	assert.Equal(t, kver{2, 28, 1}, v)
	assert.Contains(t, what, "galaxy.yml 2.28.1")
	_, _, ok = catalogueRelease(&kubespray.Catalogue{Name: "kubespray checkout at /src"})
	assert.False(t, ok)
	cat, err := kubespray.Bundled("master")
	require.NoError(t, err)
	v, _, ok = catalogueRelease(cat)
	require.True(t, ok)
	assert.Equal(t, kver{2, 32, 0}, v)
}
