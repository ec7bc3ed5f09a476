package badinput_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/testutil"
)

// deepYAML is an inventory whose all.vars.x nests depth dicts in block
// style.
func deepYAML(depth int) string {
	var b strings.Builder
	b.WriteString("all:\n  hosts:\n    h1:\n  vars:\n    x:\n")
	for i := 0; i < depth; i++ {
		b.WriteString(strings.Repeat("  ", i+3) + "a:\n")
	}
	b.WriteString(strings.Repeat("  ", depth+3) + "b: 1\n")
	return b.String()
}

// Why 2 (wrong results): a whole-file vault inventory made by the venv's
// ansible-vault is reported as vault (never parsed as INI into bogus
// hosts), for hosts.ini and hosts.yml, by lint (exit 2) and by inventory
// --list (a warning and exit 0, as ansible-inventory without a vault
// password).
func TestVaultInventoryIsReportedAsVault(t *testing.T) {
	t.Parallel()
	vault := testutil.Ansible(t, "ansible-vault")
	for _, name := range []string{"hosts.ini", "hosts.yml"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src := "[kube_control_plane]\ncp1\n"
			if name == "hosts.yml" {
				src = "all:\n  children:\n    kube_control_plane:\n      hosts:\n        cp1:\n"
			}
			write(t, dir, map[string]string{"inv/" + name: src, "pw": "vault-pass\n"})
			inv := filepath.Join(dir, "inv", name)
			cmd := exec.Command(vault, "encrypt", "--vault-password-file", filepath.Join(dir, "pw"), inv)
			cmd.Env = testutil.AnsibleEnv("HOME=" + dir)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "ansible-vault: %s", out)
			data, err := os.ReadFile(inv)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(data), "$ANSIBLE_VAULT;1.1;AES256"))

			r := run(t, dir, nil, bin(t, "layercheck"), "lint", "--kubespray-version", "v2.31.0", "-i", inv)
			assert.Equal(t, 2, r.code, r.all())
			assert.Contains(t, r.stderr, inv+" as an inventory source: it is a whole-file ansible-vault inventory ($ANSIBLE_VAULT;1.1;AES256)")
			assert.NotContains(t, r.all(), "[ini]", "never parsed as INI")

			r = run(t, dir, nil, bin(t, "layercheck"), "inventory", "--list", "-i", inv)
			assert.Equal(t, 0, r.code, r.all())
			assert.Contains(t, r.stderr, "whole-file ansible-vault inventory")
			assert.Contains(t, r.stderr, "No inventory was parsed")
			assert.NotContains(t, r.stdout, "ANSIBLE_VAULT", "no bogus host named after the vault header")
			assert.NotContains(t, r.stdout, "6", "no bogus host named after the hex line")

			a := run(t, dir, testutil.AnsibleEnv("HOME="+dir), testutil.Ansible(t, "ansible-inventory"), "--list", "-i", inv)
			assert.Equal(t, a.code, r.code, "same exit code as ansible-inventory (%s)", a.stderr)
		})
	}
}

// Why 2: an inventory nested 300 levels deep does not lint "OK": lint
// fails with the place; as a group_vars file inventory --list exits 250
// as ansible-inventory does (RecursionError), as a source it warns and
// exits 0 as ansible-inventory does.
func TestDeepInventoryIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"deep/hosts.yml":         deepYAML(300),
		"gv/hosts.ini":           "[kube_control_plane]\ncp1\n",
		"gv/group_vars/all.yml":  strings.SplitN(deepYAML(300), "  vars:\n", 2)[1][2:],
		"ok/hosts.yml":           deepYAML(100),
		"ok/group_vars/.keep.md": "",
	})
	deep := filepath.Join(dir, "deep", "hosts.yml")
	r := run(t, dir, nil, bin(t, "layercheck"), "lint", "--kubespray-version", "v2.31.0", "-i", deep)
	assert.Equal(t, 2, r.code, r.all())
	assert.Regexp(t, `deep/hosts.yml:\d+:\d+: maximum nesting depth exceeded`, r.stderr)
	assert.NotContains(t, r.stdout, "OK:")

	r = run(t, dir, nil, bin(t, "layercheck"), "inventory", "--list", "-i", deep)
	a := run(t, dir, testutil.AnsibleEnv("HOME="+dir), testutil.Ansible(t, "ansible-inventory"), "--list", "-i", deep)
	assert.Equal(t, a.code, r.code, "source: same exit code as ansible-inventory: %s", r.all())
	assert.Contains(t, r.stderr, "maximum nesting depth exceeded")

	gv := filepath.Join(dir, "gv", "hosts.ini")
	r = run(t, dir, nil, bin(t, "layercheck"), "inventory", "--list", "-i", gv)
	a = run(t, dir, testutil.AnsibleEnv("HOME="+dir), testutil.Ansible(t, "ansible-inventory"), "--list", "-i", gv)
	assert.Equal(t, 250, a.code, "ansible-inventory: %s", a.stderr)
	assert.Equal(t, a.code, r.code, "group_vars: same exit code as ansible-inventory: %s", r.all())
	assert.Contains(t, r.stderr, "gv/group_vars/all.yml:")

	// what ansible-core loads, layercheck loads
	r = run(t, dir, nil, bin(t, "layercheck"), "inventory", "--list", "-i", filepath.Join(dir, "ok", "hosts.yml"))
	assert.Equal(t, 0, r.code, r.all())
	assert.Contains(t, r.stdout, `"h1"`)
}

// Why 2: a .crt that holds only a private key is flagged as a garbage .crt
// is, and the key never appears in the output.
func TestKeyOnlyCertificateIsFlagged(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalECPrivateKey(k)
	require.NoError(t, err)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	write(t, root, map[string]string{
		"etc/kubernetes/ssl/apiserver.crt":          string(keyPEM),
		"etc/kubernetes/ssl/front-proxy-client.crt": "garbage\n",
	})
	body := strings.Split(string(keyPEM), "\n")[1]
	for _, format := range []string{"text", "json"} {
		r := run(t, root, nil, bin(t, "layercheck"), "node", "--root", root, "--host", "cp1", "--group", "kube_control_plane",
			"--layer", "certificates", "--format", format)
		assert.Equal(t, 1, r.code, r.all())
		assert.Contains(t, r.stdout, "/etc/kubernetes/ssl/apiserver.crt on cp1 is not a readable certificate: holds a private key but no PEM CERTIFICATE block")
		assert.Contains(t, r.stdout, "/etc/kubernetes/ssl/front-proxy-client.crt on cp1 is not a readable certificate: no PEM CERTIFICATE block")
		assert.NotContains(t, r.all(), body[:20])
	}
}
