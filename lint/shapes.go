package lint

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
)

func init() {
	registerRule("variable-shape", SeverityError,
		"a list or dict variable written in another structure than kubespray reads (kubeadm_patches as the old dict, upstream_dns_servers as a string, an item that is no dict where kubespray's loops read fields of each item), with the release that changed it",
		checkShapes)
}

// kindOf is the structure of v as kubespray's shapes name it; "" for a
// value the lint does not judge (templated, vault, null).
func kindOf(v *parser.Value) string {
	switch {
	case v == nil || v.Kind == parser.KindNull || v.Kind == parser.KindVault:
		return ""
	case v.Kind == parser.KindString && v.Templated():
		return ""
	case v.Kind == parser.KindList:
		return "list"
	case v.Kind == parser.KindMap:
		return "dict"
	}
	return v.Kind.String()
}

func checkShapes(c *checkCtx) []Finding {
	type group struct {
		u     use
		hosts hostList
	}
	var groups byFirstSeen[*parser.Value, group]
	t := c.table
	keys := t.keysWhere(func(name string) bool { return c.cat.Shape(name) != nil })
	for i := range c.hosts {
		for _, name := range keys.of(i) {
			v, set := c.valueAt(i, name)
			if !set || kindOf(v) == "" {
				continue
			}
			g := groups.get(v, func() *group { return &group{u: use{name: name, ours: t.at(t.column(name), i), judge: v}} })
			g.hosts.add(c.hosts, i)
		}
	}
	var out []Finding
	for _, g := range groups.list() {
		u := g.u
		u.hosts = g.hosts.list(c.hosts)
		if f, ok := c.shapeFinding(u); ok {
			out = append(out, f)
			continue
		}
		out = append(out, c.itemFindings(u)...)
	}
	return out
}

// describe says a shape: "a list of {patch, target, type}", "a dict".
func describe(s *kubespray.Shape) string {
	fields := "{" + strings.Join(s.Fields, ", ") + "}"
	switch {
	case s.Kind == "list" && s.Elem == "dict" && len(s.Fields) > 0:
		return "a list of " + fields
	case s.Kind == "list" && s.Elem != "":
		return "a list of " + s.Elem
	case s.Kind == "dict" && len(s.Fields) > 0:
		return "a dict with " + strings.Join(s.Fields, ", ")
	}
	return "a " + s.Kind
}

// describeValue says what the inventory wrote: "a dict (dest_dir, enabled, source_dir)".
func describeValue(v *parser.Value) string {
	k := kindOf(v)
	if v.Kind == parser.KindMap && v.Map != nil && len(v.Map.Keys) > 0 {
		return "a dict (" + strings.Join(v.Map.Keys, ", ") + ")"
	}
	if k == "int" {
		return "an int"
	}
	return "a " + k
}

func (c *checkCtx) shapeFinding(u use) (Finding, bool) {
	s := c.cat.Shape(u.name)
	v := u.judge
	kind := kindOf(v)
	var problem string
	sev := SeverityError
	switch {
	case kind != s.Kind:
		problem = fmt.Sprintf("%s is %s; kubespray %s reads %s (%s)", u.name, describeValue(v), releaseName(c.cat), describe(s), s.Source)
	case kind == "list" && s.Elem != "" && s.Elem != "dict":
		for i, e := range v.List {
			ek := kindOf(e)
			if ek == "" {
				continue
			}
			if ek != s.Elem {
				problem = fmt.Sprintf("element %d of %s is %s; kubespray %s reads %s (%s)", i+1, u.name, describeValue(e), releaseName(c.cat), describe(s), s.Source)
				break
			}
		}
	}
	if problem == "" {
		return Finding{}, false
	}
	f := c.finding("variable-shape", sev, u)
	f.Message = problem
	f.Why = "kubespray's tasks and templates read the fields of this variable by name: another structure fails the run where it is read, or is silently ignored." + shapeChange(u.name, v, c.cat)
	f.Fix = fmt.Sprintf("write %s as %s", u.name, describe(s))
	return f, true
}

// shapeChange says which bundled release last read name in the
// structure v has, and which changed it.
func shapeChange(name string, v *parser.Value, cat *kubespray.Catalogue) string {
	hist := kubespray.ShapeHistory(name)
	kind := kindOf(v)
	last, changed := "", ""
	for i, h := range hist {
		if h.Shape.Kind == kind {
			last, changed = h.Version, ""
			if i+1 < len(hist) {
				changed = hist[i+1].Version
			}
			if h.Version == cat.Version {
				return ""
			}
		}
	}
	if last == "" || changed == "" {
		return ""
	}
	var was *kubespray.Shape
	for _, h := range hist {
		if h.Version == last {
			was = h.Shape
		}
	}
	return fmt.Sprintf(" kubespray read %s as %s up to %s (%s); %s changed it.", name, describe(was), last, was.Source, changed)
}

// itemFindings checks every item of a list kubespray reads as a list of
// dicts, and every element of the items' fields that are lists of dicts
// themselves: a string or number where a dict is expected is one finding
// each, with the path to the item (containerd_registries_mirrors[0].mirrors[2])
// and the field kubespray's loop reads of each item. Fields the catalogue
// does not list are not reported: kubespray's templates may read fields
// its shapes do not see (a field read through a filter or a macro).
func (c *checkCtx) itemFindings(u use) []Finding {
	s := c.cat.Shape(u.name)
	v := u.judge
	if s == nil || s.Kind != "list" || s.Elem != "dict" || kindOf(v) != "list" {
		return nil
	}
	var out []Finding
	var walk func(path string, l *parser.Value, s *kubespray.Shape, depth int)
	walk = func(path string, l *parser.Value, s *kubespray.Shape, depth int) {
		if depth > 20 {
			return
		}
		for i, e := range l.List {
			p := fmt.Sprintf("%s[%d]", path, i)
			switch kindOf(e) {
			case "":
				continue
			case "dict":
				for _, f := range sortedFields(s.Items) {
					x := e.Map.Get(f)
					if kindOf(x) == "list" {
						walk(p+"."+f, x, s.Items[f], depth+1)
					}
				}
				continue
			}
			field, read := itemRead(s)
			problem := fmt.Sprintf("%s is %s %s; kubespray %s reads each item of %s as a dict", p, describeValue(e), e.Display(), releaseName(c.cat), path)
			if read != "" {
				problem += fmt.Sprintf(": %s reads .%s of each item", read, field)
			} else {
				problem += fmt.Sprintf(" (%s, %s)", describe(s), s.Source)
			}
			f := c.finding("variable-shape", SeverityError, u)
			f.Value = e.Display()
			if e.Pos.Line > 0 && u.ours != nil && e.Pos.File == u.ours.Pos.File {
				f.Where = c.where(e.Pos)
			}
			f.Message = problem
			f.Why = fmt.Sprintf("kubespray's loop over %s reads the fields of each item by name (%s): a %s has none, and the run fails where the loop reads it.", path, describe(s), kindOf(e))
			f.Fix = fmt.Sprintf("write %s as a dict with %s", p, strings.Join(s.Fields, ", "))
			out = append(out, f)
		}
	}
	walk(u.name, v, s, 0)
	return out
}

// itemRead is the field kubespray's loop reads of each item of a list
// shaped s, and where: a task's loop first (it runs before the templates
// it renders), else the first line of the first template; "" when the
// shape has no reads.
func itemRead(s *kubespray.Shape) (field, read string) {
	before := func(a, b string) bool {
		at, bt := strings.Contains(a, "/tasks/"), strings.Contains(b, "/tasks/")
		if at != bt {
			return at
		}
		af, al, _ := strings.Cut(a, ":")
		bf, bl, _ := strings.Cut(b, ":")
		if af != bf {
			return af < bf
		}
		ai, _ := strconv.Atoi(al)
		bi, _ := strconv.Atoi(bl)
		return ai < bi
	}
	for _, f := range s.Fields {
		if r := s.Reads[f]; r != "" && (read == "" || before(r, read)) {
			field, read = f, r
		}
	}
	return field, read
}

func sortedFields(m map[string]*kubespray.Shape) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
