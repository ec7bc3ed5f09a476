//go:build shared

package kubespray

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
)

// TestCheckoutEqualsBundled: kubespray's data read at run time as a
// checkout gives the same variables as the bundled catalogue generated
// from it.
func TestCheckoutEqualsBundled(t *testing.T) {
	for _, version := range Versions() {
		t.Run(version, func(t *testing.T) {
			root := testutil.Shared(t, "kubespray", version)
			c, err := ForInventory([]string{filepath.Join(root, "inventory", "sample", "inventory.ini")})
			if err != nil {
				t.Fatal(err)
			}
			abs, _ := filepath.Abs(root)
			if c.Root != abs || c.Name != "kubespray checkout at "+abs {
				t.Fatalf("not read as a checkout: %q", c.Name)
			}
			b, err := Bundled(version)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Vars) != len(b.Vars) {
				t.Errorf("checkout %d variables, bundled %d", len(c.Vars), len(b.Vars))
			}
			for name, bv := range b.Vars {
				cv := c.Vars[name]
				if cv == nil {
					t.Errorf("%s missing from the checkout catalogue", name)
					continue
				}
				cc, bc := *cv, *bv
				// Choices come from facts: the data-only tree has no task
				// files, the bundled catalogue has the release's.
				cc.Choices, bc.Choices = nil, nil
				cc.ChoicesSource, bc.ChoicesSource = "", ""
				if !reflect.DeepEqual(cc, bc) {
					t.Errorf("%s differs:\ncheckout %+v\n bundled %+v", name, cc, bc)
				}
			}
			if !reflect.DeepEqual(c.Skipped, b.Skipped) {
				t.Errorf("skipped: %v vs %v", c.Skipped, b.Skipped)
			}
		})
	}
}

// TestRealInventoriesGetACatalogue: every real public inventory loads a
// catalogue (bundled: none of them lives in a kubespray checkout).
func TestRealInventoriesGetACatalogue(t *testing.T) {
	dir := testutil.Shared(t, "fixtures", "inventories")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		n++
		c, err := ForInventory([]string{filepath.Join(dir, e.Name())})
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if c.Version != DefaultVersion {
			t.Errorf("%s: %s", e.Name(), c.Name)
		}
	}
	if n < 10 {
		t.Errorf("only %d inventories", n)
	}
}
