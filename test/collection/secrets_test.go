package collection

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
)

// Fake secrets in the places kubespray writes real ones into the inventory
// directory (credentials/, artifacts/admin.conf).
const (
	fakeCertKey   = "2d7a0c1e9f8b7a6d5c4b3a29180716f5e4d3c2b1a09f8e7d6c5b4a3928170605"
	fakeEncToken  = "c2VjcmV0dG9rZW4tZmFrZS1mb3ItdGVzdHM="
	fakeClientKey = "LS0tLS1CRUdJTiBGQUtFIFBSSVZBVEUgS0VZLS0tLS0K"
)

func writeKubesprayCredentials(t *testing.T, inv string, adminConf bool) {
	t.Helper()
	files := map[string]string{
		"credentials/kubeadm_certificate_key.creds": fakeCertKey + "\n",
		"credentials/kube_encrypt_token.creds":      fakeEncToken + "\n",
		// a finding for every host, so a host read from credentials/ would be listed
		"group_vars/all/all.yml": "---\ndeploy_netchecker: \"false\"\n",
	}
	if adminConf {
		files["artifacts/admin.conf"] = "apiVersion: v1\nkind: Config\nusers:\n- name: kubernetes-admin\n  user:\n    client-key-data: " + fakeClientKey + "\n"
	}
	testutil.WriteTree(t, inv, files)
}

func assertNoFakeSecrets(t *testing.T, what, out string) {
	t.Helper()
	for _, s := range []string{fakeCertKey, fakeEncToken, fakeClientKey} {
		if strings.Contains(out, s) {
			t.Errorf("%s shows a secret from credentials/ or artifacts/ (%.8s…):\n%s", what, s, out)
		}
	}
}

// playbooks/lint.yml never reads kubespray's credentials/ and artifacts/:
// with kubespray's ansible.cfg (ignore_patterns = artifacts, credentials)
// the action plugin passes Ansible's setting on; with Ansible's defaults
// (Ansible itself then reads credentials/ as INI, a host in ungrouped, left
// out here with --limit) the module still adds kubespray's two patterns.
func TestKubesprayCredentialsNeverRead(t *testing.T) {
	requireBinaries(t)
	cfg := filepath.Join(t.TempDir(), "ansible.cfg")
	testutil.WriteTree(t, filepath.Dir(cfg), map[string]string{
		"ansible.cfg": "[defaults]\nforks = 5\n\n[inventory]\nignore_patterns = artifacts, credentials\n",
	})

	inv := inventory(t, true)
	writeKubesprayCredentials(t, inv, true)
	r := run(t, t.TempDir(), env(t, "ANSIBLE_CONFIG="+cfg), "ansible-playbook", "-i", inv, lintPlaybook())
	if r.code == 0 || !strings.Contains(r.out, "group_vars/k8s_cluster/addons.yml:2:15: helm_enabled = \"true\"") {
		t.Fatalf("the lint did not run on the inventory (exit %d):\n%s", r.code, r.out)
	}
	if !strings.Contains(r.out, "deploy_netchecker") {
		t.Fatalf("no finding for group_vars/all:\n%s", r.out)
	}
	assertNoFakeSecrets(t, "ansible-playbook lint.yml with kubespray's ansible.cfg", r.out)

	inv = inventory(t, true)
	writeKubesprayCredentials(t, inv, false)
	list := run(t, t.TempDir(), env(t), "ansible-inventory", "-i", inv, "--graph")
	if !strings.Contains(list.out, fakeCertKey) {
		t.Fatalf("with Ansible's defaults ansible-inventory should read credentials/ as INI; the case does not test what it should:\n%s", list.out)
	}
	r = run(t, t.TempDir(), env(t), "ansible-playbook", "-i", inv, "--limit", "all:!ungrouped", lintPlaybook())
	if r.code == 0 || !strings.Contains(r.out, "group_vars/k8s_cluster/addons.yml:2:15: helm_enabled = \"true\"") {
		t.Fatalf("the lint did not run on the inventory (exit %d):\n%s", r.code, r.out)
	}
	if !strings.Contains(r.out, "deploy_netchecker") {
		t.Fatalf("no finding for group_vars/all:\n%s", r.out)
	}
	assertNoFakeSecrets(t, "ansible-playbook lint.yml with Ansible's defaults", r.out)
}
