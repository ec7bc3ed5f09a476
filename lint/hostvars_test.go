package lint

import (
	"testing"

	"github.com/layercheck/layercheck/parser"
)

// segments gives, run by run, what at gives host by host: over group
// layers in runs, hosts whose own layer sets the variable, extra vars.
func TestVarTableSegments(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.ini": `[a]
n[1:4]
x1 v=own
n[5:6] v=own2
[b]
m[1:3]
n2
[a:vars]
v=ga
w=wa
[b:vars]
v=gb
`,
		"host_vars/m2.yml": "w: mine\n",
	})
	inv, err := parser.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	extra, err := parser.ParseExtraVars([]string{"z=1"})
	if err != nil {
		t.Fatal(err)
	}
	tab := newVarTable(inv, extra)
	if len(tab.runs) < 3 {
		t.Fatalf("runs %+v: want several", tab.runs)
	}
	for _, name := range []string{"v", "w", "z", "none"} {
		col := tab.column(name)
		var got []*parser.Value
		next := 0
		tab.segments(col, func(start, end int, v *parser.Value) {
			if start != next || end <= start {
				t.Fatalf("%s: segment %d..%d after %d", name, start, end, next)
			}
			next = end
			for range end - start {
				got = append(got, v)
			}
		})
		if len(got) != len(inv.Hosts) {
			t.Fatalf("%s: segments cover %d hosts of %d", name, len(got), len(inv.Hosts))
		}
		for i := range inv.Hosts {
			if want := tab.at(col, i); got[i] != want {
				t.Errorf("%s on %s: segments give %v, at %v", name, inv.Hosts[i].Name, got[i], want)
			}
		}
	}
}
