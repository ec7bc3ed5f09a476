package scan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/layercheck/layercheck/parser"
)

// Release holds the facts of one kubespray release that come from its
// tasks and playbooks (kubespray-src/<version>: roles/*/tasks,
// playbooks/ansible_version.yml) and from the checksums of its defaults,
// rather than from variable definitions.
type Release struct {
	// AnsibleMin and AnsibleMax are playbooks/ansible_version.yml's
	// minimal_ansible_version and maximal_ansible_version: kubespray runs
	// on AnsibleMin <= ansible-core < AnsibleMax. AnsibleSource is where
	// (file:line of minimal_ansible_version).
	AnsibleMin    string `json:"ansible_min,omitempty"`
	AnsibleMax    string `json:"ansible_max,omitempty"`
	AnsibleSource string `json:"ansible_source,omitempty"`
	// Components are the versions kubespray pins, by variable:
	// kube_version (from kubelet_checksums), etcd_version,
	// containerd_version, calico_version (calicoctl_binary_checksums);
	// see Component.
	Components map[string]*Component `json:"components,omitempty"`
	// Asserts are the allowed-values asserts and the removed_vars list of
	// the release's task files (ReadAsserts over TaskFiles).
	Asserts *Asserts `json:"asserts,omitempty"`
	// Exprs maps the text of every assert that: item in roles/*/tasks
	// (trimmed), and "when:" + every when: item of a fail task, to its first
	// "file:line": how a hand-written assert fact is
	// placed in a release, or found missing from it.
	Exprs map[string]string `json:"exprs,omitempty"`
	// Uses says, per boolean variable (Type bool in the release's
	// defaults), how kubespray's conditions read it: per form (FormBare,
	// FormNot, FormBoolCast, FormCompared, FormExpr, FormTemplate) the
	// first condition or Jinja expression and the count. Jinja in task
	// arguments (`{{ 'a' if x else 'b' }}`, `{% if x %}`) counts as
	// FormTemplate where it takes the value's truth, else as FormBoolCast
	// or FormCompared; templates/*.j2 are not read.
	Uses map[string]map[string]*UseSite `json:"uses,omitempty"`
	// AssertTasks are the release's inventory asserts: every assert and
	// fail task of AssertFiles as written, each classified
	// (ReadAssertTasks). Its JSON name stays "preflight", the name the
	// bundled catalogues carry.
	AssertTasks []AssertTask `json:"preflight,omitempty"`
	// Checksums maps each *_checksums dict of the defaults to its keys
	// per architecture (the versions it can download): the asserts'
	// `kube_version in kubeadm_checksums[image_arch]` reads them, and the
	// dicts are too big to keep as defaults.
	Checksums map[string]map[string][]string `json:"checksums,omitempty"`
	// Shapes are the structures kubespray expects of its list and dict
	// variables (readShapes).
	Shapes map[string]*Shape `json:"shapes,omitempty"`
	// Guarded are the variables kubespray reads only under conditions,
	// each with every site reading it and the conditions of each
	// (ReadGuards over the whole tree: templates are not in the tasks'
	// directory).
	Guarded map[string][]GuardedRead `json:"guarded,omitempty"`
}

// Component is one pinned component.
type Component struct {
	// Versions kubespray has checksums for, in the order of its checksums
	// file (newest first), for amd64; Source is the checksums variable's
	// "file:line".
	Versions []string `json:"versions,omitempty"`
	// Checksums is the checksums variable (kubelet_checksums, ...).
	Checksums string `json:"checksums,omitempty"`
	Source    string `json:"source,omitempty"`
	// MinRequired is kube_version_min_required when kubespray writes it
	// as a literal; for a template ("{{ ...[-1].key }}") the last of Versions.
	MinRequired string `json:"min_required,omitempty"`
	// MinSource is the assert stopping on a version below MinRequired.
	MinSource string `json:"min_source,omitempty"`
}

// componentChecksums names, per pinned variable, the checksums variable
// whose amd64 keys are the versions kubespray can download.
var componentChecksums = map[string]string{
	"kube_version":       "kubelet_checksums",
	"etcd_version":       "etcd_binary_checksums",
	"containerd_version": "containerd_archive_checksums",
	"calico_version":     "calicoctl_binary_checksums",
}

var ansibleVersionRE = regexp.MustCompile(`^\s*(minimal|maximal)_ansible_version:\s*['"]?([0-9][0-9.]*)`)

// ReadRelease reads the Release facts: src is the release's
// kubespray-src directory (tasks, playbooks; may be "" when absent), and
// defs the variable definitions Load found in its data directory dataDir.
func ReadRelease(src, dataDir string, defs map[string][]Def) (*Release, error) {
	r := &Release{Components: map[string]*Component{}}
	for name, cs := range componentChecksums {
		c, err := readComponent(dataDir, defs, cs)
		if err != nil {
			return nil, err
		}
		if c != nil {
			r.Components[name] = c
		}
	}
	if err := readChecksums(dataDir, defs, r); err != nil {
		return nil, err
	}
	if kv := r.Components["kube_version"]; kv != nil {
		if ds := defs["kube_version_min_required"]; len(ds) > 0 {
			if s, ok := ds[0].Default.(string); ok && !strings.Contains(s, "{{") {
				kv.MinRequired = s
			} else if len(kv.Versions) > 0 {
				kv.MinRequired = kv.Versions[len(kv.Versions)-1]
			}
		}
	}
	if src == "" {
		return r, nil
	}
	const ansibleVersion = "playbooks/ansible_version.yml"
	if b, err := os.ReadFile(filepath.Join(src, ansibleVersion)); err == nil {
		for i, line := range strings.Split(string(b), "\n") {
			m := ansibleVersionRE.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			if m[1] == "minimal" {
				r.AnsibleMin, r.AnsibleSource = m[2], fmt.Sprintf("%s:%d", ansibleVersion, i+1)
			} else {
				r.AnsibleMax = m[2]
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	a, err := ReadAsserts(src)
	if err != nil {
		return nil, err
	}
	r.Asserts = a
	if r.Exprs, err = readExprs(src); err != nil {
		return nil, err
	}
	if kv := r.Components["kube_version"]; kv != nil {
		kv.MinSource = r.Exprs["kube_version is version(kube_version_min_required, '>=')"]
	}
	bools := map[string]bool{}
	for name, ds := range defs {
		for _, d := range ds {
			if d.Type == TypeBool {
				bools[name] = true
			}
		}
	}
	if r.Uses, err = readUses(src, bools); err != nil {
		return nil, err
	}
	set, err := taskSet(src)
	if err != nil {
		return nil, err
	}
	if r.AssertTasks, err = ReadAssertTasks(src, defs, set); err != nil {
		return nil, err
	}
	if r.Shapes, err = readShapes(src, src, defs, set); err != nil {
		return nil, err
	}
	return r, nil
}

// readComponent reads the amd64 keys of the checksums variable cs from
// the file its definition names; nil when the release does not define it.
func readComponent(dataDir string, defs map[string][]Def, cs string) (*Component, error) {
	ds := defs[cs]
	if len(ds) == 0 {
		return nil, nil
	}
	d := ds[0]
	data, err := os.ReadFile(filepath.Join(dataDir, filepath.FromSlash(d.File)))
	if err != nil {
		return nil, err
	}
	doc, err := parser.LoadYAML(d.File, data, nil)
	if err != nil {
		return nil, err
	}
	if doc == nil || doc.Kind != parser.KindMap {
		return nil, nil
	}
	amd64 := doc.Map.Get(cs)
	if amd64 != nil && amd64.Kind == parser.KindMap {
		amd64 = amd64.Map.Get("amd64")
	}
	if amd64 == nil || amd64.Kind != parser.KindMap {
		return nil, nil
	}
	return &Component{Versions: append([]string(nil), amd64.Map.Keys...), Checksums: cs, Source: fmt.Sprintf("%s:%d", d.File, d.Line)}, nil
}

// readChecksums fills r.Checksums from the files defining *_checksums.
func readChecksums(dataDir string, defs map[string][]Def, r *Release) error {
	docs := map[string]*parser.Value{}
	names := make([]string, 0)
	for n := range defs {
		if strings.HasSuffix(n, "_checksums") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		d := defs[n][0]
		doc, ok := docs[d.File]
		if !ok {
			data, err := os.ReadFile(filepath.Join(dataDir, filepath.FromSlash(d.File)))
			if err != nil {
				return err
			}
			if doc, err = parser.LoadYAML(d.File, data, nil); err != nil {
				return err
			}
			docs[d.File] = doc
		}
		if doc == nil || doc.Kind != parser.KindMap {
			continue
		}
		v := doc.Map.Get(n)
		if v == nil || v.Kind != parser.KindMap {
			continue
		}
		arches := map[string][]string{}
		for _, arch := range v.Map.Keys {
			if a := v.Map.Get(arch); a != nil && a.Kind == parser.KindMap {
				arches[arch] = append([]string(nil), a.Map.Keys...)
			}
		}
		if len(arches) > 0 {
			if r.Checksums == nil {
				r.Checksums = map[string]map[string][]string{}
			}
			r.Checksums[n] = arches
		}
	}
	return nil
}

// readExprs indexes every assert that: item of roles/*/tasks/**.yml.
func readExprs(src string) (map[string]string, error) {
	out := map[string]string{}
	files, err := walkYAML(filepath.Join(src, "roles"), []string{"molecule"}, func(p string) bool {
		return strings.Contains(filepath.ToSlash(p), "/tasks/")
	})
	if err != nil {
		return nil, err
	}
	err = loadEach(src, files, func(rel string, _ []byte, doc *parser.Value) {
		if doc == nil || doc.Kind != parser.KindList {
			return // not a task list kubespray's asserts live in
		}
		for _, t := range doc.List {
			indexAsserts(rel, t, out, 0)
		}
	})
	return out, err
}

func indexAsserts(rel string, task *parser.Value, out map[string]string, depth int) {
	if task == nil || task.Kind != parser.KindMap || depth > 50 {
		return
	}
	for _, k := range []string{"block", "rescue", "always"} {
		if b := get(task, k); b != nil && b.Kind == parser.KindList {
			for _, t := range b.List {
				indexAsserts(rel, t, out, depth+1)
			}
		}
	}
	index := func(prefix string, v *parser.Value) {
		items := []*parser.Value{v}
		if v != nil && v.Kind == parser.KindList {
			items = v.List
		}
		for _, it := range items {
			if it == nil || it.Kind != parser.KindString {
				continue
			}
			e := prefix + strings.TrimSpace(it.Str)
			if _, ok := out[e]; !ok {
				out[e] = fmt.Sprintf("%s:%d", rel, it.Pos.Line)
			}
		}
	}
	a := get(task, "assert")
	if a == nil {
		a = get(task, "ansible.builtin.assert")
	}
	index("", get(a, "that"))
	// A fail task stops on its when: conditions ("X is defined" for a
	// removed variable), indexed as "when:" + condition.
	if get(task, "fail") != nil || get(task, "ansible.builtin.fail") != nil {
		index("when:", get(task, "when"))
	}
}

// UseSite is where kubespray tests a boolean in one form: the first such
// condition (Source "file:line", Expr the condition item as written) and
// how many conditions in all read it in that form.
type UseSite struct {
	Source string `json:"source"`
	Expr   string `json:"expr"`
	Count  int    `json:"count"`
}

// Forms of a boolean in a condition (when:, failed_when:, changed_when:,
// until:, assert's that:).
const (
	FormBare     = "bare"     // when: x — fails on a str under ansible-core >= 2.19, truthy below
	FormNot      = "not"      // when: not x
	FormBoolCast = "bool"     // x | bool — reads "false" as false everywhere
	FormCompared = "compared" // x == ..., x != ..., x is ..., x in ...
	FormExpr     = "expr"     // inside a larger expression (x and y, x or y, ...)
	// FormTemplate: inside Jinja in a task's arguments, read by its truth
	// ({{ 'a' if x else 'b' }}, {% if x %}, {{ x and y }}): Jinja takes a
	// str's Python truth under every ansible-core, 2.19 included.
	FormTemplate = "template"
)

// jinjaRE finds the Jinja expressions and statements of a string.
var jinjaRE = regexp.MustCompile(`(?s)\{\{(.*?)\}\}|\{%-?(.*?)-?%\}`)

// jinjaQuotedRE is a quoted string literal inside Jinja.
var jinjaQuotedRE = regexp.MustCompile(`'[^']*'|"[^"]*"`)

// templateForm classifies how the Jinja expression expr (string literals
// blanked) reads name: FormBoolCast, FormCompared (also a filter, an
// attribute or an index), FormTemplate (its truth: after if, elif, not,
// and, or; before and, or, else), or "" when it only renders or passes
// the value on (`{{ x }}`).
func templateForm(expr, name string) string {
	q := regexp.QuoteMeta(name)
	switch {
	case regexp.MustCompile(`(^|[^.\w])` + q + `\s*\|\s*(bool|ansible\.builtin\.bool)\b`).MatchString(expr):
		return FormBoolCast
	case regexp.MustCompile(`(^|[^.\w])` + q + `\s*(==|!=|<|>|\bis\b|\bin\b|\||\.|\[)`).MatchString(expr):
		return FormCompared
	case regexp.MustCompile(`\b(if|elif|not|and|or)\s+\(?\s*` + q + `\b`).MatchString(expr),
		regexp.MustCompile(`(^|[^.\w])` + q + `\s*\)?\s*\b(and|or|else)\b`).MatchString(expr):
		return FormTemplate
	}
	return ""
}

// walkTemplates calls f for every string holding Jinja in v that is not a
// condition (walkConditions' keys and assert's that:).
func walkTemplates(v *parser.Value, depth int, f func(*parser.Value)) {
	if v == nil || depth > 100 {
		return
	}
	switch v.Kind {
	case parser.KindString:
		if v.Templated() {
			f(v)
		}
	case parser.KindList:
		for _, x := range v.List {
			walkTemplates(x, depth+1, f)
		}
	case parser.KindMap:
		for _, k := range v.Map.Keys {
			isCond := k == "that"
			for _, ck := range conditionKeys {
				isCond = isCond || k == ck
			}
			if !isCond {
				walkTemplates(v.Map.Get(k), depth+1, f)
			}
		}
	}
}

// lineOf is the line of the file (lines) that holds name inside the
// string v, from v's own line on (a block scalar starts on the next line,
// and a folded one does not keep its line breaks); v.Pos.Line when none
// does.
func lineOf(lines []string, v *parser.Value, name string) int {
	re := regexp.MustCompile(`(^|[^.\w])` + regexp.QuoteMeta(name) + `\b`)
	end := v.Pos.Line + strings.Count(v.Str, "\n") + 1
	for i := v.Pos.Line; i <= end && i <= len(lines); i++ {
		if i >= 1 && re.MatchString(lines[i-1]) {
			return i
		}
	}
	return v.Pos.Line
}

var conditionKeys = []string{"when", "failed_when", "changed_when", "until"}

var identAnyRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// useForm classifies how cond reads name.
func useForm(cond, name string) string {
	c := strings.TrimSpace(cond)
	q := regexp.QuoteMeta(name)
	switch {
	case c == name || c == "("+name+")":
		return FormBare
	case regexp.MustCompile(`^not\s+\(?` + q + `\)?$`).MatchString(c):
		return FormNot
	case regexp.MustCompile(`\b` + q + `\s*\|\s*(bool|ansible\.builtin\.bool)\b`).MatchString(c):
		return FormBoolCast
	case regexp.MustCompile(`\b` + q + `\s*(==|!=|is\b|in\b|\|)`).MatchString(c):
		return FormCompared
	}
	return FormExpr
}

// readUses indexes how kubespray's roles (tasks, meta dependencies) and
// playbooks test each boolean of bools in conditions.
func readUses(src string, bools map[string]bool) (map[string]map[string]*UseSite, error) {
	out := map[string]map[string]*UseSite{}
	var files []string
	for _, top := range []string{"roles", "playbooks"} {
		root := filepath.Join(src, top)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "molecule" || n == "templates" || n == "files") {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	sort.Strings(files)
	for _, p := range files {
		rel, _ := filepath.Rel(src, p)
		rel = filepath.ToSlash(rel)
		if strings.Contains(rel, "/defaults/") || strings.Contains(rel, "/vars/") {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		doc, err := parser.LoadYAML(rel, data, nil)
		if err != nil || doc == nil {
			continue
		}
		add := func(id, form, source, expr string) {
			m := out[id]
			if m == nil {
				m = map[string]*UseSite{}
				out[id] = m
			}
			if s := m[form]; s != nil {
				s.Count++
				return
			}
			m[form] = &UseSite{Source: source, Expr: expr, Count: 1}
		}
		walkConditions(doc, 0, func(cond *parser.Value) {
			seen := map[string]bool{}
			for _, id := range identAnyRE.FindAllString(cond.Str, -1) {
				if !bools[id] || seen[id] {
					continue
				}
				seen[id] = true
				add(id, useForm(cond.Str, id), fmt.Sprintf("%s:%d", rel, cond.Pos.Line), strings.TrimSpace(cond.Str))
			}
		})
		var lines []string
		walkTemplates(doc, 0, func(v *parser.Value) {
			if lines == nil {
				lines = strings.Split(string(data), "\n")
			}
			seen := map[string]bool{}
			for _, m := range jinjaRE.FindAllStringSubmatch(v.Str, -1) {
				expr := strings.TrimSpace(m[1] + m[2])
				bare := jinjaQuotedRE.ReplaceAllString(expr, "''")
				for _, id := range identAnyRE.FindAllString(bare, -1) {
					if !bools[id] || seen[id] {
						continue
					}
					form := templateForm(bare, id)
					if form == "" {
						continue
					}
					seen[id] = true
					text := "{{ " + expr + " }}"
					if m[2] != "" {
						text = "{% " + expr + " %}"
					}
					add(id, form, fmt.Sprintf("%s:%d", rel, lineOf(lines, v, id)), text)
				}
			}
		})
	}
	return out, nil
}

// walkConditions calls f for every condition string under a when:,
// failed_when:, changed_when: or until: key, and every assert that: item,
// anywhere in v.
func walkConditions(v *parser.Value, depth int, f func(*parser.Value)) {
	if v == nil || depth > 100 {
		return
	}
	each := func(c *parser.Value) {
		items := []*parser.Value{c}
		if c != nil && c.Kind == parser.KindList {
			items = c.List
		}
		for _, it := range items {
			if it != nil && it.Kind == parser.KindString {
				f(it)
			}
		}
	}
	switch v.Kind {
	case parser.KindList:
		for _, x := range v.List {
			walkConditions(x, depth+1, f)
		}
	case parser.KindMap:
		for _, k := range v.Map.Keys {
			x := v.Map.Get(k)
			isCond := false
			for _, ck := range conditionKeys {
				isCond = isCond || k == ck
			}
			switch {
			case isCond:
				each(x)
			case k == "assert" || k == "ansible.builtin.assert":
				each(get(x, "that"))
			default:
				walkConditions(x, depth+1, f)
			}
		}
	}
}
