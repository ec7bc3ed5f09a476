package scan

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/layercheck/layercheck/parser"
)

// Shape is the structure kubespray expects of a list or dict variable:
// from its default's type, the fields its tasks read of each loop item
// (loop: "{{ x }}" with item.target) and of the dict itself (x.dest_dir),
// and the fields its templates read of each element ({% for p in x %}
// ... p.prefix).
type Shape struct {
	// Kind is "list" or "dict".
	Kind string `json:"kind"`
	// Elem is the kind of a list's elements when kubespray's default or
	// its reads say it ("dict", "str"); "" when unknown.
	Elem string `json:"elem,omitempty"`
	// Fields are the keys kubespray reads of the dict, or of each element
	// of a list of dicts, sorted.
	Fields []string `json:"fields,omitempty"`
	// Source is the "file:line" that says the shape: the default, or the
	// first task or template reading the fields.
	Source string `json:"source"`
	// Reads are, for a list of dicts, the "file:line" of the first task
	// loop or template loop that reads each field of every item.
	Reads map[string]string `json:"reads,omitempty"`
	// Items are, for a list of dicts, the shapes of the fields of each item
	// that are lists of dicts themselves (containerd_registries_mirrors'
	// mirrors, which hosts.toml.j2 loops over).
	Items map[string]*Shape `json:"items,omitempty"`
}

// fileExtensions: "x.yml" in a task is a file name (import_tasks,
// template src), not the field yml of x.
var fileExtensions = map[string]bool{"yml": true, "yaml": true, "j2": true, "json": true, "sh": true, "conf": true, "pem": true, "service": true}

var (
	loopVarRE    = regexp.MustCompile(`^\s*\{\{\s*([A-Za-z_]\w*)\s*\}\}\s*$`)
	itemFieldRE  = regexp.MustCompile(`\bitem(?:\.([A-Za-z_]\w*)|\[\s*['"](\w+)['"]\s*\])`)
	attrRE       = regexp.MustCompile(`\b([A-Za-z_]\w*)\.([A-Za-z_]\w*)\b`)
	forRE        = regexp.MustCompile(`\{%-?\s*for\s+([A-Za-z_]\w*)\s+in\s+([A-Za-z_]\w*)\s*-?%\}`)
	definedRE    = regexp.MustCompile(`\b([A-Za-z_]\w*)\s+is\s+defined\b`)
	methodFields = map[string]bool{"get": true, "keys": true, "values": true, "items": true, "split": true, "startswith": true,
		"endswith": true, "lower": true, "upper": true, "strip": true, "replace": true, "join": true, "format": true, "append": true}
)

// ReadShapes is readShapes of the tasks under src and the templates
// under tmpl (the release's whole tree: kubespray-src has no templates).
func ReadShapes(src, tmpl string, defs map[string][]Def) (map[string]*Shape, error) {
	set, err := taskSet(src)
	if err != nil {
		return nil, err
	}
	return readShapes(src, tmpl, defs, set)
}

// readShapes derives the Shape of the list and dict variables of defs,
// and of the variables the tasks read as dicts (x.field where x is
// defined in defs or tested with `x is defined`), from src's roles' tasks
// and tmpl's roles' templates.
func readShapes(src, tmpl string, defs map[string][]Def, set map[string]string) (map[string]*Shape, error) {
	out := map[string]*Shape{}
	// scalar: names whose default is a plain string, number or boolean; a
	// "name.field" in a task is then no field read (import_tasks:
	// etcd_metrics.yml names a file, and etcd_metrics is "basic").
	scalar := map[string]bool{}
	for name, ds := range defs {
		d := ds[0]
		sh := &Shape{Source: fmt.Sprintf("%s:%d", d.File, d.Line)}
		switch x := d.Default.(type) {
		case []any:
			sh.Kind = TypeList
			sh.Elem, sh.Fields = elemShape(x)
			if sh.Elem == TypeDict {
				sh.Items = nestedShapes(x, sh.Source)
			}
		case map[string]any:
			sh.Kind = TypeDict
		default:
			if d.DefaultOmitted && (d.Type == TypeList || d.Type == TypeDict) {
				sh.Kind = d.Type
			} else {
				switch x.(type) {
				case string, bool, int, int64, float64:
					scalar[name] = d.Type != "templated"
				}
				continue
			}
		}
		out[name] = sh
	}
	if src == "" {
		return out, nil
	}
	addFields := func(name, kind, source string, fields ...string) {
		if scalar[name] {
			return
		}
		fields = slices.DeleteFunc(fields, func(f string) bool { return methodFields[f] || fileExtensions[f] })
		if len(fields) == 0 {
			return // only methods (x.startswith): says nothing of a structure
		}
		sh := out[name]
		if sh == nil {
			sh = &Shape{Kind: kind, Source: source}
			out[name] = sh
		}
		if sh.Kind != kind {
			return // the default says otherwise
		}
		if kind == TypeList {
			if sh.Elem == "" {
				sh.Elem = TypeDict
			}
			if sh.Elem != TypeDict {
				return
			}
		}
		if len(sh.Fields) == 0 && len(fields) > 0 && !strings.Contains(sh.Source, "/tasks/") && !strings.Contains(sh.Source, "/templates/") {
			sh.Source = source
		}
		for _, f := range fields {
			if !methodFields[f] && !contains(sh.Fields, f) {
				sh.Fields = append(sh.Fields, f)
			}
			if kind == TypeList && !methodFields[f] {
				if sh.Reads == nil {
					sh.Reads = map[string]string{}
				}
				if sh.Reads[f] == "" {
					sh.Reads[f] = source
				}
			}
		}
		sort.Strings(sh.Fields)
	}
	// addNested records what a loop over the field f of each item of
	// name reads of each of its elements ({% for m in item.mirrors %}
	// ... m.host).
	addNested := func(name string, nested map[string][]fieldRead) {
		sh := out[name]
		if sh == nil || sh.Kind != TypeList || sh.Elem != TypeDict {
			return
		}
		for _, f := range sortedKeys(nested) {
			reads := nested[f]
			n := sh.Items[f]
			if n == nil {
				n = &Shape{Kind: TypeList, Elem: TypeDict, Source: reads[0].source}
				if sh.Items == nil {
					sh.Items = map[string]*Shape{}
				}
				sh.Items[f] = n
			}
			if n.Kind != TypeList || n.Elem != TypeDict {
				continue
			}
			for _, r := range reads {
				if !contains(n.Fields, r.field) {
					n.Fields = append(n.Fields, r.field)
				}
				if n.Reads == nil {
					n.Reads = map[string]string{}
				}
				if n.Reads[r.field] == "" {
					n.Reads[r.field] = r.source
				}
			}
			sort.Strings(n.Fields)
		}
	}
	tasks, err := walkYAML(filepath.Join(src, "roles"), []string{"molecule", "files", "defaults", "vars", "templates"}, nil)
	if err != nil {
		return nil, err
	}
	err = loadEach(src, tasks, func(rel string, data []byte, doc *parser.Value) {
		defined := map[string]bool{}
		for _, m := range definedRE.FindAllStringSubmatch(string(data), -1) {
			defined[m[1]] = true
		}
		walkTasks(doc, 0, func(task *parser.Value) {
			for _, k := range []string{"loop", "with_items"} {
				l := get(task, k)
				if l == nil || l.Kind != parser.KindString {
					continue
				}
				m := loopVarRE.FindStringSubmatch(l.Str)
				if m == nil || set[m[1]] != "" {
					continue
				}
				var fields []string
				eachString(task, 0, func(s string) {
					for _, f := range itemFieldRE.FindAllStringSubmatch(s, -1) {
						fields = append(fields, f[1]+f[2])
					}
				})
				if len(fields) > 0 {
					addFields(m[1], TypeList, fmt.Sprintf("%s:%d", rel, l.Pos.Line), fields...)
				}
				// the template the task renders for each item reads
				// more of it (hosts.toml.j2's item.server, item.mirrors)
				if file, text := loopTemplate(tmpl, rel, task); text != "" {
					reads, nested := loopReads(text, 0, "item", file)
					for _, r := range reads {
						addFields(m[1], TypeList, r.source, r.field)
					}
					addNested(m[1], nested)
				}
			}
			eachString(task, 0, func(s string) {
				for _, m := range attrRE.FindAllStringSubmatch(s, -1) {
					n := m[1]
					if n == "item" || set[n] != "" || strings.HasPrefix(n, "ansible_") || !(len(defs[n]) > 0 || defined[n]) {
						continue
					}
					if sh := out[n]; sh != nil && sh.Kind != TypeDict {
						continue
					}
					addFields(n, TypeDict, fmt.Sprintf("%s:%d", rel, task.Pos.Line), m[2])
				}
			})
		})
	})
	if err != nil {
		return nil, err
	}
	if tmpl == "" {
		return out, nil
	}
	templates, err := walkFiles(filepath.Join(tmpl, "roles"), ".j2")
	if err != nil {
		return nil, err
	}
	for _, p := range templates {
		rel, _ := filepath.Rel(tmpl, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		text := string(data)
		for _, m := range forRE.FindAllStringSubmatchIndex(text, -1) {
			v, list := text[m[2]:m[3]], text[m[4]:m[5]]
			if len(defs[list]) == 0 {
				continue
			}
			re := regexp.MustCompile(`\b` + regexp.QuoteMeta(v) + `\.([A-Za-z_]\w*)\b`)
			var fields []string
			for _, f := range re.FindAllStringSubmatch(text[m[1]:], -1) {
				fields = append(fields, f[1])
			}
			if len(fields) > 0 {
				line := strings.Count(text[:m[0]], "\n") + 1
				addFields(list, TypeList, fmt.Sprintf("%s:%d", filepath.ToSlash(rel), line), fields...)
				_, nested := loopReads(text, m[1], v, filepath.ToSlash(rel))
				addNested(list, nested)
			}
		}
	}
	return out, nil
}

// fieldRead is a field read of each item of a loop, and where.
type fieldRead struct{ field, source string }

var nestedForRE = regexp.MustCompile(`\{%-?\s*for\s+([A-Za-z_]\w*)\s+in\s+([A-Za-z_]\w*)\.([A-Za-z_]\w*)\s*-?%\}`)

// loopReads lists the fields a template reads of v from text[from:]
// (v.prefix), each with the "rel:line" of its first read, and the fields
// of each element of v's own list fields it loops over ({% for m in
// v.mirrors %} ... m.host), by field.
func loopReads(text string, from int, v, rel string) ([]fieldRead, map[string][]fieldRead) {
	at := func(i int) string { return fmt.Sprintf("%s:%d", rel, strings.Count(text[:i], "\n")+1) }
	var reads []fieldRead
	seen := map[string]bool{}
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(v) + `\.([A-Za-z_]\w*)\b`)
	for _, m := range re.FindAllStringSubmatchIndex(text[from:], -1) {
		f := text[from+m[2] : from+m[3]]
		if methodFields[f] || seen[f] {
			continue
		}
		seen[f] = true
		reads = append(reads, fieldRead{f, at(from + m[0])})
	}
	nested := map[string][]fieldRead{}
	for _, m := range nestedForRE.FindAllStringSubmatchIndex(text[from:], -1) {
		inner, outer, f := text[from+m[2]:from+m[3]], text[from+m[4]:from+m[5]], text[from+m[6]:from+m[7]]
		if outer != v || inner == v {
			continue
		}
		in, _ := loopReads(text, from+m[1], inner, rel)
		nested[f] = append(nested[f], in...)
	}
	for f, rs := range nested {
		if len(rs) == 0 {
			delete(nested, f)
		}
	}
	return reads, nested
}

// loopTemplate is the template a looping task renders (template: src:
// hosts.toml.j2), as the path from src and its text; "" when the task
// renders none or the file is not in the task's role.
func loopTemplate(src, rel string, task *parser.Value) (string, string) {
	var t *parser.Value
	for _, k := range []string{"template", "ansible.builtin.template"} {
		if t = get(task, k); t != nil {
			break
		}
	}
	s := get(t, "src")
	if s == nil || s.Kind != parser.KindString || strings.Contains(s.Str, "{{") || !strings.HasSuffix(s.Str, ".j2") {
		return "", ""
	}
	i := strings.Index(rel, "/tasks/")
	if i < 0 {
		return "", ""
	}
	p := rel[:i] + "/templates/" + filepath.ToSlash(filepath.Clean(s.Str))
	if strings.HasPrefix(filepath.Clean(s.Str), "..") || filepath.IsAbs(s.Str) {
		return "", ""
	}
	data, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(p)))
	if err != nil {
		return "", ""
	}
	return p, string(data)
}

// nestedShapes are the shapes of the fields of a default list of dicts
// whose values are lists of dicts themselves, by field.
func nestedShapes(l []any, source string) map[string]*Shape {
	var out map[string]*Shape
	for _, e := range l {
		d, _ := e.(map[string]any)
		for f, x := range d {
			sub, ok := x.([]any)
			if !ok {
				continue
			}
			elem, fields := elemShape(sub)
			if elem != TypeDict {
				continue
			}
			if out == nil {
				out = map[string]*Shape{}
			}
			n := out[f]
			if n == nil {
				n = &Shape{Kind: TypeList, Elem: TypeDict, Source: source}
				out[f] = n
			}
			for _, k := range fields {
				if !contains(n.Fields, k) {
					n.Fields = append(n.Fields, k)
				}
			}
			sort.Strings(n.Fields)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// elemShape is the element kind of a default list and, for a list of
// dicts, the union of their keys.
func elemShape(l []any) (string, []string) {
	if len(l) == 0 {
		return "", nil
	}
	kind := ""
	var fields []string
	for _, e := range l {
		k := TypeStr
		switch x := e.(type) {
		case map[string]any:
			k = TypeDict
			for f := range x {
				if !contains(fields, f) {
					fields = append(fields, f)
				}
			}
		case []any:
			k = TypeList
		case string:
		default:
			return "", nil
		}
		if kind != "" && kind != k {
			return "", nil
		}
		kind = k
	}
	sort.Strings(fields)
	return kind, fields
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// eachString calls f for every string in v.
func eachString(v *parser.Value, depth int, f func(string)) {
	if v == nil || depth > 100 {
		return
	}
	switch v.Kind {
	case parser.KindString:
		f(v.Str)
	case parser.KindList:
		for _, x := range v.List {
			eachString(x, depth+1, f)
		}
	case parser.KindMap:
		for _, k := range v.Map.Keys {
			if k == "block" || k == "rescue" || k == "always" {
				continue // their tasks are walked on their own
			}
			eachString(v.Map.Get(k), depth+1, f)
		}
	}
}

// walkFiles lists the files under root whose name ends with ext, sorted.
func walkFiles(root, ext string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ext) {
			out = append(out, p)
		}
		return nil
	})
	if os.IsNotExist(err) {
		return nil, nil
	}
	sort.Strings(out)
	return out, err
}
