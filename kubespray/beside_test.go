package kubespray

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
)

// fakeCheckout is the least a kubespray checkout holds for IsCheckout and
// Checkout: the defaults role with one variable.
var fakeCheckout = map[string]string{"roles/kubespray_defaults/defaults/main.yml": "fake_checkout_var: true\n"}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	testutil.WriteTree(t, dir, files)
}

// FindBeside: a submodule named kubespray (at any path), a kubespray
// directory at the top of the inventory's repository, a kubespray
// directory beside it; in that order, and nothing outside a repository.
func TestFindBeside(t *testing.T) {
	t.Run("submodule at any path", func(t *testing.T) {
		root := t.TempDir()
		writeFiles(t, root, map[string]string{
			".git/HEAD":             "ref: refs/heads/main\n",
			".gitmodules":           "[submodule \"ext/kubespray\"]\n\tpath = ext/kubespray\n\turl = https://github.com/kubernetes-sigs/kubespray\n",
			"inventory/prod/hosts":  "[all]\nnode1\n",
			"kubespray/README.md":   "not a checkout\n",
			"ext/kubespray/.git":    "gitdir: ../../.git/modules/ext/kubespray\n",
			"ext/kubespray/LICENSE": "",
		})
		writeFiles(t, filepath.Join(root, "ext", "kubespray"), fakeCheckout)
		dir, why, note := FindBeside(filepath.Join(root, "inventory", "prod", "hosts"))
		if dir != filepath.Join(root, "ext", "kubespray") || note != "" {
			t.Fatalf("got %q %q %q", dir, why, note)
		}
		if want := "found without --kubespray-dir: the git submodule ext/kubespray of the inventory's repository " + root; why != want {
			t.Errorf("why %q, want %q", why, want)
		}
	})
	t.Run("submodule not checked out", func(t *testing.T) {
		root := t.TempDir()
		writeFiles(t, root, map[string]string{
			".git/HEAD":   "ref: refs/heads/main\n",
			".gitmodules": "[submodule \"kubespray\"]\n\tpath = kubespray\n\turl = ../kubespray.git\n",
			"hosts.ini":   "[all]\nnode1\n",
		})
		if err := os.Mkdir(filepath.Join(root, "kubespray"), 0o755); err != nil {
			t.Fatal(err)
		}
		dir, _, note := FindBeside(filepath.Join(root, "hosts.ini"))
		if dir != "" || note != "the git submodule kubespray of the inventory's repository "+root+" is not checked out (git submodule update --init kubespray)" {
			t.Fatalf("got %q, note %q", dir, note)
		}
		c, err := ForInventory([]string{filepath.Join(root, "hosts.ini")})
		if err != nil {
			t.Fatal(err)
		}
		if !c.Default || !strings.HasSuffix(c.Why, "and "+note) {
			t.Errorf("default %v why %q", c.Default, c.Why)
		}
	})
	t.Run("directory in the repository, then beside it", func(t *testing.T) {
		top := t.TempDir()
		root := filepath.Join(top, "infra")
		writeFiles(t, root, map[string]string{".git": "gitdir: /elsewhere\n", "inv/hosts.yml": "all:\n  hosts:\n    node1:\n"})
		writeFiles(t, filepath.Join(top, "kubespray"), fakeCheckout)
		dir, why, _ := FindBeside(filepath.Join(root, "inv"))
		if dir != filepath.Join(top, "kubespray") || why != "found without --kubespray-dir: the directory kubespray beside the inventory's repository "+root {
			t.Fatalf("sibling: %q %q", dir, why)
		}
		writeFiles(t, filepath.Join(root, "kubespray"), fakeCheckout)
		dir, why, _ = FindBeside(filepath.Join(root, "inv", "hosts.yml"))
		if dir != filepath.Join(root, "kubespray") || why != "found without --kubespray-dir: the directory kubespray in the inventory's repository "+root {
			t.Fatalf("in the repository: %q %q", dir, why)
		}
		c, err := ForInventory([]string{filepath.Join(root, "inv")})
		if err != nil {
			t.Fatal(err)
		}
		if c.Root != dir || c.Name != "kubespray checkout at "+dir || c.Why != why || c.Vars["fake_checkout_var"] == nil {
			t.Errorf("catalogue %q root %q why %q", c.Name, c.Root, c.Why)
		}
	})
	t.Run("no repository", func(t *testing.T) {
		root := t.TempDir()
		writeFiles(t, root, map[string]string{"hosts.ini": "[all]\nnode1\n"})
		writeFiles(t, filepath.Join(root, "kubespray"), fakeCheckout)
		if RepoRoot(root) != "" {
			t.Skip("the temporary directory lies in a git repository")
		}
		if dir, why, note := FindBeside(filepath.Join(root, "hosts.ini")); dir != "" || why != "" || note != "" {
			t.Errorf("got %q %q %q", dir, why, note)
		}
	})
}

// SelectDir reads any checkout, and a directory that is none is an error
// saying what a checkout holds.
func TestSelectDir(t *testing.T) {
	fork := filepath.Join(t.TempDir(), "my-fork")
	writeFiles(t, fork, fakeCheckout)
	c, err := SelectDir(fork, "--kubespray-dir")
	if err != nil {
		t.Fatal(err)
	}
	if c.Root != fork || c.Why != "chosen with --kubespray-dir "+fork || c.Default || c.Vars["fake_checkout_var"] == nil {
		t.Errorf("catalogue %q root %q why %q", c.Name, c.Root, c.Why)
	}
	notOne := t.TempDir()
	writeFiles(t, notOne, map[string]string{"roles/other/defaults/main.yml": "a: 1\n"})
	empty := t.TempDir()
	file := filepath.Join(notOne, "roles", "other", "defaults", "main.yml")
	for _, tc := range []struct{ dir, want string }{
		{notOne, "--kubespray-dir " + notOne + ": not a kubespray checkout: it has no roles/kubespray_defaults/defaults (roles/kubespray-defaults/defaults before v2.28)"},
		{empty, "it is empty: a git submodule not checked out yet? (git submodule update --init)"},
		{file, "not a directory"},
		{filepath.Join(notOne, "missing"), "no such file or directory"},
	} {
		_, err := SelectDir(tc.dir, "--kubespray-dir")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.dir, err, tc.want)
		}
	}
}
