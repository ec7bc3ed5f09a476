package jinja

import (
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/parser/ansiblebool"
)

// Unknown is a value only a run would give: a fact, a variable a task
// sets, a filter or method not modelled. Why says which.
type Unknown struct{ Why string }

// Undefined is a variable nothing defines (Jinja's Undefined): `is
// defined` is false on it and `| default(x)` gives x. Key is true for a
// missing key or index of a value the inventory and the defaults give
// (etcd_supported_versions[kube_major_version]): used bare, Ansible fails
// the task, so the result is Failed.
type Undefined struct {
	Name string
	Key  bool
}

// Failed is an expression Ansible fails on (a missing key used bare):
// the task that evaluates it fails. Why says what.
type Failed struct{ Why string }

type undefinedV = Undefined

// Env gives an expression its variables.
type Env interface {
	// Lookup returns a variable's value (nil, bool, int64, float64,
	// string, []any, map[string]any, an Unknown or an Undefined). A
	// string holding Jinja is rendered by the evaluator.
	Lookup(name string) any
	// VarNames lists every variable defined for the host (query('varnames')).
	VarNames() []string
}

// Lenient is an Env that marks some of its maps as lenient: a missing
// key of those is a plain Undefined (unknown when used), not a failure,
// as for Ansible's groups where the lint's view of the groups a run
// creates may be short of the run's.
type Lenient interface {
	LenientMap(m map[string]any) bool
}

// missing is the value of a missing key k of map m.
func (e *evaluator) missing(m map[string]any, k string) any {
	if l, ok := e.env.(Lenient); ok && l.LenientMap(m) {
		return Undefined{Name: k}
	}
	return Undefined{Name: "key " + k, Key: true}
}

type evaluator struct {
	env    Env
	locals map[string]any
	depth  int
	active map[string]bool
}

// Eval evaluates n; locals (the loop's item) shadow env.
func Eval(n Node, env Env, locals map[string]any) any {
	e := &evaluator{env: env, locals: locals, active: map[string]bool{}}
	return e.value(n.eval(e))
}

// Truth is Python's truth of v: known is false for an Unknown or
// Undefined (Ansible fails a condition on an undefined variable).
func Truth(v any) (b, known bool) {
	switch x := v.(type) {
	case Unknown, Undefined, Failed:
		return false, false
	case nil:
		return false, true
	case bool:
		return x, true
	case int64:
		return x != 0, true
	case float64:
		return x != 0, true
	case string:
		return x != "", true
	case []any:
		return len(x) > 0, true
	case map[string]any:
		return len(x) > 0, true
	}
	return false, false
}

// Render renders a template string: a single {{ expr }} keeps its native
// value; text around expressions is concatenated; statements ({% %}) are
// Unknown.
func Render(s string, env Env) any {
	e := &evaluator{env: env, active: map[string]bool{}}
	return e.render(s)
}

func (e *evaluator) render(s string) any {
	if !strings.Contains(s, "{{") && !strings.Contains(s, "{%") {
		return s
	}
	if strings.Contains(s, "{#") {
		return Unknown{"a template with a Jinja comment"}
	}
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{{") && strings.HasSuffix(t, "}}") && strings.Count(t, "{{") == 1 && !strings.Contains(t, "{%") && t == s {
		n, err := Parse(t)
		if err != nil {
			return Unknown{"unparsed template: " + err.Error()}
		}
		return e.value(n.eval(e))
	}
	parts, err := splitTemplate(s)
	if err != nil {
		return Unknown{err.Error()}
	}
	var b strings.Builder
	if u := e.renderParts(parts, &b); u != nil {
		return u
	}
	out := b.String()
	// Ansible gives a rendered template that reads as a Python literal its
	// native type ("True", "42"); kubespray's templates render words.
	switch out {
	case "True":
		return true
	case "False":
		return false
	}
	return out
}

// part is a piece of a template: text, an expression ({{ }}) or a
// statement ({% if/elif/else/endif %}).
type part struct {
	kind string // text, expr, if, elif, else, endif
	text string
}

// splitTemplate cuts a template into parts, applying the whitespace
// control of {%- -%} and {{- -}}.
func splitTemplate(s string) ([]part, error) {
	var out []part
	rest := s
	trimNext := false
	for rest != "" {
		i := strings.IndexAny(rest, "{")
		for i >= 0 && i+1 < len(rest) && rest[i+1] != '{' && rest[i+1] != '%' {
			j := strings.IndexAny(rest[i+1:], "{")
			if j < 0 {
				i = -1
				break
			}
			i += j + 1
		}
		if i < 0 || i+1 >= len(rest) {
			text := rest
			if trimNext {
				text = strings.TrimLeft(text, " \t\r\n")
			}
			out = append(out, part{"text", text})
			break
		}
		text := rest[:i]
		if trimNext {
			text = strings.TrimLeft(text, " \t\r\n")
		}
		closer := "}}"
		if rest[i+1] == '%' {
			closer = "%}"
		}
		j := strings.Index(rest[i+2:], closer)
		if j < 0 {
			return nil, fmt.Errorf("unterminated %s", rest[i:i+2])
		}
		inner := rest[i+2 : i+2+j]
		if strings.HasPrefix(inner, "-") {
			text = strings.TrimRight(text, " \t\r\n")
			inner = inner[1:]
		}
		trimNext = strings.HasSuffix(inner, "-")
		inner = strings.TrimSpace(strings.TrimSuffix(inner, "-"))
		out = append(out, part{"text", text})
		if closer == "}}" {
			out = append(out, part{"expr", inner})
		} else {
			word, arg, _ := strings.Cut(inner, " ")
			switch word {
			case "if", "elif", "else", "endif":
				out = append(out, part{word, strings.TrimSpace(arg)})
			default:
				return nil, fmt.Errorf("a template with a {%% %s %%} statement", word)
			}
		}
		rest = rest[i+2+j+2:]
	}
	return out, nil
}

// renderParts renders parts into b; an Unknown or Undefined result ends it.
func (e *evaluator) renderParts(parts []part, b *strings.Builder) any {
	type frame struct{ active, taken, parent bool }
	stack := []frame{}
	active := true
	for _, p := range parts {
		switch p.kind {
		case "text":
			if active {
				b.WriteString(p.text)
			}
		case "expr":
			if !active {
				continue
			}
			n, err := Parse(p.text)
			if err != nil {
				return Unknown{"unparsed template: " + err.Error()}
			}
			v := e.value(n.eval(e))
			switch v.(type) {
			case Unknown, Undefined:
				if u, ok := bad(v); ok {
					return u
				}
			}
			b.WriteString(pyStr(v))
		case "if", "elif":
			if p.kind == "if" {
				stack = append(stack, frame{parent: active})
			}
			if len(stack) == 0 {
				return Unknown{"elif without if"}
			}
			f := &stack[len(stack)-1]
			if !f.parent || f.taken {
				active = false
				continue
			}
			n, err := Parse(p.text)
			if err != nil {
				return Unknown{"unparsed template: " + err.Error()}
			}
			t, known := Truth(n.eval(e))
			if !known {
				u, _ := bad(n.eval(e))
				return u
			}
			f.taken, active = t, t
		case "else":
			if len(stack) == 0 {
				return Unknown{"else without if"}
			}
			f := &stack[len(stack)-1]
			active = f.parent && !f.taken
			f.taken = true
		case "endif":
			if len(stack) == 0 {
				return Unknown{"endif without if"}
			}
			active = stack[len(stack)-1].parent
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return Unknown{"if without endif"}
	}
	return nil
}

// value renders the Jinja in strings of v (recursively), as Ansible does
// when a variable is read.
func (e *evaluator) value(v any) any {
	if e.depth > 40 {
		return Unknown{"templates nest too deeply"}
	}
	switch x := v.(type) {
	case string:
		if strings.Contains(x, "{{") || strings.Contains(x, "{%") {
			e.depth++
			defer func() { e.depth-- }()
			return e.render(x)
		}
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = e.value(x[i])
		}
		return out
	case map[string]any:
		if l, ok := e.env.(Lenient); ok && l.LenientMap(x) {
			return x // holds no templates; kept whole so that it stays lenient
		}
		out := make(map[string]any, len(x))
		for k, y := range x {
			out[k] = e.value(y)
		}
		return out
	}
	return v
}

func (n lit) eval(*evaluator) any { return n.v }

func (n name) eval(e *evaluator) any {
	if v, ok := e.locals[n.n]; ok {
		return e.value(v)
	}
	if e.active[n.n] {
		return Unknown{"recursive template in " + n.n}
	}
	e.active[n.n] = true
	defer delete(e.active, n.n)
	return e.value(e.env.Lookup(n.n))
}

func (n listN) eval(e *evaluator) any {
	out := make([]any, len(n.items))
	for i, it := range n.items {
		out[i] = it.eval(e)
		if u, ok := out[i].(Unknown); ok {
			return u
		}
	}
	return out
}

func (n dictN) eval(e *evaluator) any {
	out := map[string]any{}
	for i := range n.keys {
		k, ok := n.keys[i].eval(e).(string)
		if !ok {
			return Unknown{"a dict with a key that is not a string"}
		}
		out[k] = n.vals[i].eval(e)
	}
	return out
}

// bad is the value of an operation on an unknown or undefined operand, or
// one Jinja would raise on: Unknown (the lint does not guess).
func bad(vs ...any) (any, bool) {
	for _, v := range vs {
		if f, ok := v.(Failed); ok {
			return f, true
		}
	}
	for _, v := range vs {
		switch x := v.(type) {
		case Unknown:
			return x, true
		case Undefined:
			if x.Key {
				return Failed{"no " + x.Name}, true
			}
			return Unknown{"undefined variable " + x.Name}, true
		}
	}
	return nil, false
}

func (n unary) eval(e *evaluator) any {
	x := n.x.eval(e)
	if u, ok := bad(x); ok {
		return u
	}
	switch n.op {
	case "not":
		b, _ := Truth(x)
		return !b
	case "-":
		switch v := x.(type) {
		case int64:
			return -v
		case float64:
			return -v
		}
	}
	return Unknown{"unary " + n.op + " on " + typeName(x)}
}

func (n condN) eval(e *evaluator) any {
	t := n.test.eval(e)
	b, known := Truth(t)
	if !known {
		u, _ := bad(t)
		return u
	}
	if b {
		return n.yes.eval(e)
	}
	return n.no.eval(e)
}

func (n binary) eval(e *evaluator) any {
	switch n.op {
	case "and", "or":
		l := n.l.eval(e)
		if f, ok := l.(Failed); ok {
			return f
		}
		if u, ok := l.(Undefined); ok && u.Key {
			return Failed{"no " + u.Name}
		}
		lb, lk := Truth(l)
		if lk && (lb == (n.op == "or")) {
			return l
		}
		r := n.r.eval(e)
		if !lk {
			// unknown left: a known right that decides alone still decides
			if rb, rk := Truth(r); rk && rb == (n.op == "or") {
				return r
			}
			u, _ := bad(l)
			return u
		}
		return r
	}
	l, r := n.l.eval(e), n.r.eval(e)
	if u, ok := bad(l, r); ok {
		return u
	}
	switch n.op {
	case "==":
		return pyEqual(l, r)
	case "!=":
		return !pyEqual(l, r)
	case "in", "not in":
		in, ok := contains(r, l)
		if !ok {
			return Unknown{"in on " + typeName(r)}
		}
		return in == (n.op == "in")
	case "<", "<=", ">", ">=":
		c, ok := compare(l, r)
		if !ok {
			return Unknown{"comparing " + typeName(l) + " with " + typeName(r)}
		}
		switch n.op {
		case "<":
			return c < 0
		case "<=":
			return c <= 0
		case ">":
			return c > 0
		}
		return c >= 0
	case "~":
		return pyStr(l) + pyStr(r)
	}
	return arith(n.op, l, r)
}

func arith(op string, l, r any) any {
	if ls, ok := l.(string); ok && op == "+" {
		if rs, ok := r.(string); ok {
			return ls + rs
		}
	}
	if ll, ok := l.([]any); ok && op == "+" {
		if rl, ok := r.([]any); ok {
			return append(append([]any{}, ll...), rl...)
		}
	}
	li, lInt := asInt(l)
	ri, rInt := asInt(r)
	if lInt && rInt {
		switch op {
		case "+":
			return li + ri
		case "-":
			return li - ri
		case "*":
			return li * ri
		case "//":
			if ri == 0 {
				return Unknown{"division by zero"}
			}
			return int64(math.Floor(float64(li) / float64(ri)))
		case "%":
			if ri == 0 {
				return Unknown{"division by zero"}
			}
			m := li % ri
			if m != 0 && (m < 0) != (ri < 0) {
				m += ri
			}
			return m
		case "**":
			if ri >= 0 && ri < 63 {
				p := int64(1)
				for i := int64(0); i < ri; i++ {
					p *= li
				}
				return p
			}
			return math.Pow(float64(li), float64(ri))
		}
	}
	lf, lok := asFloat(l)
	rf, rok := asFloat(r)
	if !lok || !rok {
		return Unknown{op + " on " + typeName(l) + " and " + typeName(r)}
	}
	switch op {
	case "+":
		return lf + rf
	case "-":
		return lf - rf
	case "*":
		return lf * rf
	case "/":
		if rf == 0 {
			return Unknown{"division by zero"}
		}
		return lf / rf
	case "//":
		if rf == 0 {
			return Unknown{"division by zero"}
		}
		return math.Floor(lf / rf)
	case "%":
		if rf == 0 {
			return Unknown{"division by zero"}
		}
		return math.Mod(lf, rf)
	case "**":
		return math.Pow(lf, rf)
	}
	return Unknown{"operator " + op}
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func asFloat(v any) (float64, bool) {
	if i, ok := asInt(v); ok {
		return float64(i), true
	}
	f, ok := v.(float64)
	return f, ok
}

func pyEqual(a, b any) bool {
	as, aStr := a.(string)
	bs, bStr := b.(string)
	if aStr || bStr {
		return aStr && bStr && as == bs
	}
	if af, ok := asFloat(a); ok {
		bf, ok := asFloat(b)
		return ok && af == bf
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k := range x {
			if yv, ok := y[k]; !ok || !pyEqual(x[k], yv) {
				return false
			}
		}
		return true
	}
	return false
}

func compare(a, b any) (int, bool) {
	if as, ok := a.(string); ok {
		if bs, ok := b.(string); ok {
			return strings.Compare(as, bs), true
		}
		return 0, false
	}
	af, aok := asFloat(a)
	bf, bok := asFloat(b)
	if !aok || !bok {
		return 0, false
	}
	switch {
	case af < bf:
		return -1, true
	case af > bf:
		return 1, true
	}
	return 0, true
}

func contains(container, x any) (bool, bool) {
	switch c := container.(type) {
	case string:
		s, ok := x.(string)
		if !ok {
			return false, false
		}
		return strings.Contains(c, s), true
	case []any:
		for _, it := range c {
			if pyEqual(it, x) {
				return true, true
			}
		}
		return false, true
	case map[string]any:
		s, ok := x.(string)
		if !ok {
			return false, true
		}
		_, in := c[s]
		return in, true
	}
	return false, false
}

func (n attr) eval(e *evaluator) any {
	x := n.x.eval(e)
	if u, ok := bad(x); ok {
		return u
	}
	if m, ok := x.(map[string]any); ok {
		switch n.n {
		case "get", "keys", "values", "items":
			return method{x, n.n} // Jinja tries the attribute first
		}
		if v, ok := m[n.n]; ok {
			return e.value(v)
		}
		return e.missing(m, n.n)
	}
	if _, ok := x.(method); ok {
		return Unknown{"attribute of a method"}
	}
	return method{x, n.n}
}

// method is a bound method (groups.get, x.split) waiting for its call.
type method struct {
	recv any
	name string
}

func (n index) eval(e *evaluator) any {
	x, i := n.x.eval(e), n.i.eval(e)
	if u, ok := bad(x, i); ok {
		return u
	}
	switch c := x.(type) {
	case map[string]any:
		k, ok := i.(string)
		if !ok {
			return Undefined{Name: "key " + pyRepr(i), Key: true}
		}
		if v, ok := c[k]; ok {
			return e.value(v)
		}
		return e.missing(c, pyRepr(k))
	case []any:
		k, ok := asInt(i)
		if !ok {
			return Unknown{"list index " + typeName(i)}
		}
		if k < 0 {
			k += int64(len(c))
		}
		if k < 0 || k >= int64(len(c)) {
			return Undefined{Name: "index " + strconv.FormatInt(k, 10), Key: true}
		}
		return e.value(c[k])
	case string:
		k, ok := asInt(i)
		if !ok {
			return Unknown{"string index " + typeName(i)}
		}
		if k < 0 {
			k += int64(len(c))
		}
		if k < 0 || k >= int64(len(c)) {
			return Undefined{Name: "index " + strconv.FormatInt(k, 10), Key: true}
		}
		return string(c[k])
	}
	return Unknown{"subscript of " + typeName(x)}
}

func (n call) eval(e *evaluator) any {
	var args []any
	for _, a := range n.args {
		args = append(args, a.eval(e))
	}
	if nm, ok := n.fn.(name); ok {
		switch nm.n {
		case "query", "lookup", "q":
			if len(args) == 2 && args[0] == "varnames" {
				re, ok := args[1].(string)
				if !ok {
					return Unknown{"varnames with " + typeName(args[1])}
				}
				rx, err := regexp.Compile("^(?:" + re + ")")
				if err != nil {
					return Unknown{"varnames regex: " + err.Error()}
				}
				var out []any
				names := e.env.VarNames()
				sort.Strings(names)
				for _, v := range names {
					if rx.MatchString(v) {
						out = append(out, v)
					}
				}
				if nm.n == "lookup" {
					ss := make([]string, len(out))
					for i := range out {
						ss[i] = out[i].(string)
					}
					return strings.Join(ss, ",")
				}
				if out == nil {
					out = []any{}
				}
				return out
			}
			return Unknown{nm.n + "() of " + pyStr(args[0])}
		case "range":
			if len(args) == 1 {
				if k, ok := asInt(args[0]); ok && k >= 0 && k < 100000 {
					out := make([]any, k)
					for i := range out {
						out[i] = int64(i)
					}
					return out
				}
			}
		}
		return Unknown{"function " + nm.n + "()"}
	}
	f := n.fn.eval(e)
	if u, ok := bad(f); ok {
		return u
	}
	m, ok := f.(method)
	if !ok {
		return Unknown{"call of " + typeName(f)}
	}
	for _, a := range args {
		if u, ok := a.(Unknown); ok {
			return u
		}
	}
	switch r := m.recv.(type) {
	case map[string]any:
		switch m.name {
		case "get":
			if len(args) >= 1 {
				k, _ := args[0].(string)
				if v, ok := r[k]; ok {
					return e.value(v)
				}
				if len(args) == 2 {
					return args[1]
				}
				return nil
			}
		case "keys":
			ks := make([]string, 0, len(r))
			for k := range r {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			out := make([]any, len(ks))
			for i := range ks {
				out[i] = ks[i]
			}
			return out
		}
	case string:
		switch m.name {
		case "startswith", "endswith":
			if len(args) == 1 {
				p, ok := args[0].(string)
				if ok {
					if m.name == "startswith" {
						return strings.HasPrefix(r, p)
					}
					return strings.HasSuffix(r, p)
				}
			}
		case "split":
			var parts []string
			if len(args) == 0 {
				parts = strings.Fields(r)
			} else if sep, ok := args[0].(string); ok && sep != "" {
				parts = strings.Split(r, sep)
			}
			if parts != nil || len(args) == 0 {
				out := make([]any, len(parts))
				for i := range parts {
					out[i] = parts[i]
				}
				return out
			}
		case "lower":
			return strings.ToLower(r)
		case "upper":
			return strings.ToUpper(r)
		case "strip":
			return strings.TrimSpace(r)
		}
	}
	return Unknown{"method " + m.name + " of " + typeName(m.recv)}
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	case Undefined:
		return "AnsibleUndefined"
	}
	return "unknown"
}

// pyStr is Python's str() of v.
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e16 {
			return strconv.FormatFloat(x, 'f', 1, 64)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i := range x {
			parts[i] = pyRepr(x[i])
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		ks := make([]string, 0, len(x))
		for k := range x {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		parts := make([]string, len(ks))
		for i, k := range ks {
			parts[i] = pyRepr(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

func pyRepr(v any) string {
	if s, ok := v.(string); ok {
		return "'" + strings.ReplaceAll(s, "'", "\\'") + "'"
	}
	return pyStr(v)
}

func (n filter) eval(e *evaluator) any {
	x := n.x.eval(e)
	var args []any
	for _, a := range n.args {
		args = append(args, a.eval(e))
	}
	if n.n == "default" || n.n == "d" {
		boolean := false
		if b, ok := n.kwargs["boolean"]; ok {
			boolean, _ = Truth(b.eval(e))
		}
		if len(args) > 1 {
			boolean, _ = Truth(args[1])
		}
		def := any("")
		if len(args) > 0 {
			def = args[0]
		}
		switch x.(type) {
		case Undefined:
			return def
		case Unknown, Failed:
			return x
		}
		if t, _ := Truth(x); boolean && !t {
			return def
		}
		return x
	}
	if u, ok := bad(append([]any{x}, args...)...); ok {
		return u
	}
	return applyFilter(n.n, x, args)
}

func applyFilter(f string, x any, args []any) any {
	switch f {
	case "bool":
		// the same answer in every ansible-core series (None before 2.19
		// is false here, as a condition takes it)
		return ansiblebool.Filter(ansiblebool.Newest, x).Value
	case "int":
		switch v := x.(type) {
		case int64:
			return v
		case bool:
			i, _ := asInt(v)
			return i
		case float64:
			return int64(v)
		case string:
			s := strings.TrimSpace(v)
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i
			}
			if fl, err := strconv.ParseFloat(s, 64); err == nil {
				return int64(fl)
			}
		}
		if len(args) > 0 {
			return args[0]
		}
		return int64(0)
	case "string":
		return pyStr(x)
	case "lower":
		return strings.ToLower(pyStr(x))
	case "upper":
		return strings.ToUpper(pyStr(x))
	case "trim":
		return strings.TrimSpace(pyStr(x))
	case "length", "count":
		switch v := x.(type) {
		case string:
			return int64(len([]rune(v)))
		case []any:
			return int64(len(v))
		case map[string]any:
			return int64(len(v))
		}
		return Unknown{"length of " + typeName(x)}
	case "type_debug":
		return typeName(x)
	case "list":
		switch v := x.(type) {
		case []any:
			return v
		case string:
			out := make([]any, 0, len(v))
			for _, r := range v {
				out = append(out, string(r))
			}
			return out
		case map[string]any:
			return applyFilter("keys", v, nil)
		}
	case "first", "last":
		if l, ok := x.([]any); ok {
			if len(l) == 0 {
				return Undefined{Name: f + " of an empty list", Key: true}
			}
			if f == "first" {
				return l[0]
			}
			return l[len(l)-1]
		}
	case "split":
		if str, ok := x.(string); ok {
			sep := " "
			if len(args) > 0 {
				sep, _ = args[0].(string)
			}
			var parts []string
			if len(args) == 0 {
				parts = strings.Fields(str)
			} else if sep != "" {
				parts = strings.Split(str, sep)
			}
			out := make([]any, len(parts))
			for i := range parts {
				out[i] = parts[i]
			}
			return out
		}
	case "join":
		if l, ok := x.([]any); ok {
			sep := ""
			if len(args) > 0 {
				sep = pyStr(args[0])
			}
			parts := make([]string, len(l))
			for i := range l {
				parts[i] = pyStr(l[i])
			}
			return strings.Join(parts, sep)
		}
	case "sort":
		if l, ok := x.([]any); ok {
			out := append([]any{}, l...)
			okAll := true
			sort.SliceStable(out, func(i, j int) bool {
				c, ok := compare(out[i], out[j])
				okAll = okAll && ok
				return c < 0
			})
			if okAll {
				return out
			}
		}
	case "unique":
		if l, ok := x.([]any); ok {
			var out []any
			for _, it := range l {
				if in, _ := contains(out, it); !in {
					out = append(out, it)
				}
			}
			return out
		}
	case "intersect", "difference":
		l, ok1 := x.([]any)
		var r []any
		ok2 := len(args) == 1
		if ok2 {
			r, ok2 = args[0].([]any)
		}
		if ok1 && ok2 {
			out := []any{}
			for _, it := range l {
				in, _ := contains(r, it)
				if in == (f == "intersect") {
					if dup, _ := contains(out, it); !dup {
						out = append(out, it)
					}
				}
			}
			return out
		}
	case "ipaddr":
		return ipaddr(x, args)
	}
	return Unknown{"filter " + f}
}

// ipaddr models ansible.utils.ipaddr on one value for the queries
// kubespray's asserts use: 'net' (the network in CIDR form when the value
// is a network address with more than one address, else False), 'prefix'
// (the prefix length), ” and none (the value when it is an address or
// network), and a network (the value when inside it, else None).
func ipaddr(x any, args []any) any {
	s, ok := x.(string)
	if !ok {
		return false
	}
	p, err := parsePrefix(s)
	if err != nil {
		return false
	}
	q := ""
	if len(args) > 0 {
		q, ok = args[0].(string)
		if !ok {
			return Unknown{"ipaddr query " + typeName(args[0])}
		}
	}
	switch q {
	case "", "address":
		if q == "address" {
			return p.Addr().String()
		}
		return s
	case "net":
		if p.Addr() != p.Masked().Addr() || p.Bits() == p.Addr().BitLen() {
			return false
		}
		return p.String()
	case "prefix":
		return int64(p.Bits())
	}
	if n, err := parsePrefix(q); err == nil {
		if n.Addr().Is4() != p.Addr().Is4() {
			return nil
		}
		nm := n.Masked()
		if nm.Bits() <= p.Bits() && nm.Contains(p.Addr()) {
			return s
		}
		return nil
	}
	return Unknown{"ipaddr query " + q}
}

// parsePrefix reads an address or network as netaddr.IPNetwork does for
// the forms an inventory writes: "a.b.c.d/n", "a.b.c.d" (a /32), IPv6 too.
func parsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		return netip.ParsePrefix(s)
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func (n test) eval(e *evaluator) any {
	x := n.x.eval(e)
	var args []any
	for _, a := range n.args {
		args = append(args, a.eval(e))
	}
	r := applyTest(n.n, x, args)
	if b, ok := r.(bool); ok && n.neg {
		return !b
	}
	return r
}

func applyTest(t string, x any, args []any) any {
	switch t {
	case "defined", "undefined":
		switch x.(type) {
		case Undefined:
			return t == "undefined"
		case Unknown, Failed:
			return x
		}
		return t == "defined"
	}
	if u, ok := bad(append([]any{x}, args...)...); ok {
		return u
	}
	switch t {
	case "true", "false":
		b, ok := x.(bool)
		return ok && b == (t == "true")
	case "none":
		return x == nil
	case "string":
		_, ok := x.(string)
		return ok
	case "number":
		switch x.(type) {
		case int64, float64:
			return true
		}
		return false
	case "boolean":
		_, ok := x.(bool)
		return ok
	case "mapping":
		_, ok := x.(map[string]any)
		return ok
	case "divisibleby":
		if len(args) == 1 {
			a, ok1 := asInt(x)
			b, ok2 := asInt(args[0])
			if ok1 && ok2 && b != 0 {
				return a%b == 0
			}
		}
	case "version", "version_compare":
		if len(args) >= 1 {
			a, ok1 := x.(string)
			b, ok2 := args[0].(string)
			op := "eq"
			if len(args) > 1 {
				op, _ = args[1].(string)
			}
			if ok1 && ok2 {
				c, ok := looseCompare(a, b)
				if !ok {
					return Unknown{fmt.Sprintf("version %q against %q", a, b)}
				}
				switch op {
				case ">=", "ge":
					return c >= 0
				case ">", "gt":
					return c > 0
				case "<=", "le":
					return c <= 0
				case "<", "lt":
					return c < 0
				case "==", "=", "eq":
					return c == 0
				case "!=", "<>", "ne":
					return c != 0
				}
			}
		}
	case "match", "search", "regex":
		if len(args) >= 1 {
			s, ok1 := x.(string)
			re, ok2 := args[0].(string)
			if ok1 && ok2 {
				if t == "match" {
					re = "^(?:" + re + ")"
				}
				rx, err := regexp.Compile(re)
				if err != nil {
					return Unknown{"regex: " + err.Error()}
				}
				return rx.MatchString(s)
			}
		}
	case "in":
		if len(args) == 1 {
			in, ok := contains(args[0], x)
			if ok {
				return in
			}
		}
	}
	return Unknown{"test " + t}
}

var looseRE = regexp.MustCompile(`\d+|[a-z]+|\.`)

// looseCompare is distutils' LooseVersion comparison (Ansible's default
// version_type): components of digits compare as numbers, letters as
// strings; a number against a string cannot be compared (Python 3 raises).
func looseCompare(a, b string) (int, bool) {
	split := func(s string) []string {
		var out []string
		for _, p := range looseRE.FindAllString(strings.ToLower(s), -1) {
			if p != "." {
				out = append(out, p)
			}
		}
		return out
	}
	pa, pb := split(a), split(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		na, ea := strconv.ParseInt(pa[i], 10, 64)
		nb, eb := strconv.ParseInt(pb[i], 10, 64)
		switch {
		case ea == nil && eb == nil:
			if na != nb {
				if na < nb {
					return -1, true
				}
				return 1, true
			}
		case ea != nil && eb != nil:
			if c := strings.Compare(pa[i], pb[i]); c != 0 {
				return c, true
			}
		default:
			return 0, false
		}
	}
	switch {
	case len(pa) < len(pb):
		return -1, true
	case len(pa) > len(pb):
		return 1, true
	}
	return 0, true
}

func (n slice) eval(e *evaluator) any {
	x := n.x.eval(e)
	bound := func(b Node, def int, size int) (int, bool) {
		if b == nil {
			return def, true
		}
		v, ok := asInt(b.eval(e))
		if !ok {
			return 0, false
		}
		i := int(v)
		if i < 0 {
			i += size
		}
		return min(max(i, 0), size), true
	}
	switch c := x.(type) {
	case []any:
		lo, ok1 := bound(n.lo, 0, len(c))
		hi, ok2 := bound(n.hi, len(c), len(c))
		if !ok1 || !ok2 {
			return Unknown{"a slice bound that is not an int"}
		}
		if lo >= hi {
			return []any{}
		}
		return append([]any{}, c[lo:hi]...)
	case string:
		lo, ok1 := bound(n.lo, 0, len(c))
		hi, ok2 := bound(n.hi, len(c), len(c))
		if !ok1 || !ok2 {
			return Unknown{"a slice bound that is not an int"}
		}
		if lo >= hi {
			return ""
		}
		return c[lo:hi]
	}
	if u, ok := bad(x); ok {
		return u
	}
	return Unknown{"slice of " + typeName(x)}
}
