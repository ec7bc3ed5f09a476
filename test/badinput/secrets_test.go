package badinput_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// closedPort is a loopback port nothing listens on (an instant refusal).
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// Why 3 (secrets): secrets fed through every input — a kubeconfig server
// URL and token, etcd.env endpoints, extra vars (k=v and JSON), inventory
// values, group_vars holding a private key, module options with
// _ansible_no_log — never appear in any output of any command (lint,
// inventory, node, cluster, verify, version) or module (inventory_lint,
// node_facts, cluster_facts), in any format. Each run must also show it read the input (the host or
// variable name appears), so the scan cannot pass on empty output.
func TestSecretScanEveryCommandAndFormat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	port := closedPort(t)
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalECPrivateKey(k)
	require.NoError(t, err)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
	keyBody := strings.Split(keyPEM, "\n")[1][:24]

	secrets := []string{
		"KubePW-1111", "KubeToken-2222abcdefgh", "EtcdPW-3333", "XtraPW-4444", "OidcSecret-5555",
		"InvPW-6666", "EncTok-7777", "Missing-8888", "NoLog-9999", "UrlVarPW-1010", keyBody,
	}
	indent := "    " + strings.ReplaceAll(strings.TrimSpace(keyPEM), "\n", "\n    ")
	write(t, dir, map[string]string{
		"inv/hosts.ini": "[kube_control_plane]\ncp1 ansible_host=127.0.0.1 ansible_become_password=InvPW-6666\n" +
			"[etcd]\ncp1\n[kube_node]\ncp1\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n",
		"inv/group_vars/all.yml": "kube_encrypt_token: EncTok-7777\nkube_encrypt_secret_data: \"true\"\n" +
			"my_registry_url: https://robot:UrlVarPW-1010@registry.example.com/v2\n" +
			"my_tls_key: |\n" + indent + "\n",
		"kubeconfig": fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://admin:KubePW-1111@127.0.0.1:%d
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    token: KubeToken-2222abcdefgh
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`, port),
		"root/etc/etcd.env": fmt.Sprintf("ETCD_DATA_DIR=/var/lib/etcd\nETCD_ADVERTISE_CLIENT_URLS=https://root:EtcdPW-3333@127.0.0.1:%d\n"+
			"ETCD_LISTEN_CLIENT_URLS=https://root:EtcdPW-3333@127.0.0.1:%d\nETCD_NAME=etcd1\n", port, port),
	})
	inv := filepath.Join(dir, "inv")
	extra := []string{"-e", "ansible_password=XtraPW-4444", "-e", `{"kube_oidc_client_secret": "OidcSecret-5555", "kube_oidc_auth": "yes"}`}
	lc := bin(t, "layercheck")

	check := func(what, shows string, r result) {
		t.Helper()
		out := r.all()
		assert.Contains(t, out, shows, "%s read its input", what)
		for _, s := range secrets {
			assert.NotContains(t, out, s, "%s printed a secret", what)
		}
	}
	// every subcommand in every --format it takes (the lists are the
	// subcommands' own: a format added to one must be added here)
	for _, format := range []string{"text", "json", "sarif", "junit"} {
		args := append([]string{"lint", "--kubespray-version", "v2.31.0", "--format", format, "-i", inv}, extra...)
		check("lint --format "+format, "kube_oidc_auth", run(t, dir, nil, lc, args...))
	}
	for _, format := range []string{"text", "json", "junit", "markdown"} {
		check("cluster --format "+format, "127.0.0.1", run(t, dir, nil, lc, "cluster", "--kubeconfig", filepath.Join(dir, "kubeconfig"),
			"-i", inv, "--format", format, "--timeout", "3s", "--no-probe"))

		check("node --format "+format, "etcd", run(t, dir, nil, lc, "node", "--root", filepath.Join(dir, "root"), "--host", "cp1",
			"--group", "etcd", "--group", "kube_control_plane", "--etcd-member", "cp1", "--layer", "etcd", "--format", format,
			"--net-timeout", "2s"))

		// verify reaches cp1 at a closed port (unreachable at once); the
		// inventory's become password is refused by name, the kubeconfig's
		// URL password and token stay hidden
		args := append([]string{"verify", "-i", inv, "--kubeconfig", filepath.Join(dir, "kubeconfig"), "--format", format,
			"--connect-timeout", "3s", "-e", fmt.Sprintf("ansible_port=%d", port)}, extra...)
		check("verify --format "+format, "cp1", run(t, dir, nil, lc, args...))
	}
	check("version", "layercheck", run(t, dir, nil, lc, "version"))
	// inventory --list and --host print the inventory verbatim on stdout,
	// as ansible-inventory does (test/inventorydiff compares them byte for
	// byte): their stderr and errors are scanned.
	for a, shows := range map[string]string{"--list": "cp1", "--host=cp1": "kube_encrypt_secret_data"} {
		r := run(t, dir, nil, lc, append(append([]string{"inventory"}, strings.Split(a, "=")...), append([]string{"-i", inv}, extra...)...)...)
		assert.Contains(t, r.stdout, shows, "inventory %v read its input", a)
		for _, s := range secrets {
			assert.NotContains(t, r.stderr, s, "inventory %v printed a secret on stderr", a)
		}
	}
	// a malformed -e in the error message
	check("inventory -e", "-e", run(t, dir, nil, lc, "inventory", "--list", "-i", inv, "-e", `{"ansible_password": "NoLog-9999"`))

	// the module, with and without no_log on the task
	for _, noLog := range []bool{false, true} {
		args := map[string]any{
			"inventory":         []string{inv},
			"kubespray_version": "v2.31.0",
			"extra_vars":        map[string]any{"ansible_password": "XtraPW-4444", "kube_oidc_client_secret": "OidcSecret-5555"},
			"extra_vars_args":   []string{"ansible_password=XtraPW-4444", `{"kube_oidc_client_secret": "OidcSecret-5555"}`},
			"_ansible_no_log":   noLog,
		}
		if noLog {
			args["extra_vars_args"] = []string{"@/nonexistent/Missing-8888.yml", "{NoLog-9999"}
		}
		b, _ := json.Marshal(args)
		check(fmt.Sprintf("inventory_lint module (no_log %v)", noLog), "catalogue", module(t, dir, string(b)))
	}

	// node_facts on the node tree whose etcd.env holds URL passwords, and
	// cluster_facts with the kubeconfig's URL password and token
	for _, noLog := range []bool{false, true} {
		b, _ := json.Marshal(map[string]any{
			"root": filepath.Join(dir, "root"), "inventory_hostname": "cp1", "group_names": []string{"etcd", "kube_control_plane"},
			"etcd_members": []string{"cp1"}, "layers": []string{"etcd"}, "net_timeout": 2,
			"_ansible_module_name": "layercheck.kubespray.node_facts", "_ansible_no_log": noLog,
		})
		check(fmt.Sprintf("node_facts module (no_log %v)", noLog), "etcd", moduleNamed(t, dir, "node_facts", string(b)))

		b, _ = json.Marshal(map[string]any{
			"kubeconfig": filepath.Join(dir, "kubeconfig"), "kube_control_plane": []string{"cp1"}, "kube_node": []string{"cp1"},
			"timeout": 3, "probe": false,
			"_ansible_module_name": "layercheck.kubespray.cluster_facts", "_ansible_no_log": noLog,
		})
		check(fmt.Sprintf("cluster_facts module (no_log %v)", noLog), "127.0.0.1", moduleNamed(t, dir, "cluster_facts", string(b)))
	}
}
