package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/internal/testutil"
	"github.com/layercheck/layercheck/lint"
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
	for _, want := range []string{
		"ERROR [string-as-bool] helm_enabled = \"true\"\n",
		"  where: group_vars/k8s_cluster/addons.yml:2:15\n",
		"  fix:   helm_enabled: true\n",
		"WARNING [unknown-variable] metallb_enable = true\n",
		"FAILED: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
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
