package scan

import (
	"regexp"
	"strings"
)

// IsTemplated reports whether s holds Jinja ("{{", "{%" or "{#"), as
// Ansible's templar decides whether to render a string.
func IsTemplated(s string) bool {
	return strings.Contains(s, "{{") || strings.Contains(s, "{%") || strings.Contains(s, "{#")
}

// soleExpression returns the expression of a default that is exactly one
// "{{ expr }}" (whitespace around it allowed), or false.
func soleExpression(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{{") || !strings.HasSuffix(t, "}}") {
		return "", false
	}
	inner := t[2 : len(t)-2]
	inner = strings.TrimPrefix(inner, "-")
	inner = strings.TrimSuffix(inner, "-")
	if strings.Contains(inner, "{{") || strings.Contains(inner, "}}") || strings.Contains(inner, "{%") {
		return "", false
	}
	return strings.TrimSpace(inner), true
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// InferBool reports whether a templated default renders to a Python bool
// whatever its inputs, judged from the Jinja expression's top level:
//   - a comparison (==, !=, <, <=, >, >=), a membership test (in, not in),
//     a Jinja test (is defined, is not none, is version(...)) or a "not";
//   - a filter chain ending in "| bool", or "| ternary(true, false)" with
//     both branches boolean literals;
//   - "a and b" / "a or b" when every operand is itself boolean (Jinja's
//     and/or return an operand, not a bool);
//   - "x if c else y" with both branches boolean;
//   - the literals true/false/True/False;
//   - a bare variable name kind says is a bool (kubespray's
//     "{{ other_bool }}" aliases);
//   - "x | default(true)" / "x | default(false)" where x is a bool or a
//     name kubespray does not define (so the default applies), e.g.
//     ipv6_stack: "{{ enable_dual_stack_networks | default(false) }}".
//
// Strings mixing text and Jinja, or several {{ }} blocks, or {% %}
// statements are never inferred (their result is a str). kind may be nil.
func InferBool(def string, kind KindOf) bool {
	expr, ok := soleExpression(def)
	if !ok {
		return false
	}
	if kind == nil {
		kind = func(string) VarKind { return KindOther }
	}
	return boolExpr(expr, kind, 0)
}

// VarKind is what the catalogue knows of a variable a template names.
type VarKind int

// Kinds of a referenced variable.
const (
	KindUndefined VarKind = iota // kubespray does not define it
	KindBool                     // a bool (literal or inferred) somewhere
	KindOther                    // defined, not known to be a bool
)

// KindOf tells InferBool what a referenced variable is.
type KindOf func(name string) VarKind

// InferStringBool reports whether a templated default renders to a str
// spelling a boolean whatever its inputs: "{{ 'true' if c else 'false' }}",
// or a boolean expression piped to | lower or | string. kubespray means
// such a value as a string, like a literal "false".
func InferStringBool(def string, kind KindOf) bool {
	e, ok := soleExpression(def)
	if !ok {
		return false
	}
	if kind == nil {
		kind = func(string) VarKind { return KindOther }
	}
	return stringBoolExpr(strings.TrimSpace(e), kind)
}

func stringBoolExpr(e string, kind KindOf) bool {
	for {
		inner, ok := stripParens(e)
		if !ok {
			break
		}
		e = strings.TrimSpace(inner)
	}
	if parts := splitTop(e, " if "); len(parts) > 1 {
		alt := splitTop(strings.Join(parts[1:], " if "), " else ")
		if len(alt) < 2 {
			return false
		}
		return stringBoolExpr(strings.TrimSpace(parts[0]), kind) && stringBoolExpr(strings.TrimSpace(strings.Join(alt[1:], " else ")), kind)
	}
	if q, ok := quoted(e); ok {
		return SpellsBool(q)
	}
	if parts := splitTop(e, "|"); len(parts) > 1 {
		last := strings.TrimSpace(parts[len(parts)-1])
		if last == "lower" || last == "string" || last == "upper" {
			return boolExpr(strings.Join(parts[:len(parts)-1], "|"), kind, 0)
		}
	}
	return false
}

// quoted returns the content of a Jinja string literal that is all of e.
func quoted(e string) (string, bool) {
	if len(e) < 2 || (e[0] != '\'' && e[0] != '"') || e[len(e)-1] != e[0] {
		return "", false
	}
	inner := e[1 : len(e)-1]
	if strings.ContainsAny(inner, "'\"\\") {
		return "", false
	}
	return inner, true
}

func boolExpr(e string, kind KindOf, depth int) bool {
	if depth > 50 {
		return false
	}
	e = strings.TrimSpace(e)
	for {
		inner, ok := stripParens(e)
		if !ok {
			break
		}
		e = inner
	}
	if e == "" {
		return false
	}
	// Conditional expression: A if C else B (lowest precedence).
	// "A if C1 else B if C2 else D" nests to the right.
	if parts := splitTop(e, " if "); len(parts) > 1 {
		then := parts[0]
		rest := strings.Join(parts[1:], " if ")
		alt := splitTop(rest, " else ")
		if len(alt) < 2 {
			return false // no else: undefined when the condition is false
		}
		return boolExpr(then, kind, depth+1) && boolExpr(strings.Join(alt[1:], " else "), kind, depth+1)
	}
	for _, op := range []string{" or ", " and "} {
		if parts := splitTop(e, op); len(parts) > 1 {
			for _, p := range parts {
				if !boolExpr(p, kind, depth+1) {
					return false
				}
			}
			return true
		}
	}
	if strings.HasPrefix(e, "not ") || strings.HasPrefix(e, "not(") {
		return true
	}
	for _, op := range []string{"==", "!=", "<=", ">=", "<", ">", " in ", " not in "} {
		if len(splitTop(e, op)) > 1 {
			return true
		}
	}
	// Arithmetic and concatenation bind looser than filters and tests.
	for _, op := range []string{"~", "+", " - ", "*", "/", "%"} {
		if len(splitTop(e, op)) > 1 {
			return false
		}
	}
	if len(splitTop(e, " is ")) > 1 {
		return true
	}
	if parts := splitTop(e, "|"); len(parts) > 1 {
		last := strings.TrimSpace(parts[len(parts)-1])
		name, args := last, ""
		if i := strings.IndexByte(last, '('); i >= 0 {
			name, args = strings.TrimSpace(last[:i]), last[i:]
		}
		switch name {
		case "bool":
			return args == ""
		case "default", "d":
			inner, ok := stripParens(args)
			if !ok {
				return false
			}
			dargs := splitTop(inner, ",")
			if !isBoolLiteral(strings.TrimSpace(dargs[0])) {
				return false
			}
			base := strings.TrimSpace(strings.Join(parts[:len(parts)-1], "|"))
			if identRE.MatchString(base) && kind(base) == KindUndefined {
				return true
			}
			return boolExpr(base, kind, depth+1)
		case "ternary":
			inner, ok := stripParens(args)
			if !ok {
				return false
			}
			branches := splitTop(inner, ",")
			if len(branches) < 2 {
				return false
			}
			for _, b := range branches[:2] {
				if !isBoolLiteral(strings.TrimSpace(b)) {
					return false
				}
			}
			return true
		}
		return false
	}
	if isBoolLiteral(e) {
		return true
	}
	if identRE.MatchString(e) {
		return kind(e) == KindBool
	}
	return false
}

func isBoolLiteral(s string) bool {
	switch s {
	case "true", "false", "True", "False":
		return true
	}
	return false
}

// stripParens removes one pair of parentheses enclosing all of e.
func stripParens(e string) (string, bool) {
	if len(e) < 2 || e[0] != '(' || e[len(e)-1] != ')' {
		return "", false
	}
	var l exprLexer
	for i := 0; i < len(e); i++ {
		inString := l.quote != 0
		j, _ := l.next(e, i)
		if !inString && strings.IndexByte(")]}", e[i]) >= 0 && l.depth == 0 && i != len(e)-1 {
			return "", false
		}
		i = j
	}
	return e[1 : len(e)-1], true
}

// exprLexer follows an expression byte by byte: its string literals
// (quoted with ' or ", a backslash escaping the next byte) and its
// bracket depth.
type exprLexer struct {
	depth int
	quote byte
}

// next reads e[i] and returns the index of the last byte it took (i + 1
// after a backslash in a string literal) and whether e[i] is code: outside
// string literals and neither a quote nor a bracket.
func (l *exprLexer) next(e string, i int) (int, bool) {
	c := e[i]
	if l.quote != 0 {
		if c == '\\' {
			i++
		} else if c == l.quote {
			l.quote = 0
		}
		return i, false
	}
	switch c {
	case '\'', '"':
		l.quote = c
		return i, false
	case '(', '[', '{':
		l.depth++
		return i, false
	case ')', ']', '}':
		l.depth--
		return i, false
	}
	return i, true
}

// splitTop splits e at op where op is outside quotes and brackets. Word
// operators (" in ", " is ") must be surrounded by spaces in op; symbol
// operators are matched so that "==" is not read as "=" twice, "<=" is not
// "<", and "|" is not part of "||".
func splitTop(e, op string) []string {
	var parts []string
	var l exprLexer
	start := 0
	for i := 0; i < len(e); i++ {
		var code bool
		if i, code = l.next(e, i); !code {
			continue
		}
		if l.depth != 0 || !strings.HasPrefix(e[i:], op) {
			continue
		}
		if !opBoundary(e, i, op) {
			continue
		}
		// " not in " also contains " in ": let the caller's longer op win.
		if op == " in " && i >= 4 && e[i-4:i] == " not" {
			continue
		}
		parts = append(parts, e[start:i])
		i += len(op) - 1
		start = i + 1
	}
	if parts == nil {
		return []string{e}
	}
	return append(parts, e[start:])
}

func opBoundary(e string, i int, op string) bool {
	prev := byte(0)
	if i > 0 {
		prev = e[i-1]
	}
	next := byte(0)
	if j := i + len(op); j < len(e) {
		next = e[j]
	}
	switch op {
	case "<", ">":
		return next != '=' && prev != op[0] && next != op[0]
	case "==", "!=", "<=", ">=":
		return true
	case "*", "/":
		return prev != op[0] && next != op[0]
	case "|":
		return prev != '|' && next != '|'
	case "+", "-", "%":
		return true
	}
	return true
}
