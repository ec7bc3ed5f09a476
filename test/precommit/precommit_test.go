// Package precommit runs layercheck's pre-commit hooks
// (.pre-commit-hooks.yaml) with the real pre-commit tool, the way an
// inventory repository uses them: pre-commit clones this repository at a
// commit and builds its Go module.
package precommit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
)

// git runs git in dir with a fixed identity and no user configuration.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=layercheck test", "-c", "user.email=test@layercheck.invalid",
		"-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestPreCommitHookLintsTheInventory: `pre-commit run --all-files` in an
// inventory repository whose .pre-commit-config.yaml names the
// layercheck-lint hook of a clone of this repository at HEAD fails on a
// string boolean in group_vars, printing the finding, and passes once it
// is a boolean.
func TestPreCommitHookLintsTheInventory(t *testing.T) {
	preCommit := testutil.PreCommit(t)
	top := t.TempDir()

	// The hook repository: a clone of this repository at HEAD (pre-commit
	// clones it again at rev; uncommitted changes are not in it).
	head := git(t, testutil.RepoRoot(), "rev-parse", "HEAD")
	hooks := filepath.Join(top, "layercheck")
	git(t, top, "clone", "-q", "--no-checkout", testutil.RepoRoot(), hooks)
	git(t, hooks, "checkout", "-q", head)

	inv := filepath.Join(top, "inventory-repo")
	testutil.WriteTree(t, inv, map[string]string{
		"inventory/prod/hosts.ini":              testutil.ThreeNodeINI,
		"inventory/prod/group_vars/all/all.yml": "helm_enabled: \"true\"\n",
		".pre-commit-config.yaml": "repos:\n" +
			"  - repo: " + hooks + "\n" +
			"    rev: " + head + "\n" +
			"    hooks:\n" +
			"      - id: layercheck-lint\n" +
			"        args: [-i, inventory/prod]\n",
	})
	git(t, inv, "init", "-q")
	git(t, inv, "add", "-A")

	// The Go module cache of this machine: pre-commit sets GOPATH to its
	// own environment, which would download every module again.
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PRE_COMMIT_HOME="+filepath.Join(top, "pre-commit-home"),
		"GOMODCACHE="+strings.TrimSpace(string(modcache)), "NO_COLOR=1",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	run := func() (string, int) {
		cmd := exec.Command(preCommit, "run", "--all-files", "--color=never")
		cmd.Dir = inv
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		code := 0
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("pre-commit: %v\n%s", err, out)
			}
			code = ee.ExitCode()
		}
		return string(out), code
	}

	out, code := run()
	if code != 1 {
		t.Fatalf("pre-commit exit %d, want 1 (the hook fails)\n%s", code, out)
	}
	for _, want := range []string{
		"layercheck lint (kubespray inventory)",
		"Failed",
		"- exit code: 1",
		"inventory/prod/group_vars/all/all.yml",
		`error   string-as-bool helm_enabled = "true"`,
		"fix: helm_enabled: true",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("pre-commit output lacks %q:\n%s", want, out)
		}
	}

	testutil.WriteTree(t, inv, map[string]string{"inventory/prod/group_vars/all/all.yml": "helm_enabled: true\n"})
	git(t, inv, "add", "-A")
	out, code = run()
	if code != 0 || !strings.Contains(out, "layercheck lint (kubespray inventory)") || !strings.Contains(out, "Passed") {
		t.Fatalf("pre-commit exit %d on a clean inventory, want 0 and Passed:\n%s", code, out)
	}
}
