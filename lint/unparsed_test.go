package lint

import (
	"strings"
	"testing"
)

// A directory whose only INI file fails on its first line (a UTF-8 BOM
// before the section header, as an editor on Windows writes it): Ansible
// parses nothing and sees no host. The lint reports the parse failure with
// its file:line, and nothing located in the half-read file.
func TestUnparsedOnlyFile(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.ini":              "\ufeff[kube_control_plane]\nnode1 helm_enabled=true\n[etcd]\nnode1\n[kube_node]\nnode1\n",
		"group_vars/all/all.yml": "dns_mode: bogus\n",
	})
	r := lintTree(t, dir)
	f := one(t, r, "inventory-unparsed", "")
	if f.Severity != SeverityError || f.Where != "hosts.ini:1" || !strings.Contains(f.Message, "hosts.ini") || strings.Contains(f.Message, dir) {
		t.Errorf("finding: %+v", f)
	}
	if !strings.Contains(f.Why, "No inventory source was parsed") {
		t.Errorf("why does not say nothing was parsed: %q", f.Why)
	}
	for _, x := range r.Findings {
		if strings.HasPrefix(x.Where, "hosts.ini:") && x.Rule != "inventory-unparsed" || len(x.Hosts) > 0 {
			t.Errorf("a finding about hosts Ansible does not have: %+v", x)
		}
	}
	if r.Errors < 1 {
		t.Fatalf("errors = %d\n%s", r.Errors, dump(r))
	}
}

// Another file parses: Ansible keeps what the failing file added before
// its bad line, so findings there stand, next to the parse failure.
func TestUnparsedHalfFile(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"a.ini":     "[kube_control_plane]\nnode1\n",
		"hosts.ini": "[etcd]\nnode1 helm_enabled=true\n[kube_node]\nnode1\nnode2 a=b c\n",
	})
	r := lintTree(t, dir)
	f := one(t, r, "inventory-unparsed", "")
	if f.Where != "hosts.ini:5" || strings.Contains(f.Why, "No inventory source was parsed") {
		t.Errorf("finding: %+v", f)
	}
	if sb := one(t, r, "string-as-bool", "helm_enabled"); sb.Where != "hosts.ini:2:20" {
		t.Errorf("string-as-bool before the bad line: %+v", sb)
	}
	none(t, r, "control-plane-empty", "")
}

// A YAML file with a syntax error names the YAML line.
func TestUnparsedYAMLLine(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"a.ini":      "[kube_control_plane]\nnode1\n[etcd]\nnode1\n",
		"hosts.yaml": "all:\n  hosts:\n    node2: {\n",
	})
	r := lintTree(t, dir)
	f := one(t, r, "inventory-unparsed", "")
	if !strings.HasPrefix(f.Where, "hosts.yaml:") || f.Where == "hosts.yaml" || !strings.Contains(f.Message, "yaml:") {
		t.Errorf("finding: %+v", f)
	}
}
