package parser

import (
	"path/filepath"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
)

// Index finds a host's place in Hosts without a map, also for a host added
// later (group_by at run time) and not for a host of another inventory.
func TestInventoryIndex(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteTree(t, dir, map[string]string{"hosts.ini": "[a]\nn[1:3]\n[b]\nn2\nm1\n"})
	inv, err := Load(filepath.Join(dir, "hosts.ini"))
	if err != nil {
		t.Fatal(err)
	}
	for want, name := range []string{"n1", "n2", "n3", "m1"} {
		if i, ok := inv.Index(inv.Host(name)); !ok || i != want {
			t.Errorf("Index(%s) = %d, %v; want %d", name, i, ok, want)
		}
	}
	h, err := inv.addHost("late", inv.Group("b"), nil, Pos{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if i, ok := inv.Index(h); !ok || i != 4 {
		t.Errorf("Index(late) = %d, %v", i, ok)
	}
	if _, ok := inv.Index(&Host{Name: "n1"}); ok {
		t.Error("a host of no inventory has an index")
	}
	if _, ok := inv.Index(nil); ok {
		t.Error("nil has an index")
	}
	// a Hosts list made by hand: found by looking
	hand := &Inventory{Hosts: []*Host{{Name: "x"}, {Name: "y"}}}
	if i, ok := hand.Index(hand.Hosts[1]); !ok || i != 1 {
		t.Errorf("Index in a hand-made list = %d, %v", i, ok)
	}
}
