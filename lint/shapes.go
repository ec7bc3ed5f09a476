package lint

import (
	"fmt"
	"strings"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
)

func init() {
	registerRule("variable-shape", SeverityError,
		"a list or dict variable written in another structure than kubespray reads (kubeadm_patches as the old dict, upstream_dns_servers as a string, elements without the fields kubespray's tasks read), with the release that changed it",
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
	var groups byFirstSeen[*parser.Value, use]
	t := c.table
	keys := t.keysWhere(func(name string) bool { return c.cat.Shape(name) != nil })
	for i, h := range c.hosts {
		for _, name := range keys.of(i) {
			v, set := c.valueAt(i, name)
			if !set || kindOf(v) == "" {
				continue
			}
			u := groups.get(v, func() *use { return &use{name: name, ours: t.at(t.column(name), i), judge: v} })
			u.hosts = append(u.hosts, h)
		}
	}
	var out []Finding
	for _, u := range groups.list() {
		if f, ok := c.shapeFinding(u); ok {
			out = append(out, f)
		}
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
	case kind == "list" && s.Elem != "":
		for i, e := range v.List {
			ek := kindOf(e)
			if ek == "" {
				continue
			}
			if ek != s.Elem {
				problem = fmt.Sprintf("element %d of %s is %s; kubespray %s reads %s (%s)", i+1, u.name, describeValue(e), releaseName(c.cat), describe(s), s.Source)
				break
			}
			// Fields the catalogue does not list are not reported: its
			// shapes come from defaults and tasks, and templates read more
			// (crio_registries' insecure, blocked, mirrors in
			// registries.conf.j2), so an unlisted field may well be read.
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
