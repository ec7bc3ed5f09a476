package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/test/testutil"
)

// brokenCopy copies inventory-samples/broken into a temp dir and applies
// edits (file -> old -> new, each old found exactly once).
func brokenCopy(t *testing.T, edits map[string][2]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "broken")
	testutil.CopyTree(t, sample("broken"), dir)
	for file, e := range edits {
		p := filepath.Join(dir, file)
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Equal(t, 1, strings.Count(string(data), e[0]), "%s: %q", file, e[0])
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), e[0], e[1], 1)), 0o644))
	}
	return dir
}

func lintJSON(t *testing.T, wantCode int, args ...string) *lint.Report {
	t.Helper()
	out, errOut, code := runCLI(t, append([]string{"lint", "--format", "json"}, args...)...)
	require.Equal(t, wantCode, code, "layercheck lint %v: %s", args, errOut)
	var rep lint.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	return &rep
}

func suppressedBy(rep *lint.Report, variable string) string {
	for _, f := range rep.Suppressed {
		if f.Variable == variable {
			return f.SuppressedBy
		}
	}
	return ""
}

// The suppression tests judge the broken sample under ansible-core 2.19,
// where every string boolean seeded in it is an error.
func TestLintSuppressionComments(t *testing.T) {
	base := lintJSON(t, 1, "-i", sample("broken"), "--ansible-core", "2.19")
	require.Equal(t, 43, base.Errors)
	dir := brokenCopy(t, map[string][2]string{
		// YAML, on the line
		"group_vars/k8s_cluster/addons.yml": {"helm_enabled: \"true\"\n", "helm_enabled: \"true\"  # layercheck: ignore[string-as-bool]\n"},
		// INI host line, on the line; [all:vars], a comment line above
		"inventory.ini": {"kubeconfig_localhost=true\n", "kubeconfig_localhost=true  # layercheck: ignore[choice, string-as-bool]\n"},
		// a comment naming another rule silences nothing
		"group_vars/all/all.yml": {"epel_enabled: \"no\"\n", "epel_enabled: \"no\"  # layercheck: ignore[choice]\n"},
	})
	p := filepath.Join(dir, "inventory.ini")
	data, _ := os.ReadFile(p)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), "download_run_once=true\n", "# layercheck: ignore[string-as-bool]\ndownload_run_once=true\n", 1)), 0o644))

	rep := lintJSON(t, 1, "-i", dir, "--ansible-core", "2.19")
	assert.Equal(t, 40, rep.Errors, "three errors suppressed")
	assert.Equal(t, base.Warnings, rep.Warnings)
	assert.Len(t, rep.Suppressed, 3)
	assert.Equal(t, "comment group_vars/k8s_cluster/addons.yml:2", suppressedBy(rep, "helm_enabled"))
	assert.Equal(t, "comment inventory.ini:6", suppressedBy(rep, "kubeconfig_localhost"))
	assert.Equal(t, "comment inventory.ini:26", suppressedBy(rep, "download_run_once"))
	assert.Empty(t, suppressedBy(rep, "epel_enabled"))
	for _, f := range rep.Findings {
		assert.NotContains(t, []string{"helm_enabled", "kubeconfig_localhost", "download_run_once"}, f.Variable)
	}
	out, _, _ := runCLI(t, "lint", "-i", dir, "--ansible-core", "2.19")
	assert.Contains(t, out, "FAILED: 40 error(s), 7 warning(s), 0 info, 3 suppressed (")
	assert.Contains(t, out, "\n  ignored string-as-bool           3\n")
}

func TestLintConfigSkips(t *testing.T) {
	dir := brokenCopy(t, nil)
	testutil.WriteTree(t, dir, map[string]string{".layercheck.yml": "skip_rules: [string-as-bool, calico-rr]\nskip_variables: [kube_proxy_mode]\n"})
	rep := lintJSON(t, 1, "-i", dir, "--ansible-core", "2.19")
	assert.Equal(t, 43-29-1, rep.Errors)
	assert.Equal(t, 6, rep.Warnings)
	assert.Len(t, rep.Suppressed, 31)
	cfg := filepath.Join(dir, ".layercheck.yml")
	assert.Equal(t, "config "+cfg, suppressedBy(rep, "kube_proxy_mode"))
	assert.Equal(t, "config "+cfg, suppressedBy(rep, "helm_enabled"))

	// --config names another file; a bad one is a usage error naming it.
	other := filepath.Join(t.TempDir(), "lint.yml")
	testutil.WriteTree(t, filepath.Dir(other), map[string]string{"lint.yml": "skip_rules: [etcd-even]\n"})
	rep = lintJSON(t, 1, "-i", dir, "--ansible-core", "2.19", "--config", other)
	assert.Equal(t, 42, rep.Errors)
	for content, want := range map[string]string{"skip_rule: [x]\n": "skip_rule", "skip_rules: [no-such-rule]\n": "no-such-rule"} {
		testutil.WriteTree(t, filepath.Dir(other), map[string]string{"lint.yml": content})
		_, errOut, code := runCLI(t, "lint", "-i", dir, "--config", other)
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, want)
		assert.Contains(t, errOut, other)
	}
}

func TestLintBaseline(t *testing.T) {
	baseline := filepath.Join(t.TempDir(), "baseline.json")
	_, errOut, code := runCLI(t, "lint", "-i", sample("broken"), "--ansible-core", "2.19", "--write-baseline", baseline)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "wrote 50 finding(s) to the baseline")

	rep := lintJSON(t, 0, "-i", sample("broken"), "--ansible-core", "2.19", "--baseline", baseline)
	assert.Zero(t, rep.Errors)
	assert.Zero(t, rep.Warnings)
	assert.Len(t, rep.Suppressed, 50)
	assert.Equal(t, "baseline "+baseline, suppressedBy(rep, "helm_enabled"))

	// A new finding still fails; a moved one (other line, same file,
	// variable and value) does not.
	dir := brokenCopy(t, map[string][2]string{"group_vars/k8s_cluster/addons.yml": {"---\n", "---\n# a new comment line\n"}})
	rep = lintJSON(t, 1, "-i", dir, "--ansible-core", "2.19", "--baseline", baseline, "-e", "dns_mode=bogus")
	require.Equal(t, 1, rep.Errors, "%+v", rep.Findings)
	assert.Equal(t, "dns_mode", rep.Findings[0].Variable)
	assert.Equal(t, "baseline "+baseline, suppressedBy(rep, "helm_enabled"))

	_, errOut, code = runCLI(t, "lint", "-i", sample("broken"), "--ansible-core", "2.19", "--baseline", filepath.Join(t.TempDir(), "missing.json"))
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "missing.json")
}
