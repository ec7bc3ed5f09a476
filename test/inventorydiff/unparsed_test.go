package inventorydiff_test

import (
	"path/filepath"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
)

// What ansible-inventory keeps from an INI file that fails half way inside
// a directory: everything before the failing line when another file
// parses; no host at all when nothing parses (a BOM before the first
// section header, a bad host line).
func TestUnparsedINIInDirectory(t *testing.T) {
	dir := t.TempDir()
	half := "[etcd]\nnode1 helm_enabled=true\n[kube_node]\nnode1\nnode2 a=b c\nnode3\n"
	testutil.WriteTree(t, dir, map[string]string{
		"mixed/a.ini":                "[kube_control_plane]\nnode1\n",
		"mixed/hosts.ini":            half,
		"only/hosts.ini":             half,
		"bom/hosts.ini":              "\ufeff[kube_control_plane]\nnode1\n[etcd]\nnode1\n",
		"bom/group_vars/all/all.yml": "a: 1\n",
	})
	m := compareList(t, 1, "-i", filepath.Join(dir, "mixed"))
	if hv, _ := m["_meta"].(map[string]any)["hostvars"].(map[string]any); hv["node2"] != nil || hv["node3"] != nil {
		t.Errorf("hosts after the failing line are listed: %v", hv)
	}
	compareList(t, 0, "-i", filepath.Join(dir, "only"))
	compareList(t, 0, "-i", filepath.Join(dir, "bom"))
}
