package testutil

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// WriteTree writes files (slash-separated path relative to dir -> content)
// under dir as 0644 files, making the directories they need.
func WriteTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// CopyTree copies the directories and regular files of src to dst with
// plain permissions (0755 directories, 0644 files: Ansible's script
// inventory plugin would run an executable file), leaving out symlinks and
// other special files, so a test may change a copy of a read-only fixture.
func CopyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
}

// sampleNode matches a commented-out host line node1..node3 of kubespray's
// sample inventory (inventory/sample/inventory.ini), e.g.
// "# node1 ansible_host=95.54.0.12  # ip=10.3.0.1 etcd_member_name=etcd1".
var sampleNode = regexp.MustCompile(`^# (node[1-3] .*)$`)

// sampleNodeRef is a bare host name under a group, as the samples before
// kubespray v2.27 list the hosts defined in [all].
var sampleNodeRef = regexp.MustCompile(`^# (node[1-3])\s*$`)

// EnableSampleNodes uncomments the node1-node3 host lines of kubespray's
// sample inventory.ini at ini (a copy), passing each line, without its
// "# ", through edit (nil keeps it), and fails the test unless it found
// exactly three. It returns the file's content before the change.
func EnableSampleNodes(t testing.TB, ini string, edit func(line string) string) (orig []byte) {
	t.Helper()
	b, err := os.ReadFile(ini)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	enabled := 0
	for i, l := range lines {
		if m := sampleNode.FindStringSubmatch(l); m != nil {
			lines[i] = m[1]
			if edit != nil {
				lines[i] = edit(m[1])
			}
			enabled++
		} else if m := sampleNodeRef.FindStringSubmatch(l); m != nil {
			lines[i] = m[1]
		}
	}
	if enabled != 3 {
		t.Fatalf("%s: found %d commented node1-node3 lines, want 3", ini, enabled)
	}
	if err := os.WriteFile(ini, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// Golden compares got with the golden file at path, after rewriting the
// file with got when update is set (the test's -update flag). What names
// what was compared, e.g. "lint of inventory-samples/broken". A missing
// golden file fails the test.
func Golden(t testing.TB, path string, got []byte, update bool, what string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it, then review it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (rerun with -update after checking):\n%s", what, path, got)
	}
}

// ThreeNodeINI is an INI inventory of three nodes in kubespray's groups:
// node1-node3 in kube_control_plane (also the etcd group) and kube_node.
// Lines for more hosts may follow it.
const ThreeNodeINI = `[kube_control_plane]
node1
node2
node3
[etcd:children]
kube_control_plane
[kube_node]
node1
node2
node3
`
