package kubespray

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefiningMatchesCatalogues: Defining (from the release index) and
// DefinedIn (one release's names and files) say what every bundled
// catalogue, decoded whole, defines.
func TestDefiningMatchesCatalogues(t *testing.T) {
	want := map[string][]string{}
	for _, v := range ReleaseOrder() {
		c, err := Bundled(v)
		require.NoError(t, err)
		for name, d := range c.Vars {
			want[name] = append(want[name], v)
			assert.Equal(t, d.File, DefinedIn(v, name), "%s in %s", name, v)
		}
	}
	require.NotEmpty(t, want)
	for name, vs := range want {
		assert.Equal(t, vs, Defining(name), name)
	}
	assert.Empty(t, Defining("not_a_kubespray_name"))
	assert.Equal(t, "", DefinedIn("master", "not_a_kubespray_name"))
	assert.Equal(t, "", DefinedIn("v0.0.0", "kube_version"), "no such bundled release")
}
