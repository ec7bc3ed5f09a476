//go:build shared

package collection

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/internal/testutil"
)

// hostAddr is the start of an enabled node1..node3 line of kubespray's
// sample inventory.ini, e.g. "node1 ansible_host=95.54.0.12  # ip=10.3.0.1 etcd_member_name=etcd1".
var hostAddr = regexp.MustCompile(`^(node[123]) ansible_host=\S+(.*)$`)

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
			testutil.EnableSampleNodes(t, ini, func(line string) string {
				m := hostAddr.FindStringSubmatch(line)
				if m == nil {
					t.Fatalf("%s: %q has no ansible_host to point at a closed port", ini, line)
				}
				return m[1] + unreachable + m[2]
			})
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
