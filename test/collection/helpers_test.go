// Package collection tests the Ansible collection layercheck.kubespray end
// to end: real ansible-core 2.19 (from the repository's .venv) running the
// real Go binary modules through the collection's action plugin, from a
// plain checkout (playbooks/lint.yml) and from a collection installed with
// ansible-galaxy from the built tarball.
//
// The binaries come from `make modules` (plugins/bin/<module>_linux_<arch>);
// `make test` builds them first. A missing binary or ansible-core fails the
// tests, it never skips them.
package collection

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/test/testutil"
)

// runTimeout bounds every ansible command of these tests.
const runTimeout = 5 * time.Minute

// requireBinaries fails unless the inventory_lint binaries for both
// shipped architectures exist and playbooks/collections holds the
// collection (both made by `make modules`), and returns the binary for this
// machine.
func requireBinaries(t *testing.T) string {
	t.Helper()
	testutil.CheckoutCollections(t)
	var mine string
	for _, arch := range []string{"amd64", "arm64"} {
		p := filepath.Join(testutil.RepoRoot(), "plugins", "bin", "inventory_lint_linux_"+arch)
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s missing: run `make modules` (or `make test`, which builds it): %v", p, err)
		}
		if arch == runtime.GOARCH {
			mine = p
		}
	}
	if runtime.GOOS != "linux" || mine == "" {
		t.Fatalf("these tests run the linux/amd64 or linux/arm64 module binary; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return mine
}

// env is the environment for ansible commands: testutil.AnsibleEnv (with
// its empty ansible.cfg), the default callback, and extra (later entries win).
func env(t *testing.T, extra ...string) []string {
	t.Helper()
	return testutil.AnsibleEnv(append([]string{
		"ANSIBLE_STDOUT_CALLBACK=default",
		"ANSIBLE_CALLBACK_RESULT_FORMAT=json",
		"ANSIBLE_FORKS=5",
		"ANSIBLE_COLLECTIONS_PATH=" + filepath.Join(t.TempDir(), "no-collections"),
	}, extra...)...)
}

// result of one ansible command.
type result struct {
	out  string // stdout and stderr together
	code int
}

// run runs an ansible command (ansible-playbook, ansible-doc, ...) from the
// venv in dir and returns its output and exit code.
func run(t *testing.T, dir string, envv []string, name string, args ...string) result {
	t.Helper()
	return runCmd(t, dir, envv, testutil.Ansible(t, name), args...)
}

// runCmd runs the program at path (an ansible command of some venv) as run does.
func runCmd(t *testing.T, dir string, envv []string, path string, args ...string) result {
	t.Helper()
	name := filepath.Base(path)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	cmd.Env = envv
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: timed out after %s\n%s", name, strings.Join(args, " "), runTimeout, buf.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return result{out: buf.String(), code: code}
}

// hostFacts is ansible_facts.layercheck_lint as the tests read it.
type hostFacts struct {
	Catalogue    string `json:"catalogue"`
	CatalogueWhy string `json:"catalogue_why"`
	Errors       int    `json:"errors"`
	Warnings     int    `json:"warnings"`
	Findings     []struct {
		Rule       string   `json:"rule"`
		Severity   string   `json:"severity"`
		Variable   string   `json:"variable"`
		Value      string   `json:"value"`
		Where      string   `json:"where"`
		Hosts      []string `json:"hosts"`
		HostsTotal int      `json:"hosts_total"`
		Message    string   `json:"message"`
		Fix        string   `json:"fix"`
		Text       string   `json:"text"`
	} `json:"findings"`
}

// factsPlaybook is a play that writes every host's
// ansible_facts.layercheck_lint to <dir>/<host>.json on the controller, in
// check mode too, and asserts the facts are there.
func factsPlaybook(dir string) string {
	return `- name: Dump the lint facts
  hosts: all
  gather_facts: false
  tasks:
    - name: The facts are set per host
      ansible.builtin.assert:
        that:
          - ansible_facts.layercheck_lint is defined
          - ansible_facts.layercheck_lint.findings is sequence
          - ansible_facts.layercheck_lint.catalogue | length > 0
    - name: Write them
      ansible.builtin.copy:
        content: "{{ ansible_facts.layercheck_lint | to_nice_json }}"
        dest: "` + dir + `/{{ inventory_hostname }}.json"
        mode: "0644"
      delegate_to: localhost
      check_mode: false
`
}

// readFacts reads the files factsPlaybook wrote, per host.
func readFacts(t *testing.T, dir string, hosts ...string) map[string]*hostFacts {
	t.Helper()
	out := map[string]*hostFacts{}
	for _, h := range hosts {
		b, err := os.ReadFile(filepath.Join(dir, h+".json"))
		if err != nil {
			t.Fatalf("facts of %s not written: %v", h, err)
		}
		var f hostFacts
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("facts of %s: %v\n%s", h, err, b)
		}
		out[h] = &f
	}
	return out
}

// recap checks the PLAY RECAP line of host.
func recap(t *testing.T, out, host, want string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 2 && f[0] == host && f[1] == ":" {
			if !strings.Contains(l, want) {
				t.Errorf("recap of %s: want %q in %q", host, want, l)
			}
			return
		}
	}
	t.Errorf("no PLAY RECAP line for %s in:\n%s", host, out)
}
