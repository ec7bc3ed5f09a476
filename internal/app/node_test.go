package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/verify/node"
)

func runNodeCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Run(context.Background(), append([]string{"node"}, args...), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	code := ExitCode(err)
	if err != nil && code != 1 && code != 2 {
		t.Fatalf("node %v: %v", args, err)
	}
	if err != nil {
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), code
}

func TestNodeCommand(t *testing.T) {
	made := time.Date(2026, 11, 30, 14, 22, 6, 0, time.UTC)
	tr, err := harness.Build(t.TempDir(), harness.Config{Now: made})
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"--root", tr.Root, "--host", "node1", "--now", "2026-12-01T00:00:00Z",
		"--group", "kube_control_plane", "--group", "etcd", "--group", "kube_node",
		"--etcd-member", "node1", "--etcd-member", "node2", "--etcd-member", "node3",
		"--skip", "etcd", "--skip", "dns", "--vars", `{"kube_version": "1.35.4", "kube_pods_subnet": "10.233.64.0/18"}`}

	out, _, code := runNodeCLI(t, base...)
	if code != 0 || !strings.Contains(out, "layercheck node: node1") || !strings.Contains(out, "certificates  ok") {
		t.Fatalf("healthy: code %d\n%s", code, out)
	}

	out, _, code = runNodeCLI(t, append(base, "--format", "json")...)
	var rep struct {
		Status string                     `json:"status"`
		Layers map[string]json.RawMessage `json:"layers"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Status != "ok" || len(rep.Layers) != 5 {
		t.Fatalf("json: code %d status %q layers %d\n%s", code, rep.Status, len(rep.Layers), out)
	}

	// Judged 364 days later, the one-year kubeadm certificates are in their
	// last week: text names the file, the host and the fix; exit 1.
	later := append([]string{}, base...)
	later[5] = made.Add(364 * 24 * time.Hour).Format(time.RFC3339)
	out, _, code = runNodeCLI(t, later...)
	if code != 1 || !strings.Contains(out, "[FAIL] certificates certificate:/etc/kubernetes/ssl/apiserver.crt") ||
		!strings.Contains(out, "fix: on node1 run `kubeadm certs renew apiserver`") {
		t.Fatalf("expiring: code %d\n%s", code, out)
	}

	// Drift given with --vars.
	drift := append(append([]string{}, base[:len(base)-1]...), `{"kube_pods_subnet": "10.244.0.0/16"}`)
	out, _, code = runNodeCLI(t, drift...)
	if code != 1 || !strings.Contains(out, `kube_pods_subnet is "10.244.0.0/16" in the inventory but "10.233.64.0/18" on node1`) {
		t.Fatalf("drift: code %d\n%s", code, out)
	}
}

func TestNodeCommandUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--format", "yaml"},
		{"--root", "relative"},
		{"--vars", `{"kube_cert_dri": "/x"}`},
		{"--addr-map", "127.0.0.1:53"},
		{"--layer", "nope"},
		{"extra-arg"},
	} {
		_, errOut, code := runNodeCLI(t, args...)
		if code != 2 || errOut == "" {
			t.Errorf("%v: code %d err %q", args, code, errOut)
		}
	}
}

// Without --vars the node is judged with kubespray's defaults, booleans
// included: enable_nodelocaldns is true, so kubelet's clusterDNS must be
// nodelocaldns_ip (as kubespray renders it), and only an explicit false
// makes it the CoreDNS address.
func TestNodeCommandKubesprayBooleanDefaults(t *testing.T) {
	tr, err := harness.Build(t.TempDir(), harness.Config{Now: time.Date(2026, 11, 30, 14, 22, 6, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	// The DNS servers are not running: map both tiers to a closed loopback
	// port so the queries fail fast; only the kubelet check is looked at.
	base := []string{"--root", tr.Root, "--host", "node1", "--now", "2026-12-01T00:00:00Z", "--group", "k8s_cluster",
		"--layer", "dns", "--net-timeout", "1s", "--format", "json",
		"--addr-map", "169.254.25.10:53=127.0.0.1:9", "--addr-map", "10.233.0.3:53=127.0.0.1:9"}
	clusterDNS := func(args ...string) string {
		out, _, _ := runNodeCLI(t, append(append([]string{}, base...), args...)...)
		var rep struct {
			Layers map[string]struct {
				Results []struct{ Check, Status, Msg string } `json:"results"`
			} `json:"layers"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("json: %v\n%s", err, out)
		}
		for _, r := range rep.Layers["dns"].Results {
			if r.Check == "kubelet_cluster_dns" {
				return r.Status + ": " + r.Msg
			}
		}
		t.Fatalf("no kubelet_cluster_dns result:\n%s", out)
		return ""
	}
	if got := clusterDNS(); !strings.HasPrefix(got, "ok") {
		t.Errorf("defaults: kubelet clusterDNS judged %q, want ok (enable_nodelocaldns defaults to true)", got)
	}
	if got := clusterDNS("--vars", `{"enable_nodelocaldns": false}`); !strings.HasPrefix(got, "fail") {
		t.Errorf("enable_nodelocaldns false: kubelet clusterDNS judged %q, want fail", got)
	}
}

// --vars '{"enable_nodelocaldns": "false"}' is read as false, as the
// role's `| bool` reads it, with a warning; a JSON false is no finding.
func TestNodeCommandStringBooleanWarns(t *testing.T) {
	fixed, warnings, err := jsonStringBools(`{"enable_nodelocaldns": "false", "helm_enabled": 1, "kube_version": "1.35.4"}`, reflect.TypeOf(node.Options{}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"enable_nodelocaldns": false, "helm_enabled": true, "kube_version": "1.35.4"}`, fixed)
	require.Len(t, warnings, 2)
	assert.Contains(t, warnings[0], `--vars enable_nodelocaldns is the string "false", not a boolean: read here as false`)
	assert.Contains(t, warnings[1], `--vars helm_enabled is the int 1, not a boolean: read here as true`)
	_, warnings, err = jsonStringBools(`{"enable_nodelocaldns": false}`, reflect.TypeOf(node.Options{}))
	require.NoError(t, err)
	assert.Empty(t, warnings)
	// left to the decoder, which names the field: "y" and 1.0 too, which
	// the role's `| bool` coerces (to false, and true) only with a
	// deprecation warning from ansible-core 2.19 on
	for _, v := range []string{`"perhaps"`, `"y"`, `1.0`} {
		fixed, warnings, err = jsonStringBools(`{"enable_nodelocaldns": `+v+`}`, reflect.TypeOf(node.Options{}))
		require.NoError(t, err)
		assert.JSONEq(t, `{"enable_nodelocaldns": `+v+`}`, fixed)
		assert.Empty(t, warnings)
	}
}

// --vars @FILE reads the values from a file (the monitor role's unit does);
// a missing file or a directory is a usage error naming it.
func TestNodeVarsFile(t *testing.T) {
	dir := t.TempDir()
	f := dir + "/monitor.json"
	require.NoError(t, os.WriteFile(f, []byte(`{"kube_cert_dir": "/nonexistent/ssl", "group_names": ["kube_node"]}`), 0o644))
	out, _, _ := runNodeCLI(t, "--root", dir, "--layer", "certificates", "--vars", "@"+f, "--format", "json")
	var rep node.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Contains(t, out, "/nonexistent/ssl", "kube_cert_dir from the file")

	for _, bad := range []string{dir + "/missing.json", dir} {
		_, errOut, code := runNodeCLI(t, "--root", dir, "--vars", "@"+bad)
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, "node: --vars: ")
		assert.Contains(t, errOut, bad)
	}
}

// auto_renew_certificates reaches the certificates layer from --vars (as
// the monitor role's monitor.json gives it): on a control-plane host the
// renewal script and timer are checked; without it, not.
func TestNodeAutoRenewCertificatesVar(t *testing.T) {
	tr, err := harness.Build(t.TempDir(), harness.Config{Now: time.Date(2026, 11, 30, 14, 22, 6, 0, time.UTC)})
	require.NoError(t, err)
	base := []string{"--root", tr.Root, "--host", "node1", "--now", "2026-12-01T00:00:00Z", "--group", "kube_control_plane",
		"--etcd-member", "node1", "--layer", "certificates", "--format", "json"}
	checks := func(vars string) map[string]string {
		t.Helper()
		args := base
		if vars != "" {
			args = append(append([]string{}, base...), "--vars", vars)
		}
		out, _, _ := runNodeCLI(t, args...)
		var rep node.Report
		require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
		got := map[string]string{}
		for _, r := range rep.Layers["certificates"].Results {
			if strings.Contains(r.Check, "renew") {
				got[r.Check] = string(r.Status)
			}
		}
		return got
	}
	// A fixture root: systemd is not read, and the tree has no script.
	want := map[string]string{"renew_timer:k8s-certs-renew.timer": "warn", "present:/usr/local/bin/k8s-certs-renew.sh": "fail"}
	assert.Equal(t, want, checks(`{"auto_renew_certificates": true}`))
	assert.Equal(t, want, checks(`{"auto_renew_certificates": "true"}`), "a string read as | bool reads it")
	assert.Empty(t, checks(`{"auto_renew_certificates": false}`))
	assert.Empty(t, checks(""), "kubespray's default is false")
}
