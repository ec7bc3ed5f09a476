package kubespray

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/testutil"
)

func TestVersions(t *testing.T) {
	got := Versions()
	want := []string{"master", "v2.24.3", "v2.25.1", "v2.26.1", "v2.27.1", "v2.28.1", "v2.29.1", "v2.30.0", "v2.31.0"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Versions() = %v", got)
	}
	for _, v := range []string{"master", "v2.31.0"} {
		if _, ok := facts[v]; !ok {
			t.Errorf("bundled version %s has no hand-written task facts", v)
		}
	}
}

func TestBundledSpotChecks(t *testing.T) {
	for _, version := range Versions() {
		t.Run(version, func(t *testing.T) {
			c, err := Bundled(version)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(c.Name, "bundled kubespray "+version+" ") || len(c.Commit) != 40 {
				t.Errorf("Name %q Commit %q", c.Name, c.Commit)
			}
			h := c.Lookup("helm_enabled")
			if h == nil || h.Type != "bool" || h.Default != false || !scanIsDefaults(h.File) || h.Line == 0 || h.Inferred {
				t.Errorf("helm_enabled = %+v", h)
			}
			if !h.IsBool() || len(h.Defs) < 2 {
				t.Errorf("helm_enabled defs %+v", h.Defs)
			}
			d := c.Lookup("docker_iptables_enabled")
			if d == nil || d.Type != "str" || !d.StringBool || d.Default != "false" || d.IsBool() {
				t.Errorf("docker_iptables_enabled = %+v", d)
			}
			for _, n := range []string{"local_path_provisioner_is_default_storageclass", "openstack_lbaas_create_monitor"} {
				if v := c.Lookup(n); v == nil || !v.StringBool {
					t.Errorf("%s not a string-boolean: %+v", n, v)
				}
			}
			k := c.Lookup("kube_network_plugin")
			if want, ok := networkPluginChoices[version]; !ok || k == nil || !reflect.DeepEqual(k.Choices, want.values) || k.ChoicesSource != want.source {
				t.Errorf("kube_network_plugin = %+v", k)
			}
			// Before v2.28 nri_enabled was a literal false and the
			// authorization config version did not exist.
			if version == "master" || version >= "v2.28" {
				// An inferred boolean: "{{ container_manager == 'containerd' }}".
				if n := c.Lookup("nri_enabled"); n == nil || !n.IsBool() || !n.Inferred || n.Defs[0].Type != "bool" {
					t.Errorf("nri_enabled = %+v", n)
				}
				// A templated default that is not boolean stays "templated".
				if v := c.Lookup("kube_apiserver_authorization_config_api_version"); v == nil || v.Type != "templated" {
					t.Errorf("kube_apiserver_authorization_config_api_version = %+v", v)
				}
			}
			for _, kb := range c.Facts.KnownBooleans {
				if v := c.Lookup(kb); !v.IsBool() {
					t.Errorf("known boolean %s is not a bool in the catalogue: %+v", kb, v)
				}
			}
			if c.Lookup("no_such_variable") != nil {
				t.Error("Lookup of an unknown name is not nil")
			}
			// kubelet_static_pod_path is a setting up to v2.30 and a removed
			// variable kubespray stops on from v2.31.0.
			_, removed := c.Removed["kubelet_static_pod_path"]
			if wantRemoved := version == "master" || version == "v2.31.0"; removed != wantRemoved {
				t.Errorf("kubelet_static_pod_path removed = %v", removed)
			}
			bools, sbools := 0, 0
			for _, v := range c.Vars {
				if v.IsBool() {
					bools++
					if v.StringBool {
						t.Errorf("%s is both bool and string-bool", v.Name)
					}
				}
				if v.StringBool {
					sbools++
				}
			}
			// The package doc states these counts; keep it true when regenerating.
			documented := map[string][3]int{
				"v2.24.3": {1496, 279, 14}, "v2.25.1": {1575, 297, 14}, "v2.26.1": {1584, 303, 11},
				"v2.27.1": {1615, 305, 11}, "v2.28.1": {1602, 306, 11}, "v2.29.1": {1603, 301, 11},
				"v2.30.0": {1607, 301, 11}, "v2.31.0": {1540, 294, 11}, "master": {1545, 298, 11}}[version]
			if got := [3]int{len(c.Vars), bools, sbools}; got != documented {
				t.Errorf("variables/booleans/string-booleans = %v, doc.go says %v", got, documented)
			}
			if c.Facts.AnsibleMin == "" || c.Facts.AnsibleMax == "" || c.Facts.AnsibleSource == "" {
				t.Errorf("ansible-core window missing: %+v", c.Facts)
			}
		})
	}
	if _, err := Bundled("v1.0.0"); err == nil || !strings.Contains(err.Error(), "master") {
		t.Errorf("unknown version: %v", err)
	}
}

func TestVersionDifferences(t *testing.T) {
	old, err := Bundled("v2.31.0")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := Bundled("")
	if err != nil {
		t.Fatal(err)
	}
	if cur.Version != "master" {
		t.Errorf("default version %s", cur.Version)
	}
	// kubespray master removed eviction_hard_control_plane and stops on it.
	if old.Lookup("eviction_hard_control_plane") == nil || cur.Lookup("eviction_hard_control_plane") != nil {
		t.Error("eviction_hard_control_plane should exist in v2.31.0 only")
	}
	if _, ok := cur.Removed["eviction_hard_control_plane"]; !ok {
		t.Error("master should list eviction_hard_control_plane as removed")
	}
	if _, ok := old.Removed["eviction_hard_control_plane"]; ok {
		t.Error("v2.31.0 does not stop on eviction_hard_control_plane")
	}
}

func TestForInventoryCheckout(t *testing.T) {
	root := t.TempDir()
	testutil.WriteTree(t, root, map[string]string{
		"roles/kubespray_defaults/defaults/main/main.yml": "---\nhelm_enabled: \"false\"\nmy_flag: yes\nkube_network_plugin: calico\nderived: \"{{ my_flag | bool }}\"\n",
		"roles/other/vars/main.yml":                       "helm_enabled: false\n",
		"inventory/mycluster/group_vars/all/all.yml":      "x: 1\n",
		"inventory/mycluster/hosts.yaml":                  "all: {}\n",
		"roles/kubespray_defaults/tasks/main.yml":         "- debug: msg=not vars\n",
	})
	for _, src := range []string{
		filepath.Join(root, "inventory", "mycluster", "hosts.yaml"),
		filepath.Join(root, "inventory", "mycluster"),
	} {
		c, err := ForInventory([]string{src})
		if err != nil {
			t.Fatal(err)
		}
		if c.Name != "kubespray checkout at "+root || c.Root != root || c.Version != "" {
			t.Fatalf("Name %q Root %q", c.Name, c.Root)
		}
		h := c.Lookup("helm_enabled")
		// str in kubespray_defaults, bool in a role's vars: a boolean; the
		// primary definition is kubespray_defaults'.
		if h == nil || h.Type != "bool" || h.StringBool || h.Default != "false" || len(h.Defs) != 2 || h.Defs[1].File != "roles/other/vars/main.yml" {
			t.Errorf("helm_enabled = %+v", h)
		}
		if v := c.Lookup("my_flag"); v == nil || v.Type != "bool" || v.Line != 3 {
			t.Errorf("my_flag = %+v", v)
		}
		if v := c.Lookup("derived"); v == nil || !v.IsBool() || !v.Inferred {
			t.Errorf("derived = %+v", v)
		}
		if v := c.Lookup("kube_network_plugin"); v == nil || len(v.Choices) == 0 {
			t.Errorf("choices not applied to a checkout: %+v", v)
		}
		if c.Lookup("x") != nil {
			t.Error("the user's own group_vars are not kubespray's catalogue")
		}
		if want := "chosen because the inventory " + src + " lives in this checkout"; c.Why != want {
			t.Errorf("Why = %q, want %q", c.Why, want)
		}
	}
}

// Select says why it chose the catalogue: the version asked for (and the
// release a minor resolves to), else the checkout or the bundled default.
func TestSelectSaysWhy(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteTree(t, dir, map[string]string{"hosts.ini": "[all]\nnode1\n"})
	for _, tc := range []struct{ version, option, wantVersion, wantWhy string }{
		{"v2.31", "--kubespray-version", "v2.31.0", "chosen with --kubespray-version v2.31, the newest bundled v2.31.x"},
		{"2.29", "kubespray_version", "v2.29.1", "chosen with kubespray_version 2.29, the newest bundled v2.29.x"},
		{"v2.31.0", "--kubespray-version", "v2.31.0", "chosen with --kubespray-version v2.31.0"},
		{"2.30.0", "--kubespray-version", "v2.30.0", "chosen with --kubespray-version 2.30.0"},
		{"", "--kubespray-version", DefaultVersion, "the default, as the inventory lives in no kubespray checkout"},
		{"v2.29.0", "--kubespray-version", "v2.29.1", "chosen with --kubespray-version v2.29.0, which is not bundled: v2.29.1, the bundled v2.29.x, stands in (patch releases keep the variables; pinned component versions may differ)"},
		{"2.28.0", "kubespray_version", "v2.28.1", "chosen with kubespray_version 2.28.0, which is not bundled: v2.28.1, the bundled v2.28.x, stands in (patch releases keep the variables; pinned component versions may differ)"},
	} {
		c, err := Select(tc.version, tc.option, []string{dir})
		if err != nil {
			t.Fatal(err)
		}
		if c.Version != tc.wantVersion || c.Why != tc.wantWhy {
			t.Errorf("Select(%q): version %q why %q, want %q %q", tc.version, c.Version, c.Why, tc.wantVersion, tc.wantWhy)
		}
	}
	for _, v := range []string{"v9.9", "v2.99.0", "v2.29.0.1", "v2.33.0", "v2.33"} {
		if _, err := Select(v, "--kubespray-version", nil); err == nil || !strings.Contains(err.Error(), v) {
			t.Errorf("an unknown version %s: %v", v, err)
		}
	}
}

func TestForInventoryCheckoutError(t *testing.T) {
	root := t.TempDir()
	testutil.WriteTree(t, root, map[string]string{
		"roles/kubespray_defaults/defaults/main.yml": "a: 1\nb: [unclosed\n",
		"inventory/x/hosts.ini":                      "[all]\n",
	})
	_, err := ForInventory([]string{filepath.Join(root, "inventory", "x", "hosts.ini")})
	if err == nil || !strings.Contains(err.Error(), "roles/kubespray_defaults/defaults/main.yml:") {
		t.Fatalf("error does not name file:line: %v", err)
	}
}

func TestForInventoryFallback(t *testing.T) {
	dir := t.TempDir()
	inv := filepath.Join(dir, "hosts.ini")
	testutil.WriteTree(t, dir, map[string]string{"hosts.ini": "[all]\nnode1\n"})
	for _, sources := range [][]string{{inv}, {dir}, {filepath.Join(dir, "missing.ini")}, nil} {
		c, err := ForInventory(sources)
		if err != nil {
			t.Fatal(err)
		}
		if c.Version != DefaultVersion || !strings.HasPrefix(c.Name, "bundled kubespray master ") || c.Root != "" {
			t.Errorf("%v: got %q", sources, c.Name)
		}
		if !strings.Contains(c.Why, "no kubespray checkout") {
			t.Errorf("%v: why %q", sources, c.Why)
		}
	}
}

func TestEval(t *testing.T) {
	c, err := Bundled("master")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Assert{}
	for _, a := range c.Asserts() {
		if _, dup := byID[a.ID]; dup {
			t.Errorf("duplicate assert id %s", a.ID)
		}
		if a.Source == "" || a.Msg == "" || a.Task == "" || len(a.That) == 0 {
			t.Errorf("incomplete assert %+v", a)
		}
		byID[a.ID] = a
	}
	vals := func(m map[string]any) Lookup {
		return func(n string) (any, bool) { v, ok := m[n]; return v, ok }
	}
	cases := []struct {
		id   string
		vals map[string]any
		want Outcome
	}{
		{"choice:kube_network_plugin", nil, Pass}, // kubespray's default
		{"choice:kube_network_plugin", map[string]any{"kube_network_plugin": "weave"}, Fail},
		{"choice:kube_network_plugin", map[string]any{"kube_network_plugin": "{{ plugin }}"}, Unknown},
		{"choice:kube_network_plugin", map[string]any{"kube_network_plugin": &parser.Value{Kind: parser.KindString, Str: "cilium"}}, Pass},
		{"etcd-docker-needs-docker", map[string]any{"etcd_deployment_type": "docker", "container_manager": "containerd"}, Fail},
		{"etcd-docker-needs-docker", map[string]any{"etcd_deployment_type": "docker", "container_manager": "docker"}, Pass},
		{"etcd-docker-needs-docker", map[string]any{"etcd_deployment_type": "host"}, Pass},
		{"calico-ipip-excludes-vxlan", map[string]any{"calico_ipip_mode": "Always", "calico_vxlan_mode": "Always"}, Fail},
		{"calico-ipip-excludes-vxlan", map[string]any{"calico_ipip_mode": "Always", "calico_vxlan_mode": "Never"}, Pass},
		{"calico-ipip-excludes-vxlan", map[string]any{"calico_ipip_mode": "Never"}, NotApplicable},
		{"calico-ipip-excludes-vxlan", map[string]any{"kube_network_plugin": "cilium", "calico_ipip_mode": "Always", "calico_vxlan_mode": "Always"}, NotApplicable},
		{"calico-ipip-excludes-vxlan", map[string]any{"ignore_assert_errors": true, "calico_ipip_mode": "Always", "calico_vxlan_mode": "Always"}, NotApplicable},
		{"calico-vxlan-excludes-ipip", map[string]any{"calico_ipip_mode": "CrossSubnet", "calico_vxlan_mode": "CrossSubnet"}, Fail},
		{"choice:calico_ipip_mode", map[string]any{"calico_ipip_mode": "always"}, Fail},
		{"known-boolean:helm_enabled", map[string]any{"helm_enabled": "false"}, Fail},
		{"known-boolean:helm_enabled", map[string]any{"helm_enabled": &parser.Value{Kind: parser.KindBool}}, Pass},
		// An unknown When does not matter when the assert holds anyway...
		{"known-boolean:helm_enabled", map[string]any{"helm_enabled": true, "ignore_assert_errors": "yes"}, Pass},
		// ...but makes a failing one unknown.
		{"known-boolean:helm_enabled", map[string]any{"helm_enabled": "true", "ignore_assert_errors": "yes"}, Unknown},
		{"download-localhost-needs-run-once", map[string]any{"download_localhost": true}, Fail},
		{"download-localhost-needs-run-once", map[string]any{"download_localhost": true, "download_run_once": true}, Pass},
		{"download-localhost-needs-run-once", nil, NotApplicable},
		{"choice:cloud_provider", map[string]any{"cloud_provider": "aws"}, Fail},
		{"choice:cloud_provider", nil, Pass},
		{"choice:external_cloud_provider", map[string]any{"cloud_provider": "external", "external_cloud_provider": "aws"}, Fail},
	}
	// A templated kubespray default is unknown, never compared as text.
	tmpl := &Catalogue{Vars: map[string]*Var{
		"kube_network_plugin": {Name: "kube_network_plugin", Type: "templated", Default: "{{ plugin }}"},
		"download_localhost":  {Name: "download_localhost", Type: "bool", Inferred: true, Default: "{{ a == b }}"},
	}, Facts: c.Facts}
	if got := tmpl.Eval(byID["choice:kube_network_plugin"], nil); got != Unknown {
		t.Errorf("templated default: %v", got)
	}
	if got := tmpl.Eval(byID["download-localhost-needs-run-once"], nil); got != Unknown {
		t.Errorf("inferred default: %v", got)
	}
	for _, tc := range cases {
		a, ok := byID[tc.id]
		if !ok {
			t.Errorf("no assert %s", tc.id)
			continue
		}
		if got := c.Eval(a, vals(tc.vals)); got != tc.want {
			t.Errorf("%s with %v: %v, want %v", tc.id, tc.vals, got, tc.want)
		}
	}
	for _, id := range []string{"choice:dns_mode", "choice:kube_proxy_mode", "choice:cert_management", "choice:resolvconf_mode",
		"choice:etcd_deployment_type", "choice:container_manager", "choice:calico_network_backend", "choice:calico_vxlan_mode"} {
		a, ok := byID[id]
		if !ok {
			t.Errorf("no assert %s", id)
			continue
		}
		// kubespray's own defaults satisfy its own asserts.
		if got := c.Eval(a, nil); got != Pass {
			t.Errorf("%s on kubespray defaults: %v", id, got)
		}
		if v := c.Lookup(a.Var); v == nil || len(v.Choices) == 0 {
			t.Errorf("%s: Var.Choices not set", a.Var)
		}
	}
}

func TestDynamicGroupsTable(t *testing.T) {
	m := DynamicGroups()
	if len(m) != 5 || m[4].Group != "k8s_cluster" || !reflect.DeepEqual(m[4].From, []string{"kube_node", "kube_control_plane", "calico_rr"}) {
		t.Fatalf("DynamicGroups() = %+v", m)
	}
	m[0].From[0] = "changed"
	if DynamicGroups()[0].From[0] != "kube-master" {
		t.Error("DynamicGroups returns the table itself")
	}
	ApplyDynamicGroups(nil) // no panic
}

// TestCheckoutReadsItsOwnAsserts: a checkout's validate_inventory and
// calico check.yml decide the allowed values and removed variables.
func TestCheckoutReadsItsOwnAsserts(t *testing.T) {
	root := t.TempDir()
	testutil.WriteTree(t, root, map[string]string{
		"roles/kubespray_defaults/defaults/main.yml": "kube_network_plugin: calico\nnew_choice: x\neviction_hard_control_plane: {}\nignore_assert_errors: false\n",
		"roles/validate_inventory/tasks/main.yml": `---
- name: Fail if removed variables are used
  vars:
    removed_vars:
      - kubelet_static_pod_path # 2.31.0
      - my_old_var
      - eviction_hard_control_plane
    removed_vars_found: "{{ query('varnames', '^' + (removed_vars | join('|')) + '$') }}"
  assert:
    that: removed_vars_found | length == 0
- name: Stop if unsupported options selected
  assert:
    that:
      - kube_network_plugin in ['calico', "weave"]
      - new_choice in ['x', 'y']
      - etcd_deployment_type in ['host', 'kubeadm'] or container_manager == 'docker'
    msg: The selected choice is not supported
`,
		"roles/network_plugin/calico/tasks/check.yml": `---
- name: "Check ipip and vxlan mode defined correctly"
  block:
    - name: "Check ipip and vxlan mode defined correctly"
      assert:
        that:
          - "calico_ipip_mode in ['Always', 'Never']"
- name: "Check ipip and vxlan mode if simultaneously enabled"
  assert:
    that:
      - "calico_vxlan_mode in ['Never']"
`,
	})
	c, err := Checkout(root)
	if err != nil {
		t.Fatal(err)
	}
	k := c.Lookup("kube_network_plugin")
	if k == nil || !reflect.DeepEqual(k.Choices, []string{"calico", "weave"}) || k.ChoicesSource != "roles/validate_inventory/tasks/main.yml:14" {
		t.Errorf("kube_network_plugin = %+v", k)
	}
	if v := c.Lookup("new_choice"); v == nil || !reflect.DeepEqual(v.Choices, []string{"x", "y"}) {
		t.Errorf("new_choice = %+v", v)
	}
	var ipip *Assert
	for i, a := range c.Asserts() {
		if a.ID == "choice:calico_ipip_mode" {
			ipip = &c.Asserts()[i]
		}
		if a.ID == "choice:calico_vxlan_mode" && !reflect.DeepEqual(a.Choices, []string{"Always", "CrossSubnet", "Never"}) {
			t.Errorf("a conditional 'in' of another task changed the vxlan choices: %+v", a)
		}
	}
	if ipip == nil || !reflect.DeepEqual(ipip.Choices, []string{"Always", "Never"}) || ipip.Source != "roles/network_plugin/calico/tasks/check.yml:7" {
		t.Errorf("calico_ipip_mode assert = %+v", ipip)
	}
	only := func(n string) (any, bool) { return "CrossSubnet", n == "calico_ipip_mode" }
	if got := c.Eval(*ipip, only); got != Fail {
		t.Errorf("CrossSubnet against the checkout's choices: %v", got)
	}
	if _, ok := c.Removed["my_old_var"]; !ok {
		t.Errorf("my_old_var not removed: %v", c.Removed)
	}
	// Still defined by this checkout's defaults: not removed here.
	if _, ok := c.Removed["eviction_hard_control_plane"]; ok {
		t.Error("eviction_hard_control_plane is defined by the checkout, yet listed as removed")
	}
	for _, r := range c.Facts.Removed {
		if r.Name == "kubelet_static_pod_path" && r.Source != "roles/validate_inventory/tasks/main.yml:5" {
			t.Errorf("kubelet_static_pod_path source %s", r.Source)
		}
	}
	// Not from validate_inventory's list: kept from the facts table.
	if _, ok := c.Removed["ipip"]; !ok {
		t.Error("calico's ipip check dropped")
	}
}

func TestCheckoutWithoutRemovedTask(t *testing.T) {
	root := t.TempDir()
	testutil.WriteTree(t, root, map[string]string{"roles/kubespray_defaults/defaults/main.yml": "a: 1\n"})
	c, err := Checkout(root)
	if err != nil {
		t.Fatal(err)
	}
	// No task files: the default version's facts stand.
	if _, ok := c.Removed["kubelet_static_pod_path"]; !ok {
		t.Error("facts table not applied")
	}
	testutil.WriteTree(t, root, map[string]string{"roles/validate_inventory/tasks/main.yml": "- name: x\n  assert:\n    that: [\n"})
	if _, err := Checkout(root); err == nil || !strings.Contains(err.Error(), "roles/validate_inventory/tasks/main.yml") {
		t.Errorf("malformed task file: %v", err)
	}
}

func TestFindCheckoutThroughSymlink(t *testing.T) {
	checkout := t.TempDir()
	testutil.WriteTree(t, checkout, map[string]string{
		"roles/kubespray_defaults/defaults/main.yml": "a: 1\n",
		"inventory/prod/hosts.yaml":                  "all: {}\n",
	})
	elsewhere := t.TempDir()
	link := filepath.Join(elsewhere, "prod")
	if err := os.Symlink(filepath.Join(checkout, "inventory", "prod"), link); err != nil {
		t.Fatal(err)
	}
	got, err := FindCheckout(filepath.Join(link, "hosts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(checkout)
	if got != want {
		t.Errorf("FindCheckout through a symlink = %q, want %q", got, want)
	}
	if got, _ := FindCheckout(elsewhere); got != "" {
		t.Errorf("FindCheckout outside a checkout = %q", got)
	}
}

func scanIsDefaults(file string) bool {
	return strings.HasPrefix(file, "roles/kubespray_defaults/defaults/") || strings.HasPrefix(file, "roles/kubespray-defaults/defaults/")
}

// networkPluginChoices are the allowed kube_network_plugin values each
// release asserts, and where (checked by hand against each release).
var networkPluginChoices = map[string]struct {
	values []string
	source string
}{
	"v2.24.3": {withWeave, preinstallVerify + ":33"},
	"v2.25.1": {withWeave, preinstallVerify + ":30"},
	"v2.26.1": {withWeave, preinstallVerify + ":30"},
	"v2.27.1": {append(withWeave, "none"), preinstallVerify + ":45"},
	"v2.28.1": {append(withWeave, "none"), "roles/validate_inventory/tasks/main.yml:211"},
	"v2.29.1": {current, "roles/validate_inventory/tasks/main.yml:170"},
	"v2.30.0": {current, "roles/validate_inventory/tasks/main.yml:162"},
	"v2.31.0": {current, "roles/validate_inventory/tasks/main.yml:165"},
	"master":  {current, "roles/validate_inventory/tasks/main.yml:165"},
}

const preinstallVerify = "roles/kubernetes/preinstall/tasks/0040-verify-settings.yml"

var (
	withWeave = []string{"calico", "flannel", "weave", "cloud", "cilium", "cni", "kube-ovn", "kube-router", "macvlan", "custom_cni"}
	current   = []string{"calico", "flannel", "cloud", "cilium", "cni", "kube-ovn", "kube-router", "macvlan", "custom_cni", "none"}
)

func TestResolve(t *testing.T) {
	for in, want := range map[string]string{"": "master", "master": "master", "v2.31": "v2.31.0", "2.31": "v2.31.0",
		"2.29.1": "v2.29.1", "v2.24": "v2.24.3", "v2.31.0": "v2.31.0", "v1.0": "v1.0", "v2.3": "v2.3"} {
		if got := Resolve(in); got != want {
			t.Errorf("Resolve(%q) = %q, want %q", in, got, want)
		}
	}
	c, err := Bundled("v2.29")
	if err != nil || c.Version != "v2.29.1" {
		t.Fatalf("Bundled(v2.29) = %v, %v", c, err)
	}
}

// A release no bundled catalogue is of gets the branch snapshot whose
// galaxy.yml (as the generator recorded it) claims its minor: master's
// says 2.32.0. The note says that the release itself was not read, with
// the snapshot's date and commit.
func TestSelectSnapshotClaimingRelease(t *testing.T) {
	master, err := Bundled(DefaultVersion)
	if err != nil {
		t.Fatal(err)
	}
	if master.Galaxy != "2.32.0" || master.CommitDate != "2026-08-21T10:07:16+00:00" || len(master.Commit) != 40 {
		t.Fatalf("master's provenance: galaxy %q date %q commit %q", master.Galaxy, master.CommitDate, master.Commit)
	}
	for _, v := range Versions() {
		c, err := Bundled(v)
		if err != nil {
			t.Fatal(err)
		}
		if IsRelease(v) && "v"+c.Galaxy != v {
			t.Errorf("%s: galaxy.yml says %q", v, c.Galaxy)
		}
	}
	for _, tc := range []struct{ version, asked string }{
		{"v2.32.0", "v2.32.0"}, {"2.32.0", "v2.32.0"}, {"v2.32", "v2.32.x"}, {"v2.32.x", "v2.32.x"}, {"v2.32.3", "v2.32.3"},
	} {
		if got := Claiming(tc.version); got != DefaultVersion {
			t.Errorf("Claiming(%q) = %q", tc.version, got)
		}
		c, err := Select(tc.version, "--kubespray-version", nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.version, err)
		}
		if c.Version != DefaultVersion || c.StandsInFor != tc.version || c.Default {
			t.Errorf("%s: version %q stands in for %q default %v", tc.version, c.Version, c.StandsInFor, c.Default)
		}
		wantWhy := "chosen with --kubespray-version " + tc.version + ", which is not bundled: the newest bundled catalogue whose galaxy.yml claims v2.32"
		wantNote := "kubespray " + tc.asked + " itself was not read: this is kubespray's master of 2026-08-21 (commit " + master.Commit + "), whose galaxy.yml says 2.32.0"
		if c.Why != wantWhy || c.Note != wantNote {
			t.Errorf("%s:\n why  %q\n want %q\n note %q\n want %q", tc.version, c.Why, wantWhy, c.Note, wantNote)
		}
	}
	for _, v := range []string{"v2.31.0", "v2.33.0", "master", "v2", "v2.32.0.1", "v2.x"} {
		if got := Claiming(v); got != "" {
			t.Errorf("Claiming(%q) = %q, want none", v, got)
		}
	}
	// A bundled release of the minor wins over a snapshot's claim.
	if c, err := Select("v2.31.0", "--kubespray-version", nil); err != nil || c.Version != "v2.31.0" || c.Note != "" {
		t.Errorf("v2.31.0: %v %+v", err, c)
	}
}
