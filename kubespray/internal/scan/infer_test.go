package scan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInferBool(t *testing.T) {
	known := map[string]VarKind{"metallb_enabled": KindBool, "kube_version": KindOther}
	isBool := func(n string) VarKind { return known[n] } // others: KindUndefined
	cases := []struct {
		def  string
		want bool
	}{
		{"{{ foo | bool }}", true},
		{"{{ foo | default(false) | bool }}", true},
		{"{{ kube_network_plugin == 'calico' }}", true},
		{"{{ a != b }}", true},
		{"{{ (groups['kube_control_plane'] | length) > 1 }}", true},
		{"{{ 'calico_rr' in groups and groups['calico_rr'] | length > 0 }}", true},
		{"{{ 'addon/kube-proxy' not in kubeadm_init_phases_skip }}", true},
		{"{{ loadbalancer_apiserver is not defined }}", true},
		{"{{ kube_version is version('1.30', '>=') }}", true},
		{"{{ not foo }}", true},
		{"{{ x | ternary(true, false) }}", true},
		{"{{ x | ternary('a', 'b') }}", false},
		{"{{ true if x else false }}", true},
		{"{{ 'v1alpha1' if kube_version is version('1.30.0', '<') else 'v1beta1' if kube_version is version('1.32.0', '<') else 'v1' }}", false},
		{"{{ a or b }}", false},              // Jinja's or returns an operand
		{"{{ a == 1 or b == 2 }}", true},     // both operands boolean
		{"{{ metallb_enabled }}", true},      // alias of a known bool
		{"{{ kube_version }}", false},        // alias of a non-bool
		{"{{ foo }}-{{ bar }}", false},       // text: a str
		{"v{{ foo == 1 }}", false},           // text around: a str
		{"{% if a %}true{% endif %}", false}, // statements: not inferred
		{"{{ a ~ (b == c) }}", false},        // concatenation
		{"{{ 'a==b' }}", false},              // operator inside quotes
		{"{{ lookup('env', 'X') == 'y' }}", true},
		{"{{ x | length }}", false},
		{"{{ x | bool(y) }}", false},
		{"plain", false},
		{"{{- foo | bool -}}", true},
		{"{{ enable_dual_stack_networks | default(false) }}", true}, // undefined: the default applies
		{"{{ metallb_enabled | default(true) }}", true},
		{"{{ kube_version | default(false) }}", false}, // defined, not a bool
		{"{{ x | default('false') }}", false},
		{"{{ (a == b) | default(false) }}", true},
	}
	for _, c := range cases {
		if got := InferBool(c.def, isBool); got != c.want {
			t.Errorf("InferBool(%q) = %v, want %v", c.def, got, c.want)
		}
	}
}

func TestSpellsBool(t *testing.T) {
	for s, want := range map[string]bool{"false": true, "True": true, "yes": true, "OFF": true, "on": true, "y": false, "1": false, "": false, "maybe": false} {
		if SpellsBool(s) != want {
			t.Errorf("SpellsBool(%q) != %v", s, want)
		}
	}
}

func TestIsVarsFile(t *testing.T) {
	cases := map[string]string{
		"roles/kubespray_defaults/defaults/main/main.yml":  ScopeDefaults,
		"roles/kubernetes/node/defaults/main.yml":          ScopeDefaults,
		"roles/container-engine/docker/vars/debian.yml":    ScopeVars,
		"inventory/sample/group_vars/all/all.yml":          ScopeSample,
		"roles/kubespray_defaults/tasks/main.yml":          "",
		"roles/foo/templates/vars/x.yml":                   "",
		"roles/foo/defaults/main.j2":                       "",
		"inventory/sample/inventory.ini":                   "",
		"roles/container-engine/molecule/default/vars.yml": "",
	}
	for rel, want := range cases {
		got, _ := IsVarsFile(rel)
		if got != want {
			t.Errorf("IsVarsFile(%q) = %q, want %q", rel, got, want)
		}
	}
}

// TestUnsafeIsNotTemplated: Ansible never renders a !unsafe string.
func TestUnsafeIsNotTemplated(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "roles", "r", "defaults", "main.yml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "a: !unsafe '{{ x | bool }}'\nb: '{{ x | bool }}'\nc: '{{ b }}'\n"
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if d := tree.Defs["a"][0]; d.Type != TypeStr || d.Inferred {
		t.Errorf("a = %+v", d)
	}
	if d := tree.Defs["b"][0]; d.Type != TypeBool || !d.Inferred || d.Line != 2 || d.File != "roles/r/defaults/main.yml" {
		t.Errorf("b = %+v", d)
	}
	// "{{ b }}" follows b once b is known to be a bool.
	if d := tree.Defs["c"][0]; d.Type != TypeBool || !d.Inferred {
		t.Errorf("c = %+v", d)
	}
}

func TestParseChoice(t *testing.T) {
	cases := []struct {
		expr string
		name string
		vals []string
	}{
		{"kube_network_plugin in ['calico', 'flannel', 'cloud']", "kube_network_plugin", []string{"calico", "flannel", "cloud"}},
		{`external_oracle_load_balancer_security_list_management_mode in ["All", "Frontend", "None"]`, "external_oracle_load_balancer_security_list_management_mode", []string{"All", "Frontend", "None"}},
		{"calico_vxlan_mode in ['Never']", "calico_vxlan_mode", []string{"Never"}},
		{"etcd_deployment_type in ['host', 'kubeadm'] or container_manager == 'docker'", "", nil},
		{"cilium_hubble_event_buffer_capacity in [1, 3, 7]", "", nil},
		{"x in []", "", nil},
		{"x in groups", "", nil},
	}
	for _, c := range cases {
		name, vals, ok := ParseChoice(c.expr)
		if name != c.name || ok != (c.name != "") || strings.Join(vals, ",") != strings.Join(c.vals, ",") {
			t.Errorf("ParseChoice(%q) = %q %v %v", c.expr, name, vals, ok)
		}
	}
}

func TestInferStringBool(t *testing.T) {
	cases := map[string]bool{
		"{{ 'true' if dns_min_replicas | int > 1 else 'false' }}": true,
		"{{ (preinstall_selinux_state == 'enforcing') | lower }}": true,
		"{{ 'yes' if a else 'no' }}":                              true,
		"{{ 'v1' if a else 'false' }}":                            false,
		"{{ x | lower }}":                                         false,
		"{{ 'true' }}":                                            true,
		"true":                                                    false,
		"{{ a == b }}":                                            false, // a bool, not a str
	}
	for def, want := range cases {
		if got := InferStringBool(def, nil); got != want {
			t.Errorf("InferStringBool(%q) = %v, want %v", def, got, want)
		}
	}
}
