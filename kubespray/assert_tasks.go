package kubespray

import (
	"math/big"
	"reflect"
	"strings"
	"sync"

	"github.com/layercheck/layercheck/kubespray/internal/jinja"
	"github.com/layercheck/layercheck/kubespray/internal/scan"
	"github.com/layercheck/layercheck/parser"
)

// AssertTask is one assert or fail task of the release's inventory
// asserts (roles/validate_inventory from kubespray v2.28,
// roles/kubernetes/preinstall/tasks/0040-verify-settings.yml before),
// generated from the release's own task file with its Status: evaluated
// on inventory values, needing a fact (Needs names it), or not modelled.
type AssertTask = scan.AssertTask

// ThatItem is one item of an assert's that: list.
type ThatItem = scan.ThatItem

// Statuses of an AssertTask.
const (
	AssertEvaluated   = scan.StatusEvaluated
	AssertNeedsFact   = scan.StatusNeedsFact
	AssertNotModelled = scan.StatusNotModelled
)

// AssertTasks returns the release's inventory assert tasks in file order;
// nil for a catalogue without them.
func (c *Catalogue) AssertTasks() []AssertTask {
	if c == nil || c.Release == nil {
		return nil
	}
	return c.Release.AssertTasks
}

// PlayHost is one host as a kubespray play sees it: the play running the
// inventory asserts (EvalAssertTask), or the role a guard is in
// (EvalGuard).
type PlayHost struct {
	// Name is inventory_hostname.
	Name string
	// Lookup gives the host's inventory and extra values (only those set).
	Lookup Lookup
	// VarNames lists the names Lookup knows (query('varnames')).
	VarNames func() []string
	// Groups is the play's groups variable, shared by its hosts;
	// GroupNames are the host's groups (group_names).
	Groups     *PlayGroups
	GroupNames []string
}

// PlayGroups is the groups variable of a play: every group (all and
// ungrouped included) with its hosts in inventory order. Its Jinja value
// is made once, whatever the number of hosts and tasks reading it.
type PlayGroups struct {
	hosts map[string][]string
	once  sync.Once
	value map[string]any
}

// NewPlayGroups makes the groups variable from each group's hosts.
func NewPlayGroups(hosts map[string][]string) *PlayGroups {
	return &PlayGroups{hosts: hosts}
}

func (g *PlayGroups) jinja() map[string]any {
	if g == nil {
		return map[string]any{}
	}
	g.once.Do(func() {
		g.value = make(map[string]any, len(g.hosts))
		for name, hs := range g.hosts {
			l := make([]any, len(hs))
			for i, h := range hs {
				l[i] = h
			}
			g.value[name] = l
		}
	})
	return g.value
}

// AssertResult is the outcome of a AssertTask on one host.
type AssertResult struct {
	Outcome Outcome
	// That is the that: item that failed (zero for a fail: task), Item the
	// loop item it failed on (nil without a loop).
	That ThatItem
	Item any
	// Failed says why Ansible cannot evaluate the item ("no key '1.20'"),
	// which fails the task too; "" when the item is false.
	Failed string
}

// EvalAssertTask evaluates t as kubespray's play would on the host: its
// when: conditions (for each loop item), then each that: item in order.
// A value only the run gives (a fact, a template the evaluator does not
// model) makes the outcome Unknown; a task not Evaluated is Unknown.
func (c *Catalogue) EvalAssertTask(t AssertTask, h PlayHost) AssertResult {
	if t.Status != scan.StatusEvaluated {
		return AssertResult{Outcome: Unknown}
	}
	env := &playEnv{c: c, h: h, role: roleOf(t.File)}
	if len(t.Assume) == 1 {
		// a fact with known values: fails only when it fails for each
		var fail *AssertResult
		out := AssertResult{Outcome: NotApplicable}
		for fact, values := range t.Assume {
			for _, v := range values {
				env.assume = map[string]any{fact: v}
				if key, ok := strings.CutPrefix(fact, "ansible_facts['"); ok {
					env.assume = map[string]any{"ansible_facts": map[string]any{strings.TrimSuffix(key, "']"): v}}
				}
				r := evalItems(t, env)
				switch r.Outcome {
				case Fail:
					if fail == nil {
						fail = &r
					}
				case Unknown:
					out.Outcome = Unknown
				case Pass:
					if out.Outcome == NotApplicable {
						out.Outcome = Pass
					}
				}
			}
		}
		if fail != nil && out.Outcome == NotApplicable {
			return *fail
		}
		return out
	}
	if len(t.Assume) > 1 {
		return AssertResult{Outcome: Unknown}
	}
	return evalItems(t, env)
}

// evalItems evaluates t for each loop item (once without a loop).
func evalItems(t AssertTask, env *playEnv) AssertResult {
	items := t.Loop
	if items == nil {
		items = []any{nil}
	}
	result := AssertResult{Outcome: NotApplicable}
	for _, item := range items {
		locals := map[string]any{}
		for k, v := range t.Vars {
			locals[k] = v
		}
		if t.Loop != nil {
			locals["item"] = item
		}
		r := evalTask(t, env, locals)
		r.Item = item
		switch r.Outcome {
		case Fail:
			if t.Loop == nil {
				r.Item = nil
			}
			return r
		case Unknown:
			result.Outcome = Unknown
		case Pass:
			if result.Outcome == NotApplicable {
				result.Outcome = Pass
			}
		}
	}
	return result
}

func evalTask(t AssertTask, env *playEnv, locals map[string]any) AssertResult {
	unknown := false
	for _, w := range t.When {
		b, known, failed := truth(w, env, locals)
		switch {
		case failed != "":
			// Ansible fails a task whose condition it cannot evaluate
			return AssertResult{Outcome: Fail, That: ThatItem{Expr: w}, Failed: failed}
		case !known:
			unknown = true
		case !b:
			return AssertResult{Outcome: NotApplicable}
		}
	}
	if t.Fail {
		if unknown {
			return AssertResult{Outcome: Unknown}
		}
		return AssertResult{Outcome: Fail}
	}
	thatUnknown := false
	for _, it := range t.That {
		b, known, failed := truth(it.Expr, env, locals)
		switch {
		case failed != "" && !unknown:
			return AssertResult{Outcome: Fail, That: it, Failed: failed}
		case !known:
			thatUnknown = true
		case !b:
			if unknown {
				return AssertResult{Outcome: Unknown}
			}
			return AssertResult{Outcome: Fail, That: it}
		}
	}
	if unknown || thatUnknown {
		return AssertResult{Outcome: Unknown}
	}
	return AssertResult{Outcome: Pass}
}

// truth evaluates a condition: its truth, whether it is known, and why
// Ansible fails on it ("" when it does not).
func truth(expr string, env jinja.Env, locals map[string]any) (b, known bool, failed string) {
	n, err := parse(expr)
	if err != nil {
		return false, false, ""
	}
	v := jinja.Eval(n, env, locals)
	if f, ok := v.(jinja.Failed); ok {
		return false, false, f.Why
	}
	b, known = jinja.Truth(v)
	return b, known, ""
}

// roleOf is the role directory of a task file ("roles/validate_inventory/").
func roleOf(file string) string {
	if i := strings.Index(file, "/tasks/"); i >= 0 {
		return file[:i+1]
	}
	return ""
}

// playEnv resolves a variable as the play running the inventory asserts
// does: role vars of kubespray_defaults and of the asserts' role (above
// the inventory, below extra vars), the host's values, Ansible's magic
// variables from the inventory, then those roles' defaults. Other roles'
// defaults are not loaded in that play; a fact (ansible_*) is Unknown.
type playEnv struct {
	c    *Catalogue
	h    PlayHost
	role string
	// assume are the facts given a value (AssertTask.Assume).
	assume map[string]any
	// groups is the groups variable, once read.
	groups map[string]any
}

// LenientMap implements jinja.Lenient: a group missing from groups is
// unknown, not a failure: the run's groups (group_by, dynamic_groups of
// each release) may hold more than the lint's.
func (e *playEnv) LenientMap(m map[string]any) bool {
	return e.groups != nil && reflect.ValueOf(m).UnsafePointer() == reflect.ValueOf(e.groups).UnsafePointer()
}

func (e *playEnv) loaded(d Def, scope string) bool {
	if d.Scope != scope {
		return false
	}
	if scope == scan.ScopeVars && !strings.Contains(d.File, "/vars/main") {
		return false // an include_vars file (OS specific) the play does not load
	}
	return scan.IsDefaultsRole(d.File) || e.role != "" && strings.HasPrefix(d.File, e.role)
}

func (e *playEnv) def(name, scope string) (any, bool) {
	v := e.c.Lookup(name)
	if v == nil {
		return nil, false
	}
	for _, d := range v.Defs {
		if e.loaded(d, scope) {
			if cs := e.checksums(name); d.DefaultOmitted && cs != nil {
				return cs, true
			}
			if d.DefaultOmitted {
				return jinja.Unknown{Why: "the default of " + name + " is not kept in the catalogue"}, true
			}
			return d.Default, true
		}
	}
	return nil, false
}

// checksums is a *_checksums dict as its keys: arch -> version -> "".
func (e *playEnv) checksums(name string) map[string]any {
	if e.c.Release == nil || e.c.Release.Checksums[name] == nil {
		return nil
	}
	out := map[string]any{}
	for arch, versions := range e.c.Release.Checksums[name] {
		m := make(map[string]any, len(versions))
		for _, v := range versions {
			m[v] = ""
		}
		out[arch] = m
	}
	return out
}

// Lookup implements jinja.Env.
func (e *playEnv) Lookup(name string) any {
	if v, ok := e.assume[name]; ok {
		return v
	}
	var set *parser.Value
	setOK := false
	if e.h.Lookup != nil {
		if v, ok := e.h.Lookup(name); ok {
			if pv, isPV := v.(*parser.Value); isPV {
				set, setOK = pv, true
			} else {
				return toJinja(v)
			}
		}
	}
	if setOK && set != nil && set.Pos.File == parser.ExtraVarsFile {
		return toJinja(set)
	}
	if v, ok := e.def(name, scan.ScopeVars); ok {
		return v
	}
	if setOK {
		return toJinja(set)
	}
	switch name {
	case "inventory_hostname":
		return e.h.Name
	case "inventory_hostname_short":
		n, _, _ := strings.Cut(e.h.Name, ".")
		return n
	case "group_names":
		out := make([]any, 0, len(e.h.GroupNames))
		for _, g := range e.h.GroupNames {
			out = append(out, g)
		}
		return out
	case "groups":
		if e.groups == nil {
			e.groups = e.h.Groups.jinja()
		}
		return e.groups
	}
	if v, ok := e.def(name, scan.ScopeDefaults); ok {
		return v
	}
	if name == "ansible_facts" || strings.HasPrefix(name, "ansible_") || name == "hostvars" {
		return jinja.Unknown{Why: "fact " + name}
	}
	return jinja.Undefined{Name: name}
}

// VarNames implements jinja.Env: the host's variables and the loaded
// roles' defaults and vars.
func (e *playEnv) VarNames() []string {
	var out []string
	if e.h.VarNames != nil {
		out = e.h.VarNames()
	}
	for n, v := range e.c.Vars {
		for _, d := range v.Defs {
			if e.loaded(d, scan.ScopeVars) || e.loaded(d, scan.ScopeDefaults) {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// toJinja gives a host value the evaluator's types; a vault value is Unknown.
func toJinja(v any) any {
	switch x := v.(type) {
	case *parser.Value:
		return scan.PlainValue(x, jinja.Unknown{Why: "a vault value"})
	case int:
		return int64(x)
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		return f
	}
	return v
}

// parsed caches the expressions of the assert tasks (and guards): each is
// evaluated once per host.
var parsed sync.Map // string -> parsedExpr

type parsedExpr struct {
	n   jinja.Node
	err error
}

func parse(expr string) (jinja.Node, error) {
	if p, ok := parsed.Load(expr); ok {
		return p.(parsedExpr).n, p.(parsedExpr).err
	}
	n, err := jinja.Parse(expr)
	parsed.Store(expr, parsedExpr{n, err})
	return n, err
}

// ExprVars lists the variables a Jinja expression reads, in order, once
// each (none for one that does not parse).
func ExprVars(expr string) []string {
	n, err := parse(expr)
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, r := range jinja.Refs(n) {
		if r.Kind == "name" && !seen[r.Name] {
			seen[r.Name] = true
			out = append(out, r.Name)
		}
	}
	return out
}

// AssertCoverage is what the lint makes of a release's inventory asserts:
// their file, and the assert and fail tasks by status.
type AssertCoverage struct {
	Version, File                     string
	Evaluated, NeedsFact, NotModelled []AssertTask
}

// Coverage sorts the catalogue's assert tasks by status.
func (c *Catalogue) Coverage() AssertCoverage {
	out := AssertCoverage{Version: c.Version}
	for _, t := range c.AssertTasks() {
		out.File = t.File
		switch t.Status {
		case AssertEvaluated:
			out.Evaluated = append(out.Evaluated, t)
		case AssertNeedsFact:
			out.NeedsFact = append(out.NeedsFact, t)
		default:
			out.NotModelled = append(out.NotModelled, t)
		}
	}
	return out
}

// readsCache memoises AssertReads per catalogue and task.
var readsCache sync.Map // readsKey -> AssertReadSet

type readsKey struct {
	c    *Catalogue
	task string
}

// AssertReadSet is what an assert task can read: Names are the
// variables (also through the Jinja of the defaults those read); AllNames
// is true when it lists variables by name (query('varnames')), so that
// any variable can matter.
type AssertReadSet struct {
	Names    []string
	AllNames bool
}

// AssertReads says which variables t can read, for evaluating it once
// per distinct set of their values.
func (c *Catalogue) AssertReads(t AssertTask) AssertReadSet {
	k := readsKey{c, t.Source()}
	if r, ok := readsCache.Load(k); ok {
		return r.(AssertReadSet)
	}
	seen := map[string]bool{}
	var out AssertReadSet
	var addExpr func(expr string, depth int)
	var addTemplates func(v any, depth int)
	addExpr = func(expr string, depth int) {
		n, err := parse(expr)
		if err != nil || depth > 20 {
			return
		}
		for _, r := range jinja.Refs(n) {
			switch {
			case r.Kind == "function" && (r.Name == "query" || r.Name == "lookup" || r.Name == "q"):
				out.AllNames = true
			case r.Kind == "name" && !seen[r.Name]:
				seen[r.Name] = true
				out.Names = append(out.Names, r.Name)
				if v := c.Lookup(r.Name); v != nil {
					for _, d := range v.Defs {
						addTemplates(d.Default, depth+1)
					}
				}
			}
		}
	}
	addTemplates = func(v any, depth int) {
		switch x := v.(type) {
		case string:
			for _, e := range jinja.TemplateExprs(x) {
				addExpr(e, depth)
			}
		case []any:
			for _, y := range x {
				addTemplates(y, depth)
			}
		case map[string]any:
			for _, y := range x {
				addTemplates(y, depth)
			}
		}
	}
	for _, w := range t.When {
		addExpr(w, 0)
	}
	for _, it := range t.That {
		addExpr(it.Expr, 0)
	}
	addTemplates(t.Vars, 0)
	addTemplates(t.Loop, 0)
	readsCache.Store(k, out)
	return out
}
