package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/testutil"
)

// TestLinksOnlyTheAPIGroupsItUses: client-go's full clientset (and its
// discovery client) register every API group of k8s.io/api and more than
// doubled the shipped binaries; the module and the CLI must link only the
// groups cluster.NewAPI knows.
func TestLinksOnlyTheAPIGroupsItUses(t *testing.T) {
	out, err := exec.Command("go", "-C", testutil.RepoRoot(), "list", "-deps", "./cmd/cluster_facts", "./cmd/layercheck").CombinedOutput()
	require.NoError(t, err, "%s", out)
	var groups []string
	for _, p := range strings.Fields(string(out)) {
		switch {
		case strings.HasPrefix(p, "k8s.io/api/"):
			groups = append(groups, strings.TrimPrefix(p, "k8s.io/api/"))
		case p == "k8s.io/client-go/kubernetes" || strings.HasPrefix(p, "k8s.io/client-go/kubernetes/") ||
			p == "k8s.io/client-go/discovery" || p == "k8s.io/client-go/gentype":
			t.Errorf("links %s", p)
		}
	}
	assert.ElementsMatch(t, []string{"core/v1", "apps/v1", "storage/v1"}, groups)
}
