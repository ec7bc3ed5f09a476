package collection

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
)

// Hosts point at a closed port on loopback over ssh: any attempt to
// contact them would make them unreachable, and the lint must not.
const unreachable = " ansible_host=127.0.0.1 ansible_port=1 ansible_connection=ssh ansible_ssh_timeout=2"

// inventory writes a small kubespray inventory into a new temp dir and
// returns the directory. broken adds a quoted "true" for helm_enabled in
// group_vars/k8s_cluster/addons.yml (line 2, column 15) and a host_vars file
// for node2 with kube_proxy_strict_arp: "yes" (line 2, column 24).
func inventory(t *testing.T, broken bool) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"inventory.ini": "[kube_control_plane]\nnode1" + unreachable + "\n\n" +
			"[etcd]\nnode1\n\n" +
			"[kube_node]\nnode2" + unreachable + "\nnode3" + unreachable + "\n\n" +
			"[k8s_cluster:children]\nkube_control_plane\nkube_node\n",
		"group_vars/k8s_cluster/addons.yml": "---\nhelm_enabled: false\n",
	}
	if broken {
		files["group_vars/k8s_cluster/addons.yml"] = "---\nhelm_enabled: \"true\"\n"
		files["host_vars/node2.yml"] = "---\nkube_proxy_strict_arp: \"yes\"\n"
	}
	testutil.WriteTree(t, dir, files)
	return dir
}

var nodes = []string{"node1", "node2", "node3"}

func lintPlaybook() string { return filepath.Join(testutil.RepoRoot(), "playbooks", "lint.yml") }

func TestCheckoutPlaybookCleanInventory(t *testing.T) {
	requireBinaries(t)
	inv := inventory(t, false)
	facts := t.TempDir()
	testutil.WriteTree(t, facts, map[string]string{"facts.yml": factsPlaybook(facts)})
	r := run(t, t.TempDir(), env(t), "ansible-playbook", "-i", inv, lintPlaybook(), filepath.Join(facts, "facts.yml"))
	if r.code != 0 {
		t.Fatalf("lint of a clean inventory failed (exit %d):\n%s", r.code, r.out)
	}
	for _, h := range nodes {
		recap(t, r.out, h, "unreachable=0    failed=0")
	}
	for h, f := range readFacts(t, facts, nodes...) {
		if f.Errors != 0 || !strings.Contains(f.Catalogue, "kubespray") {
			t.Errorf("%s: want 0 errors and a kubespray catalogue, got %+v", h, f)
		}
	}
}

func TestCheckoutPlaybookBrokenInventory(t *testing.T) {
	requireBinaries(t)
	inv := inventory(t, true)
	r := run(t, t.TempDir(), env(t), "ansible-playbook", "-i", inv, lintPlaybook())
	if r.code == 0 {
		t.Fatalf("lint of a broken inventory passed:\n%s", r.out)
	}
	for _, want := range []string{
		"layercheck lint: 2 errors, 0 warnings (",
		"string-as-bool (2): ",
		"  group_vars/k8s_cluster/addons.yml:2:15: helm_enabled = \"true\" (all 3 hosts): helm_enabled is the str \"true\", not a boolean\n    fix: helm_enabled: true\n",
		"  host_vars/node2.yml:2:24: kube_proxy_strict_arp = \"yes\" (host: node2): ",
		"fix the errors listed above and run again",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q:\n%s", want, r.out)
		}
	}
	// One report, one failure, no Ansible error block with the role's source.
	for what, n := range map[string]int{"helm_enabled = ": 1, "fatal: ": 1, "[ERROR]": 0, "Origin:": 0, "Why": 0, "why:": 0} {
		if got := strings.Count(r.out, what); got != n {
			t.Errorf("%q %d times, want %d:\n%s", what, got, n, r.out)
		}
	}
	recap(t, r.out, "node1", "unreachable=0    failed=1")
	for _, h := range nodes {
		recap(t, r.out, h, "unreachable=0")
	}
	// -v adds each finding's why, still once.
	r = run(t, t.TempDir(), env(t), "ansible-playbook", "-v", "-i", inv, lintPlaybook())
	if n := strings.Count(r.out, "\n    why: ansible-core >= 2.19 fails kubespray's `helm_enabled`"); r.code == 0 || n != 1 {
		t.Errorf("-v: want the failure with helm_enabled's why once, got exit %d and %d:\n%s", r.code, n, r.out)
	}
}

// The facts per host: each host gets the findings affecting it; the same
// facts in check mode.
func TestFactsPerHostAndCheckMode(t *testing.T) {
	requireBinaries(t)
	inv := inventory(t, true)
	var got [2]map[string]*hostFacts
	for i, mode := range [][]string{nil, {"--check"}} {
		facts := t.TempDir()
		testutil.WriteTree(t, facts, map[string]string{"facts.yml": factsPlaybook(facts)})
		args := append([]string{"-i", inv, "-e", `{"layercheck_lint_fail_on_errors": false}`}, mode...)
		r := run(t, t.TempDir(), env(t), "ansible-playbook", append(args, lintPlaybook(), filepath.Join(facts, "facts.yml"))...)
		if r.code != 0 {
			t.Fatalf("ansible-playbook %v (exit %d):\n%s", mode, r.code, r.out)
		}
		got[i] = readFacts(t, facts, nodes...)
	}
	f := got[0]
	if f["node1"].Errors != 1 || f["node3"].Errors != 1 || f["node2"].Errors != 2 {
		t.Errorf("errors per host: node1 %d, node2 %d, node3 %d; want 1, 2, 1", f["node1"].Errors, f["node2"].Errors, f["node3"].Errors)
	}
	for h, hf := range f {
		for _, fd := range hf.Findings {
			if fd.Variable == "kube_proxy_strict_arp" && h != "node2" {
				t.Errorf("%s got node2's host_vars finding: %+v", h, fd)
			}
			if fd.Variable == "helm_enabled" && (fd.Where != "group_vars/k8s_cluster/addons.yml:2:15" || fd.Fix != "helm_enabled: true" ||
				!reflect.DeepEqual(fd.Hosts, nodes) || fd.Rule != "string-as-bool" || fd.Severity != "error" || fd.Text == "") {
				t.Errorf("%s: helm_enabled finding %+v", h, fd)
			}
		}
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		a, _ := json.MarshalIndent(got[0], "", " ")
		b, _ := json.MarshalIndent(got[1], "", " ")
		t.Errorf("check mode gave other facts:\nnormal: %s\ncheck: %s", a, b)
	}
}

func TestExtraVarsTypesFromAnsible(t *testing.T) {
	requireBinaries(t)
	inv := inventory(t, false)
	r := run(t, t.TempDir(), env(t), "ansible-playbook", "-i", inv, lintPlaybook(), "-e", "helm_enabled=true")
	if r.code == 0 {
		t.Fatalf("-e helm_enabled=true (a str) passed the lint:\n%s", r.out)
	}
	for _, want := range []string{`-e: helm_enabled = "true"`, `fix: -e '{"helm_enabled": true}'`} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q:\n%s", want, r.out)
		}
	}
	r = run(t, t.TempDir(), env(t), "ansible-playbook", "-i", inv, lintPlaybook(), "-e", `{"helm_enabled": true}`)
	if r.code != 0 {
		t.Fatalf(`-e '{"helm_enabled": true}' (a bool) failed the lint (exit %d):`+"\n%s", r.code, r.out)
	}
	// A YAML file given with -e @file: its location is the file's.
	dir := t.TempDir()
	testutil.WriteTree(t, dir, map[string]string{"extra.yml": "---\ndownload_run_once: \"yes\"\nhelm_enabled: true\n"})
	r = run(t, dir, env(t), "ansible-playbook", "-i", inv, lintPlaybook(), "-e", "@extra.yml")
	if r.code == 0 || !strings.Contains(r.out, `download_run_once = "yes"`) || !strings.Contains(r.out, "extra.yml:2:20") ||
		strings.Contains(r.out, "helm_enabled =") {
		t.Errorf("-e @extra.yml: want download_run_once reported at extra.yml:2:20 and helm_enabled not (exit %d):\n%s", r.code, r.out)
	}
}

// The kubespray-shaped samples that come with the checkout: the clean one
// passes; the broken one fails listing every error the CLI reports, with
// its variable, location and fix.
func TestBundledSamples(t *testing.T) {
	requireBinaries(t)
	root := testutil.RepoRoot()
	r := run(t, t.TempDir(), env(t), "ansible-playbook", "-i", filepath.Join(root, "inventory-samples", "kubespray-3node"), lintPlaybook())
	if r.code != 0 {
		t.Fatalf("inventory-samples/kubespray-3node failed the lint (exit %d):\n%s", r.code, r.out)
	}

	broken := filepath.Join(root, "inventory-samples", "broken")
	r = run(t, t.TempDir(), env(t), "ansible-playbook", "-i", broken, lintPlaybook())
	if r.code == 0 {
		t.Fatalf("inventory-samples/broken passed the lint:\n%s", r.out)
	}
	cli := testutil.BuildCLI(t, t.TempDir())
	out, err := exec.Command(cli, "lint", "-i", broken, "--format", "json").Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		t.Fatalf("layercheck lint: %v", err)
	}
	var rep struct {
		Errors   int `json:"errors"`
		Findings []struct {
			Severity, Variable, Where, Fix string
		} `json:"findings"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("layercheck lint json: %v\n%s", err, out)
	}
	if rep.Errors == 0 {
		t.Fatal("layercheck lint found no errors in inventory-samples/broken")
	}
	for _, f := range rep.Findings {
		if f.Severity != "error" {
			continue
		}
		for _, want := range []string{f.Variable, f.Where, f.Fix} {
			if want != "" && !strings.Contains(r.out, want) {
				t.Errorf("playbook output lacks %q of the CLI's error %+v", want, f)
			}
		}
	}
}

// The role and its binary run from the collection installed with
// ansible-galaxy from the tarball built from this checkout.
func TestInstalledCollection(t *testing.T) {
	requireBinaries(t)
	work := t.TempDir()
	e := env(t)
	// Build from a snapshot of the collection's files: other work in this
	// checkout must not change a file between ansible-galaxy's listing and
	// its checksum.
	src := filepath.Join(t.TempDir(), "src")
	for _, p := range []string{"galaxy.yml", "README.md", "LICENSE", "meta", "plugins", "roles", "playbooks", "changelogs"} {
		copyTree(t, filepath.Join(testutil.RepoRoot(), p), filepath.Join(src, p))
	}
	r := run(t, src, e, "ansible-galaxy", "collection", "build", "--force", "--output-path", work, src)
	if r.code != 0 {
		t.Fatalf("ansible-galaxy collection build (exit %d):\n%s", r.code, r.out)
	}
	tarball := filepath.Join(work, "layercheck-kubespray-0.1.0.tar.gz")
	list, err := exec.Command("tar", "tzf", tarball).Output()
	if err != nil {
		t.Fatalf("tar tzf %s: %v", tarball, err)
	}
	files := map[string]bool{}
	for _, f := range strings.Fields(string(list)) {
		files[f] = true
		if strings.HasSuffix(f, ".go") || strings.HasPrefix(f, "test/") || strings.HasPrefix(f, "playbooks/collections") {
			t.Errorf("tarball holds %s", f)
		}
	}
	for _, f := range []string{"MANIFEST.json", "README.md", "LICENSE", "meta/runtime.yml", "plugins/action/inventory_lint.py",
		"plugins/modules/inventory_lint.yml", "plugins/bin/inventory_lint_linux_amd64", "plugins/bin/inventory_lint_linux_arm64",
		"roles/lint/meta/argument_specs.yml", "roles/lint/tasks/run.yml", "playbooks/lint.yml"} {
		if !files[f] {
			t.Errorf("tarball lacks %s", f)
		}
	}
	colls := filepath.Join(work, "collections")
	r = run(t, work, e, "ansible-galaxy", "collection", "install", "-p", colls, tarball)
	if r.code != 0 {
		t.Fatalf("ansible-galaxy collection install (exit %d):\n%s", r.code, r.out)
	}
	e = append(e, "ANSIBLE_COLLECTIONS_PATH="+colls)
	assertDocList(t, e)
	r = run(t, work, e, "ansible-doc", "layercheck.kubespray.inventory_lint")
	if r.code != 0 {
		t.Fatalf("ansible-doc (exit %d):\n%s", r.code, r.out)
	}
	for _, want := range []string{"layercheck.kubespray.inventory_lint", "Reads the inventory sources", "extra_vars", "kubespray_version",
		"EXAMPLES", "RETURN VALUES", "layercheck_lint", "action plugin"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("ansible-doc output lacks %q:\n%s", want, r.out)
		}
	}

	inv := inventory(t, false)
	// The task path on failure names the role the playbook ran.
	r = run(t, work, append(e, "ANSIBLE_SHOW_TASK_PATH_ON_FAILURE=true"), "ansible-playbook", "-i", inv, "layercheck.kubespray.lint", "-e", "helm_enabled=true")
	if r.code == 0 || !strings.Contains(r.out, `-e: helm_enabled = "true"`) ||
		!strings.Contains(r.out, filepath.Join(colls, "ansible_collections", "layercheck", "kubespray", "roles", "lint")) {
		t.Errorf("installed layercheck.kubespray.lint -e helm_enabled=true: want a failure naming helm_enabled at -e from the installed role (exit %d):\n%s", r.code, r.out)
	}
	r = run(t, work, e, "ansible-playbook", "-i", inv, "layercheck.kubespray.lint", "-e", `{"helm_enabled": true}`)
	if r.code != 0 {
		t.Errorf(`installed layercheck.kubespray.lint -e '{"helm_enabled": true}' failed (exit %d):`+"\n%s", r.code, r.out)
	}
}

// copyTree copies regular files and directories from src to dst, leaving
// out symlinks (playbooks/collections holds links into the checkout) and
// Python caches. A missing src is no error.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == src {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			return nil
		case d.IsDir():
			if d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}
