package lint

import (
	"sort"

	"github.com/layercheck/layercheck/parser"
)

// Evaluation once per distinct resolved variable set. Hosts in the same
// groups share their group-level variables (parser.HostVarLayers), and
// most set few variables of their own; so the lint keeps each host's
// variables as layers instead of a copy per host, reads a variable for all
// hosts at once as a column (varTable.column), and evaluates a rule once
// per distinct tuple of values, fanning the result out to the hosts that
// share it: the host lists stay exact.

// hostVars is one host's resolved variables: extra over host over group,
// each replacing the one below (parser.Inventory.HostVars without the copy).
type hostVars struct {
	group, host, extra *parser.Map
}

// Get returns the value the host gets for name, or nil.
func (m *hostVars) Get(name string) *parser.Value {
	if m == nil {
		return nil
	}
	if v := m.extra.Get(name); v != nil {
		return v
	}
	if v := m.host.Get(name); v != nil {
		return v
	}
	return m.group.Get(name)
}

// varTable holds every host's layers and the columns read so far.
type varTable struct {
	groups    []*parser.Map // the distinct group layers
	gid       []int         // per host (inventory order): its group layer
	hostLayer []*parser.Map // per host: its own variables, or nil
	extra     *parser.Map
	// byHostKey lists, per variable, the hosts whose own layer sets it.
	byHostKey map[string][]int
	cols      map[string][]*parser.Value
}

func newVarTable(inv *parser.Inventory, extra *parser.Map, vars map[string]*hostVars) *varTable {
	t := &varTable{extra: extra, byHostKey: map[string][]int{}, cols: map[string][]*parser.Value{}}
	index := map[*parser.Map]int{}
	for i, h := range inv.Hosts {
		g, own := inv.HostVarLayers(h)
		gi, ok := index[g]
		if !ok {
			gi = len(t.groups)
			index[g] = gi
			t.groups = append(t.groups, g)
		}
		t.gid = append(t.gid, gi)
		t.hostLayer = append(t.hostLayer, own)
		if own != nil {
			for _, k := range own.Keys {
				t.byHostKey[k] = append(t.byHostKey[k], i)
			}
		}
		vars[h.Name] = &hostVars{group: g, host: own, extra: extra}
	}
	return t
}

// column is what every host gets for name (nil where nothing sets it), in
// inventory order.
func (t *varTable) column(name string) []*parser.Value {
	if col, ok := t.cols[name]; ok {
		return col
	}
	col := make([]*parser.Value, len(t.gid))
	if v := t.extra.Get(name); v != nil {
		for i := range col {
			col[i] = v
		}
	} else {
		gv := make([]*parser.Value, len(t.groups))
		any := false
		for i, g := range t.groups {
			gv[i] = g.Get(name)
			any = any || gv[i] != nil
		}
		if any {
			for i, g := range t.gid {
				col[i] = gv[g]
			}
		}
		for _, i := range t.byHostKey[name] {
			col[i] = t.hostLayer[i].Get(name)
		}
	}
	t.cols[name] = col
	return col
}

// names is every variable some host gets, sorted: the keys of every layer.
func (t *varTable) names() []string {
	seen := map[string]bool{}
	var out []string
	add := func(m *parser.Map) {
		if m == nil {
			return
		}
		for _, k := range m.Keys {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	for _, g := range t.groups {
		add(g)
	}
	for k := range t.byHostKey {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	add(t.extra)
	sort.Strings(out)
	return out
}

// winning calls fn with every value that some host gets (a value that
// every host of its layer overrides is not one).
func (t *varTable) winning(fn func(v *parser.Value)) {
	if t.extra != nil {
		for _, k := range t.extra.Keys {
			fn(t.extra.Values[k])
		}
	}
	hostsOf := make([]int, len(t.groups))
	overridden := make([]map[string]int, len(t.groups))
	for i, own := range t.hostLayer {
		g := t.gid[i]
		hostsOf[g]++
		if own == nil {
			continue
		}
		if overridden[g] == nil {
			overridden[g] = map[string]int{}
		}
		for _, k := range own.Keys {
			overridden[g][k]++
			if t.extra.Get(k) == nil {
				fn(own.Values[k])
			}
		}
	}
	for g, m := range t.groups {
		if hostsOf[g] == 0 {
			continue
		}
		for _, k := range m.Keys {
			if t.extra.Get(k) == nil && overridden[g][k] < hostsOf[g] {
				fn(m.Values[k])
			}
		}
	}
}
