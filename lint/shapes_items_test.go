package lint

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/testutil"
)

// Every item of a list of dicts is checked, nested lists of dicts too: a
// string where kubespray's loop reads a dict is one finding per item, with
// the path to the item and the field the loop reads of each item.
func TestShapeItems(t *testing.T) {
	vars := filepath.Join("group_vars", "k8s_cluster", "k8s-cluster.yml")
	bad := t.TempDir()
	testutil.WriteTree(t, bad, map[string]string{
		"hosts.ini": strings.Replace(groupsINI, "%s", "node1", 1),
		vars: "containerd_registries_mirrors:\n" +
			"  - prefix: docker.io\n" +
			"    mirrors:\n" +
			"      - host: https://mirror.example\n" +
			"        capabilities: [pull, resolve]\n" +
			"      - https://second.example\n" +
			"  - quay.io\n",
	})
	r := lintRelease(t, "v2.31.0", bad)
	fs := find(r, "variable-shape", "containerd_registries_mirrors")
	require.Len(t, fs, 2, dump(r))

	nested, top := fs[0], fs[1]
	if strings.HasPrefix(fs[0].Message, "containerd_registries_mirrors[1]") {
		nested, top = fs[1], fs[0]
	}
	assert.Equal(t, SeverityError, top.Severity)
	assert.Equal(t, vars+":7:5", top.Where)
	assert.Equal(t, "containerd_registries_mirrors[1] is a str \"quay.io\"; kubespray v2.31.0 reads each item of containerd_registries_mirrors as a dict: "+
		"roles/container-engine/containerd/tasks/main.yml:82 reads .prefix of each item", top.Message)
	assert.Equal(t, `"quay.io"`, top.Value)
	assert.Contains(t, top.Fix, "write containerd_registries_mirrors[1] as a dict with mirrors, prefix, server")

	assert.Equal(t, vars+":6:9", nested.Where)
	assert.Equal(t, "containerd_registries_mirrors[0].mirrors[1] is a str \"https://second.example\"; kubespray v2.31.0 reads each item of containerd_registries_mirrors[0].mirrors as a dict: "+
		"roles/container-engine/containerd/templates/hosts.toml.j2:3 reads .host of each item", nested.Message)

	// a number among a template-read nested list: crio_registries' mirrors,
	// whose location registry.conf.j2 reads
	num := t.TempDir()
	testutil.WriteTree(t, num, map[string]string{
		"hosts.ini": strings.Replace(groupsINI, "%s", "node1", 1),
		vars:        "crio_registries:\n  - prefix: docker.io\n    location: mirror.example\n    mirrors:\n      - 5000\n",
	})
	n := one(t, lintRelease(t, "v2.31.0", num), "variable-shape", "crio_registries")
	assert.Equal(t, vars+":5:9", n.Where)
	assert.Contains(t, n.Message, "crio_registries[0].mirrors[0] is an int 5000; kubespray v2.31.0 reads each item of crio_registries[0].mirrors as a dict: roles/container-engine/cri-o/templates/registry.conf.j2:")
	assert.Contains(t, n.Message, "reads .location of each item")

	// the same value written right: no finding
	ok := t.TempDir()
	testutil.WriteTree(t, ok, map[string]string{
		"hosts.ini": strings.Replace(groupsINI, "%s", "node1", 1),
		vars: "containerd_registries_mirrors:\n" +
			"  - prefix: docker.io\n" +
			"    mirrors:\n" +
			"      - host: https://mirror.example\n" +
			"        capabilities: [pull, resolve]\n" +
			"      - host: https://second.example\n" +
			"  - prefix: quay.io\n" +
			"    mirrors: []\n",
	})
	none(t, lintRelease(t, "v2.31.0", ok), "variable-shape", "")
}
