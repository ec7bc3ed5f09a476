package kubespray

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/layercheck/layercheck/kubespray/internal/scan"
)

// IsCheckout reports whether dir is a kubespray checkout: it holds
// roles/kubespray_defaults/defaults (roles/kubespray-defaults/defaults
// before v2.28).
func IsCheckout(dir string) bool {
	for _, r := range scan.DefaultsRoles {
		if st, err := os.Stat(filepath.Join(dir, "roles", r, "defaults")); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

// SelectDir returns the catalogue of the kubespray checkout at dir, read
// at run time as for an inventory inside it (Checkout), named by option
// (e.g. "--kubespray-dir") in its Why. A dir that is no kubespray
// checkout is an error saying what a checkout holds.
func SelectDir(dir, option string) (*Catalogue, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", option, dir, err)
	}
	st, err := os.Stat(abs)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s %s: %w", option, dir, err)
	case !st.IsDir():
		return nil, fmt.Errorf("%s %s: not a directory: give the top directory of a kubespray checkout", option, dir)
	case !IsCheckout(abs):
		return nil, fmt.Errorf("%s %s: not a kubespray checkout: it has no roles/%s/defaults (roles/%s/defaults before v2.28)%s",
			option, dir, scan.DefaultsRoles[0], scan.DefaultsRoles[1], emptyHint(abs))
	}
	c, err := Checkout(abs)
	if err != nil {
		return nil, err
	}
	c.Why = "chosen with " + option + " " + dir
	return c, nil
}

// emptyHint adds, for an empty directory, that a git submodule may not be
// checked out.
func emptyHint(dir string) string {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) == 0 {
		return "; it is empty: a git submodule not checked out yet? (git submodule update --init)"
	}
	return ""
}

// RepoRoot walks up from path (a file or directory) to the directory
// holding .git (a directory, or a file in a submodule or worktree): the
// root of the git repository path lies in; "" when there is none.
func RepoRoot(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	dir := abs
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		dir = filepath.Dir(abs)
	}
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// FindBeside looks for the kubespray checkout an inventory kept in a
// repository of its own is run with: in the repository the source lies in
// (see RepoRoot), a git submodule whose directory is named kubespray (any
// path in .gitmodules ending in kubespray), else a directory kubespray at
// its top, else a directory kubespray beside the repository (a sibling
// checkout). It returns the checkout and why it was taken, or, when none
// is a checkout, "" and a note for a submodule that is not checked out
// ("" when there is nothing to say).
func FindBeside(source string) (dir, why, note string) {
	root := RepoRoot(source)
	if root == "" {
		return "", "", ""
	}
	for _, p := range submodulePaths(root) {
		if filepath.Base(p) != "kubespray" {
			continue
		}
		d := filepath.Join(root, filepath.FromSlash(p))
		if IsCheckout(d) {
			return d, fmt.Sprintf("found without --kubespray-dir: the git submodule %s of the inventory's repository %s", p, root), ""
		}
		note = fmt.Sprintf("the git submodule %s of the inventory's repository %s is not checked out (git submodule update --init %s)", p, root, p)
	}
	if note != "" {
		return "", "", note
	}
	if d := filepath.Join(root, "kubespray"); IsCheckout(d) {
		return d, fmt.Sprintf("found without --kubespray-dir: the directory kubespray in the inventory's repository %s", root), ""
	}
	if d := filepath.Join(filepath.Dir(root), "kubespray"); d != root && IsCheckout(d) {
		return d, fmt.Sprintf("found without --kubespray-dir: the directory kubespray beside the inventory's repository %s", root), ""
	}
	return "", "", ""
}

// submodulePaths are the path = entries of root/.gitmodules, in order.
func submodulePaths(root string) []string {
	p := filepath.Join(root, ".gitmodules")
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() || st.Size() > 1<<20 {
		return nil // a FIFO would block the open; a megabyte is no .gitmodules
	}
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && strings.TrimSpace(k) == "path" {
			out = append(out, strings.Trim(strings.TrimSpace(v), `"`))
		}
	}
	return out
}
