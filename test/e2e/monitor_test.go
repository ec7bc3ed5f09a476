//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// monitorPlaybook installs the collection's monitor role on every node,
// as its README shows.
const monitorPlaybook = `- name: Install layercheck's node metrics
  hosts: k8s_cluster:etcd
  become: true
  gather_facts: false
  roles:
    - role: layercheck.kubespray.monitor
`

var (
	etcdCertMetric = regexp.MustCompile(`(?m)^layercheck_certificate_not_after_timestamp_seconds\{[^}]*family="etcd"[^}]*\} \S+$`)
	etcdLayerOK    = regexp.MustCompile(`(?m)^layercheck_layer_status\{layer="etcd",scope="node",status="ok"\} 1$`)
)

// monitor runs the monitor role on the nodes (the systemd service and
// timer, on machines whose systemd runs them), then checks what the
// service wrote for node_exporter, and that a second run changes nothing.
func (s *stage) monitor(t *testing.T) {
	t.Helper()
	play := filepath.Join(t.TempDir(), "monitor.yml")
	if err := os.WriteFile(play, []byte(monitorPlaybook), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"ANSIBLE_CONFIG=" + filepath.Join(s.ksDir, "ansible.cfg"), "ANSIBLE_NOCOLOR=1",
		"ANSIBLE_COLLECTIONS_PATH=" + filepath.Join(repoRoot, "playbooks", "collections")}
	for i, wantChanged := range []bool{true, false} {
		out, err := inLab(t, timeoutVerify, s.log("monitor"), s.ksDir, env, venvBin(s.r, "ansible-playbook"), "-i", s.inv, play)
		rc, ok := recap(out)
		if err != nil || !ok {
			t.Fatalf("monitor role, run %d (%v):\n%s", i+1, err, tail(out, 40))
		}
		if changed := !strings.Contains(rc, "changed=0") || strings.Count(rc, "changed=0") != 3; changed != wantChanged {
			t.Errorf("monitor role, run %d: changed is %v, want %v:\n%s", i+1, changed, wantChanged, rc)
		}
	}
	for _, n := range []string{"node1", "node2", "node3"} {
		out := onNode(t, n, "systemctl is-enabled layercheck-monitor.timer; systemctl is-active layercheck-monitor.timer; "+
			"systemctl start layercheck-monitor.service; cat /var/lib/node_exporter/textfile_collector/layercheck.prom")
		if !strings.HasPrefix(out, "enabled\nactive\n") {
			t.Errorf("%s: the timer is not enabled and active:\n%s", n, tail(out, 5))
		}
		if !etcdCertMetric.MatchString(out) || !etcdLayerOK.MatchString(out) {
			t.Errorf("%s: layercheck.prom has no etcd certificate metric or etcd layer ok:\n%s", n, tail(out, 30))
		}
	}
}
