package lint

import (
	"encoding/binary"
	"slices"
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

// Keys lists every name the host gets, once each: its group layer's,
// then its own, then the extra vars'.
func (m *hostVars) Keys() []string {
	if m == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, l := range []*parser.Map{m.group, m.host, m.extra} {
		if l == nil {
			continue
		}
		for _, k := range l.Keys {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// keyLister lists, per host, the names hostVars.Keys lists that keep
// accepts, in the same order, without a set per host: a group layer's
// names are filtered once.
type keyLister struct {
	t     *varTable
	keep  func(string) bool
	group map[int][]string // per group layer: its names kept
	buf   []string
}

func (t *varTable) keysWhere(keep func(string) bool) *keyLister {
	return &keyLister{t: t, keep: keep, group: map[int][]string{}}
}

// of is hostVars.Keys of the host at index i, filtered (valid until the
// next call).
func (l *keyLister) of(i int) []string {
	t := l.t
	g := t.groups[t.gid[i]]
	gk, ok := l.group[t.gid[i]]
	if !ok {
		if g != nil {
			for _, k := range g.Keys {
				if l.keep(k) {
					gk = append(gk, k)
				}
			}
		}
		l.group[t.gid[i]] = gk
	}
	own := t.hostLayer[i]
	if own == nil && t.extra == nil {
		return gk
	}
	out := append(l.buf[:0], gk...)
	in := func(m *parser.Map, k string) bool {
		if m == nil {
			return false
		}
		_, ok := m.Values[k]
		return ok
	}
	if own != nil {
		for _, k := range own.Keys {
			if l.keep(k) && !in(g, k) {
				out = append(out, k)
			}
		}
	}
	if t.extra != nil {
		for _, k := range t.extra.Keys {
			if l.keep(k) && !in(g, k) && !in(own, k) {
				out = append(out, k)
			}
		}
	}
	l.buf = out
	return out
}

// varTable holds every host's layers and the columns read so far.
type varTable struct {
	groups    []*parser.Map // the distinct group layers
	gid       []int         // per host (inventory order): its group layer
	hostLayer []*parser.Map // per host: its own variables, or nil
	extra     *parser.Map
	// byHostKey lists, per variable, the hosts whose own layer sets it.
	byHostKey map[string][]int
	cols      map[string]*column
	// runs are the runs of consecutive hosts with the same group layer,
	// in order (a host range is one): segments walks them.
	runs []gidRun
}

// gidRun is the hosts start..end-1, all of group layer gid.
type gidRun struct{ start, end, gid int }

func newVarTable(inv *parser.Inventory, extra *parser.Map) *varTable {
	t := &varTable{extra: extra, byHostKey: map[string][]int{}, cols: map[string]*column{},
		gid: make([]int, 0, len(inv.Hosts)), hostLayer: make([]*parser.Map, 0, len(inv.Hosts))}
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
		if n := len(t.runs); n > 0 && t.runs[n-1].gid == gi {
			t.runs[n-1].end++
		} else {
			t.runs = append(t.runs, gidRun{start: i, end: i + 1, gid: gi})
		}
		t.hostLayer = append(t.hostLayer, own)
		if own != nil {
			for _, k := range own.Keys {
				t.byHostKey[k] = append(t.byHostKey[k], i)
			}
		}
	}
	return t
}

// column is what every host gets for one variable, without a slot per
// host: the value of each group layer, and the hosts whose own layer (or
// the extra vars) replaces it.
type column struct {
	all  *parser.Value   // from extra vars: every host's
	gv   []*parser.Value // per group layer
	over []int           // hosts whose own layer sets it, ascending
	ov   []*parser.Value // their values
}

// column reads name for every host (once per name).
func (t *varTable) column(name string) *column {
	if col, ok := t.cols[name]; ok {
		return col
	}
	col := &column{all: t.extra.Get(name)}
	if col.all == nil {
		col.gv = make([]*parser.Value, len(t.groups))
		for i, g := range t.groups {
			col.gv[i] = g.Get(name)
		}
		col.over = t.byHostKey[name]
		col.ov = make([]*parser.Value, len(col.over))
		for k, i := range col.over {
			col.ov[k] = t.hostLayer[i].Get(name)
		}
	}
	t.cols[name] = col
	return col
}

// at is what the host at index i gets (nil: nothing sets it).
func (t *varTable) at(col *column, i int) *parser.Value {
	if col.all != nil {
		return col.all
	}
	if len(col.over) > 0 {
		if k := sort.SearchInts(col.over, i); k < len(col.over) && col.over[k] == i {
			return col.ov[k]
		}
	}
	return col.gv[t.gid[i]]
}

// segments calls fn with every run of consecutive hosts start..end-1 that
// get the same value v (nil: nothing sets it), in inventory order: what
// each gives host by host, in a call per run of a group layer and per host
// whose own layer sets the variable. Adjacent calls may have the same v.
func (t *varTable) segments(col *column, fn func(start, end int, v *parser.Value)) {
	if col.all != nil {
		if n := len(t.gid); n > 0 {
			fn(0, n, col.all)
		}
		return
	}
	k := 0 // the next host whose own layer sets it
	for _, r := range t.runs {
		v := col.gv[r.gid]
		at := r.start
		for ; k < len(col.over) && col.over[k] < r.end; k++ {
			o := col.over[k]
			if o > at {
				fn(at, o, v)
			}
			fn(o, o+1, col.ov[k])
			at = o + 1
		}
		if at < r.end {
			fn(at, r.end, v)
		}
	}
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

// tupleMemo evaluates once per distinct tuple of the values the hosts get
// for the variables names: eval gets the index of the first host with the
// tuple, and the tuple; visit gets every host, in order, with its tuple's
// result. The hosts are those at indexes idx, or every host when idx is
// nil. A host with its predecessor's tuple (hosts in a run) reuses the
// result without a lookup.
func tupleMemo[R any](c *checkCtx, names []string, idx []int, eval func(i int, tuple []*parser.Value) R, visit func(i int, r R)) {
	cols := make([]*column, len(names))
	for k, n := range names {
		cols[k] = c.table.column(n)
	}
	ids := make([]map[*parser.Value]int, len(names)) // per variable: an id per value
	for k := range ids {
		ids[k] = map[*parser.Value]int{}
	}
	memo := map[string]R{}
	tuple := make([]*parser.Value, len(names))
	var last []*parser.Value
	var lastRes R
	have := false
	var key []byte
	one := func(i int) {
		for k, col := range cols {
			tuple[k] = c.table.at(col, i)
		}
		if !have || !slices.Equal(tuple, last) {
			key = key[:0]
			for k, v := range tuple {
				id, ok := ids[k][v]
				if !ok {
					id = len(ids[k])
					ids[k][v] = id
				}
				key = binary.AppendUvarint(key, uint64(id))
			}
			res, ok := memo[string(key)]
			if !ok {
				res = eval(i, tuple)
				memo[string(key)] = res
			}
			last, lastRes, have = append(last[:0], tuple...), res, true
		}
		visit(i, lastRes)
	}
	if idx == nil {
		for i := range c.hosts {
			one(i)
		}
		return
	}
	for _, i := range idx {
		one(i)
	}
}
