package testutil

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoBinaryLinksTestPackages: the helpers under test/ (generated trees
// with throw-away keys, an sshd, an etcd) are for tests only; a binary we
// ship that linked one would carry them to every node.
func TestNoBinaryLinksTestPackages(t *testing.T) {
	mod, err := exec.Command("go", "-C", RepoRoot(), "list", "-m").CombinedOutput()
	require.NoError(t, err, "%s", mod)
	out, err := exec.Command("go", "-C", RepoRoot(), "list", "-deps", "./cmd/...").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.NotEmpty(t, deps)
	prefix := strings.TrimSpace(string(mod)) + "/test/"
	for _, p := range deps {
		if strings.HasPrefix(p, prefix) {
			t.Errorf("a binary under cmd/ links %s", p)
		}
	}
}
