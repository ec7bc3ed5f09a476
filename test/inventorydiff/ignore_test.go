package inventorydiff_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/test/testutil"
)

// kubespray writes credentials/ and artifacts/ into the inventory
// directory; its ansible.cfg has [inventory] ignore_patterns = artifacts,
// credentials. layercheck inventory must skip exactly what ansible-inventory
// skips: with that ansible.cfg (through ANSIBLE_CONFIG and in the working
// directory), with ANSIBLE_INVENTORY_IGNORE_REGEX, and read everything with
// Ansible's defaults.
func TestIgnorePatternsAsAnsible(t *testing.T) {
	const key = "2d7a0c1e9f8b7a6d5c4b3a29180716f5e4d3c2b1a09f8e7d6c5b4a3928170605"
	inv := filepath.Join(t.TempDir(), "mycluster")
	testutil.WriteTree(t, inv, map[string]string{
		"inventory.ini": "[kube_control_plane]\nnode1\n[etcd]\nnode1\n[kube_node]\nnode2\n",
		"credentials/kubeadm_certificate_key.creds": key + "\n",
		"credentials/kube_encrypt_token.creds":      "c2VjcmV0dG9rZW4=\n",
		"artifacts/notes":                           "[leaked]\nartifacthost\n",
		"group_vars/all/all.yml":                    "a: 1\n",
	})
	cfgDir := t.TempDir()
	testutil.WriteTree(t, cfgDir, map[string]string{
		"kubespray.cfg":  "[defaults]\nforks = 5\n\n[inventory]\nignore_patterns = artifacts, credentials ; as kubespray\n",
		"exts.cfg":       "[defaults]\ninventory_ignore_extensions = .creds\n",
		"wd/ansible.cfg": "[inventory]\nignore_patterns = credentials, artifacts\n",
	})
	cases := []struct {
		name  string
		cwd   string // "" = an empty directory
		env   []string
		leaks bool // whether Ansible reads the key as a host
	}{
		{name: "defaults", leaks: true},
		{name: "ANSIBLE_CONFIG kubespray ansible.cfg", env: []string{"ANSIBLE_CONFIG=" + filepath.Join(cfgDir, "kubespray.cfg")}},
		{name: "ansible.cfg in the working directory", cwd: filepath.Join(cfgDir, "wd"), env: []string{"ANSIBLE_CONFIG="}},
		{name: "ANSIBLE_INVENTORY_IGNORE_REGEX", env: []string{"ANSIBLE_INVENTORY_IGNORE_REGEX=cred,artif"}},
		{name: "[defaults] inventory_ignore_extensions", env: []string{"ANSIBLE_CONFIG=" + filepath.Join(cfgDir, "exts.cfg")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cwd := c.cwd
			if cwd == "" {
				cwd = t.TempDir()
			}
			home := t.TempDir()
			env := testutil.AnsibleEnv(append([]string{"HOME=" + home}, c.env...)...)
			if c.name == "ansible.cfg in the working directory" {
				// no ANSIBLE_CONFIG at all, so the working directory's file is found
				env = dropEnv(env, "ANSIBLE_CONFIG")
			}
			args := []string{"-i", inv, "--list"}
			a := run(t, cwd, env, 3*time.Minute, testutil.Ansible(t, "ansible-inventory"), args...)
			l := run(t, cwd, env, time.Minute, cli(t), append([]string{"inventory"}, args...)...)
			if a.code != 0 || l.code != 0 {
				t.Fatalf("exit ansible %d, layercheck %d\nansible stderr:\n%s\nlayercheck stderr:\n%s", a.code, l.code, a.stderr, l.stderr)
			}
			if got := bytes.Contains(a.stdout, []byte(key)); got != c.leaks {
				t.Fatalf("ansible-inventory lists the key: %v, the case expects %v: the case does not test what it should\n%s", got, c.leaks, a.stdout)
			}
			if !bytes.Contains(a.stdout, []byte("node2")) {
				t.Fatalf("ansible-inventory did not read inventory.ini:\n%s", a.stdout)
			}
			if !bytes.Equal(bytes.TrimSpace(a.stdout), bytes.TrimSpace(l.stdout)) {
				t.Fatalf("layercheck inventory differs from ansible-inventory (first difference at line %d)\nansible:\n%s\nlayercheck:\n%s",
					firstDiffLine(a.stdout, l.stdout), a.stdout, l.stdout)
			}
		})
	}
}

func dropEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}
