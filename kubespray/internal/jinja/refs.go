package jinja

// Ref is something an expression reads: a variable ("name"; Guarded when
// directly under `is defined`, `is undefined` or `| default`, where an
// unset variable is a value), a variable's attribute or key ("attr": Name
// the variable, Attr the key), or a "filter", "test", "method" or
// "function" by name.
type Ref struct {
	Kind, Name, Attr string
	Guarded          bool
}

// Refs lists what n reads, in order.
func Refs(n Node) []Ref {
	var out []Ref
	var walk func(n Node, guarded bool)
	// walkArgs walks a call's, filter's or test's arguments.
	walkArgs := func(args []Node, kwargs map[string]Node) {
		for _, a := range args {
			walk(a, false)
		}
		for _, a := range kwargs {
			walk(a, false)
		}
	}
	walk = func(n Node, guarded bool) {
		switch x := n.(type) {
		case name:
			out = append(out, Ref{Kind: "name", Name: x.n, Guarded: guarded})
		case listN:
			for _, it := range x.items {
				walk(it, false)
			}
		case dictN:
			for i := range x.keys {
				walk(x.keys[i], false)
				walk(x.vals[i], false)
			}
		case unary:
			walk(x.x, false)
		case binary:
			walk(x.l, false)
			walk(x.r, false)
		case condN:
			walk(x.test, false)
			walk(x.yes, false)
			walk(x.no, false)
		case attr:
			if nm, ok := x.x.(name); ok {
				out = append(out, Ref{Kind: "attr", Name: nm.n, Attr: x.n})
			}
			walk(x.x, false)
		case index:
			if nm, ok := x.x.(name); ok {
				if l, ok := x.i.(lit); ok {
					if s, ok := l.v.(string); ok {
						out = append(out, Ref{Kind: "attr", Name: nm.n, Attr: s})
					}
				}
			}
			walk(x.x, false)
			walk(x.i, false)
		case slice:
			walk(x.x, false)
			if x.lo != nil {
				walk(x.lo, false)
			}
			if x.hi != nil {
				walk(x.hi, false)
			}
		case call:
			switch f := x.fn.(type) {
			case name:
				out = append(out, Ref{Kind: "function", Name: f.n})
			case attr:
				out = append(out, Ref{Kind: "method", Name: f.n})
				walk(f.x, false)
			default:
				walk(x.fn, false)
			}
			walkArgs(x.args, x.kwargs)
		case filter:
			out = append(out, Ref{Kind: "filter", Name: x.n})
			walk(x.x, x.n == "default" || x.n == "d")
			walkArgs(x.args, x.kwargs)
		case test:
			out = append(out, Ref{Kind: "test", Name: x.n})
			walk(x.x, x.n == "defined" || x.n == "undefined")
			walkArgs(x.args, nil)
		}
	}
	walk(n, false)
	return out
}

var supported = map[string]map[string]bool{
	"filter": set("default", "d", "bool", "int", "string", "lower", "upper", "trim", "length", "count", "type_debug",
		"list", "first", "last", "split", "join", "sort", "unique", "intersect", "difference", "ipaddr"),
	"test": set("true", "false", "defined", "undefined", "none", "string", "number", "boolean", "mapping", "divisibleby",
		"version", "version_compare", "match", "search", "regex", "in"),
	"method":   set("get", "keys", "startswith", "endswith", "split", "lower", "upper", "strip"),
	"function": set("query", "lookup", "q", "range"),
}

func set(ss ...string) map[string]bool {
	m := map[string]bool{}
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// Supported reports whether the evaluator models a filter, test, method
// or function of that name (a method only on the receivers it knows).
func Supported(kind, name string) bool { return supported[kind][name] }

// TemplateExprs lists the expressions of a template string: those of
// its {{ }} and the conditions of its {% if %} and {% elif %}; another
// statement is returned as is, which Parse rejects.
func TemplateExprs(s string) []string {
	parts, err := splitTemplate(s)
	if err != nil {
		return []string{"{% " + err.Error() + " %}"}
	}
	var out []string
	for _, p := range parts {
		switch p.kind {
		case "expr", "if", "elif":
			out = append(out, p.text)
		}
	}
	return out
}
