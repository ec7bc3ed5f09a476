// Package testutil locates what the tests run: the repository root, the
// ansible-core virtual environment made by `make venv`, the built binaries,
// and the read-only shared fixtures used by `make test-shared`.
package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// RepoRoot is the repository's top directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Ansible returns the path of an ansible-core command (ansible-playbook,
// ansible-inventory, ansible-doc, ansible-galaxy) from the repository's
// virtual environment. A missing environment fails the test: `make test`
// creates it, and no test may skip over a missing install step.
func Ansible(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(RepoRoot(), ".venv", "bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s not found in .venv: run `make venv` (or `make test`, which makes it): %v", name, err)
	}
	return p
}

// AnsibleEnv is the environment for running ansible commands in tests: the
// venv first on PATH, an empty ansible.cfg (no user configuration; ansible-core
// 2.19 refuses ANSIBLE_CONFIG=/dev/null for its extension), no cowsay, no
// colour. Later entries in extra override earlier ones.
func AnsibleEnv(extra ...string) []string {
	env := append(os.Environ(),
		"PATH="+filepath.Join(RepoRoot(), ".venv", "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ANSIBLE_CONFIG="+emptyAnsibleCfg(),
		"ANSIBLE_NOCOWS=1",
		"ANSIBLE_NOCOLOR=1",
		"ANSIBLE_FORCE_COLOR=0",
		"ANSIBLE_RETRY_FILES_ENABLED=0",
		"ANSIBLE_HOST_KEY_CHECKING=0",
		"ANSIBLE_LOCALHOST_WARNING=0",
		"ANSIBLE_INVENTORY_UNPARSED_WARNING=0",
	)
	return append(env, extra...)
}

// Shared returns the path of the read-only shared fixtures directory
// (../shared beside the repository). Tests that use it carry the build tag
// "shared" and run under `make test-shared`; there its absence fails them.
func Shared(t testing.TB, rel ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{RepoRoot(), "..", "shared"}, rel...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("shared fixtures not found at %s: %v", p, err)
	}
	return p
}

// BuildCLI builds cmd/layercheck into dir and returns the binary's path.
func BuildCLI(t testing.TB, dir string) string {
	t.Helper()
	return Build(t, "./cmd/layercheck", filepath.Join(dir, "layercheck"))
}

// Build builds a main package of this module to out with CGO disabled.
func Build(t testing.TB, pkg, out string) string {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

var (
	emptyCfgOnce sync.Once
	emptyCfgPath string
)

// emptyAnsibleCfg returns the path of an empty ansible.cfg shared by every
// test process: one fixed file in the system temp directory, written when
// absent or not empty (a directory per process left one behind each run).
func emptyAnsibleCfg() string {
	emptyCfgOnce.Do(func() {
		p := filepath.Join(os.TempDir(), "layercheck-empty-ansible.cfg")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			emptyCfgPath = p
			return
		}
		// Write it under a name of this process's own and rename it into
		// place, so that a parallel test process never reads half a file.
		f, err := os.CreateTemp("", "layercheck-empty-ansible.cfg.*")
		if err != nil {
			return
		}
		f.Close()
		if os.Rename(f.Name(), p) == nil {
			emptyCfgPath = p
		} else {
			os.Remove(f.Name())
		}
	})
	return emptyCfgPath
}

// PreCommit returns the path of the pre-commit tool in .venvs/pre-commit,
// installing it first with scripts/venv-precommit.sh (`make
// venv-precommit`, part of `make venv`) when it is not there. A failed
// install fails the test, naming the make target: no test skips over a
// missing tool.
func PreCommit(t testing.TB) string {
	t.Helper()
	p := filepath.Join(RepoRoot(), ".venvs", "pre-commit", "bin", "pre-commit")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	cmd := exec.Command(filepath.Join(RepoRoot(), "scripts", "venv-precommit.sh"))
	cmd.Dir = RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pre-commit is not installed and scripts/venv-precommit.sh failed: run `make venv-precommit`: %v\n%s", err, out)
	}
	return p
}
