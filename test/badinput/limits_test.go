package badinput_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/testutil"
)

// Why 4 (no size limits): a 200 MB (sparse) group_vars file, 30 lines of
// rN-[0:99999] host ranges (3 million hosts from 450 bytes) and group_vars
// pointing at /dev/zero end in a clear error naming the file (and line),
// within the deadline and under the memory bound, for inventory and lint.
func TestSizeAndHostLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"big/hosts.ini":    kubesprayINI,
		"zero/hosts.ini":   kubesprayINI,
		"ranges/hosts.ini": "",
	})
	big := filepath.Join(dir, "big", "group_vars", "all.yml")
	require.NoError(t, os.MkdirAll(filepath.Dir(big), 0o755))
	f, err := os.Create(big)
	require.NoError(t, err)
	_, err = f.WriteString("a: 1\n")
	require.NoError(t, err)
	require.NoError(t, f.Truncate(200<<20)) // sparse: no disk used
	require.NoError(t, f.Close())

	zero := filepath.Join(dir, "zero", "group_vars", "all.yml")
	require.NoError(t, os.MkdirAll(filepath.Dir(zero), 0o755))
	require.NoError(t, os.Symlink("/dev/zero", zero))

	var lines []string
	for i := 0; i < 30; i++ {
		lines = append(lines, fmt.Sprintf("r%d-[0:99999]", i))
	}
	ranges := filepath.Join(dir, "ranges", "hosts.ini")
	require.NoError(t, os.WriteFile(ranges, []byte(strings.Join(lines, "\n")+"\n"), 0o644))

	cases := []struct {
		name, inv string
		want      string
	}{
		{"200 MB group_vars", filepath.Join(dir, "big", "hosts.ini"), big + ": larger than 67108864 bytes (set LAYERCHECK_MAX_FILE_BYTES to allow more)"},
		{"group_vars -> /dev/zero", filepath.Join(dir, "zero", "hosts.ini"), zero + ": is a character device, not a file"},
		{"30 lines of ranges", ranges, ranges + ":11:1: the inventory expands to more than 1000000 hosts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, dir, nil, bin(t, "layercheck"), "inventory", "--list", "-i", c.inv)
			assert.Equal(t, 1, r.code, r.all())
			assert.Contains(t, r.stderr, c.want)
			assert.NotContains(t, r.all(), "goroutine", "no crash trace")
			t.Logf("inventory --list: peak memory %d MB", r.maxRSS>>20)

			// lint reads through the same loader: for the ranges a lower
			// host limit keeps the package fast (the default is above)
			var env []string
			want := c.want
			if c.name == "30 lines of ranges" {
				env = []string{"LAYERCHECK_MAX_HOSTS=100000"}
				want = ranges + ":2:1: the inventory expands to more than 100000 hosts"
			}
			r = run(t, dir, env, bin(t, "layercheck"), "lint", "--kubespray-version", "v2.31.0", "-i", c.inv)
			assert.Equal(t, 2, r.code, r.all())
			assert.Contains(t, r.stderr, want)
		})
	}

	// the limits are configurable: with a file limit of 1 MB a 2 MB file
	// is refused, with 3 MB it is read (its NULs are then the error, at
	// their place)
	require.NoError(t, os.Truncate(big, 2<<20))
	r := run(t, dir, []string{"LAYERCHECK_MAX_FILE_BYTES=1000000"}, bin(t, "layercheck"),
		"inventory", "--list", "-i", filepath.Join(dir, "big", "hosts.ini"))
	assert.Contains(t, r.stderr, big+": larger than 1000000 bytes")
	r = run(t, dir, []string{"LAYERCHECK_MAX_FILE_BYTES=3000000"}, bin(t, "layercheck"),
		"inventory", "--list", "-i", filepath.Join(dir, "big", "hosts.ini"))
	assert.NotContains(t, r.stderr, "larger than")
	assert.Contains(t, r.stderr, big+":2:1: control character NUL (U+0000) is not allowed in YAML")
	r = run(t, dir, []string{"LAYERCHECK_MAX_INVENTORY_BYTES=1000000"}, bin(t, "layercheck"),
		"inventory", "--list", "-i", filepath.Join(dir, "big", "hosts.ini"))
	assert.Contains(t, r.stderr, big+": the inventory's files exceed 1000000 bytes in all")
}

// Why 5 (messages without a line): an unknown alias, a document nested too
// deeply, invalid UTF-8 and a NUL byte are errors naming file:line:col
// (the unknown alias at the same place ansible-core names), and a warning
// met twice is printed once.
func TestParserErrorsNameTheLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"alias/hosts.yml": "all:\n  vars:\n    a: &x 1\n    b: *y\n",
		"utf8/hosts.ini":  "[kube_control_plane]\ncp1\n",
		"utf8/group_vars/all.yml": "a: 1\n" +
			"b: \"caf\xe9\"\n",
		"nul/hosts.ini":            "[kube_control_plane]\ncp1\n",
		"nul/group_vars/all.yml":   "a: 1\nb: 2\nc: \"x\x00y\"\n",
		"deep/hosts.ini":           "[kube_control_plane]\ncp1\n",
		"deep/group_vars/all.yml":  "x: " + strings.Repeat("[", 200) + strings.Repeat("]", 200) + "\n",
		"twice/hosts.ini":          "[kube_control_plane]\ncp1\n",
		"twice/group_vars/all.yml": "a: 1\na: 2\n",
	})
	cases := []struct{ inv, want string }{
		{"alias/hosts.yml", "alias/hosts.yml:4:8: found undefined alias \"y\""},
		{"utf8/hosts.ini", "utf8/group_vars/all.yml:2:8: invalid UTF-8 (byte 0xe9)"},
		{"nul/hosts.ini", "nul/group_vars/all.yml:3:6: control character NUL (U+0000) is not allowed in YAML"},
		{"deep/hosts.ini", "deep/group_vars/all.yml:1:"},
	}
	for _, c := range cases {
		r := run(t, dir, nil, bin(t, "layercheck"), "lint", "--kubespray-version", "v2.31.0", "-i", filepath.Join(dir, c.inv))
		assert.Equal(t, 2, r.code, r.all())
		assert.Contains(t, r.stderr, filepath.Join(dir, c.want), c.inv)
	}
	r := run(t, dir, nil, bin(t, "layercheck"), "lint", "--kubespray-version", "v2.31.0", "-i", filepath.Join(dir, "deep/hosts.ini"))
	assert.Contains(t, r.stderr, "maximum nesting depth exceeded")

	r = run(t, dir, nil, bin(t, "layercheck"), "inventory", "--list", "-i", filepath.Join(dir, "twice/hosts.ini"), "-i", filepath.Join(dir, "twice/hosts.ini"))
	assert.Equal(t, 0, r.code, r.all())
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		if l != "" {
			seen[l]++
		}
	}
	require.NotEmpty(t, seen, "the duplicate key is warned about")
	for l, n := range seen {
		assert.Equal(t, 1, n, "warning printed %d times: %s", n, l)
	}
}

// Why 6 (exit codes): `inventory --list` exits as ansible-inventory does
// for an unparsable top-level -i file (a warning, exit 0); lint keeps its
// stricter exit 2.
func TestInventoryListExitCodesMirrorAnsible(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{"bad.ini": "[g]\nh1 a=\n[g:children\n"})
	bad := filepath.Join(dir, "bad.ini")
	r := run(t, dir, nil, bin(t, "layercheck"), "inventory", "--list", "-i", bad)
	assert.Equal(t, 0, r.code, r.all())
	assert.Contains(t, r.stderr, "[WARNING]: Unable to parse "+bad+" as an inventory source")
	assert.Contains(t, r.stderr, "[WARNING]: No inventory was parsed, only implicit localhost is available")
	a := run(t, dir, testutil.AnsibleEnv("HOME="+dir), testutil.Ansible(t, "ansible-inventory"), "--list", "-i", bad)
	assert.Equal(t, a.code, r.code, "ansible-inventory: %s", a.stderr)

	r = run(t, dir, nil, bin(t, "layercheck"), "lint", "--kubespray-version", "v2.31.0", "-i", bad)
	assert.Equal(t, 2, r.code, r.all())
	assert.Contains(t, r.stderr, "Unable to parse "+bad+" as an inventory source")
}

// What to build 2: peak memory stays below ~20x the input size. A 50 MB
// group_vars file, within the 64 MiB file limit, of 4 KB string values
// (certificates, scripts, long lists inlined) is read by inventory --list
// and lint with a peak RSS under 20x its size plus a fixed base for the
// runtime and the bundled catalogue. (Measured: 9x to 14x for inventory
// --list, 8x for lint. A file of the same size made of short one-line variables costs
// about 50x: each variable is a few hundred bytes of YAML nodes and values
// whatever its length.)
func TestLargeGroupVarsMemory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{"inv/hosts.ini": kubesprayINI})
	gv := filepath.Join(dir, "inv", "group_vars", "all.yml")
	require.NoError(t, os.MkdirAll(filepath.Dir(gv), 0o755))
	f, err := os.Create(gv)
	require.NoError(t, err)
	value := strings.Repeat("x", 4000)
	var size int64
	for i := 0; size < 50<<20; i++ {
		n, err := fmt.Fprintf(f, "var_%05d: %q\n", i, value)
		require.NoError(t, err)
		size += int64(n)
	}
	require.NoError(t, f.Close())

	const base = 64 << 20
	bound := 20*size + base
	inv := filepath.Join(dir, "inv", "hosts.ini")
	r := run(t, dir, nil, bin(t, "layercheck"), "inventory", "--list", "-i", inv)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"var_00000": "xxxx`)
	assert.Less(t, r.maxRSS, bound, "inventory --list: peak %d MB for a %d MB file", r.maxRSS>>20, size>>20)
	t.Logf("inventory --list: %d MB file, peak memory %d MB (%.1fx)", size>>20, r.maxRSS>>20, float64(r.maxRSS)/float64(size))

	r = run(t, dir, nil, bin(t, "layercheck"), "lint", "--kubespray-version", "v2.31.0", "-q", "-i", inv)
	assert.Contains(t, []int{0, 1}, r.code, r.all())
	assert.Less(t, r.maxRSS, bound, "lint: peak %d MB for a %d MB file", r.maxRSS>>20, size>>20)
	t.Logf("lint: %d MB file, peak memory %d MB (%.1fx)", size>>20, r.maxRSS>>20, float64(r.maxRSS)/float64(size))
}
