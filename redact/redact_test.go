package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAsecretkeymaterial\nAAAA\n-----END RSA PRIVATE KEY-----"

func TestStringMasksEverySecretForm(t *testing.T) {
	cases := []struct{ in, want, secret string }{
		{"server https://admin:S3cretPW@10.0.0.1:6443 refused", "server https://admin:" + Mask + "@10.0.0.1:6443 refused", "S3cretPW"},
		{`"endpoints": ["https://root:etcdPW9@127.0.0.1:2379"]`, `"endpoints": ["https://root:` + Mask + `@127.0.0.1:2379"]`, "etcdPW9"},
		{"key:\n" + key + "\nend", "key:\n-----BEGIN RSA PRIVATE KEY-----" + Mask + "-----END RSA PRIVATE KEY-----\nend", "secretkeymaterial"},
		{`{"k": "` + strings.ReplaceAll(key, "\n", `\n`) + `"}`, "", "secretkeymaterial"},
		{"-----BEGIN PRIVATE KEY-----\nMIIcut short", "-----BEGIN PRIVATE KEY-----" + Mask + "-----END PRIVATE KEY-----", "MIIcut"},
		{"Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.abc.def", "Authorization: Bearer " + Mask, "eyJhbGci"},
		{"Authorization: Basic YWRtaW46cGFzcw==", "Authorization: Basic " + Mask, "YWRtaW46"},
		{"ansible_password=hunter22 ansible_user=root", "ansible_password=" + Mask + " ansible_user=root", "hunter22"},
		{`ERROR [unknown-variable] kube_oidc_client_secret = "abc123xyz"`, `ERROR [unknown-variable] kube_oidc_client_secret = ` + Mask, "abc123xyz"},
		{`{"ansible_become_password": "p\"w0rd"}`, `{"ansible_become_password": "` + Mask + `"}`, `w0rd`},
		{"cloud.password: topsecret", "cloud.password: " + Mask, "topsecret"},
	}
	for _, c := range cases {
		got := String(c.in)
		assert.NotContains(t, got, c.secret, "in %q", c.in)
		if c.want != "" {
			assert.Equal(t, c.want, got)
		}
	}
}

func TestStringKeepsWhatIsNoSecret(t *testing.T) {
	for _, s := range []string{
		"kube_encrypt_secret_data = true",
		`"kube_encrypt_secret_data": "yes"`,
		"/etc/kubernetes/ssl/ca.key: /etc/kubernetes/ssl/ca.key is missing on cp1",
		"kubeadm_token_ttl=24h0m0s",
		"https://10.0.0.1:6443 (no userinfo) and https://user@host/ (no password)",
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		"the bearer tokens are rotated",
		"ansible_password: {{ vault_pw }}",
	} {
		assert.Equal(t, s, String(s))
	}
}

func TestNoLogValuesAndJSONForms(t *testing.T) {
	r := New("s3cr\"et!", "yes", "ab", "@/missing/vars.yml")
	got := r.String(`msg: -e @/missing/vars.yml: no such file; value "s3cr\"et!" yes ab`)
	assert.NotContains(t, got, "/missing/vars.yml")
	assert.NotContains(t, got, `s3cr\"et!`)
	assert.Contains(t, got, " yes ab", "boolean words and short values are kept")
}

func TestWriterMasksAcrossWrites(t *testing.T) {
	var out bytes.Buffer
	w := New().Writer(&out)
	for _, part := range []string{"server https://admin:Pa", "ssw0rd@host:6443\n", key[:40], key[40:], "\ntail"} {
		_, err := w.Write([]byte(part))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	assert.NotContains(t, out.String(), "Passw0rd")
	assert.NotContains(t, out.String(), "secretkeymaterial")
	assert.True(t, strings.HasSuffix(out.String(), "\ntail"), "everything written comes out: %q", out.String())
}

func TestSecretName(t *testing.T) {
	for _, n := range []string{"ansible_password", "kube_oidc_client_secret", "client_key_data", "cloud.password", "kubeadm_certificate_key"} {
		assert.True(t, SecretName(n), n)
	}
	for _, n := range []string{"ssh_key_path", "kubeadm_token_ttl", "kube_token_auth", "vault_password_file", "kube_network_plugin", "key", "keys"} {
		assert.False(t, SecretName(n), n)
	}
}

func TestEscapedJSON(t *testing.T) {
	got := String(`-e "{\"ansible_password\": \"NoLog-9999\"": -e:1: did not find expected ',' or '}'`)
	assert.NotContains(t, got, "NoLog-9999")
	assert.Contains(t, got, `\"ansible_password\": \"`+Mask+`\"`)
}

// A finding's message inside a JSON result: the value in escaped quotes is
// one value (a boolean word here, no secret), and the JSON stays valid.
func TestTextValueInsideJSONString(t *testing.T) {
	in := `{"msg":"k8s-cluster.yml:16:27: kube_encrypt_secret_data = \"false\" (all 5 hosts)","x":"kube_oidc_client_secret = \"s3cr3t-value\" here"}`
	got := String(in)
	var v map[string]string
	require.NoError(t, json.Unmarshal([]byte(got), &v), got)
	assert.Contains(t, v["msg"], `kube_encrypt_secret_data = "false"`)
	assert.NotContains(t, got, "s3cr3t-value")
}
