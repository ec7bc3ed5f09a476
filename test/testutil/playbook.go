package testutil

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// LayOutCollection lays out the layercheck.kubespray collection of this
// checkout under dir/ansible_collections/layercheck/kubespray (dir is then
// an ANSIBLE_COLLECTIONS_PATH): links to meta, roles, galaxy.yml, the
// action plugin, plugin_utils, playbooks/verify.yml and the module
// documentation, and the named modules (e.g. "node_facts") built from
// ./cmd/<name> as plugins/bin/<name>_linux_<arch> for this machine.
func LayOutCollection(dir string, modules ...string) error {
	repo := RepoRoot()
	root := filepath.Join(dir, "ansible_collections", "layercheck", "kubespray")
	for _, d := range []string{"plugins/modules", "plugins/bin", "playbooks"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	links := []string{"meta", "roles", "galaxy.yml", "plugins/action", "plugins/plugin_utils", "playbooks/verify.yml"}
	mods, _ := filepath.Glob(filepath.Join(repo, "plugins", "modules", "*"))
	for _, m := range mods {
		if !strings.Contains(filepath.Base(m), "_linux_") {
			links = append(links, filepath.Join("plugins", "modules", filepath.Base(m)))
		}
	}
	for _, l := range links {
		if _, err := os.Stat(filepath.Join(repo, l)); err != nil {
			return fmt.Errorf("collection file %s: %w", l, err)
		}
		if err := os.Symlink(filepath.Join(repo, l), filepath.Join(root, l)); err != nil {
			return err
		}
	}
	for _, m := range modules {
		bin := filepath.Join(root, "plugins", "bin", m+"_linux_"+runtime.GOARCH)
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/"+m)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/%s: %v\n%s", m, err, out)
		}
	}
	return nil
}

// RunPlaybook runs ansible-playbook of the virtual environment with args in
// dir with env (see AnsibleEnv), and returns its stdout and stderr together
// and its error. A run longer than timeout is killed and fails the test.
func RunPlaybook(t testing.TB, dir string, env []string, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(Ansible(t, "ansible-playbook"), args...)
	cmd.Dir = dir
	cmd.Env = env
	done := make(chan struct{})
	var out []byte
	var err error
	go func() {
		out, err = cmd.CombinedOutput()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("ansible-playbook did not finish in %s:\n%s", timeout, out)
	}
	return string(out), err
}

// FactCache reads the hosts' facts from an ansible-core jsonfile fact cache
// directory (ANSIBLE_CACHE_PLUGIN=jsonfile): file name (the host) -> facts.
// ansible-core 2.19 wraps the facts as a JSON string in "__payload__",
// which is unwrapped. An unreadable or malformed file fails the test.
func FactCache(t testing.TB, dir string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var facts map[string]any
		if err := json.Unmarshal(data, &facts); err != nil {
			t.Fatalf("fact cache %s: %v", f, err)
		}
		if p, ok := facts["__payload__"].(string); ok {
			facts = nil
			if err := json.Unmarshal([]byte(p), &facts); err != nil {
				t.Fatalf("fact cache %s payload: %v", f, err)
			}
		}
		out[filepath.Base(f)] = facts
	}
	return out
}

// CheckoutCollections returns the checkout's playbooks/collections, the
// folder beside playbooks/lint.yml and playbooks/verify.yml where
// ansible-playbook finds the collection layercheck.kubespray (links to
// meta, plugins, roles, galaxy.yml and the playbooks, laid out by
// scripts/collection-links.sh, which `make modules` runs). Its absence
// fails the test: no test skips over a missing build step.
func CheckoutCollections(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(), "playbooks", "collections")
	for _, f := range []string{"galaxy.yml", "meta/runtime.yml", "roles/lint", "plugins/action", "playbooks/verify.yml"} {
		if _, err := os.Stat(filepath.Join(dir, "ansible_collections", "layercheck", "kubespray", f)); err != nil {
			t.Fatalf("playbooks/collections does not hold the collection: run `make modules` (or `make test`, which runs it): %v", err)
		}
	}
	return dir
}
