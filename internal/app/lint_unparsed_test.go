package app

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/layercheck/layercheck/internal/testutil"
	"github.com/layercheck/layercheck/lint"
)

// lint -i dir whose only file fails to parse: the failure is an error
// finding naming file:line (not only a stderr warning), nothing is reported
// for hosts Ansible does not have, and a file given as -i itself is a usage
// error (exit 2) as before.
func TestLintUnparsedFileInDirectory(t *testing.T) {
	inv := t.TempDir()
	testutil.WriteTree(t, inv, map[string]string{
		"hosts.ini":              "\ufeff[kube_control_plane]\nnode1 helm_enabled=true\n[etcd]\nnode1\n[kube_node]\nnode1\n",
		"group_vars/all/all.yml": "dns_mode: bogus\n",
	})
	out, errOut, code := runCLI(t, "lint", "-i", inv, "--format", "json", "--kubespray-version", "v2.31.0")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	var rep lint.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range rep.Findings {
		if f.Rule == "inventory-unparsed" && f.Where == "hosts.ini:1" && f.Severity == lint.SeverityError {
			found = true
		}
		if len(f.Hosts) > 0 {
			t.Errorf("finding for hosts Ansible does not have: %+v", f)
		}
	}
	if !found {
		t.Errorf("no inventory-unparsed error at hosts.ini:1:\n%s", out)
	}
	_, _, code = runCLI(t, "lint", "-i", filepath.Join(inv, "hosts.ini"), "--kubespray-version", "v2.31.0")
	if code != 2 {
		t.Errorf("-i file that does not parse: exit %d, want 2", code)
	}
}
