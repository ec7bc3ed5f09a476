package lint

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"kube_encrypt_token":           true,
		"kubeadm_certificate_key":      true,
		"ansible_password":             true,
		"ansible_become_password":      true,
		"ansible_become_pass":          true,
		"ansible_ssh_pass":             true,
		"kube_oidc_client_secret":      true,
		"client-key-data":              true,
		"cloud.password":               true,
		"registry_htpasswd":            true,
		"ClientSecret":                 true,
		"external_openstack_password":  true,
		"kubeadm_token":                true,
		"etcd_key_size":                false,
		"ssh_key_path":                 false,
		"ansible_ssh_private_key_file": false,
		"vault_password_file":          false,
		"kubeadm_token_ttl":            false,
		"kube_token_auth":              false,
		"helm_enabled":                 false,
		"kube_network_plugin":          false,
		"keystone_url":                 false,
		"":                             false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

// A misspelt or otherwise reported secret variable never shows its value:
// not in value, message, why or fix, not in the JSON report.
func TestSecretValuesHidden(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.ini": "[kube_control_plane]\nnode1\n[etcd]\nnode1\n[kube_node]\nnode1\n",
		"group_vars/all/all.yml": "kube_encrypt_tokn: SuperSecretToken123\n" +
			"kubeadm_certificat_key: 'AnotherSecret456'\n" +
			"ansible_pasword: \"ThirdSecret789\"\n" +
			"helm_enabld: visibleValue\n",
	})
	r := lintTree(t, dir, "kube_encrypt_tokn=ExtraSecret000")
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"SuperSecretToken123", "AnotherSecret456", "ThirdSecret789", "ExtraSecret000"} {
		if strings.Contains(string(b), s) {
			t.Errorf("report shows %s:\n%s", s, dump(r))
		}
	}
	for _, v := range []string{"kube_encrypt_tokn", "kubeadm_certificat_key"} {
		for _, f := range find(r, "unknown-variable", v) {
			if f.Value != Hidden || !strings.Contains(f.Fix, Hidden) {
				t.Errorf("%s: want value and fix %s, got %+v", v, Hidden, f)
			}
		}
		if len(find(r, "unknown-variable", v)) == 0 {
			t.Errorf("no unknown-variable finding for %s; the case does not test what it should:\n%s", v, dump(r))
		}
	}
	// a variable that is no secret keeps its value
	f := one(t, r, "unknown-variable", "helm_enabld")
	if !strings.Contains(f.Value, "visibleValue") || !strings.Contains(f.Fix, "visibleValue") {
		t.Errorf("helm_enabld: value hidden though no secret: %+v", f)
	}
}
