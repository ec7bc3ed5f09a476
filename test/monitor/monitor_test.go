// Package monitor tests the role layercheck.kubespray.monitor with real
// ansible-core (the repository's .venv) on this machine (connection
// local): it installs the layercheck binary the collection ships for this
// machine, its settings and the systemd service and timer into a staging
// root (layercheck_monitor_manage_systemd false: no systemd runs in the
// test), the units pass `systemd-analyze verify`, the service's command
// run as systemd would run it writes the metrics node_exporter reads, a
// second run changes nothing, check mode changes nothing, and state absent
// removes everything.
package monitor

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kballard/go-shellquote"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/test/testutil"
)

const playbook = `- name: Monitor
  hosts: all
  gather_facts: false
  roles:
    - role: layercheck.kubespray.monitor
`

const inventory = `[kube_control_plane]
node1

[etcd]
node1

[kube_node]
node1

[k8s_cluster:children]
kube_control_plane
kube_node

[all:vars]
ansible_connection=local
ansible_python_interpreter={{ ansible_playbook_python }}
dns_domain=cluster.local
upstream_dns_servers=["10.10.0.1"]
`

var recap = regexp.MustCompile(`node1\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=0\s+failed=0`)

// playArgs are ansible-playbook's arguments with extra as one JSON -e.
func playArgs(t *testing.T, extra map[string]any) []string {
	t.Helper()
	ev, err := json.Marshal(extra)
	require.NoError(t, err)
	return []string{"-i", "inventory.ini", "playbook.yml", "-e", string(ev)}
}

// play runs the role with the extra vars and returns its output and the
// number of changed tasks.
func play(t *testing.T, dir string, env []string, extra map[string]any, args ...string) (string, int) {
	t.Helper()
	out, err := testutil.RunPlaybook(t, dir, env, 5*time.Minute, append(playArgs(t, extra), args...)...)
	require.NoError(t, err, out)
	m := recap.FindStringSubmatch(out)
	require.NotNil(t, m, out)
	changed := 0
	for _, c := range m[2] {
		changed = changed*10 + int(c-'0')
	}
	return out, changed
}

func TestMonitorRole(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	require.NoError(t, err, "systemd-analyze missing: run scripts/ssh-deps.sh (make test runs it)")

	dir := t.TempDir()
	colls := filepath.Join(dir, "collections")
	require.NoError(t, testutil.LayOutCollection(colls, "layercheck"))
	testutil.WriteTree(t, dir, map[string]string{"playbook.yml": playbook, "inventory.ini": inventory})
	env := testutil.AnsibleEnv("ANSIBLE_COLLECTIONS_PATH="+colls, "ANSIBLE_STDOUT_CALLBACK=default", "ANSIBLE_NOCOLOR=1")

	made := time.Date(2026, 11, 30, 14, 22, 6, 0, time.UTC)
	tr, err := harness.Build(filepath.Join(dir, "node"), harness.Config{Now: made, Hosts: []string{"node1"}, IPs: []string{"10.10.0.11"}})
	require.NoError(t, err)
	stage := filepath.Join(dir, "stage") // the host's / for what the role writes
	p := func(rel string) string { return filepath.Join(stage, rel) }
	extra := map[string]any{
		"layercheck_monitor_bin_dir":        p("usr/local/bin"),
		"layercheck_monitor_conf_dir":       p("etc/layercheck"),
		"layercheck_monitor_unit_dir":       p("etc/systemd/system"),
		"layercheck_monitor_textfile_dir":   p("var/lib/node_exporter/textfile_collector"),
		"layercheck_monitor_manage_systemd": false,
		"layercheck_monitor_root":           tr.Root,
		// Nothing answers for this tree's etcd and DNS addresses.
		"layercheck_monitor_skip": []string{"etcd", "dns"},
	}

	// Check mode on a fresh host: nothing is written, nothing fails.
	out, changed := play(t, dir, env, extra, "--check")
	assert.Positive(t, changed, out)
	_, err = os.Stat(stage)
	assert.True(t, os.IsNotExist(err), "check mode wrote %s", stage)

	out, changed = play(t, dir, env, extra)
	assert.Positive(t, changed, out)
	unitDir := p("etc/systemd/system")
	service := filepath.Join(unitDir, "layercheck-monitor.service")
	timer := filepath.Join(unitDir, "layercheck-monitor.timer")
	bin := p("usr/local/bin/layercheck")
	for _, f := range []string{service, timer, bin, p("etc/layercheck/monitor.json")} {
		require.FileExists(t, f)
	}

	// The units as systemd reads them (offline: no running systemd needed).
	cmd := exec.Command(analyze, "verify", service, timer)
	vout, err := cmd.CombinedOutput()
	require.NoError(t, err, "systemd-analyze verify: %s", vout)
	assert.Empty(t, strings.TrimSpace(string(vout)), "systemd-analyze verify warns")
	tdata, err := os.ReadFile(timer)
	require.NoError(t, err)
	assert.Contains(t, string(tdata), "OnCalendar=hourly\n")

	// The settings carry the host's groups and the inventory's values.
	conf, err := os.ReadFile(p("etc/layercheck/monitor.json"))
	require.NoError(t, err)
	assert.Contains(t, string(conf), `"upstream_dns_servers": [`)
	assert.Contains(t, string(conf), `"etcd_members": [`)
	assert.Contains(t, string(conf), `"kube_control_plane"`)

	// The service's command, run as systemd runs it, writes the metrics.
	sdata, err := os.ReadFile(service)
	require.NoError(t, err)
	argv := execStart(t, string(sdata))
	require.Equal(t, bin, argv[0])
	run := exec.Command(argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	err = run.Run()
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		require.True(t, ok && ee.ExitCode() == 1, "%v: %s", err, stderr.String()) // SuccessExitStatus=1
	}
	assert.Contains(t, stdout.String(), "certificates", "the text report goes to the journal")
	prom := p("var/lib/node_exporter/textfile_collector/layercheck.prom")
	data, err := os.ReadFile(prom)
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(bytes.NewReader(data))
	require.NoError(t, err)
	require.Contains(t, mfs, "layercheck_certificate_not_after_timestamp_seconds")
	assert.Contains(t, string(data), `family="etcd",issuer_cn="etcd-ca",path="/etc/ssl/etcd/ssl/member-node1.pem",renewer="make-ssl-etcd.sh"`)
	assert.Contains(t, string(data), `layercheck_layer_status{layer="certificates",scope="node",status="ok"} 1`)
	assert.NotContains(t, string(data), `layer="etcd"`, "--skip etcd from layercheck_monitor_skip")

	// Idempotent.
	out, changed = play(t, dir, env, extra)
	assert.Zero(t, changed, out)

	// Check mode with a new schedule: reported, not written.
	extra["layercheck_monitor_on_calendar"] = "daily"
	out, changed = play(t, dir, env, extra, "--check", "--diff")
	assert.Positive(t, changed, out)
	assert.Contains(t, out, "+OnCalendar=daily")
	tdata2, err := os.ReadFile(timer)
	require.NoError(t, err)
	assert.Equal(t, string(tdata), string(tdata2))
	delete(extra, "layercheck_monitor_on_calendar")

	// Absent removes everything, the metrics too; twice changes nothing.
	extra["layercheck_monitor_state"] = "absent"
	out, changed = play(t, dir, env, extra)
	assert.Positive(t, changed, out)
	for _, f := range []string{service, timer, bin, p("etc/layercheck/monitor.json"), prom} {
		assert.NoFileExists(t, f)
	}
	out, changed = play(t, dir, env, extra)
	assert.Zero(t, changed, out)

	// The argument spec refuses a bad state.
	extra["layercheck_monitor_state"] = "gone"
	out, err = testutil.RunPlaybook(t, dir, env, 5*time.Minute, playArgs(t, extra)...)
	require.Error(t, err, out)
	assert.Contains(t, out, "layercheck_monitor_state")
}

// execStart splits the service's ExecStart= as systemd does for what the
// role writes: double-quoted arguments with \ escapes, % and $ doubled.
func execStart(t *testing.T, unit string) []string {
	t.Helper()
	for _, line := range strings.Split(unit, "\n") {
		if rest, ok := strings.CutPrefix(line, "ExecStart="); ok {
			args, err := shellquote.Split(rest)
			require.NoError(t, err, line)
			for i, a := range args {
				args[i] = strings.NewReplacer("%%", "%", "$$", "$").Replace(a)
			}
			return args
		}
	}
	t.Fatalf("no ExecStart= in\n%s", unit)
	return nil
}
