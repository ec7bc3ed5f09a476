//go:build shared

package collection

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/internal/testutil"
)

// hostLine matches the commented-out node1..node3 lines of kubespray's
// sample inventory.ini, e.g. "# node1 ansible_host=95.54.0.12  # ip=10.3.0.1 etcd_member_name=etcd1".
var hostLine = regexp.MustCompile(`^# (node[123]) ansible_host=\S+(.*)$`)

// kubespray's own sample inventory (kubespray v2.31.0 and master,
// inventory/sample) with its node1-node3 host lines enabled passes the
// lint playbook with no error. The copy points ansible_host at a closed
// loopback port: nothing may contact the hosts.
func TestKubespraySampleInventory(t *testing.T) {
	requireBinaries(t)
	for _, version := range []string{"v2.31.0", "master"} {
		t.Run(version, func(t *testing.T) {
			src := testutil.Shared(t, "kubespray", version, "inventory", "sample")
			inv := filepath.Join(t.TempDir(), "sample")
			copyTree(t, src, inv)
			ini := filepath.Join(inv, "inventory.ini")
			b, err := os.ReadFile(ini)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(b), "\n")
			enabled := 0
			for i, l := range lines {
				if m := hostLine.FindStringSubmatch(l); m != nil {
					lines[i] = m[1] + unreachable + m[2]
					enabled++
				}
			}
			if enabled != 3 {
				t.Fatalf("%s: found %d of the node1-node3 lines to enable", ini, enabled)
			}
			if err := os.WriteFile(ini, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			facts := t.TempDir()
			testutil.WriteTree(t, facts, map[string]string{"facts.yml": factsPlaybook(facts)})
			extra := `{"layercheck_lint_kubespray_version": "` + version + `"}`
			r := run(t, t.TempDir(), env(t), "ansible-playbook", "-i", inv, "-e", extra, lintPlaybook(), filepath.Join(facts, "facts.yml"))
			if r.code != 0 {
				t.Fatalf("kubespray %s sample inventory failed the lint (exit %d):\n%s", version, r.code, r.out)
			}
			for h, f := range readFacts(t, facts, "node1", "node2", "node3") {
				if f.Errors != 0 || !strings.Contains(f.Catalogue, version) {
					t.Errorf("%s: want 0 errors with the %s catalogue, got %d (%s)", h, version, f.Errors, f.Catalogue)
				}
				recap(t, r.out, h, "unreachable=0    failed=0")
			}
		})
	}
}
