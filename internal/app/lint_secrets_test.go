package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/testutil"
)

// kubespray writes credentials/ and artifacts/ into the inventory
// directory. Run from outside the kubespray checkout (no ansible.cfg with
// kubespray's ignore_patterns), lint must still never read them: their
// values are not host names.
func TestLintNeverReadsKubesprayCredentials(t *testing.T) {
	const key = "2d7a0c1e9f8b7a6d5c4b3a29180716f5e4d3c2b1a09f8e7d6c5b4a3928170605"
	const clientKey = "LS0tLS1CRUdJTiBGQUtFIFBSSVZBVEUgS0VZLS0tLS0K"
	inv := filepath.Join(t.TempDir(), "mycluster")
	testutil.WriteTree(t, inv, map[string]string{
		"inventory.ini": "[kube_control_plane]\nnode1\n[etcd]\nnode1\n[kube_node]\nnode2\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n",
		// a finding for every host, so a host read from credentials/ would be listed
		"group_vars/all/all.yml":                    "---\ndeploy_netchecker: \"false\"\n",
		"credentials/kubeadm_certificate_key.creds": key + "\n",
		"artifacts/admin.conf":                      "apiVersion: v1\nusers:\n- name: kubernetes-admin\n  user:\n    client-key-data: " + clientKey + "\n",
	})
	t.Setenv("ANSIBLE_CONFIG", filepath.Join(t.TempDir(), "none.cfg")) // no ansible.cfg found
	t.Setenv("HOME", t.TempDir())
	for _, format := range []string{"text", "json"} {
		out, errOut, code := runCLI(t, "lint", "-i", inv, "--format", format, "--kubespray-version", "v2.31.0")
		if code != 1 || !strings.Contains(out, "deploy_netchecker") {
			t.Fatalf("%s: exit %d, want 1 with the deploy_netchecker finding\n%s\n%s", format, code, out, errOut)
		}
		for _, s := range []string{key, clientKey} {
			if strings.Contains(out+errOut, s) {
				t.Errorf("%s output shows a secret from credentials/ or artifacts/:\n%s\n%s", format, out, errOut)
			}
		}
	}
	// layercheck inventory reads them as Ansible with the same settings does
	out, _, code := runCLI(t, "inventory", "-i", inv, "--list")
	if code != 0 || !strings.Contains(out, key) {
		t.Fatalf("inventory --list with Ansible's defaults: exit %d, want the credentials file read as Ansible reads it\n%s", code, out)
	}
}

func TestLintIgnoreAddsKubesprayPatterns(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ansible.cfg"), []byte("[inventory]\nignore_patterns = backup\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ig, err := lintIgnore(parser.AnsibleCfgEnv{LookupEnv: func(string) (string, bool) { return "", false }, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ig.Patterns, ",") != "backup,artifacts,credentials" || ig.Exts != nil {
		t.Fatalf("lint ignore = %+v", ig)
	}
}
