package lint

import (
	"bytes"
	_ "embed"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
)

func init() {
	registerRule("known-bug", SeverityWarning,
		"the chosen kubespray release has a known bug the inventory meets (kubespray issue, the release that fixes it, or what to set; error when the run fails outright)",
		checkKnownBugs)
}

// knownBugsYAML is the table of known bugs (see the file's header).
//
//go:embed knownbugs.yaml
var knownBugsYAML []byte

// knownBug is one entry of knownbugs.yaml.
type knownBug struct {
	ID       string   `yaml:"id"`
	Affected string   `yaml:"affected"`
	Hosts    string   `yaml:"hosts"`
	When     bugCond  `yaml:"when"`
	Severity Severity `yaml:"severity"`
	Issue    int      `yaml:"issue"`
	URL      string   `yaml:"url"`
	FixedIn  string   `yaml:"fixed_in"`
	Symptom  string   `yaml:"symptom"`
	Fix      string   `yaml:"fix"`
	Evidence struct {
		Affected []evidenceLine `yaml:"affected"`
		Fixed    []evidenceLine `yaml:"fixed"`
		Lacks    []evidenceLine `yaml:"lacks"`
	} `yaml:"evidence"`

	affected []versionBound
}

// evidenceLine is "release:path:line" (or "release:path" for lacks) and
// the text the line holds (the file lacks).
type evidenceLine struct {
	At  string `yaml:"at"`
	Has string `yaml:"has"`
}

// bugCond is a condition on the variables a host gets: all or any of
// conditions, or one test of one variable.
type bugCond struct {
	All []bugCond `yaml:"all"`
	Any []bugCond `yaml:"any"`

	Var      string `yaml:"var"`
	Equals   any    `yaml:"equals"`
	In       []any  `yaml:"in"`
	Version  string `yaml:"version"`
	NonEmpty *bool  `yaml:"nonempty"`
	Set      *bool  `yaml:"set"`
	IPv6     *bool  `yaml:"ipv6"`

	version []versionBound
}

// versionBound is one bound of a range: op (>=, >, <=, <) and a version.
type versionBound struct {
	op string
	v  kver
}

// parseRange reads "RANGE": bounds separated by spaces (">=v2.28.0
// <v2.29.0"); all must hold.
func parseRange(s string) ([]versionBound, error) {
	var out []versionBound
	for _, f := range strings.Fields(s) {
		var b versionBound
		for _, op := range []string{">=", "<=", ">", "<"} {
			if rest, ok := strings.CutPrefix(f, op); ok {
				b.op, f = op, rest
				break
			}
		}
		v, ok := parseKver(f)
		if b.op == "" || !ok {
			return nil, fmt.Errorf("bad bound %q in %q (want >=, >, <= or < and a version)", f, s)
		}
		b.v = v
		out = append(out, b)
	}
	return out, nil
}

// inRange reports whether v meets every bound.
func inRange(v kver, bounds []versionBound) bool {
	for _, b := range bounds {
		var ok bool
		switch b.op {
		case ">=":
			ok = !v.less(b.v)
		case ">":
			ok = b.v.less(v)
		case "<=":
			ok = !b.v.less(v)
		case "<":
			ok = v.less(b.v)
		}
		if !ok {
			return false
		}
	}
	return true
}

// compile checks a condition and parses its ranges; where names it.
func (b *bugCond) compile(where string) error {
	tests := 0
	for _, t := range []bool{b.Equals != nil, b.In != nil, b.Version != "", b.NonEmpty != nil, b.Set != nil, b.IPv6 != nil} {
		if t {
			tests++
		}
	}
	switch {
	case b.All != nil || b.Any != nil:
		if b.All != nil && b.Any != nil || b.Var != "" || tests > 0 {
			return fmt.Errorf("%s: all or any stands alone", where)
		}
		list, name := b.All, "all"
		if b.Any != nil {
			list, name = b.Any, "any"
		}
		if len(list) == 0 {
			return fmt.Errorf("%s: empty %s", where, name)
		}
		for i := range list {
			if err := list[i].compile(fmt.Sprintf("%s.%s[%d]", where, name, i)); err != nil {
				return err
			}
		}
	case b.Var == "":
		return fmt.Errorf("%s: no var, all or any", where)
	case tests != 1:
		return fmt.Errorf("%s: %s needs exactly one test (equals, in, version, nonempty, set, ipv6)", where, b.Var)
	case b.Version != "":
		r, err := parseRange(b.Version)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		b.version = r
	}
	return nil
}

// loadKnownBugs reads and checks knownbugs.yaml.
func loadKnownBugs(data []byte) ([]knownBug, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var bugs []knownBug
	if err := dec.Decode(&bugs); err != nil {
		return nil, fmt.Errorf("knownbugs.yaml: %w", err)
	}
	seen := map[string]bool{}
	for i := range bugs {
		b := &bugs[i]
		at := fmt.Sprintf("knownbugs.yaml entry %d (%s)", i+1, b.ID)
		if b.ID == "" || seen[b.ID] {
			return nil, fmt.Errorf("%s: empty or repeated id", at)
		}
		seen[b.ID] = true
		if b.Severity != SeverityError && b.Severity != SeverityWarning {
			return nil, fmt.Errorf("%s: severity %q (want error or warning)", at, b.Severity)
		}
		if b.Symptom == "" || b.Fix == "" || b.URL == "" {
			return nil, fmt.Errorf("%s: symptom, fix and url are required", at)
		}
		if len(b.Evidence.Affected) == 0 {
			return nil, fmt.Errorf("%s: no affected evidence", at)
		}
		r, err := parseRange(b.Affected)
		if err != nil || len(r) == 0 {
			return nil, fmt.Errorf("%s: affected: %v", at, err)
		}
		b.affected = r
		if b.Hosts == "" {
			b.Hosts = "k8s_cluster"
		}
		if err := b.When.compile(at + " when"); err != nil {
			return nil, err
		}
	}
	return bugs, nil
}

var knownBugs = sync.OnceValues(func() ([]knownBug, error) { return loadKnownBugs(knownBugsYAML) })

// catalogueRelease is the kubespray version the catalogue is: a bundled
// release's own, a branch snapshot's or a checkout's galaxy.yml version
// (master's "2.32.0": what it becomes); what words it for a message.
func catalogueRelease(cat *kubespray.Catalogue) (v kver, what string, ok bool) {
	switch {
	case cat.Version != "" && kubespray.IsRelease(cat.Version):
		v, ok = parseKver(cat.Version)
		what = "kubespray " + cat.Version
	case cat.Galaxy != "":
		v, ok = parseKver(cat.Galaxy)
		what = fmt.Sprintf("kubespray %s (galaxy.yml %s)", releaseName(cat), cat.Galaxy)
	}
	return v, what, ok
}

// bugValue is what a test reads of one variable on one host.
type bugValue struct {
	v    *parser.Value // the inventory's value, or the literal default
	set  bool          // the inventory sets it
	text string        // a version default kubespray computes
	def  *kubespray.Var
}

func (c *checkCtx) bugValue(h, name string) bugValue {
	v, set := c.value(h, name)
	bv := bugValue{v: v, set: set, def: c.cat.Lookup(name)}
	if v == nil && c.cat.Release != nil {
		if comp := c.cat.Release.Components[name]; comp != nil && len(comp.Versions) > 0 {
			bv.text = comp.Versions[0]
		}
	}
	return bv
}

// shows says the value and where it comes from, for a message.
func (c *checkCtx) shows(name string, bv bugValue) string {
	switch {
	case bv.set && bv.v != nil:
		return fmt.Sprintf("%s = %s (%s)", name, bv.v.Display(), c.where(bv.v.Pos))
	case !bv.set && bv.def != nil:
		val := ""
		switch {
		case bv.v != nil:
			val = " = " + bv.v.Display()
		case bv.text != "":
			val = " = " + bv.text
		}
		return fmt.Sprintf("%s%s (the release's default, %s:%d)", name, val, bv.def.File, bv.def.Line)
	}
	return name + " (not set)"
}

// eval is the condition on host h: met, and known (a templated or vault
// value, or one without a default the lint reads, is not); said lists
// the variables that decided it.
func (b *bugCond) eval(c *checkCtx, h string, said *[]string) (met, known bool) {
	switch {
	case b.All != nil:
		var mine []string
		allKnown := true
		for i := range b.All {
			m, k := b.All[i].eval(c, h, &mine)
			if k && !m {
				return false, true
			}
			allKnown = allKnown && k
		}
		if !allKnown {
			return false, false
		}
		*said = append(*said, mine...)
		return true, true
	case b.Any != nil:
		anyUnknown := false
		for i := range b.Any {
			var mine []string
			m, k := b.Any[i].eval(c, h, &mine)
			if k && m {
				*said = append(*said, mine...)
				return true, true
			}
			anyUnknown = anyUnknown || !k
		}
		return false, !anyUnknown
	}
	bv := c.bugValue(h, b.Var)
	met, known = b.test(bv)
	if known && met {
		*said = append(*said, c.shows(b.Var, bv))
	}
	return met, known
}

// test is one variable's test.
func (b *bugCond) test(bv bugValue) (met, known bool) {
	if b.Set != nil {
		return bv.set == *b.Set, true
	}
	if b.NonEmpty != nil {
		n, ok := 0, false
		switch {
		case bv.v != nil && judged(bv.v):
			switch bv.v.Kind {
			case parser.KindList:
				n, ok = len(bv.v.List), true
			case parser.KindMap:
				n, ok = bv.v.Map.Len(), true
			case parser.KindNull:
				ok = true
			}
		case bv.v == nil && !bv.set && bv.def != nil:
			switch d := bv.def.Default.(type) {
			case []any:
				n, ok = len(d), true
			case map[string]any:
				n, ok = len(d), true
			}
		}
		return (n > 0) == *b.NonEmpty, ok
	}
	text, ok := "", false
	switch {
	case bv.v != nil:
		if !judged(bv.v) {
			return false, false
		}
		text, ok = scalarText(bv.v)
	case bv.text != "":
		text, ok = bv.text, true
	}
	if !ok {
		return false, false
	}
	switch {
	case b.Version != "":
		v, good := parseKver(text)
		if !good {
			return false, false
		}
		return inRange(v, b.version), true
	case b.IPv6 != nil:
		ip := net.ParseIP(strings.TrimSpace(text))
		return (ip != nil && ip.To4() == nil) == *b.IPv6, true
	case b.Equals != nil:
		return sameScalar(bv.v, text, b.Equals)
	default: // in
		for _, x := range b.In {
			if m, k := sameScalar(bv.v, text, x); k && m {
				return true, true
			} else if !k {
				return false, false
			}
		}
		return false, true
	}
}

// sameScalar compares a value (its text) with a scalar of the table: a
// boolean as Ansible reads one, anything else by its text.
func sameScalar(v *parser.Value, text string, want any) (met, known bool) {
	if w, isBool := want.(bool); isBool {
		if v == nil {
			return false, false
		}
		b, ok := truthy(v)
		return ok && b == w, ok
	}
	return text == fmt.Sprint(want), true
}

func checkKnownBugs(c *checkCtx) []Finding {
	bugs, err := knownBugs()
	if err != nil || c.cat == nil {
		return nil // the table is checked by the tests
	}
	rel, relWhat, ok := catalogueRelease(c.cat)
	if !ok {
		return nil
	}
	var out []Finding
	for i := range bugs {
		b := &bugs[i]
		if !inRange(rel, b.affected) {
			continue
		}
		hosts, ok := c.groupHosts(b.Hosts)
		if !ok {
			continue
		}
		var by byFirstSeen[string, bugGroup]
		if c.in.Resolved == nil {
			c.knownBugHostsByTuple(b, c.groupHostIdx[b.Hosts], &by)
		} else {
			for _, h := range hosts {
				var said []string
				if met, known := b.When.eval(c, h, &said); !met || !known {
					continue
				}
				g := by.get(strings.Join(said, "\x00"), func() *bugGroup { return &bugGroup{said: said} })
				g.hosts = append(g.hosts, h)
			}
		}
		for _, g := range by.list() {
			out = append(out, c.knownBugFinding(b, relWhat, g.said, g.hosts))
		}
	}
	return out
}

// bugGroup is the hosts that meet a known bug with the same variables.
type bugGroup struct {
	said  []string
	hosts []string
	list  hostList // hosts, for knownBugHostsByTuple
}

// knownBugHostsByTuple groups the hosts at indexes idx that meet b's
// condition by the variables that decided it, as checkKnownBugs does
// host by host, but evaluating the condition once per distinct tuple of
// the values the hosts get for the variables it reads (hostvars.go): the
// condition reads nothing else of a host.
func (c *checkCtx) knownBugHostsByTuple(b *knownBug, idx []int, by *byFirstSeen[string, bugGroup]) {
	tupleMemo(c, b.When.vars(nil), idx, func(i int, _ []*parser.Value) *bugGroup {
		var said []string
		if met, known := b.When.eval(c, c.hosts[i], &said); met && known {
			return by.get(strings.Join(said, "\x00"), func() *bugGroup { return &bugGroup{said: said} })
		}
		return nil
	}, func(i int, g *bugGroup) {
		if g != nil {
			g.list.add(c.hosts, i)
		}
	})
	for _, k := range by.order {
		g := by.m[k]
		g.hosts = g.list.list(c.hosts)
	}
}

// vars appends the variables the condition reads, once each.
func (b *bugCond) vars(out []string) []string {
	for i := range b.All {
		out = b.All[i].vars(out)
	}
	for i := range b.Any {
		out = b.Any[i].vars(out)
	}
	if b.Var != "" && !slices.Contains(out, b.Var) {
		out = append(out, b.Var)
	}
	return out
}

// knownBugFinding words one entry met on hosts; said are the variables
// that met it, the first set one the finding's variable.
func (c *checkCtx) knownBugFinding(b *knownBug, relWhat string, said, hosts []string) Finding {
	f := Finding{Rule: "known-bug", Severity: b.Severity, Hosts: hosts}
	// the first variable the inventory sets locates the finding
	for _, s := range said {
		name, _, _ := strings.Cut(s, " ")
		if v := c.varsOf(hosts[0]).Get(name); v != nil {
			f.Variable, f.Value, f.Where = name, v.Display(), c.where(v.Pos)
			break
		}
	}
	if f.Variable == "" && len(said) > 0 {
		f.Variable, _, _ = strings.Cut(said[0], " ")
	}
	issue := "no kubespray issue recorded"
	if b.Issue > 0 {
		issue = fmt.Sprintf("kubespray#%d", b.Issue)
	}
	f.Message = fmt.Sprintf("%s has a known bug (%s, %s): %s", relWhat, b.ID, issue, b.Symptom)
	fixed := "no bundled release fixes it"
	if b.FixedIn != "" {
		fixed = "fixed in kubespray " + b.FixedIn
	}
	// the affected line in the chosen release when the table has one
	at := b.Evidence.Affected[len(b.Evidence.Affected)-1].At
	for _, e := range b.Evidence.Affected {
		if c.cat.Version != "" && strings.HasPrefix(e.At, c.cat.Version+":") {
			at = e.At
			break
		}
	}
	f.Why = fmt.Sprintf("the inventory meets it with %s. %s (%s); the affected line: %s.",
		strings.Join(said, ", "), fixed, b.URL, at)
	f.Fix = b.Fix
	return f
}
