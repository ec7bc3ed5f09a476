package lint

import (
	"fmt"
	"math/big"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/parser/ansiblebool"
)

// rule is one check: a stable id, its usual severity (a rule may report
// some findings at another severity) and what it checks.
type rule struct {
	id       string
	severity Severity
	summary  string
	check    func(c *checkCtx) []Finding
	// apart: runRules runs the rule on its own goroutine (runsApart).
	apart bool
}

// rules is the registry, filled by each rule file's init().
var rules []rule

// ruleOption is a property a rule file gives its rule when it registers it.
type ruleOption func(*rule)

// runsApart has runRules run the rule on its own goroutine, concurrently
// with the others, with its own copy of the checkCtx (see apart): for a
// rule that is a large share of a lint's time, as measured by BenchmarkRun.
func runsApart(r *rule) { r.apart = true }

func registerRule(id string, sev Severity, summary string, check func(c *checkCtx) []Finding, opts ...ruleOption) {
	for _, r := range rules {
		if r.id == id {
			panic("lint: rule registered twice: " + id)
		}
	}
	rl := rule{id: id, severity: sev, summary: summary, check: check}
	for _, o := range opts {
		o(&rl)
	}
	rules = append(rules, rl)
}

// phase is when Run calls a step, in this order. Steps are the work a rule
// file does for the lint as a whole rather than as one check: what the
// inventory is, which release the rules judge against, what follows from
// it, and the findings of all rules together.
type phase int

const (
	// phaseView: on the inventory as loaded (Input.Inventory), before
	// anything reads it; a step may replace it with what Ansible makes of it.
	phaseView phase = iota
	// phaseAsWritten: on the inventory as written, before kubespray's
	// dynamic groups change it; a step notes in the checkCtx what only the
	// inventory as written shows. The checkCtx holds only its input yet.
	phaseAsWritten
	// phaseRelease: the checkCtx is built; a step may choose the catalogue
	// the rules judge against (c.in.Catalogue and c.cat), and say why in
	// c.catalogueNote.
	phaseRelease
	// phasePrepare: the catalogue is final; a step sets what follows from
	// it before any rule runs (the ansible-core series, the release
	// upgraded from), in the checkCtx and in the report.
	phasePrepare
	// phaseFold: every rule has run; a step may rewrite the findings
	// (r.Findings) together, before they are sorted and merged.
	phaseFold
)

// step is one piece of work of a phase.
type step struct {
	name  string
	phase phase
	run   func(c *checkCtx, r *Report)
}

// steps is the registry of steps, filled by the rule files' init(). Within
// a phase, steps run in the order registered and must not depend on each
// other.
var steps []step

func registerStep(name string, ph phase, run func(c *checkCtx, r *Report)) {
	for _, s := range steps {
		if s.name == name {
			panic("lint: step registered twice: " + name)
		}
	}
	steps = append(steps, step{name: name, phase: ph, run: run})
}

// runSteps runs every step of phase ph.
func runSteps(ph phase, c *checkCtx, r *Report) {
	for _, s := range steps {
		if s.phase == ph {
			s.run(c, r)
		}
	}
}

// runRules runs every rule and returns their findings in the rules'
// order. The rules registered with runsApart run on their own goroutine,
// each with its own copy of c (own caches: see apart), while the others
// run here.
func runRules(c *checkCtx) []Finding {
	// every group's hosts, read by rules on both sides: filled once here,
	// then only read
	if inv := c.in.Inventory; inv != nil {
		for _, g := range inv.Groups {
			c.groupHosts(g.Name)
		}
	}
	found := make([][]Finding, len(rules))
	var wg sync.WaitGroup
	for i, rl := range rules {
		if !rl.apart {
			continue
		}
		wg.Add(1)
		go func(own *checkCtx) {
			defer wg.Done()
			found[i] = rl.check(own)
		}(c.apart())
	}
	for i, rl := range rules {
		if !rl.apart {
			found[i] = rl.check(c)
		}
	}
	wg.Wait()
	var out []Finding
	for _, f := range found {
		out = append(out, f...)
	}
	return out
}

// apart is a copy of c for a rule that runs concurrently with others: what
// the rules only read is shared (input, catalogue, the variable table's
// layers, every group's hosts as runRules filled them); the caches that
// checks fill as they go are its own.
func (c *checkCtx) apart() *checkCtx {
	own := *c
	t := *c.table
	t.cols = map[string]*column{}
	own.table = &t
	own.defaults = map[string]*parser.Value{}
	own.templateNamesMemo, own.relPaths = nil, nil
	return &own
}

// RuleInfo describes a rule for documentation and `layercheck lint --rules`.
type RuleInfo struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"` // the usual severity
	// Severities are all the severities the rule reports, most severe first
	// (etcd-even is a warning with ignore_assert_errors, ...).
	Severities []Severity `json:"severities"`
	Summary    string     `json:"summary"`
}

// otherSeverity is the second severity of the rules that report two: the
// kubespray asserts that ignore_assert_errors turns into warnings, calico_rr
// without calico, a removed variable kubespray only warns about,
// nodelocaldns_ip inside the service range, metrics-server verification that
// cannot work.
var otherSeverity = map[string][]Severity{
	"control-plane-empty": {SeverityWarning},
	"etcd-empty":          {SeverityWarning},
	"etcd-even":           {SeverityWarning},
	"calico-rr":           {SeverityError},
	"removed-variable":    {SeverityWarning},
	"nodelocaldns-ip":     {SeverityWarning},
	"metrics-server-tls":  {SeverityError},
	// below ansible-core 2.19 a string boolean that works as meant
	"string-as-bool": {SeverityWarning, SeverityInfo},
	// component version defaults that change are said in one info finding
	"upgrade-default-changed": {SeverityInfo},
	// fields kubespray does not read are a warning, a wrong structure an error
	"variable-shape": {SeverityWarning},
	// kube_proxy_mode, dns_mode and enable_nodelocaldns other than what
	// runs, flannel's direct routing: kubespray changes them, with a window
	// of breakage; a CoreDNS or nodelocaldns the cluster lacks and the run
	// deploys again is an info
	"cluster-network": {SeverityWarning, SeverityInfo},
	// a known bug that fails the run outright (knownbugs.yaml's severity)
	"known-bug": {SeverityError},
}

// Rules lists the registered rules sorted by id.
func Rules() []RuleInfo {
	out := make([]RuleInfo, 0, len(rules))
	for _, r := range rules {
		sevs := []Severity{r.severity}
		if o, ok := otherSeverity[r.id]; ok {
			sevs = append(sevs, o...)
			sort.Slice(sevs, func(i, j int) bool { return sevs[i].rank() < sevs[j].rank() })
		}
		out = append(out, RuleInfo{ID: r.id, Severity: r.severity, Severities: sevs, Summary: r.summary})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// checkCtx is what the rules read: the inventory, each host's variables as
// resolved by our parser (and, when given, by Ansible), the catalogue.
type checkCtx struct {
	in    Input
	cat   *kubespray.Catalogue
	hosts []string  // inventory order
	table *varTable // our resolution, as layers and columns (see varsOf)
	bases []string  // directories locations are made relative to
	// multiBase is the common directory of sources in several directories
	// (the one base then), "" for sources in one directory.
	multiBase string
	// rrOutside are calico_rr hosts outside k8s_cluster as written.
	rrOutside []string
	defaults  map[string]*parser.Value
	// catalogueNote is said after the catalogue's why in the report: what
	// a phaseRelease step found (a kube_version no bundled release has).
	catalogueNote string
	// upgradeNote says which release the cluster was taken to run (a
	// phasePrepare step infers Input.UpgradeFrom from Input.Cluster when
	// not given).
	upgradeNote *Finding
	// templateNamesMemo and groupHostsMemo cache templateNames and
	// groupHosts (the inventory does not change while the rules run).
	templateNamesMemo map[string]bool
	groupHostsMemo    map[string][]string
	groupHostIdx      map[string][]int // groupHostsMemo's hosts as indexes in hosts
	// relPaths caches relPath: a rule locates the same few files for
	// every host, and filepath.Abs reads the working directory (a stat)
	// each time.
	relPaths map[string]string
}

// use is one value a set of hosts gets for a variable: ours (with its
// location) and the one judged (Ansible's when Resolved has it, else ours).
type use struct {
	name  string
	ours  *parser.Value
	judge *parser.Value
	hosts []string
}

// build makes the rest of c from its input, once the inventory is what
// the rules check (after kubespray's dynamic groups): the hosts, the
// variable table, the directories locations are relative to. What the
// phaseView and phaseAsWritten steps set is kept.
func (c *checkCtx) build() {
	in := c.in
	c.cat, c.defaults = in.Catalogue, map[string]*parser.Value{}
	c.relPaths = nil // made relative to the bases set below
	if c.cat == nil {
		c.cat = &kubespray.Catalogue{Vars: map[string]*kubespray.Var{}}
	}
	c.table = &varTable{extra: in.Extra, byHostKey: map[string][]int{}, cols: map[string]*column{}}
	if in.Inventory != nil {
		c.hosts = make([]string, 0, len(in.Inventory.Hosts))
		for _, h := range in.Inventory.Hosts {
			c.hosts = append(c.hosts, h.Name)
		}
		c.table = newVarTable(in.Inventory, in.Extra)
		c.in.Resolved = pruneAgreeing(in.Resolved, c.varsOf)
		for _, s := range in.Inventory.Sources {
			if s == "" {
				continue
			}
			abs, err := filepath.Abs(s)
			if err != nil {
				continue
			}
			if !isDir(abs) {
				abs = filepath.Dir(abs)
			}
			c.bases = append(c.bases, abs)
		}
		if common, ok := commonBase(c.bases); ok {
			c.bases = []string{common}
			c.multiBase = common
		}
	}
}

// commonBase returns, when the sources lie in more than one directory, the
// directory containing them all, so that locations stay unambiguous:
// -i a/inv -i b/inv shows a/inv/group_vars/all/x.yml and
// b/inv/group_vars/all/x.yml, not group_vars/all/x.yml twice. ok is false
// with one directory (locations stay relative to it).
func commonBase(bases []string) (string, bool) {
	if len(bases) < 2 {
		return "", false
	}
	common := bases[0]
	multi := false
	for _, b := range bases[1:] {
		if b == common {
			continue
		}
		multi = true
		for !within(b, common) {
			parent := filepath.Dir(common)
			if parent == common {
				break
			}
			common = parent
		}
	}
	return common, multi
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// uses returns, for variable name, each distinct value hosts get, with the
// hosts it wins on (inventory order); values Ansible typed differently from
// us on some hosts make a separate use.
func (c *checkCtx) uses(name string) []use {
	if c.in.Resolved == nil {
		return c.usesOfColumn(name)
	}
	type key struct {
		v  *parser.Value
		rk string
	}
	var byKey byFirstSeen[key, use]
	for _, h := range c.hosts {
		v := c.varsOf(h).Get(name)
		if v == nil {
			continue
		}
		judge := v
		rk := ""
		if r := c.resolved(h, name); r != nil {
			judge = r
			rk = r.Kind.String() + ":" + r.Display()
		}
		k := key{v, rk}
		u := byKey.get(k, func() *use { return &use{name: name, ours: v, judge: judge} })
		u.hosts = append(u.hosts, h)
	}
	return byKey.list()
}

func (c *checkCtx) resolved(host, name string) *parser.Value {
	if c.in.Resolved == nil {
		return nil
	}
	return c.in.Resolved[host].Get(name)
}

// usesOfColumn is uses without Ansible's resolution: the hosts grouped by
// the value they get, read from the column, consecutive hosts with the same
// value (the usual case) grouped without a lookup. A value that one run of
// consecutive hosts gets shares that run of c.hosts as its host list
// (capped: an append copies), so a value every host of a large inventory
// gets costs no list of its own.
func (c *checkCtx) usesOfColumn(name string) []use {
	type run struct {
		first, n int
		runs     int // runs of consecutive hosts
	}
	var order []*parser.Value
	runs := map[*parser.Value]*run{}
	col := c.table.column(name)
	var lastV *parser.Value
	var lastR *run
	split := false
	c.table.segments(col, func(start, end int, v *parser.Value) {
		if v == nil {
			lastV, lastR = nil, nil
			return
		}
		if v == lastV {
			lastR.n += end - start
			return
		}
		r := runs[v]
		if r == nil {
			r = &run{first: start}
			runs[v] = r
			order = append(order, v)
		} else {
			split = true
		}
		r.n += end - start
		r.runs++
		lastV, lastR = v, r
	})
	list := make([]use, len(order))
	at := make(map[*parser.Value]*use, len(order))
	for k, v := range order {
		r := runs[v]
		list[k] = use{name: name, ours: v, judge: v}
		if r.runs == 1 {
			list[k].hosts = c.hosts[r.first : r.first+r.n : r.first+r.n]
		} else {
			list[k].hosts = make([]string, 0, r.n)
			at[v] = &list[k]
		}
	}
	if split {
		c.table.segments(col, func(start, end int, v *parser.Value) {
			if u := at[v]; u != nil {
				u.hosts = append(u.hosts, c.hosts[start:end]...)
			}
		})
	}
	return list
}

// names is every variable name some host gets, sorted.
func (c *checkCtx) names() []string { return c.table.names() }

// varsOf is what host gets (nil for a host not in the inventory).
func (c *checkCtx) varsOf(host string) *hostVars {
	i, ok := c.indexOfName(host)
	if !ok {
		return nil
	}
	t := c.table
	return &hostVars{group: t.groups[t.gid[i]], host: t.hostLayer[i], extra: t.extra}
}

// valueAt is value for the host at index i of c.hosts, read from the
// column (a loop over every host reads each variable without a lookup).
func (c *checkCtx) valueAt(i int, name string) (v *parser.Value, set bool) {
	if c.in.Resolved != nil {
		return c.value(c.hosts[i], name)
	}
	if v := c.table.at(c.table.column(name), i); v != nil {
		return v, true
	}
	return c.defaultOf(name), false
}

// value returns what host gets for name: its own value, else the
// catalogue default (loc nil then), else nil.
func (c *checkCtx) value(host, name string) (v *parser.Value, set bool) {
	if r := c.resolved(host, name); r != nil {
		if ours := c.varsOf(host).Get(name); ours != nil {
			return r, true
		}
	}
	if v := c.varsOf(host).Get(name); v != nil {
		return v, true
	}
	return c.defaultOf(name), false
}

// defaultOf is the catalogue default of name as a Value (one per name, so
// hosts group by it), nil when it has none or it is not a literal.
func (c *checkCtx) defaultOf(name string) *parser.Value {
	if d, ok := c.defaults[name]; ok {
		return d
	}
	var dv *parser.Value
	if d := c.cat.Lookup(name); d != nil {
		dv = defaultValue(d) // one Value per name, so hosts group by it
	}
	c.defaults[name] = dv
	return dv
}

// defaultValue turns a catalogue default into a Value (nil for a templated
// or structured default).
func defaultValue(d *kubespray.Var) *parser.Value {
	pos := parser.Pos{File: d.File, Line: d.Line}
	switch x := d.Default.(type) {
	case bool:
		return &parser.Value{Kind: parser.KindBool, Bool: x, Pos: pos}
	case string:
		v := &parser.Value{Kind: parser.KindString, Str: x, Pos: pos}
		if v.Templated() {
			return nil
		}
		return v
	case int:
		return &parser.Value{Kind: parser.KindInt, Int: big.NewInt(int64(x)), Pos: pos}
	case int64:
		return &parser.Value{Kind: parser.KindInt, Int: big.NewInt(x), Pos: pos}
	case float64:
		if x == float64(int64(x)) && d.Type == "int" {
			return &parser.Value{Kind: parser.KindInt, Int: big.NewInt(int64(x)), Pos: pos}
		}
		return &parser.Value{Kind: parser.KindFloat, Float: x, Pos: pos}
	}
	return nil
}

// where renders a value's location for a finding: "-e" for extra vars,
// else file:line:col relative to the inventory directory holding it.
func (c *checkCtx) where(p parser.Pos) string {
	if p.File == "" || p.File == parser.ExtraVarsFile {
		return p.String()
	}
	p.File = c.relPath(p.File)
	return p.String()
}

func (c *checkCtx) relPath(file string) string {
	if rel, ok := c.relPaths[file]; ok {
		return rel
	}
	rel := c.relPathOf(file)
	if c.relPaths == nil {
		c.relPaths = map[string]string{}
	}
	c.relPaths[file] = rel
	return rel
}

// relPathOf is relPath without the cache.
func (c *checkCtx) relPathOf(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return file
	}
	for _, b := range c.bases {
		if filepath.Dir(b) == b { // the sources share only the root: absolute paths
			return filepath.ToSlash(abs)
		}
		if rel, err := filepath.Rel(b, abs); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	// outside the inventory (an -e @file elsewhere): absolute, since a
	// path relative to anything else would be read as relative to the
	// inventory directory
	return filepath.ToSlash(abs)
}

// finding starts a finding about u with its location, value and hosts.
func (c *checkCtx) finding(id string, sev Severity, u use) Finding {
	f := Finding{Rule: id, Severity: sev, Variable: u.name, Hosts: u.hosts}
	if u.judge != nil {
		f.Value = u.judge.Display()
	}
	if u.ours != nil {
		f.Where = c.where(u.ours.Pos)
	}
	return f
}

// groupHosts returns the hosts of group name and of its children,
// recursively, in inventory order; ok is false when no such group exists.
func (c *checkCtx) groupHosts(name string) (hosts []string, ok bool) {
	inv := c.in.Inventory
	if inv == nil {
		return nil, false
	}
	if inv.Group(name) == nil {
		return nil, false
	}
	if hs, ok := c.groupHostsMemo[name]; ok {
		return hs[:len(hs):len(hs)], true // a caller's append copies
	}
	// the hosts of the group and of its descendants (HostsUnder's), marked
	// by index: the result is in inventory order whatever the groups' order
	in := make([]bool, len(c.hosts))
	n := 0
	for _, kid := range inv.GroupsUnder(name) {
		next := -1 // where the group's host before lies, plus one
		for _, h := range kid.Hosts {
			i, ok := next, next >= 0 && next < len(inv.Hosts) && inv.Hosts[next] == h
			if !ok { // a group's hosts mostly follow each other in the inventory
				i, ok = c.indexOf(h)
			}
			if !ok {
				next = -1
				continue
			}
			next = i + 1
			if !in[i] {
				in[i] = true
				n++
			}
		}
	}
	hosts = make([]string, 0, n)
	idx := make([]int, 0, n)
	for i, h := range c.hosts {
		if in[i] {
			hosts = append(hosts, h)
			idx = append(idx, i)
		}
	}
	if c.groupHostsMemo == nil {
		c.groupHostsMemo = map[string][]string{}
		c.groupHostIdx = map[string][]int{}
	}
	c.groupHostsMemo[name] = hosts
	c.groupHostIdx[name] = idx
	return hosts[:len(hosts):len(hosts)], true
}

// indexOf is the index of h in the inventory's hosts.
func (c *checkCtx) indexOf(h *parser.Host) (int, bool) {
	return c.in.Inventory.Index(h)
}

// indexOfName is the index of the host named name in c.hosts.
func (c *checkCtx) indexOfName(name string) (int, bool) {
	inv := c.in.Inventory
	if inv == nil {
		return 0, false
	}
	i, ok := inv.Index(inv.Host(name))
	if !ok || i >= len(c.hosts) {
		return 0, false
	}
	return i, true
}

// fixText words "name: value" in the syntax the value was written in.
// lit is the value as a YAML/JSON literal (true, "calico", ...).
func fixText(name, lit string, o parser.Origin) string {
	switch o {
	case parser.OriginINIHost, parser.OriginINIGroup:
		return name + "=" + pyLiteral(lit)
	case parser.OriginExtraKV:
		return fmt.Sprintf(`-e '{"%s": %s}'`, name, jsonLiteral(lit))
	case parser.OriginJSON:
		return fmt.Sprintf(`"%s": %s`, name, jsonLiteral(lit))
	}
	return name + ": " + lit
}

// pyLiteral is lit as an INI value ast.literal_eval reads with the same type.
func pyLiteral(lit string) string {
	switch lit {
	case "true":
		return "True"
	case "false":
		return "False"
	}
	if strings.HasPrefix(lit, `"`) {
		return "'" + strings.Trim(lit, `"`) + "'"
	}
	return lit
}

func jsonLiteral(lit string) string {
	if lit == "true" || lit == "false" || lit == "null" || strings.HasPrefix(lit, `"`) {
		return lit
	}
	if _, ok := new(big.Float).SetString(lit); ok {
		return lit
	}
	return fmt.Sprintf("%q", lit)
}

// originOf is the syntax a use was written in (YAML when unknown).
func originOf(u use) parser.Origin {
	if u.ours != nil {
		if u.ours.Pos.File == parser.ExtraVarsFile {
			return parser.OriginExtraKV // inline -e, key=value or JSON: fixed with -e JSON
		}
		return u.ours.Origin
	}
	return parser.OriginYAML
}

// truthy reports a bool value: a real bool, or a str or int spelling one
// as Ansible's boolean() reads it (ansiblebool.Boolean: y/yes/on/1/true/t
// and their opposites, any case, surrounding space ignored; the ints 1 and
// 0): what the operator meant. It is not what `| bool` makes of the value
// ("y" is false there). ok is false otherwise.
func truthy(v *parser.Value) (val, ok bool) {
	if v == nil {
		return false, false
	}
	switch v.Kind {
	case parser.KindBool, parser.KindString, parser.KindInt:
		b, err := ansiblebool.Boolean(v.Scalar())
		return b, err == nil
	}
	return false, false
}

// strValue is a str value's text (ok false for other kinds or Jinja).
func strValue(v *parser.Value) (string, bool) {
	if v == nil || v.Kind != parser.KindString || v.Templated() {
		return "", false
	}
	return v.Str, true
}

// judged reports whether a value is one the lint may judge: not templated,
// not a vault value.
func judged(v *parser.Value) bool {
	return v != nil && !v.Templated() && !v.IsVault()
}

// pruneAgreeing returns resolved without the values that equal our own
// resolution for the host (same type and value): they add nothing, and
// ours carries the file:line:col a finding must name. What is left are the
// values where Ansible and our reading disagree (Ansible's type wins there)
// and values we do not resolve at all. resolved itself is not changed.
func pruneAgreeing(resolved map[string]*parser.Map, ours func(host string) *hostVars) map[string]*parser.Map {
	if resolved == nil {
		return nil
	}
	out := make(map[string]*parser.Map, len(resolved))
	for name, m := range resolved {
		o := ours(name)
		if o == nil || m == nil {
			out[name] = m
			continue
		}
		keep := parser.NewMap()
		for _, k := range m.Keys {
			if v := o.Get(k); v != nil && SameValue(m.Values[k], v) {
				continue
			}
			keep.Set(k, m.Values[k])
		}
		out[name] = keep
	}
	return out
}

// SameValue reports whether a and b have the same kinds and scalar payloads
// all the way down (vault values compare by kind only).
func SameValue(a, b *parser.Value) bool {
	if a == nil || b == nil || a.Kind != b.Kind {
		return a == b
	}
	switch a.Kind {
	case parser.KindBool:
		return a.Bool == b.Bool
	case parser.KindInt:
		return a.Int != nil && b.Int != nil && a.Int.Cmp(b.Int) == 0
	case parser.KindFloat:
		return a.Float == b.Float
	case parser.KindString:
		return a.Str == b.Str
	case parser.KindList:
		if len(a.List) != len(b.List) {
			return false
		}
		for i := range a.List {
			if !SameValue(a.List[i], b.List[i]) {
				return false
			}
		}
	case parser.KindMap:
		if a.Map.Len() != b.Map.Len() {
			return false
		}
		for _, k := range a.Map.Keys {
			if !SameValue(a.Map.Get(k), b.Map.Get(k)) {
				return false
			}
		}
	}
	return true
}
