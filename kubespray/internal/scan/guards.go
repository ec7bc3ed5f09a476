package scan

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/layercheck/layercheck/kubespray/internal/jinja"
	"github.com/layercheck/layercheck/parser"
)

// Guard is one condition kubespray must find true before it reads a
// variable at a site: the condition as kubespray writes it (Expr; the
// other branch of a choice is "not (...)"), where (Source "file:line") and
// how it guards (Kind).
type Guard struct {
	Expr   string `json:"expr"`
	Source string `json:"source"`
	// Kind is GuardTemplate (the task choosing which template to render),
	// GuardRole (a role's dependency, include_role or play roles: entry),
	// GuardTask (the when: of the task rendering the template) or GuardIf
	// (an {% if %} block of the template).
	Kind string `json:"kind"`
	// Else is, for GuardTemplate, the template the task renders when Expr
	// is false (relative to the role's templates/).
	Else string `json:"else,omitempty"`
}

// Kinds of Guard.
const (
	GuardTemplate = "template"
	GuardRole     = "role"
	GuardTask     = "task"
	GuardIf       = "if"
)

// GuardedRead is one site reading a variable: the read (Source
// "file:line") and the guards that must all hold for the read to happen.
type GuardedRead struct {
	Source string  `json:"source"`
	Guards []Guard `json:"guards"`
}

// magicNames are what a condition may read that the inventory does not
// give before a run: such a condition is left out of a read's guards
// (which makes the read only more likely, never less).
var magicNames = map[string]bool{
	"groups": true, "group_names": true, "inventory_hostname": true, "inventory_hostname_short": true,
	"hostvars": true, "play_hosts": true, "ansible_play_hosts": true, "item": true, "role_path": true,
	"playbook_dir": true, "omit": true, "inventory_dir": true, "ansible_check_mode": true, "vars": true,
}

// guardScan is the state of readGuards over one tree.
type guardScan struct {
	root  string
	roles map[string]bool // role paths relative to roles/ ("network_plugin/calico")
	// sites are the inclusion sites of each role.
	sites map[string][]roleSite
	// templates: per role, its template files (relative to templates/).
	templates map[string]map[string]bool
	// renders: per template file (relative to the tree), its renderers;
	// unknownRender: templates something renders in a way not modelled.
	renders       map[string][]render
	unknownRender map[string]bool
	// set are the variables tasks set (set_fact, register): never judged.
	set map[string]string
	// occ: per identifier, where it occurs and under which local guards.
	occ map[string][]occurrence
	// dynamic are the string literals of lookups by computed name
	// (lookup('vars', x + '_suffix')): a variable whose name holds one may
	// be read anywhere.
	dynamic []string
	// j2 are the template names mentioned ("x.j2") by file:line; srcLines
	// the lines of the template tasks' src: understood.
	j2       map[string][]string
	srcLines map[string]bool
	memo     map[string][][]Guard
}

type roleSite struct {
	parent string // the including role, "" for a playbook
	guards []Guard
}

type render struct {
	role   string
	guards []Guard
}

// occurrence is one identifier in a file read by Ansible.
type occurrence struct {
	file  string
	line  int
	kind  string // "task", "template", "vars", "other"
	role  string
	local []Guard // {% if %} guards of a template occurrence
	owner string  // for "vars": the variable whose definition holds it
}

var (
	guardIdentRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	ternaryRE    = regexp.MustCompile(`^\{\{\s*'([^'{}]+)'\s+if\s+(.+?)\s+else\s+'([^'{}]+)'\s*\}\}$`)
	oneVarRE     = regexp.MustCompile(`^([^{}]*)\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}([^{}]*)$`)
	jinjaTagRE   = regexp.MustCompile(`(?s)\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}`)
	topKeyRE     = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*:`)
	dynLookup    = regexp.MustCompile(`(lookup|query)\(\s*['"]vars['"]|\bvars\[|hostvars\[[^\]]*\]\[`)
	quotedLit    = regexp.MustCompile(`'([^']*)'|"([^"]*)"`)
	j2RE         = regexp.MustCompile(`[\w.\-]+\.j2\b`)
)

// ReadGuards derives, from a whole kubespray tree at root (roles with
// their tasks, meta, templates, defaults and vars; playbooks), which of
// the variables in defs kubespray reads only under conditions: every site
// reading the variable lies in a template chosen by a condition, in a role
// kubespray runs only under conditions, or in an {% if %} block, and each
// site keeps the conditions it is read under. A variable with a site
// read unconditionally, or read in a way not modelled (a computed name, a
// template rendered from a computed path), is left out. Conditions on what
// only a run gives (facts, groups, set_fact) are left out of the guards.
func ReadGuards(root string, defs map[string][]Def) (map[string][]GuardedRead, error) {
	g := &guardScan{root: root, roles: map[string]bool{}, sites: map[string][]roleSite{},
		templates: map[string]map[string]bool{}, renders: map[string][]render{}, unknownRender: map[string]bool{},
		occ: map[string][]occurrence{}, memo: map[string][][]Guard{},
		j2: map[string][]string{}, srcLines: map[string]bool{}}
	if _, err := os.Stat(filepath.Join(root, "roles")); err != nil {
		return nil, nil
	}
	var err error
	if g.set, err = taskSet(root); err != nil {
		return nil, err
	}
	if err := g.findRoles(); err != nil {
		return nil, err
	}
	if err := g.readYAML(); err != nil {
		return nil, err
	}
	if err := g.readTemplates(); err != nil {
		return nil, err
	}
	g.otherRenders()
	out := map[string][]GuardedRead{}
	names := make([]string, 0, len(defs))
	for n := range defs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if reads, ok := g.guardedReads(n, 0); ok {
			out[n] = reads
		}
	}
	return out, nil
}

// findRoles lists the roles of the tree (directories under roles/ holding
// tasks/ or meta/) and their templates.
func (g *guardScan) findRoles() error {
	base := filepath.Join(g.root, "roles")
	return filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		n := d.Name()
		if p != base && (strings.HasPrefix(n, ".") || n == "molecule") {
			return filepath.SkipDir
		}
		if n != "tasks" && n != "meta" && n != "templates" {
			return nil
		}
		rel, _ := filepath.Rel(base, filepath.Dir(p))
		role := filepath.ToSlash(rel)
		g.roles[role] = true
		if n == "templates" {
			if g.templates[role] == nil {
				g.templates[role] = map[string]bool{}
			}
			filepath.WalkDir(p, func(q string, e fs.DirEntry, err error) error {
				if err == nil && !e.IsDir() {
					t, _ := filepath.Rel(p, q)
					g.templates[role][filepath.ToSlash(t)] = true
				}
				return nil
			})
			return filepath.SkipDir
		}
		return nil
	})
}

// roleOfFile is the role a file lies in ("" outside roles/) and the kind
// of directory it is in (tasks, handlers, meta, templates, defaults,
// vars, files, ...).
func (g *guardScan) roleOfFile(rel string) (role, dir string) {
	if !strings.HasPrefix(rel, "roles/") {
		return "", ""
	}
	parts := strings.Split(rel, "/")
	for i := 2; i < len(parts)-1; i++ {
		switch parts[i] {
		case "tasks", "handlers", "meta", "templates", "defaults", "vars", "files", "library", "filter_plugins", "test", "tests", "molecule":
			return strings.Join(parts[1:i], "/"), parts[i]
		}
	}
	return "", ""
}

// cond turns condition items into guards, leaving out those reading what
// only a run gives or what the template sets itself (locals).
func (g *guardScan) cond(items []string, source, kind string, locals map[string]bool) []Guard {
	var out []Guard
	for _, e := range items {
		e = strings.TrimSpace(e)
		if e == "" || !g.judgeable(e, locals) {
			continue
		}
		out = append(out, Guard{Expr: e, Source: source, Kind: kind})
	}
	return out
}

// judgeable reports whether the inventory and kubespray's defaults can
// decide expr: it parses and reads no fact, magic variable, task result
// or template local.
func (g *guardScan) judgeable(expr string, locals map[string]bool) bool {
	n, err := jinja.Parse(expr)
	if err != nil {
		return false
	}
	names := 0
	for _, r := range jinja.Refs(n) {
		switch r.Kind {
		case "name":
			if magicNames[r.Name] || locals[r.Name] || g.set[r.Name] != "" || strings.HasPrefix(r.Name, "ansible_") {
				return false
			}
			names++
		case "function":
			return false // lookup(), query(), range() ...: not the inventory's
		}
	}
	return names > 0
}

func whenItems(v *parser.Value) []string {
	var out []string
	for _, it := range strs(v) {
		out = append(out, condText(it))
	}
	if v != nil && v.Kind == parser.KindBool {
		if v.Bool {
			out = append(out, "true")
		} else {
			out = append(out, "false")
		}
	}
	return out
}

func moduleArgs(task *parser.Value, names ...string) *parser.Value {
	for _, n := range names {
		if v := get(task, n); v != nil {
			return v
		}
	}
	return nil
}

// readYAML reads the tree's YAML (roles, playbooks, top-level playbooks):
// role inclusion sites, template renderers, and every identifier's
// occurrences.
func (g *guardScan) readYAML() error {
	var files []string
	rf, err := walkYAML(filepath.Join(g.root, "roles"), []string{"molecule", "templates", "files"}, nil)
	if err != nil {
		return err
	}
	files = append(files, rf...)
	pf, err := walkYAML(filepath.Join(g.root, "playbooks"), []string{"molecule"}, nil)
	if err != nil {
		return err
	}
	files = append(files, pf...)
	top, _ := filepath.Glob(filepath.Join(g.root, "*.yml"))
	sort.Strings(top)
	files = append(files, top...)
	return loadEachAll(g.root, files, func(rel string, data []byte, doc *parser.Value) {
		role, dir := g.roleOfFile(rel)
		kind := "other"
		switch {
		case role != "" && (dir == "tasks" || dir == "handlers"):
			kind = "task"
		case role != "" && (dir == "defaults" || dir == "vars"):
			kind = "vars"
		case role != "" && dir == "meta":
			kind = "other" // dependency conditions: read wherever the parent runs
		case role == "" && strings.HasPrefix(rel, "roles/"):
			return // not a file Ansible reads as a role's (library, tests ...)
		}
		g.indexText(rel, string(data), kind, role)
		if doc == nil {
			return
		}
		switch {
		case dir == "meta":
			g.readDeps(rel, role, doc)
		case kind == "task":
			g.readTasks(rel, role, doc, nil)
		case role == "":
			g.readPlays(rel, doc)
		}
	})
}

// loadEachAll is loadEach that also calls f (doc nil) for a file that does
// not load, so that its text is still indexed.
func loadEachAll(src string, files []string, f func(rel string, data []byte, doc *parser.Value)) error {
	return loadFiles(src, files, true, f)
}

// indexText records every identifier of a YAML file, outside comment
// lines, and the literals of lookups by computed name.
func (g *guardScan) indexText(rel, text, kind, role string) {
	owner := ""
	for i, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") {
			continue
		}
		start := 0
		if kind == "vars" {
			if m := topKeyRE.FindStringSubmatchIndex(line); m != nil {
				owner = line[m[2]:m[3]]
				start = m[3] // the name defined is no read
			}
		}
		g.dynamicLits(line)
		g.mentions(rel, i+1, line)
		for _, id := range guardIdentRE.FindAllString(line[start:], -1) {
			g.occ[id] = append(g.occ[id], occurrence{file: rel, line: i + 1, kind: kind, role: role, owner: owner})
		}
	}
}

func (g *guardScan) dynamicLits(s string) {
	if !dynLookup.MatchString(s) {
		return
	}
	for _, m := range quotedLit.FindAllStringSubmatch(s, -1) {
		if l := m[1] + m[2]; len(l) >= 3 && l != "vars" {
			g.dynamic = append(g.dynamic, l)
		}
	}
}

// roleNames resolves a role reference to roles of the tree: a name, or a
// templated one (every role it can name).
func (g *guardScan) roleNames(ref string) []string {
	var out []string
	for _, r := range g.roleChoices(ref, "") {
		out = append(out, r.role)
	}
	return out
}

type roleChoice struct {
	role  string
	guard []Guard
}

// roleChoices resolves a role reference at source: a name, a name chosen
// by one variable ("network_plugin/{{ kube_network_plugin }}": that role
// when the variable names it), or another templated name (every role it
// can name).
func (g *guardScan) roleChoices(ref, source string) []roleChoice {
	ref = strings.TrimSpace(ref)
	if !strings.Contains(ref, "{{") {
		if g.roles[ref] {
			return []roleChoice{{role: ref}}
		}
		return nil
	}
	var out []roleChoice
	if m := oneVarRE.FindStringSubmatch(ref); m != nil && source != "" {
		for r := range g.roles {
			if mid, ok := strings.CutPrefix(r, m[1]); ok {
				if mid, ok = strings.CutSuffix(mid, m[3]); ok && mid != "" && !strings.ContainsAny(mid, "'\\/") {
					out = append(out, roleChoice{r, g.cond([]string{fmt.Sprintf("%s == '%s'", m[2], mid)}, source, GuardRole, nil)})
				}
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].role < out[j].role })
		return out
	}
	re, err := templatePattern(ref)
	if err != nil {
		return nil
	}
	for r := range g.roles {
		if re.MatchString(r) {
			out = append(out, roleChoice{role: r})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].role < out[j].role })
	return out
}

// templatePattern is a regexp matching what a templated name can render to.
func templatePattern(s string) (*regexp.Regexp, error) {
	parts := regexp.MustCompile(`\{\{.*?\}\}`).Split(s, -1)
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.Compile("^" + strings.Join(parts, ".*") + "$")
}

func roleRef(v *parser.Value) string {
	switch {
	case v == nil:
		return ""
	case v.Kind == parser.KindString:
		return v.Str
	case v.Kind == parser.KindMap:
		for _, k := range []string{"role", "name"} {
			if r := get(v, k); r != nil && r.Kind == parser.KindString {
				return r.Str
			}
		}
	}
	return ""
}

func (g *guardScan) readDeps(rel, role string, doc *parser.Value) {
	deps := get(doc, "dependencies")
	if deps == nil || deps.Kind != parser.KindList {
		return
	}
	for _, d := range deps.List {
		src := fmt.Sprintf("%s:%d", rel, d.Pos.Line)
		guards := g.cond(whenItems(get(d, "when")), src, GuardRole, nil)
		for _, r := range g.roleChoices(roleRef(d), src) {
			g.sites[r.role] = append(g.sites[r.role], roleSite{parent: role, guards: append(append([]Guard(nil), guards...), r.guard...)})
		}
	}
}

func (g *guardScan) readPlays(rel string, doc *parser.Value) {
	if doc == nil || doc.Kind != parser.KindList {
		return
	}
	for _, play := range doc.List {
		if rs := get(play, "roles"); rs != nil && rs.Kind == parser.KindList {
			for _, e := range rs.List {
				src := fmt.Sprintf("%s:%d", rel, e.Pos.Line)
				guards := g.cond(whenItems(get(e, "when")), src, GuardRole, nil)
				for _, r := range g.roleChoices(roleRef(e), src) {
					g.sites[r.role] = append(g.sites[r.role], roleSite{guards: append(append([]Guard(nil), guards...), r.guard...)})
				}
			}
		}
		for _, k := range []string{"pre_tasks", "tasks", "post_tasks", "handlers"} {
			g.readTasks(rel, "", get(play, k), nil)
		}
	}
}

// readTasks reads a task list of role (or of a play, role ""): inclusion
// sites of roles and of other roles' task files, and template renderers;
// when are the enclosing blocks' conditions.
func (g *guardScan) readTasks(rel, role string, v *parser.Value, when []Guard) {
	if v == nil || v.Kind != parser.KindList {
		return
	}
	for _, task := range v.List {
		if task == nil || task.Kind != parser.KindMap {
			continue
		}
		src := fmt.Sprintf("%s:%d", rel, task.Pos.Line)
		own := append(append([]Guard(nil), when...), g.cond(whenItems(get(task, "when")), src, GuardTask, nil)...)
		for _, k := range []string{"block", "rescue", "always"} {
			g.readTasks(rel, role, get(task, k), own)
		}
		if ir := moduleArgs(task, "include_role", "import_role", "ansible.builtin.include_role", "ansible.builtin.import_role"); ir != nil {
			for i := range own {
				own[i].Kind = GuardRole
			}
			for _, r := range g.roleChoices(roleRef(ir), src) {
				g.sites[r.role] = append(g.sites[r.role], roleSite{parent: role, guards: append(append([]Guard(nil), own...), r.guard...)})
			}
		}
		if it := moduleArgs(task, "include_tasks", "import_tasks", "ansible.builtin.include_tasks", "ansible.builtin.import_tasks"); it != nil {
			file := ""
			if it.Kind == parser.KindString {
				file = it.Str
			} else if f := get(it, "file"); f != nil && f.Kind == parser.KindString {
				file = f.Str
			}
			// another role's task file runs under this role's conditions
			if i := strings.LastIndex(file, "/tasks/"); i >= 0 {
				ref := file[:i]
				for strings.HasPrefix(ref, "../") {
					ref = ref[3:]
				}
				ref = strings.TrimPrefix(ref, "roles/")
				for _, r := range g.roleNames(ref) {
					if r != role {
						g.sites[r] = append(g.sites[r], roleSite{parent: role})
					}
				}
			}
		}
		if t := moduleArgs(task, "template", "ansible.builtin.template", "ansible.legacy.template"); t != nil && role != "" {
			g.readRender(role, src, t, own)
		}
	}
}

// readRender records which templates of role a template task renders,
// under which guards.
func (g *guardScan) readRender(role, source string, t *parser.Value, guards []Guard) {
	tmpls := g.templates[role]
	s := get(t, "src")
	if t.Kind == parser.KindString || s == nil || s.Kind != parser.KindString {
		// src=... k=v arguments, or src from a loop: every template of the role
		for name := range tmpls {
			g.unknownRender[tmplPath(role, name)] = true
		}
		return
	}
	add := func(name string, extra ...Guard) {
		if !tmpls[name] {
			// not this role's: a path elsewhere, not modelled
			g.j2["render "+source] = append(g.j2["render "+source], name)
			return
		}
		gs := append(append([]Guard(nil), guards...), extra...)
		g.renders[tmplPath(role, name)] = append(g.renders[tmplPath(role, name)], render{role: role, guards: gs})
	}
	g.srcLines[fmt.Sprintf("%s:%d", s.Pos.File, s.Pos.Line)] = true
	src := strings.TrimSpace(s.Str)
	if !strings.Contains(src, "{{") && !strings.Contains(src, "{%") {
		add(src)
		return
	}
	if m := ternaryRE.FindStringSubmatch(src); m != nil && !strings.Contains(m[2], "{{") {
		yes, no := g.cond([]string{m[2]}, source, GuardTemplate, nil), g.cond([]string{"not (" + m[2] + ")"}, source, GuardTemplate, nil)
		for i := range yes {
			yes[i].Else = m[3]
		}
		for i := range no {
			no[i].Else = m[1]
		}
		add(m[1], yes...)
		add(m[3], no...)
		return
	}
	if m := oneVarRE.FindStringSubmatch(src); m != nil {
		// "etcd-{{ etcd_deployment_type }}.service.j2": the value chooses the file
		for name := range tmpls {
			if mid, ok := strings.CutPrefix(name, m[1]); ok {
				if mid, ok = strings.CutSuffix(mid, m[3]); ok && mid != "" && !strings.ContainsAny(mid, "'\\/") {
					add(name, g.cond([]string{fmt.Sprintf("%s == '%s'", m[2], mid)}, source, GuardTemplate, nil)...)
				}
			}
		}
		return
	}
	re, err := templatePattern(src)
	for name := range tmpls {
		if err != nil || re.MatchString(name) {
			g.unknownRender[tmplPath(role, name)] = true
		}
	}
}

func tmplPath(role, tmpl string) string { return "roles/" + role + "/templates/" + tmpl }

// readTemplates indexes the identifiers of every template with the {% if
// %} guards around each.
func (g *guardScan) readTemplates() error {
	var roles []string
	for r := range g.templates {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	for _, role := range roles {
		var names []string
		for n := range g.templates[role] {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			rel := tmplPath(role, n)
			data, err := os.ReadFile(filepath.Join(g.root, filepath.FromSlash(rel)))
			if err != nil {
				return err
			}
			g.indexTemplate(rel, role, string(data))
		}
	}
	return nil
}

type ifFrame struct {
	isIf  bool
	prior []string // the conditions of the branches before this one
	cur   []Guard  // the guards of the current branch
	line  int
}

var stmtRE = regexp.MustCompile(`(?s)^\{%[-+]?\s*(\w+)\s*(.*?)\s*[-+]?%\}$`)

func (g *guardScan) indexTemplate(rel, role, text string) {
	var stack []ifFrame
	locals := map[string]bool{}
	guards := func() []Guard {
		var out []Guard
		for _, f := range stack {
			out = append(out, f.cur...)
		}
		return out
	}
	raw := false
	for _, m := range jinjaTagRE.FindAllStringIndex(text, -1) {
		tag := text[m[0]:m[1]]
		line := strings.Count(text[:m[0]], "\n") + 1
		src := fmt.Sprintf("%s:%d", rel, line)
		if strings.HasPrefix(tag, "{#") {
			continue
		}
		kw, rest := "", ""
		if sm := stmtRE.FindStringSubmatch(tag); sm != nil {
			kw, rest = sm[1], sm[2]
		}
		if raw {
			if kw == "endraw" {
				raw = false
			}
			continue
		}
		g.dynamicLits(tag)
		g.mentions(rel, line, tag)
		// what the tag reads is read under the guards around it (an
		// if's own condition under the enclosing ones)
		gs := guards()
		if kw == "elif" && len(stack) > 0 {
			gs = nil
			for _, f := range stack[:len(stack)-1] {
				gs = append(gs, f.cur...)
			}
		}
		for _, id := range guardIdentRE.FindAllString(tag, -1) {
			g.occ[id] = append(g.occ[id], occurrence{file: rel, line: line, kind: "template", role: role, local: gs})
		}
		switch kw {
		case "raw":
			raw = true
		case "if":
			stack = append(stack, ifFrame{isIf: true, prior: []string{rest}, cur: g.cond([]string{rest}, src, GuardIf, locals), line: line})
		case "elif", "else":
			if len(stack) == 0 {
				continue
			}
			f := &stack[len(stack)-1]
			if !f.isIf {
				f.cur = nil // a for's else
				continue
			}
			var items []string
			for _, p := range f.prior {
				items = append(items, "not ("+p+")")
			}
			if kw == "elif" {
				items = append(items, rest)
				f.prior = append(f.prior, rest)
			}
			f.cur = g.cond(items, src, GuardIf, locals)
		case "endif", "endfor", "endmacro", "endcall", "endfilter", "endblock", "endwith", "endset":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case "for", "macro", "call", "filter", "block", "with":
			if kw == "for" {
				if i := strings.Index(rest, " in "); i > 0 {
					for _, v := range strings.Split(rest[:i], ",") {
						locals[strings.TrimSpace(v)] = true
					}
				}
				locals["loop"] = true
			}
			if kw == "macro" {
				locals["varargs"], locals["kwargs"] = true, true
				if i := strings.Index(rest, "("); i >= 0 {
					for _, id := range guardIdentRE.FindAllString(rest[i:], -1) {
						locals[id] = true
					}
				}
			}
			stack = append(stack, ifFrame{line: line})
		case "set":
			lhs, _, hasEq := strings.Cut(rest, "=")
			for _, v := range strings.Split(lhs, ",") {
				locals[strings.TrimSpace(v)] = true
			}
			if !hasEq {
				stack = append(stack, ifFrame{line: line}) // a block set
			}
		}
	}
}

// roleGuards are the alternatives under which kubespray runs role: one
// list of guards per way it is included (all must hold). A role nothing
// includes, a cycle, or too many ways give one empty alternative (runs).
func (g *guardScan) roleGuards(role string, depth int) [][]Guard {
	if alts, ok := g.memo[role]; ok {
		return alts
	}
	if depth > 20 {
		return [][]Guard{nil}
	}
	g.memo[role] = [][]Guard{nil} // a cycle: unconditional
	sites := g.sites[role]
	var alts [][]Guard
	if len(sites) == 0 {
		alts = [][]Guard{nil}
	}
	for _, s := range sites {
		parent := [][]Guard{nil}
		if s.parent != "" {
			parent = g.roleGuards(s.parent, depth+1)
		}
		for _, p := range parent {
			alts = append(alts, append(append([]Guard(nil), p...), s.guards...))
		}
		if len(alts) > 64 {
			alts = [][]Guard{nil}
			break
		}
	}
	g.memo[role] = alts
	return alts
}

// occGuards are the alternatives under which an occurrence is read;
// ok is false when it is read in a way not modelled.
func (g *guardScan) occGuards(o occurrence, depth int) ([][]Guard, bool) {
	switch o.kind {
	case "task":
		return g.roleGuards(o.role, 0), true
	case "template":
		if g.unknownRender[o.file] || len(g.renders[o.file]) == 0 {
			return nil, false
		}
		var alts [][]Guard
		for _, r := range g.renders[o.file] {
			for _, rg := range g.roleGuards(r.role, 0) {
				alts = append(alts, append(append(append([]Guard(nil), rg...), r.guards...), o.local...))
			}
		}
		return alts, true
	case "vars":
		// a reference in another variable's definition: read where that
		// one is, so only within one role whose every read is there
		if o.owner == "" || scanIsDefaultsRole(o.role) || depth > 0 {
			return nil, false
		}
		for _, p := range g.occ[o.owner] {
			if p.role != o.role || p.kind == "other" {
				return nil, false
			}
		}
		return g.roleGuards(o.role, 0), true
	}
	return nil, false
}

func scanIsDefaultsRole(role string) bool {
	for _, r := range DefaultsRoles {
		if role == r {
			return true
		}
	}
	return false
}

// guardedReads are the sites reading name, each with its guards; ok is
// false when some site reads it unconditionally or not modelled.
func (g *guardScan) guardedReads(name string, depth int) ([]GuardedRead, bool) {
	occ := g.occ[name]
	if len(occ) == 0 || g.set[name] != "" {
		return nil, false
	}
	for _, lit := range g.dynamic {
		if strings.Contains(name, lit) {
			return nil, false
		}
	}
	var out []GuardedRead
	seen := map[string]bool{}
	for _, o := range occ {
		if o.kind == "vars" && o.owner == name {
			continue // its own definition (a multi-line value)
		}
		alts, ok := g.occGuards(o, depth)
		if !ok {
			return nil, false
		}
		src := fmt.Sprintf("%s:%d", o.file, o.line)
		for _, a := range minimal(alts) {
			if len(a) == 0 {
				return nil, false
			}
			key := exprKey(a) // the first site read under these conditions stands for all
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, GuardedRead{Source: src, Guards: a})
		}
	}
	if len(out) == 0 || len(out) > 200 {
		return nil, false
	}
	return out, true
}

func exprKey(gs []Guard) string {
	var b strings.Builder
	for _, x := range gs {
		b.WriteString(x.Expr + "\x01")
	}
	return b.String()
}

// minimal drops the alternatives that only add conditions to another
// (a conjunction holding only when a smaller one holds says nothing
// more), and repeats of the same conditions from another place (the
// same role entry in cluster.yml and scale.yml).
func minimal(alts [][]Guard) [][]Guard {
	sets := make([]map[string]bool, len(alts))
	for i, a := range alts {
		sets[i] = map[string]bool{}
		for _, x := range a {
			sets[i][x.Expr] = true
		}
	}
	order := make([]int, len(alts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return len(sets[order[i]]) < len(sets[order[j]]) })
	var kept []int
	for _, i := range order {
		redundant := false
		for _, k := range kept {
			sub := true
			for e := range sets[k] {
				if !sets[i][e] {
					sub = false
					break
				}
			}
			if sub {
				redundant = true
				break
			}
		}
		if !redundant {
			kept = append(kept, i)
		}
	}
	sort.Ints(kept)
	out := make([][]Guard, 0, len(kept))
	for _, k := range kept {
		out = append(out, alts[k])
	}
	return out
}

// mentions records the template names a line or tag names.
func (g *guardScan) mentions(rel string, line int, s string) {
	if !strings.Contains(s, ".j2") {
		return
	}
	for _, m := range j2RE.FindAllString(s, -1) {
		src := fmt.Sprintf("%s:%d", rel, line)
		g.j2[src] = append(g.j2[src], m)
	}
}

// otherRenders marks as not modelled every template a file names
// elsewhere than a template task's src: (lookup('template'), {% include
// %}, a path into another role).
func (g *guardScan) otherRenders() {
	for src, names := range g.j2 {
		if g.srcLines[src] {
			continue
		}
		for _, n := range names {
			base := n[strings.LastIndex(n, "/")+1:]
			for role, ts := range g.templates {
				for t := range ts {
					if t == base || strings.HasSuffix(t, "/"+base) {
						g.unknownRender[tmplPath(role, t)] = true
					}
				}
			}
		}
	}
}
