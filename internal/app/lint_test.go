package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/test/testutil"
)

func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Run(context.Background(), args, Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if err != nil {
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), ExitCode(err)
}

func sample(name string) string {
	return filepath.Join(testutil.RepoRoot(), "inventory-samples", name)
}

func TestLintCleanSampleExitsZero(t *testing.T) {
	out, errOut, code := runCLI(t, "lint", "-i", sample("kubespray-3node"))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "catalogue: bundled kubespray") || !strings.Contains(out, "OK: 0 error(s), 0 warning(s)") {
		t.Errorf("text output:\n%s", out)
	}
}

// The output names the catalogue and why it was chosen: the checkout the
// inventory lives in, --kubespray-version (with the release it resolved
// to), or the bundled default; in the text header and summary and in JSON.
func TestLintSaysWhichCatalogueAndWhy(t *testing.T) {
	ks := t.TempDir()
	testutil.WriteTree(t, ks, map[string]string{
		"roles/kubespray_defaults/defaults/main/main.yml": "---\nhelm_enabled: false\n",
		"inventory/mycluster/hosts.ini":                   "[kube_control_plane]\nnode1\n[etcd]\nnode1\n[kube_node]\nnode1\n",
	})
	inCheckout := filepath.Join(ks, "inventory", "mycluster")
	// an inventory that pins nothing telling a release
	bare := filepath.Join(t.TempDir(), "inv")
	testutil.WriteTree(t, bare, map[string]string{"hosts.ini": testutil.ThreeNodeINI})
	for _, tc := range []struct {
		name      string
		args      []string
		catalogue string
		why       string
		core      string // the ansible-core judged, with why
	}{
		{"checkout", []string{"-i", inCheckout}, "kubespray checkout at " + ks, "chosen because the inventory " + inCheckout + " lives in this checkout",
			"2.18, the series the kubespray checkout pins (playbooks/ansible_version.yml:8 accepts 2.18.0 ≤ x < 2.19.0)"},
		{"version", []string{"-i", sample("kubespray-3node"), "--kubespray-version", "v2.31"}, "bundled kubespray v2.31.0 ", "chosen with --kubespray-version v2.31, the newest bundled v2.31.x",
			"2.18, the series kubespray v2.31.0 pins (playbooks/ansible_version.yml:8 accepts 2.18.0 ≤ x < 2.19.0)"},
		{"version and --ansible-core", []string{"-i", sample("kubespray-3node"), "--kubespray-version", "v2.29", "--ansible-core", "2.19"}, "bundled kubespray v2.29.1 ", "chosen with --kubespray-version v2.29, the newest bundled v2.29.x",
			"2.19, as given"},
		{"inferred", []string{"-i", sample("kubespray-3node")}, "bundled kubespray v2.31.0 ", "inferred from what the inventory pins, as it lives in no kubespray checkout and no release was given: of 1 variable(s) it sets that only some releases define (upstream_dns_servers), kubespray v2.31.0 defines 1; v2.31.0 is the newest bundled release that fits",
			"2.18, the series kubespray v2.31.0 pins (playbooks/ansible_version.yml:8 accepts 2.18.0 ≤ x < 2.19.0)"},
		{"default", []string{"-i", bare}, "bundled kubespray master ", "the default, as the inventory lives in no kubespray checkout",
			"2.19, the default: 2.19 and later fail a `when:` on a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, append([]string{"lint"}, tc.args...)...)
			require.Equal(t, 0, code, "%s\n%s", out, errOut)
			header, _, _ := strings.Cut(out, "\n")
			assert.Regexp(t, `\(catalogue: `+regexpQuote(tc.catalogue)+`[^;]*, `+regexpQuote(tc.why)+`; string booleans judged under ansible-core `+regexpQuote(tc.core)+`; locations`, header)
			assert.Regexp(t, `(?m)^OK: 0 error\(s\), 0 warning\(s\), 0 info \(`+regexpQuote(tc.catalogue)+`.*, `+regexpQuote(tc.why)+`\)$`, out)

			out, errOut, code = runCLI(t, append([]string{"lint", "--format", "json"}, tc.args...)...)
			require.Equal(t, 0, code, "%s\n%s", out, errOut)
			var rep lint.Report
			require.NoError(t, json.Unmarshal([]byte(out), &rep))
			assert.True(t, strings.HasPrefix(rep.Catalogue, tc.catalogue), "catalogue %q", rep.Catalogue)
			assert.Equal(t, tc.why, rep.CatalogueWhy)
		})
	}
}

func regexpQuote(s string) string { return regexp.QuoteMeta(s) }

func TestLintExtraVarsStringIsAnError(t *testing.T) {
	out, _, code := runCLI(t, "lint", "-i", sample("kubespray-3node"), "-e", "helm_enabled=true", "--format", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	var rep lint.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 1 || len(rep.Findings) != 1 {
		t.Fatalf("report: %s", out)
	}
	f := rep.Findings[0]
	if f.Rule != "string-as-bool" || f.Variable != "helm_enabled" || f.Where != "-e" || f.Fix != `-e '{"helm_enabled": true}'` || len(f.Hosts) != 3 {
		t.Errorf("finding: %+v", f)
	}
	// A string in JSON extra vars: the fix is still given as -e JSON.
	out, _, _ = runCLI(t, "lint", "-i", sample("kubespray-3node"), "-e", `{"helm_enabled": "yes"}`, "--format", "json")
	if !strings.Contains(out, `"fix": "-e '{\"helm_enabled\": true}'"`) {
		t.Errorf("JSON -e string fix:\n%s", out)
	}
	// JSON extra vars give a real bool: clean again.
	if out, _, code := runCLI(t, "lint", "-i", sample("kubespray-3node"), "-e", `{"helm_enabled": true}`); code != 0 {
		t.Errorf("JSON -e: exit %d\n%s", code, out)
	}
}

func TestLintBrokenSampleText(t *testing.T) {
	out, _, code := runCLI(t, "lint", "-i", sample("broken"))
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	// Grouped by file (under its path from here: the test runs in
	// internal/app, outside the inventory, so relative to the inventory).
	for _, want := range []string{
		"locations relative to the inventory directory",
		"\ngroup_vars/k8s_cluster/addons.yml\n  2:15   error   string-as-bool helm_enabled = \"true\" (all 5 hosts): ",
		"\n         fix: helm_enabled: true\n",
		"warning unknown-variable metallb_enable = true",
		"\nRules\n",
		// judged under ansible-core 2.18, which the inferred v2.31.0 pins:
		// a string boolean that works as meant there is a warning
		"kube_version 1.35.4 (group_vars/k8s_cluster/k8s-cluster.yml:26:15) fits kubespray v2.31.x, master; v2.31.0 is the newest bundled release that fits",
		"FAILED: 26 error(s), 24 warning(s), 0 info (",
		"\n  error   string-as-bool           12\n",
		"\n  warning string-as-bool           17\n",
		"\n  warning calico-rr                1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "why:") || strings.Contains(out, "\x1b[") {
		t.Errorf("the why only with -v, colour only on a terminal:\n%s", out)
	}
	// The rule's explanation once, however many findings.
	if n := strings.Count(out, "string-as-bool: "); n != 1 {
		t.Errorf("string-as-bool explained %d times", n)
	}
	out, _, _ = runCLI(t, "lint", "-i", sample("broken"), "-v", "--color=always")
	if !strings.Contains(out, "         why: ") || !strings.Contains(out, "\x1b[31m") {
		t.Errorf("-v --color=always: want whys and ANSI colours:\n%s", out)
	}
	t.Setenv("NO_COLOR", "1")
	if out, _, _ = runCLI(t, "lint", "-i", sample("broken"), "--color", "never"); strings.Contains(out, "\x1b[") {
		t.Errorf("--color never printed colours")
	}
	if _, errOut, code := runCLI(t, "lint", "-i", sample("broken"), "--color", "sometimes"); code != 2 || !strings.Contains(errOut, "--color") {
		t.Errorf("--color sometimes: exit %d, %s", code, errOut)
	}
	if on, err := colorWanted("auto", os.Stdout); on || err != nil {
		t.Errorf("auto with NO_COLOR set: %v %v", on, err)
	}
	out, _, _ = runCLI(t, "lint", "-i", sample("broken"), "-q")
	if strings.Contains(out, "helm_enabled") || !strings.HasPrefix(out, "\nFAILED: 26 error(s)") || !strings.Contains(out, "string-as-bool           12") {
		t.Errorf("-q: want the counts only:\n%s", out)
	}
}

// Locations are relative to where the user stands when the inventory is
// under it; JSON gives them as {file, line, column} too.
func TestLintLocationsRelativeToCurrentDirectory(t *testing.T) {
	t.Chdir(filepath.Dir(sample("broken")))
	out, _, code := runCLI(t, "lint", "-i", "broken", "--format", "json")
	require.Equal(t, 1, code)
	var rep lint.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	var found bool
	for _, f := range rep.Findings {
		if f.Variable == "helm_enabled" {
			found = true
			assert.Equal(t, "broken/group_vars/k8s_cluster/addons.yml:2:15", f.Where)
			require.NotNil(t, f.Location)
			assert.Equal(t, lint.Location{File: "broken/group_vars/k8s_cluster/addons.yml", Line: 2, Column: 15}, *f.Location)
		}
	}
	assert.True(t, found)
	out, _, _ = runCLI(t, "lint", "-i", "broken")
	assert.Contains(t, out, "locations relative to the current directory")
	assert.Contains(t, out, "\nbroken/group_vars/k8s_cluster/addons.yml\n")
	// Outside the inventory: relative to the inventory directory, which
	// JSON names.
	t.Chdir(t.TempDir())
	out, _, _ = runCLI(t, "lint", "-i", sample("broken"), "--format", "json")
	rep = lint.Report{}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, sample("broken"), rep.LocationsRelativeTo)
	assert.Contains(t, out, `"where": "group_vars/k8s_cluster/addons.yml:2:15"`)
}

// Every subcommand: --help prints the common layout to stdout and exits 0;
// --version and version print the version, commit, Go version and catalogues.
func TestHelpAndVersionOfEveryCommand(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, errOut, code := runCLI(t, args...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		assert.Regexp(t, `^layercheck \S+\ncommit: .+\ngo: go1\.\S+ \w+/\w+\nkubespray catalogues: `+kubespray.DefaultVersion+` \(default\)(, v\d+\.\d+\.\d+)+\n$`, out, "%v", args)
		for _, v := range kubespray.Versions() {
			assert.Contains(t, out, " "+v, "%v names the bundled catalogue %s", args, v)
		}
	}
	out, _, code := runCLI(t, "--help")
	require.Equal(t, 0, code)
	names := []string{}
	for n := range commands {
		names = append(names, n)
		assert.Contains(t, out, "\n  "+n+" ", "top-level help lists %s", n)
	}
	require.Len(t, names, 7, "commands: %v", names)
	for _, n := range names {
		for _, h := range []string{"--help", "-h"} {
			out, errOut, code := runCLI(t, n, h)
			require.Equal(t, 0, code, "layercheck %s %s: %s", n, h, errOut)
			assert.Empty(t, errOut, "layercheck %s %s writes to stdout only", n, h)
			assert.True(t, strings.HasPrefix(out, "usage: layercheck "+n+" "), "layercheck %s %s:\n%s", n, h, out)
			assert.Contains(t, out, "\n\nOptions:\n", n)
			assert.Contains(t, out, "  -h, --help ", n)
			assert.NotContains(t, out, "Usage of", n)
			for _, l := range strings.Split(out[strings.Index(out, "Options:\n")+9:], "\n") {
				if l != "" {
					assert.Regexp(t, `^  (-\w, |    )--[a-z-]+`, l, "layercheck %s: every option in --long form", n)
					assert.LessOrEqual(t, strings.Count(l, "(default"), 1, "layercheck %s: one default per option: %s", n, l)
				}
			}
		}
		// A bad option: exit 2, naming it and --help.
		_, errOut, code := runCLI(t, n, "--no-such-option")
		assert.Equal(t, 2, code, n)
		assert.Contains(t, errOut, "no-such-option", n)
		assert.Contains(t, errOut, "layercheck "+n+" --help", n)
	}
	out, _, _ = runCLI(t, "node", "--help")
	assert.NotContains(t, out, "addr-map", "test-only options are hidden")
}

func TestLintUsageAndLoadErrorsExitTwo(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "hosts.yml")
	if err := os.WriteFile(bad, []byte("all:\n  hosts:\n    node1: {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no inventory", []string{"lint"}, "no inventory"},
		{"bad format", []string{"lint", "-i", sample("kubespray-3node"), "--format", "xml"}, "--format"},
		{"unknown flag", []string{"lint", "--bogus"}, "bogus"},
		{"stray argument", []string{"lint", "-i", sample("kubespray-3node"), "extra"}, "unexpected argument"},
		{"missing inventory", []string{"lint", "-i", filepath.Join(dir, "nope")}, "nope"},
		{"broken yaml", []string{"lint", "-i", bad}, "hosts.yml"},
		{"bad extra vars", []string{"lint", "-i", sample("kubespray-3node"), "-e", "@" + filepath.Join(dir, "missing.yml")}, "missing.yml"},
		{"unknown kubespray version", []string{"lint", "-i", sample("kubespray-3node"), "--kubespray-version", "v0.1"}, "v0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2\n%s\n%s", code, out, errOut)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, errOut)
			}
		})
	}
}

func TestLintKubesprayVersionAndRules(t *testing.T) {
	out, _, code := runCLI(t, "lint", "-i", sample("kubespray-3node"), "--kubespray-version", "v2.31.0", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var rep lint.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Catalogue, "v2.31.0") {
		t.Errorf("catalogue = %q", rep.Catalogue)
	}
	out, _, code = runCLI(t, "lint", "--rules")
	if code != 0 || !strings.Contains(out, "string-as-bool") || !strings.Contains(out, "etcd-even") {
		t.Errorf("--rules: exit %d\n%s", code, out)
	}
}

// --upgrade-from a patch release that is not bundled: the bundled release
// of its minor stands in, with a warning saying so; an unknown minor is a
// usage error.
func TestLintUpgradeFromPatchNotBundled(t *testing.T) {
	out, errOut, code := runCLI(t, "lint", "-i", sample("kubespray-3node"), "--kubespray-version", "v2.30", "--upgrade-from", "v2.29.0", "--format", "json")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Contains(t, errOut, "layercheck: warning: --upgrade-from v2.29.0 is not bundled: v2.29.1, the bundled release of its minor, stands in")
	assert.Contains(t, out, `"upgrade-default-changed"`)
	_, errOut, code = runCLI(t, "lint", "-i", sample("kubespray-3node"), "--upgrade-from", "v2.99.0")
	assert.Equal(t, 2, code, errOut)
}
