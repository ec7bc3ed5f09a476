package app

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/test/testutil"
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

// lint -i dir in which no file is an inventory: Ansible warns "Unable to
// parse" and sees no host, so the lint cannot run (exit 2) and says why.
// In a kubespray checkout, whose ansible.cfg skips .ini in inventory
// directories, it names the skipped inventory.ini and the -i to use.
func TestLintDirectoryWithoutInventory(t *testing.T) {
	inv := t.TempDir()
	testutil.WriteTree(t, inv, map[string]string{"group_vars/all/all.yml": "helm_enabled: \"true\"\n"})
	out, errOut, code := runCLI(t, "lint", "-i", inv, "--kubespray-version", "v2.31.0")
	if code != 2 || !strings.Contains(errOut, inv+": no file in this directory is an inventory") {
		t.Errorf("group_vars only: exit %d, want 2 naming the directory\n%s\n%s", code, out, errOut)
	}

	testutil.WriteTree(t, inv, map[string]string{"inventory.ini": "[kube_control_plane]\nnode1\n"})
	t.Setenv("ANSIBLE_INVENTORY_IGNORE", "~, .orig, .bak, .ini, .cfg, .retry, .pyc, .pyo, .creds, .gpg")
	out, errOut, code = runCLI(t, "lint", "-i", inv, "--kubespray-version", "v2.31.0")
	want := "(skipped by the inventory ignore settings, $ANSIBLE_INVENTORY_IGNORE: inventory.ini); name the file itself, e.g. -i " + filepath.Join(inv, "inventory.ini")
	if code != 2 || !strings.Contains(errOut, want) {
		t.Errorf("inventory.ini skipped: exit %d, want 2 with %q\n%s\n%s", code, want, out, errOut)
	}
	_, errOut, code = runCLI(t, "lint", "-i", filepath.Join(inv, "inventory.ini"), "--kubespray-version", "v2.31.0")
	if code == 2 {
		t.Errorf("-i inventory.ini itself: exit 2\n%s", errOut)
	}
}

// Locations follow what the header says they are relative to: a whole-
// inventory finding names the inventory file holding the hosts, never the
// -i path joined to itself, and an -e @file outside the inventory directory is
// named by its absolute path, not by the path as typed (which the header
// would make relative to the inventory directory).
func TestLintLocationsOutsideInventory(t *testing.T) {
	root := t.TempDir()
	testutil.WriteTree(t, root, map[string]string{
		"inv/hosts.ini":   "[etcd]\nnode1\n[kube_node]\nnode1\n",
		"vars/extra.yml":  "helm_enabled: \"true\"\n",
		"work/.placehold": "",
	})
	t.Chdir(root)
	out, errOut, code := runCLI(t, "lint", "-i", "inv", "--kubespray-version", "v2.31.0")
	if code != 1 || !strings.Contains(out, "\ninv/hosts.ini\n") || strings.Contains(out, "inv/inv") {
		t.Errorf("relative -i: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Chdir(filepath.Join(root, "vars"))
	out, errOut, code = runCLI(t, "lint", "-i", filepath.Join(root, "inv"), "-e", "@extra.yml", "--kubespray-version", "v2.31.0")
	if code != 1 || !strings.Contains(out, "locations relative to the inventory directory") || !strings.Contains(out, "\n"+filepath.Join(root, "vars", "extra.yml")+"\n") {
		t.Errorf("-e @file outside the inventory: exit %d\n%s\n%s", code, out, errOut)
	}
}
