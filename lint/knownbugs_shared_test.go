//go:build shared

package lint

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/test/testutil"
)

// Every known bug's evidence is what kubespray's own trees say: each
// "release:path:line" holds its text, each lacks file does not hold it,
// the affected lines lie in releases of the entry's range and the fixed
// lines outside it.
func TestKnownBugsEvidence(t *testing.T) {
	full := testutil.Shared(t, "kubespray-full")
	bugs, err := knownBugs()
	require.NoError(t, err)
	master, err := kubespray.Bundled("master")
	require.NoError(t, err)
	release := func(name string) kver {
		if name == "master" {
			v, ok := parseKver(master.Galaxy)
			require.True(t, ok)
			return v
		}
		v, ok := parseKver(name)
		require.True(t, ok, name)
		return v
	}
	for _, b := range bugs {
		t.Run(b.ID, func(t *testing.T) {
			check := func(e evidenceLine, side string) {
				parts := strings.SplitN(e.At, ":", 3)
				require.Len(t, parts, 3, "%s evidence %q: want release:path:line", side, e.At)
				n, err := strconv.Atoi(parts[2])
				require.NoError(t, err, e.At)
				data, err := os.ReadFile(filepath.Join(full, parts[0], filepath.FromSlash(parts[1])))
				require.NoError(t, err)
				lines := strings.Split(string(data), "\n")
				require.Less(t, n-1, len(lines), e.At)
				assert.Contains(t, lines[n-1], e.Has, "%s evidence %s", side, e.At)
				in := inRange(release(parts[0]), b.affected)
				if side == "affected" {
					assert.True(t, in, "%s is not in the range %q", e.At, b.Affected)
				} else {
					assert.False(t, in, "fixed evidence %s is in the range %q", e.At, b.Affected)
				}
			}
			for _, e := range b.Evidence.Affected {
				check(e, "affected")
			}
			for _, e := range b.Evidence.Fixed {
				check(e, "fixed")
			}
			for _, e := range b.Evidence.Lacks {
				rel, path, ok := strings.Cut(e.At, ":")
				require.True(t, ok, e.At)
				data, err := os.ReadFile(filepath.Join(full, rel, filepath.FromSlash(path)))
				require.NoError(t, err)
				assert.NotContains(t, string(data), e.Has, "%s should lack it", e.At)
			}
			if b.FixedIn != "" {
				found := false
				for _, e := range b.Evidence.Fixed {
					found = found || strings.HasPrefix(e.At, b.FixedIn+":")
				}
				assert.True(t, found, "no fixed evidence in %s, the release that fixes it", b.FixedIn)
			}
		})
	}
}
