package kubespray

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/layercheck/layercheck/kubespray/internal/scan"
)

// FindCheckout walks up from an inventory source (a file or directory, as
// given to -i) looking for a kubespray checkout: a directory holding
// roles/kubespray_defaults/defaults. It returns the checkout's absolute
// path, or "" when the source is not inside one.
func FindCheckout(source string) (string, error) {
	abs, err := filepath.Abs(source)
	if err != nil {
		return "", err
	}
	dir := abs
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		dir = filepath.Dir(abs)
	}
	for {
		st, err := os.Stat(filepath.Join(dir, "roles", "kubespray_defaults", "defaults"))
		if err == nil && st.IsDir() {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// Checkout loads the catalogue of the kubespray checkout at dir with the
// code that generates the bundled catalogues, so the types are those of
// the kubespray version the user runs. The task-level facts (asserts,
// removed variables) are DefaultVersion's. Errors name file:line.
func Checkout(dir string) (*Catalogue, error) {
	t, err := scan.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("kubespray checkout at %s: %w", dir, err)
	}
	c := build("kubespray checkout at "+dir, t.Defs, factsFor(""))
	c.Root, c.Skipped = dir, t.Skipped
	return c, nil
}

// ForInventory returns the catalogue for inventory sources (-i
// arguments): the kubespray checkout the first source inside one lives in
// (see FindCheckout and Checkout), else the bundled DefaultVersion.
func ForInventory(sources []string) (*Catalogue, error) {
	for _, s := range sources {
		dir, err := FindCheckout(s)
		if err != nil {
			return nil, err
		}
		if dir != "" {
			return Checkout(dir)
		}
	}
	return Bundled(DefaultVersion)
}
