//go:build shared

package collection

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
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

// kubespray v2.31.0's own playbooks/ansible_version.yml (copied from
// ../shared/kubespray-src/v2.31.0) and the lint play, in one run under
// ansible 11.13 (v2.31.0's pin), on v2.31.0's sample inventory: the
// version check passes and the sample lints clean.
func TestPinnedAnsibleWithKubesprayVersionCheck(t *testing.T) {
	requireBinaries(t)
	playbook, envv := pinnedEnv(t)
	inv := filepath.Join(t.TempDir(), "sample")
	copyTree(t, testutil.Shared(t, "kubespray", "v2.31.0", "inventory", "sample"), inv)
	ini := filepath.Join(inv, "inventory.ini")
	testutil.EnableSampleNodes(t, ini, func(line string) string {
		m := hostAddr.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s: %q has no ansible_host", ini, line)
		}
		return m[1] + unreachable + m[2]
	})
	plays := t.TempDir()
	copyTree(t, testutil.Shared(t, "kubespray-src", "v2.31.0", "playbooks"), filepath.Join(plays, "playbooks"))
	extra := `{"layercheck_lint_kubespray_version": "v2.31.0"}`
	r := runCmd(t, t.TempDir(), envv, playbook, "-i", ini, "-e", extra,
		filepath.Join(plays, "playbooks", "ansible_version.yml"), lintPlaybook())
	if r.code != 0 {
		t.Fatalf("kubespray's version check and the lint under ansible %s (exit %d):\n%s", pinnedAnsible, r.code, r.out)
	}
	if !strings.Contains(r.out, "Check 2.18.0 <= Ansible version < 2.19.0") {
		t.Errorf("kubespray's version check did not run:\n%s", r.out)
	}
	for _, h := range []string{"node1", "node2", "node3"} {
		recap(t, r.out, h, "unreachable=0    failed=0")
	}
}

// The role's layercheck_lint_kubespray_dir: a kubespray checkout kept
// elsewhere (here v2.31.0's whole tree), given relative to the directory
// ansible-playbook is started in, is read at run time; a directory that
// is no kubespray checkout fails the play, saying so.
func TestRoleKubesprayDir(t *testing.T) {
	requireBinaries(t)
	work := t.TempDir()
	testutil.CopyTree(t, testutil.Shared(t, "kubespray-full", "v2.31.0"), filepath.Join(work, "kubespray-fork"))
	ini := "[kube_control_plane]\nnode1" + unreachable + "\n[etcd]\nnode1\n[kube_node]\nnode1\n"
	testutil.WriteTree(t, work, map[string]string{"inv/hosts.ini": ini, "inv/group_vars/all.yml": "helm_enabled: \"true\"\n"})
	facts := t.TempDir()
	testutil.WriteTree(t, facts, map[string]string{"facts.yml": factsPlaybook(facts)})
	extra := `{"layercheck_lint_kubespray_dir": "kubespray-fork", "layercheck_lint_fail_on_errors": false}`
	r := run(t, work, env(t), "ansible-playbook", "-i", "inv/hosts.ini", "-e", extra, lintPlaybook(), filepath.Join(facts, "facts.yml"))
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.out)
	}
	f := readFacts(t, facts, "node1")["node1"]
	fork := filepath.Join(work, "kubespray-fork")
	if f.Catalogue != "kubespray checkout at "+fork || f.CatalogueWhy != "chosen with kubespray_dir "+fork || f.Errors != 1 {
		t.Errorf("catalogue %q why %q errors %d", f.Catalogue, f.CatalogueWhy, f.Errors)
	}

	extra = `{"layercheck_lint_kubespray_dir": "inv"}`
	r = run(t, work, env(t), "ansible-playbook", "-i", "inv/hosts.ini", "-e", extra, lintPlaybook())
	if want := "kubespray_dir " + filepath.Join(work, "inv") + ": not a kubespray checkout"; r.code == 0 || !strings.Contains(r.out, want) {
		t.Errorf("exit %d, want a failure saying %q:\n%s", r.code, want, r.out)
	}
	extra = `{"layercheck_lint_kubespray_dir": "kubespray-fork", "layercheck_lint_kubespray_version": "v2.31"}`
	r = run(t, work, env(t), "ansible-playbook", "-i", "inv/hosts.ini", "-e", extra, lintPlaybook())
	if r.code == 0 || !strings.Contains(r.out, "not both") {
		t.Errorf("exit %d, want the preflight to refuse both:\n%s", r.code, r.out)
	}
}
