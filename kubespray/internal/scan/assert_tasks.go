package scan

import (
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/layercheck/layercheck/kubespray/internal/jinja"
	"github.com/layercheck/layercheck/parser"
)

// AssertFiles are the task files holding a release's inventory asserts
// (kubespray's own checks of the inventory, before it changes a host),
// newest layout first: roles/validate_inventory (kubespray v2.28 on) or,
// before it, roles/kubernetes/preinstall's 0040-verify-settings.yml. A
// release's asserts are in the first that exists.
var AssertFiles = []string{
	"roles/validate_inventory/tasks/main.yml",
	"roles/kubernetes/preinstall/tasks/0040-verify-settings.yml",
}

// assertPlayHosts are the groups whose hosts the play running each
// assert file targets: validate_inventory runs on all hosts
// (playbooks/boilerplate.yml), kubernetes/preinstall on k8s_cluster:etcd
// (playbooks/cluster.yml).
var assertPlayHosts = map[string][]string{
	"roles/kubernetes/preinstall/tasks/0040-verify-settings.yml": {"k8s_cluster", "etcd"},
}

// Statuses of an AssertTask.
const (
	// StatusEvaluated: every value the task reads comes from the
	// inventory, kubespray's defaults or the inventory's groups.
	StatusEvaluated = "evaluated"
	// StatusNeedsFact: the task reads a fact gathered from the host, a
	// task's result or what only the run has (--limit, hostvars); Needs
	// names it. The lint leaves it to the run.
	StatusNeedsFact = "needs-fact"
	// StatusNotModelled: the task reads something the evaluator does not
	// model (Needs says what); the goal is none.
	StatusNotModelled = "not-modelled"
)

// ThatItem is one item of an assert's that: list.
type ThatItem struct {
	Expr string `json:"expr"`
	Line int    `json:"line"`
}

// AssertTask is one assert (or fail) task of a release's inventory
// asserts, as written, with its block's when: conditions first.
type AssertTask struct {
	Task string `json:"task"`
	File string `json:"file"`
	Line int    `json:"line"`
	// Fail is true for a fail: task (it stops when every When holds).
	Fail bool       `json:"fail,omitempty"`
	When []string   `json:"when,omitempty"`
	That []ThatItem `json:"that,omitempty"`
	Msg  string     `json:"msg,omitempty"`
	// Vars are the task's vars: (templates evaluated when read).
	Vars map[string]any `json:"vars,omitempty"`
	// Loop is a literal with_items:/loop: list, item bound per element.
	Loop    []any `json:"loop,omitempty"`
	RunOnce bool  `json:"run_once,omitempty"`
	// Assume gives a fact the task reads with the values kubespray knows
	// for it (ansible_architecture: the keys of _host_architecture_groups):
	// the task fails only when it fails for every one of them.
	Assume map[string][]string `json:"assume,omitempty"`
	// PlayHosts are the groups the play running the task targets (none:
	// all hosts).
	PlayHosts []string `json:"play_hosts,omitempty"`
	Status    string   `json:"status"`
	// Needs names the facts (StatusNeedsFact) or what is not modelled.
	Needs []string `json:"needs,omitempty"`
}

// Source is the task's "file:line".
func (t *AssertTask) Source() string { return fmt.Sprintf("%s:%d", t.File, t.Line) }

// magicVars are Ansible's variables that the inventory alone gives (and
// the Jinja functions the evaluator models).
var magicVars = map[string]bool{
	"groups": true, "group_names": true, "inventory_hostname": true, "inventory_hostname_short": true,
	"item": true, "query": true, "lookup": true, "q": true, "range": true, "omit": true,
}

// runVars are Ansible's variables a run has that no inventory gives.
var runVars = map[string]bool{
	"ansible_limit": true, "ansible_check_mode": true, "ansible_version": true, "ansible_play_hosts": true,
	"hostvars": true, "ansible_run_tags": true, "ansible_skip_tags": true, "play_hosts": true,
}

// ReadAssertTasks reads the release's inventory asserts (the assert and
// fail tasks of AssertFiles) under src and classifies each against defs,
// the release's variable definitions: a variable read directly or through
// the Jinja of its defaults that is a fact (ansible_*) or that a task sets
// (set, from taskSet: set_fact, register) needs the run. No assert file is
// not an error (nil).
func ReadAssertTasks(src string, defs map[string][]Def, set map[string]string) ([]AssertTask, error) {
	for _, rel := range AssertFiles {
		data, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(rel)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		doc, err := parser.LoadYAML(rel, data, nil)
		if err != nil {
			return nil, err
		}
		if doc == nil || doc.Kind != parser.KindList {
			return nil, fmt.Errorf("%s: a task file is a list of tasks", rel)
		}
		var out []AssertTask
		for _, t := range doc.List {
			readAssertTask(rel, t, nil, &out, 0)
		}
		c := &classifier{defs: defs, set: set, memo: map[string][]string{}}
		for i := range out {
			c.classify(&out[i])
		}
		return out, nil
	}
	return nil, nil
}

func strs(v *parser.Value) []*parser.Value {
	if v == nil {
		return nil
	}
	if v.Kind == parser.KindList {
		return v.List
	}
	return []*parser.Value{v}
}

func condText(v *parser.Value) string {
	switch v.Kind {
	case parser.KindString:
		return strings.TrimSpace(v.Str)
	case parser.KindBool:
		if v.Bool {
			return "true"
		}
		return "false"
	}
	return ""
}

func readAssertTask(rel string, task *parser.Value, when []string, out *[]AssertTask, depth int) {
	if task == nil || task.Kind != parser.KindMap || depth > 50 {
		return
	}
	var own []string
	for _, w := range strs(get(task, "when")) {
		if c := condText(w); c != "" {
			own = append(own, c)
		}
	}
	all := append(append([]string{}, when...), own...)
	if b := get(task, "block"); b != nil && b.Kind == parser.KindList {
		for _, t := range b.List {
			readAssertTask(rel, t, all, out, depth+1)
		}
		return
	}
	a := get(task, "assert")
	if a == nil {
		a = get(task, "ansible.builtin.assert")
	}
	f := get(task, "fail")
	if f == nil {
		f = get(task, "ansible.builtin.fail")
	}
	if a == nil && f == nil {
		return
	}
	pt := AssertTask{File: rel, Line: task.Pos.Line, When: all, Fail: f != nil, PlayHosts: assertPlayHosts[rel]}
	if n := get(task, "name"); n != nil && n.Kind == parser.KindString {
		pt.Task = n.Str
	}
	msgFrom := a
	if f != nil {
		msgFrom = f
	}
	for _, k := range []string{"msg", "fail_msg"} {
		if m := get(msgFrom, k); m != nil && m.Kind == parser.KindString {
			pt.Msg = m.Str
		}
	}
	for _, it := range strs(get(a, "that")) {
		if c := condText(it); c != "" {
			pt.That = append(pt.That, ThatItem{Expr: c, Line: it.Pos.Line})
		}
	}
	if vs := get(task, "vars"); vs != nil && vs.Kind == parser.KindMap {
		pt.Vars = map[string]any{}
		for _, k := range vs.Map.Keys {
			pt.Vars[k] = PlainValue(vs.Map.Get(k), nil)
		}
	}
	for _, k := range []string{"with_items", "loop"} {
		if l := get(task, k); l != nil {
			if l.Kind == parser.KindList {
				for _, it := range l.List {
					pt.Loop = append(pt.Loop, PlainValue(it, nil))
				}
			} else {
				pt.Loop = []any{PlainValue(l, nil)}
				pt.Needs = append(pt.Needs, k+" of a template")
			}
		}
	}
	if ro := get(task, "run_once"); ro != nil {
		pt.RunOnce = ro.Kind == parser.KindBool && ro.Bool || ro.Kind == parser.KindString && (ro.Str == "yes" || ro.Str == "true")
	}
	*out = append(*out, pt)
}

// PlainValue is v as plain Go values: nil, bool, int64 (float64 for an
// int beyond int64), float64, string, []any, map[string]any; vault for a
// vault value.
func PlainValue(v *parser.Value, vault any) any {
	if v == nil {
		return nil
	}
	switch v.Kind {
	case parser.KindBool:
		return v.Bool
	case parser.KindInt:
		if v.Int == nil {
			return int64(0)
		}
		if v.Int.IsInt64() {
			return v.Int.Int64()
		}
		f, _ := new(big.Float).SetInt(v.Int).Float64()
		return f
	case parser.KindFloat:
		return v.Float
	case parser.KindString:
		return v.Str
	case parser.KindList:
		out := make([]any, len(v.List))
		for i, x := range v.List {
			out[i] = PlainValue(x, vault)
		}
		return out
	case parser.KindMap:
		out := map[string]any{}
		if v.Map != nil {
			for _, k := range v.Map.Keys {
				out[k] = PlainValue(v.Map.Get(k), vault)
			}
		}
		return out
	case parser.KindVault:
		return vault
	}
	return nil
}

type classifier struct {
	defs map[string][]Def
	set  map[string]string // set_fact/register name -> file:line
	memo map[string][]string
}

// runNeeds lists what a defined variable's defaults need from a run (a
// fact, a task's result), following the Jinja of the defaults.
func (c *classifier) runNeeds(name string, depth int) []string {
	if r, ok := c.memo[name]; ok || depth > 20 {
		return r
	}
	c.memo[name] = nil // cycles end here
	var out []string
	for _, d := range c.defs[name] {
		if d.DefaultOmitted && !strings.HasSuffix(name, "_checksums") {
			// not kept (over MaxDefaultBytes): what its Jinja reads is not known here
			out = append(out, name+" (its default, too big to keep, may read facts: "+fmt.Sprintf("%s:%d", d.File, d.Line)+")")
		}
		var templates []string
		collectTemplates(d.Default, &templates)
		for _, s := range templates {
			for _, e := range jinja.TemplateExprs(s) {
				n, err := jinja.Parse(e)
				if err != nil {
					continue
				}
				for _, ref := range jinja.Refs(n) {
					switch {
					case ref.Kind == "attr" && ref.Name == "ansible_facts":
						out = append(out, "ansible_facts['"+ref.Attr+"'] (through "+name+")")
					case ref.Kind != "name" || ref.Name == "ansible_facts" || ref.Guarded && len(c.defs[ref.Name]) == 0:
						// `x | default(...)` of an x kubespray does not define;
						// ansible_facts is named with its key
					default:
						out = append(out, c.nameNeeds(ref.Name, depth+1, name)...)
					}
				}
			}
		}
	}
	c.memo[name] = out
	return out
}

// nameNeeds is what reading name needs from a run: "" entries mean none.
func (c *classifier) nameNeeds(n string, depth int, via string) []string {
	suffix := ""
	if via != "" {
		suffix = " (through " + via + ")"
	}
	switch {
	case magicVars[n] || runVars[n]:
		return nil
	case len(c.defs[n]) > 0:
		return c.runNeeds(n, depth)
	case n == "ansible_facts" || strings.HasPrefix(n, "ansible_"):
		return []string{n + suffix}
	case c.set[n] != "":
		return []string{n + ", set by the task at " + c.set[n] + suffix}
	}
	return nil // an inventory variable kubespray gives no default
}

// factDomains names, per fact, the dict of kubespray's defaults whose
// keys are the values kubespray knows for it.
var factDomains = map[string]string{
	"ansible_architecture":          "_host_architecture_groups",
	"ansible_facts['architecture']": "_host_architecture_groups",
}

// domain is the values kubespray knows for a fact, nil when none.
func (c *classifier) domain(fact string) []string {
	ds := c.defs[factDomains[fact]]
	if len(ds) == 0 {
		return nil
	}
	m, ok := ds[0].Default.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// classify sets the task's Status and Needs from what its expressions
// (when:, that:, the Jinja of its vars and loop) read.
func (c *classifier) classify(t *AssertTask) {
	var exprs []string
	exprs = append(exprs, t.When...)
	for _, it := range t.That {
		exprs = append(exprs, it.Expr)
	}
	var templates []string
	collectTemplates(t.Vars, &templates)
	collectTemplates(t.Loop, &templates)
	for _, s := range templates {
		exprs = append(exprs, jinja.TemplateExprs(s)...)
	}
	facts, missing := map[string]bool{}, map[string]bool{}
	for _, n := range t.Needs {
		missing[n] = true
	}
	for _, e := range exprs {
		n, err := jinja.Parse(e)
		if err != nil {
			missing["unparsed: "+e] = true
			continue
		}
		for _, ref := range jinja.Refs(n) {
			switch ref.Kind {
			case "name":
				switch {
				case t.Vars[ref.Name] != nil || ref.Guarded && len(c.defs[ref.Name]) == 0:
				case runVars[ref.Name]:
					facts[ref.Name+" (the run's, not the inventory's)"] = true
				default:
					for _, f := range c.nameNeeds(ref.Name, 0, "") {
						facts[f] = true
					}
				}
			case "attr":
				if ref.Name == "ansible_facts" {
					facts["ansible_facts['"+ref.Attr+"']"] = true
					delete(facts, "ansible_facts")
				}
			default:
				if !jinja.Supported(ref.Kind, ref.Name) {
					missing[ref.Kind+" "+ref.Name] = true
				}
			}
		}
	}
	t.Needs = nil
	for f := range facts {
		name, _, _ := strings.Cut(f, " (")
		if dom := c.domain(name); dom != nil {
			if t.Assume == nil {
				t.Assume = map[string][]string{}
			}
			t.Assume[name] = dom
			delete(facts, f)
		}
	}
	switch {
	case len(facts) > 0:
		// the run alone can tell, modelled or not
		t.Status = StatusNeedsFact
		for f := range facts {
			t.Needs = append(t.Needs, f)
		}
	case len(missing) > 0:
		t.Status = StatusNotModelled
		for m := range missing {
			t.Needs = append(t.Needs, m)
		}
	default:
		t.Status = StatusEvaluated
	}
	sort.Strings(t.Needs)
}

// taskSet indexes the variables the release's tasks set (set_fact keys,
// register names) with the first file:line.
func taskSet(src string) (map[string]string, error) {
	out := map[string]string{}
	files, err := walkYAML(filepath.Join(src, "roles"), []string{"molecule", "templates", "files", "defaults", "vars"}, nil)
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	err = loadEach(src, files, func(rel string, _ []byte, doc *parser.Value) {
		walkTasks(doc, 0, func(task *parser.Value) {
			add := func(n string, line int) {
				if _, ok := out[n]; !ok {
					out[n] = fmt.Sprintf("%s:%d", rel, line)
				}
			}
			if r := get(task, "register"); r != nil && r.Kind == parser.KindString {
				add(r.Str, r.Pos.Line)
			}
			for _, k := range []string{"set_fact", "ansible.builtin.set_fact"} {
				if sf := get(task, k); sf != nil && sf.Kind == parser.KindMap {
					for _, n := range sf.Map.Keys {
						add(n, sf.Map.Get(n).Pos.Line)
					}
				}
			}
		})
	})
	return out, err
}

// walkTasks calls f for every mapping in a task list, blocks included.
func walkTasks(v *parser.Value, depth int, f func(*parser.Value)) {
	if v == nil || depth > 50 {
		return
	}
	switch v.Kind {
	case parser.KindList:
		for _, x := range v.List {
			walkTasks(x, depth+1, f)
		}
	case parser.KindMap:
		f(v)
		for _, k := range []string{"block", "rescue", "always"} {
			walkTasks(v.Map.Get(k), depth+1, f)
		}
	}
}

func collectTemplates(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		if strings.Contains(x, "{{") || strings.Contains(x, "{%") {
			*out = append(*out, x)
		}
	case []any:
		for _, y := range x {
			collectTemplates(y, out)
		}
	case map[string]any:
		for _, y := range x {
			collectTemplates(y, out)
		}
	}
}

// walkYAML lists the .yml and .yaml files under root, sorted, skipping
// hidden directories and those named in skip, keeping only paths keep
// accepts (all when nil); a missing root is no files.
func walkYAML(root string, skip []string, keep func(string) bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if p != root && (strings.HasPrefix(n, ".") || slices.Contains(skip, n)) {
				return filepath.SkipDir
			}
			return nil
		}
		if (strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")) && (keep == nil || keep(p)) {
			files = append(files, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	sort.Strings(files)
	return files, err
}

// loadEach reads and loads each of files (under src) with the YAML
// loader and calls f with its slash-separated name relative to src; a
// file that does not load is skipped (not a task file).
func loadEach(src string, files []string, f func(rel string, data []byte, doc *parser.Value)) error {
	return loadFiles(src, files, false, f)
}

// loadFiles is loadEach and loadEachAll: a file that does not load is
// skipped, or with unloadable handed to f with a nil doc.
func loadFiles(src string, files []string, unloadable bool, f func(rel string, data []byte, doc *parser.Value)) error {
	for _, p := range files {
		rel, _ := filepath.Rel(src, p)
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		doc, err := parser.LoadYAML(rel, data, nil)
		if err != nil {
			if !unloadable {
				continue
			}
			doc = nil
		}
		f(rel, data, doc)
	}
	return nil
}
