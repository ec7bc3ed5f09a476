//go:build shared

package app

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
		"-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// kubesprayRepo makes a git repository of a copy of kubespray release's
// whole tree (../shared/kubespray-full/<release>) at dir.
func kubesprayRepo(t *testing.T, release, dir string) string {
	t.Helper()
	testutil.CopyTree(t, testutil.Shared(t, "kubespray-full", release), dir)
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "kubespray "+release)
	return dir
}

// inventoryRepo makes an inventory repository at dir: a three-node
// inventory under inventory/prod with helm_enabled: "true", committed.
func inventoryRepo(t *testing.T, dir string) string {
	t.Helper()
	testutil.WriteTree(t, dir, map[string]string{
		"inventory/prod/hosts.ini":              testutil.ThreeNodeINI,
		"inventory/prod/group_vars/all/all.yml": "helm_enabled: \"true\"\n",
	})
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "inventory")
	return dir
}

// An inventory kept in a repository of its own, with kubespray as a real
// git submodule, is linted against that checkout without flags; the
// header says which checkout and why. A clone whose submodule is not
// checked out falls back to the bundled catalogue and says why;
// --kubespray-dir reads any checkout (a fork elsewhere), and a directory
// that is none is a clear error.
func TestLintKubesprayBesideTheInventory(t *testing.T) {
	top := t.TempDir()
	src := kubesprayRepo(t, "v2.24.3", filepath.Join(top, "upstream-kubespray"))
	infra := inventoryRepo(t, filepath.Join(top, "infra"))
	git(t, infra, "submodule", "add", "-q", src, "kubespray")
	git(t, infra, "commit", "-qm", "kubespray as a submodule")
	inv := filepath.Join(infra, "inventory", "prod")

	out, errOut, code := runCLI(t, "lint", "-i", inv)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the string boolean)\n%s\n%s", code, out, errOut)
	}
	header, _, _ := strings.Cut(out, "\n")
	ks := filepath.Join(infra, "kubespray")
	for _, want := range []string{
		"catalogue: kubespray checkout at " + ks + ", found without --kubespray-dir: the git submodule kubespray of the inventory's repository " + infra,
		// the checkout's own playbooks/ansible_version.yml: v2.24.3 runs on 2.16
		"string booleans judged under ansible-core 2.16, the series the kubespray checkout pins",
	} {
		if !strings.Contains(header, want) {
			t.Errorf("header lacks %q:\n%s", want, header)
		}
	}
	if !strings.Contains(out, `string-as-bool helm_enabled = "true"`) {
		t.Errorf("no string-as-bool finding:\n%s", out)
	}

	// A clone without --recurse-submodules: an empty kubespray directory.
	clone := filepath.Join(top, "clone")
	git(t, top, "clone", "-q", infra, clone)
	out, _, code = runCLI(t, "lint", "-i", filepath.Join(clone, "inventory", "prod"), "--format", "json")
	if code != 1 || !strings.Contains(out, `"catalogue": "bundled kubespray master `) ||
		!strings.Contains(out, "the git submodule kubespray of the inventory's repository "+clone+" is not checked out (git submodule update --init kubespray)") {
		t.Errorf("exit %d, want the bundled default saying the submodule is not checked out:\n%s", code, out)
	}

	// --kubespray-dir: a fork anywhere, read at run time (v2.31.0 runs on 2.18).
	fork := filepath.Join(top, "forks", "kubespray-fork")
	testutil.CopyTree(t, testutil.Shared(t, "kubespray-full", "v2.31.0"), fork)
	out, errOut, code = runCLI(t, "lint", "-i", inv, "--kubespray-dir", fork)
	header, _, _ = strings.Cut(out, "\n")
	if code != 1 || !strings.Contains(header, "catalogue: kubespray checkout at "+fork+", chosen with --kubespray-dir "+fork) ||
		!strings.Contains(header, "ansible-core 2.18, the series the kubespray checkout pins") {
		t.Errorf("exit %d\n%s\n%s", code, header, errOut)
	}

	// Not a checkout, and not together with --kubespray-version.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kubespray-dir", infra}, "lint: kubespray catalogue: --kubespray-dir " + infra + ": not a kubespray checkout: it has no roles/kubespray_defaults/defaults (roles/kubespray-defaults/defaults before v2.28)"},
		{[]string{"--kubespray-dir", filepath.Join(clone, "kubespray")}, "it is empty: a git submodule not checked out yet? (git submodule update --init)"},
		{[]string{"--kubespray-dir", fork, "--kubespray-version", "v2.31"}, "give --kubespray-version or --kubespray-dir, not both"},
	} {
		_, errOut, code := runCLI(t, append([]string{"lint", "-i", inv}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", tc.args, code, tc.want, errOut)
		}
	}
}

// A kubespray checkout beside the inventory's repository (a sibling
// directory, not a submodule) is found too.
func TestLintKubesprayCheckoutBesideTheRepository(t *testing.T) {
	top := t.TempDir()
	kubesprayRepo(t, "v2.30.0", filepath.Join(top, "kubespray"))
	infra := inventoryRepo(t, filepath.Join(top, "infra"))
	out, errOut, code := runCLI(t, "lint", "-i", filepath.Join(infra, "inventory", "prod"), "--format", "json")
	if code != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		`"catalogue": "kubespray checkout at ` + filepath.Join(top, "kubespray") + `"`,
		`"catalogue_why": "found without --kubespray-dir: the directory kubespray beside the inventory's repository ` + infra + `"`,
		`"ansible_core": "2.17"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("JSON lacks %s:\n%s", want, out)
		}
	}
}
