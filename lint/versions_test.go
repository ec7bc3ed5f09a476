package lint

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/testutil"
)

// lintWith lints dir under the bundled catalogue of version.
func lintWith(t *testing.T, version, dir string, extra ...string) *Report {
	t.Helper()
	inv, err := parser.Load(dir)
	require.NoError(t, err)
	var ev *parser.Map
	if len(extra) > 0 {
		ev, err = parser.ParseExtraVars(extra)
		require.NoError(t, err)
	}
	cat, err := kubespray.Bundled(version)
	require.NoError(t, err)
	r := Run(Input{Inventory: inv, Extra: ev, Catalogue: cat})
	checkSeverities(t, r)
	return r
}

// The versions kubespray v2.31.0 knows (kubelet_checksums amd64 in
// roles/kubespray_defaults/vars/main/checksums.yml): 1.35.0-1.35.4,
// 1.34.0-1.34.7, 1.33.0-1.33.11; kube_version_min_required 1.33.0.
func TestKubeVersion(t *testing.T) {
	dir := writeTree(t, map[string]string{"hosts.ini": testutil.ThreeNodeINI})
	cases := []struct {
		extra   string
		message []string // substrings of the one finding; nil: no finding
		fix     string
	}{
		{"kube_version=1.32.2", []string{`kube_version = "1.32.2" is older than kubespray v2.31.0 supports (kube_version_min_required 1.33.0)`}, ""},
		// both faults at once: too old, and the leading v v2.31.0 does not write
		{"kube_version=v1.32.2", []string{`"v1.32.2" is older than kubespray v2.31.0 supports`, "; also, kubespray v2.31.0 writes versions without the leading v"},
			"use a release of kubespray made for Kubernetes 1.32 (kube_version v1.32.2: kubespray v2.28.x–v2.30.x), or set kube_version to one of 1.35 (1.35.0–1.35.4), 1.34 (1.34.0–1.34.7), 1.33 (1.33.0–1.33.11)"},
		{"kube_version=1.28.6", []string{`kube_version = "1.28.6" is older than kubespray v2.31.0 supports`},
			"use a release of kubespray made for Kubernetes 1.28 (kube_version 1.28.6: kubespray v2.24.x–v2.26.x), or set kube_version to one of 1.35 (1.35.0–1.35.4), 1.34 (1.34.0–1.34.7), 1.33 (1.33.0–1.33.11)"},
		{"kube_version=1.18.0", []string{`kube_version = "1.18.0" is older than kubespray v2.31.0 supports`},
			"use a release of kubespray made for Kubernetes 1.18 (no bundled kubespray release has kube_version 1.18.0), or set kube_version to one of 1.35 (1.35.0–1.35.4), 1.34 (1.34.0–1.34.7), 1.33 (1.33.0–1.33.11)"},
		{"kube_version=1.34.9", []string{`kube_version = "1.34.9": kubespray v2.31.0 has no checksums for this patch; it knows 1.34: 1.34.7, 1.34.6`},
			`-e '{"kube_version": "1.34.7"}', or use a release of kubespray with it (kube_version 1.34.9: kubespray master)`},
		{"kube_version=v1.35.4", []string{`writes versions without the leading v ("1.35.4")`}, `-e '{"kube_version": "1.35.4"}'`},
		{"kube_version=1.36.0", []string{`is not a version kubespray v2.31.0 knows: it supports 1.35 (1.35.0–1.35.4), 1.34 (1.34.0–1.34.7), 1.33 (1.33.0–1.33.11)`}, ""},
		{"kube_version=1.35.4", nil, ""},
		{"kube_version=1.33.0", nil, ""},
		{"containerd_version=1.6.0", []string{`containerd_version = "1.6.0" is not a version kubespray v2.31.0 knows`}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.extra, func(t *testing.T) {
			r := lintWith(t, "v2.31.0", dir, tc.extra)
			name := strings.SplitN(tc.extra, "=", 2)[0]
			if tc.message == nil {
				none(t, r, "version", name)
				return
			}
			f := one(t, r, "version", name)
			assert.Equal(t, SeverityError, f.Severity)
			assert.Equal(t, "-e", f.Where)
			for _, m := range tc.message {
				assert.Contains(t, f.Message, m)
			}
			if tc.fix != "" {
				assert.Equal(t, tc.fix, f.Fix)
			}
			assert.Contains(t, f.Why, "roles/")
		})
	}
}

// A release that writes versions with a leading v (v2.24.3) and a value
// set in group_vars, located at its line.
func TestKubeVersionOlderRelease(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.ini":                       testutil.ThreeNodeINI,
		"group_vars/k8s_cluster/main.yml": "kube_network_plugin: calico\nkube_version: 1.28.14\n",
	})
	r := lintWith(t, "v2.24.3", dir)
	f := one(t, r, "version", "kube_version")
	assert.Equal(t, "group_vars/k8s_cluster/main.yml:2:15", f.Where)
	assert.Contains(t, f.Message, `writes versions with a leading v ("v1.28.14")`)
	assert.Equal(t, `kube_version: "v1.28.14"`, f.Fix)
	// The same value is right for v2.31.0's form but too old there.
	r = lintWith(t, "v2.31.0", dir)
	assert.Contains(t, one(t, r, "version", "kube_version").Message, "older than kubespray v2.31.0 supports")
	// A YAML float is a version kubespray cannot look up either.
	dir = writeTree(t, map[string]string{
		"hosts.ini":              testutil.ThreeNodeINI,
		"group_vars/all/all.yml": "kube_version: 1.35\n",
	})
	r = lintWith(t, "v2.31.0", dir)
	assert.Contains(t, one(t, r, "version", "kube_version").Message, `kube_version = "1.35" is not a version kubespray v2.31.0 knows`)
}

func TestSupportedMinors(t *testing.T) {
	assert.Equal(t, "1.35 (1.35.0–1.35.2), 1.34.1", supportedMinors([]string{"1.35.2", "1.35.1", "1.35.0", "1.34.1"}))
	assert.True(t, versionLess("1.9.0", "1.10.0"))
	assert.False(t, versionLess("1.33.0", "1.33.0"))
}
