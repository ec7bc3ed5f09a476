// Package jinja parses and evaluates the Jinja expressions kubespray's
// asserts and when: conditions are written in, with three-valued results:
// a value the inventory alone cannot give (a fact, a variable a task sets,
// a filter not modelled) evaluates to Unknown instead of a guess.
//
// The grammar is Jinja2's (jinja2/parser.py) for expressions: conditional
// expressions, or/and/not, comparisons (== != < <= > >= in, not in),
// ~ + - * / // % **, unary minus, filters (|) and tests (is, is not) bound
// tighter than arithmetic, attribute, subscript and call postfixes, and
// literals (strings, numbers, true/false/none in either case, lists,
// tuples, dicts).
package jinja

import (
	"fmt"
	"strconv"
	"strings"
)

// Node is a parsed expression.
type Node interface{ eval(e *evaluator) any }

type (
	lit   struct{ v any }
	name  struct{ n string }
	listN struct{ items []Node }
	dictN struct{ keys, vals []Node }
	unary struct {
		op string
		x  Node
	}
	binary struct {
		op   string
		l, r Node
	}
	condN struct{ test, yes, no Node }
	attr  struct {
		x Node
		n string
	}
	index struct{ x, i Node }
	slice struct{ x, lo, hi Node }
	call  struct {
		fn     Node
		args   []Node
		kwargs map[string]Node
	}
	filter struct {
		x      Node
		n      string
		args   []Node
		kwargs map[string]Node
	}
	test struct {
		x    Node
		n    string
		args []Node
		neg  bool
	}
)

type token struct {
	kind string // name, str, int, float, op, eof
	s    string
	v    any
}

func lex(src string) ([]token, error) {
	var out []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			out = append(out, token{kind: "name", s: src[i:j]})
			i = j
		case c >= '0' && c <= '9':
			j := i
			isFloat := false
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '_' || src[j] == '.' && !isFloat && j+1 < len(src) && src[j+1] >= '0' && src[j+1] <= '9') {
				if src[j] == '.' {
					isFloat = true
				}
				j++
			}
			text := strings.ReplaceAll(src[i:j], "_", "")
			if isFloat {
				f, err := strconv.ParseFloat(text, 64)
				if err != nil {
					return nil, err
				}
				out = append(out, token{kind: "float", s: text, v: f})
			} else {
				n, err := strconv.ParseInt(text, 10, 64)
				if err != nil {
					return nil, err
				}
				out = append(out, token{kind: "int", s: text, v: n})
			}
			i = j
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(src) && src[j] != c; j++ {
				if src[j] == '\\' && j+1 < len(src) {
					j++
					switch src[j] {
					case 'n':
						b.WriteByte('\n')
					case 't':
						b.WriteByte('\t')
					case '\\', '\'', '"':
						b.WriteByte(src[j])
					default:
						b.WriteByte('\\')
						b.WriteByte(src[j])
					}
					continue
				}
				b.WriteByte(src[j])
			}
			if j >= len(src) {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			out = append(out, token{kind: "str", s: b.String(), v: b.String()})
			i = j + 1
		default:
			ops := []string{"**", "//", "==", "!=", "<=", ">=", "(", ")", "[", "]", "{", "}", ",", ".", ":", "|", "~", "+", "-", "*", "/", "%", "<", ">", "="}
			found := ""
			for _, o := range ops {
				if strings.HasPrefix(src[i:], o) {
					found = o
					break
				}
			}
			if found == "" {
				return nil, fmt.Errorf("unexpected %q at %d", c, i)
			}
			out = append(out, token{kind: "op", s: found})
			i += len(found)
		}
	}
	return append(out, token{kind: "eof"}), nil
}

type parser struct {
	toks []token
	pos  int
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token { t := p.toks[p.pos]; p.pos++; return t }
func (p *parser) isOp(s string) bool {
	t := p.peek()
	return t.kind == "op" && t.s == s
}
func (p *parser) isName(s string) bool {
	t := p.peek()
	return t.kind == "name" && t.s == s
}
func (p *parser) expect(s string) error {
	if !p.isOp(s) {
		return fmt.Errorf("expected %q, found %q", s, p.peek().s)
	}
	p.pos++
	return nil
}

// Parse parses one Jinja expression; a string wrapped in {{ }} as a whole
// is unwrapped (kubespray writes some that: items so).
func Parse(src string) (Node, error) {
	s := strings.TrimSpace(src)
	if strings.HasPrefix(s, "{{") && strings.HasSuffix(s, "}}") && strings.Count(s, "{{") == 1 {
		s = strings.TrimSpace(s[2 : len(s)-2])
	}
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	n, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != "eof" {
		return nil, fmt.Errorf("unexpected %q after the expression", p.peek().s)
	}
	return n, nil
}

func (p *parser) expr() (Node, error) {
	x, err := p.or()
	if err != nil {
		return nil, err
	}
	for p.isName("if") {
		p.next()
		t, err := p.or()
		if err != nil {
			return nil, err
		}
		var no Node = lit{undefinedV{Name: "else"}}
		if p.isName("else") {
			p.next()
			if no, err = p.expr(); err != nil {
				return nil, err
			}
		}
		x = condN{t, x, no}
	}
	return x, nil
}

func (p *parser) or() (Node, error) {
	x, err := p.and()
	for err == nil && p.isName("or") {
		p.next()
		var r Node
		r, err = p.and()
		x = binary{"or", x, r}
	}
	return x, err
}

func (p *parser) and() (Node, error) {
	x, err := p.not()
	for err == nil && p.isName("and") {
		p.next()
		var r Node
		r, err = p.not()
		x = binary{"and", x, r}
	}
	return x, err
}

func (p *parser) not() (Node, error) {
	if p.isName("not") {
		p.next()
		x, err := p.not()
		return unary{"not", x}, err
	}
	return p.compare()
}

func (p *parser) compare() (Node, error) {
	x, err := p.concat()
	for err == nil {
		t := p.peek()
		var op string
		switch {
		case t.kind == "op" && (t.s == "==" || t.s == "!=" || t.s == "<" || t.s == "<=" || t.s == ">" || t.s == ">="):
			op = t.s
			p.next()
		case t.kind == "name" && t.s == "in":
			op = "in"
			p.next()
		case t.kind == "name" && t.s == "not" && p.toks[p.pos+1].kind == "name" && p.toks[p.pos+1].s == "in":
			op = "not in"
			p.pos += 2
		default:
			return x, nil
		}
		var r Node
		r, err = p.concat()
		x = binary{op, x, r}
	}
	return x, err
}

func (p *parser) concat() (Node, error) {
	x, err := p.math1()
	for err == nil && p.isOp("~") {
		p.next()
		var r Node
		r, err = p.math1()
		x = binary{"~", x, r}
	}
	return x, err
}

func (p *parser) math1() (Node, error) {
	x, err := p.math2()
	for err == nil && (p.isOp("+") || p.isOp("-")) {
		op := p.next().s
		var r Node
		r, err = p.math2()
		x = binary{op, x, r}
	}
	return x, err
}

func (p *parser) math2() (Node, error) {
	x, err := p.pow()
	for err == nil && (p.isOp("*") || p.isOp("/") || p.isOp("//") || p.isOp("%")) {
		op := p.next().s
		var r Node
		r, err = p.pow()
		x = binary{op, x, r}
	}
	return x, err
}

func (p *parser) pow() (Node, error) {
	x, err := p.unary()
	for err == nil && p.isOp("**") {
		p.next()
		var r Node
		r, err = p.unary()
		x = binary{"**", x, r}
	}
	return x, err
}

func (p *parser) unary() (Node, error) {
	if p.isOp("-") || p.isOp("+") {
		op := p.next().s
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		if op == "-" {
			return unary{"-", x}, nil
		}
		return x, nil
	}
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	if x, err = p.postfix(x); err != nil {
		return nil, err
	}
	return p.filters(x)
}

func (p *parser) primary() (Node, error) {
	t := p.next()
	switch t.kind {
	case "str":
		s := t.s
		for p.peek().kind == "str" { // adjacent literals concatenate
			s += p.next().s
		}
		return lit{s}, nil
	case "int", "float":
		return lit{t.v}, nil
	case "name":
		switch t.s {
		case "true", "True":
			return lit{true}, nil
		case "false", "False":
			return lit{false}, nil
		case "none", "None":
			return lit{nil}, nil
		}
		return name{t.s}, nil
	case "op":
		switch t.s {
		case "(":
			if p.isOp(")") {
				p.next()
				return listN{}, nil
			}
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			if p.isOp(",") { // a tuple
				items := []Node{x}
				for p.isOp(",") {
					p.next()
					if p.isOp(")") {
						break
					}
					y, err := p.expr()
					if err != nil {
						return nil, err
					}
					items = append(items, y)
				}
				x = listN{items}
			}
			return x, p.expect(")")
		case "[":
			var items []Node
			for !p.isOp("]") {
				x, err := p.expr()
				if err != nil {
					return nil, err
				}
				items = append(items, x)
				if !p.isOp(",") {
					break
				}
				p.next()
			}
			return listN{items}, p.expect("]")
		case "{":
			d := dictN{}
			for !p.isOp("}") {
				k, err := p.expr()
				if err != nil {
					return nil, err
				}
				if err := p.expect(":"); err != nil {
					return nil, err
				}
				v, err := p.expr()
				if err != nil {
					return nil, err
				}
				d.keys, d.vals = append(d.keys, k), append(d.vals, v)
				if !p.isOp(",") {
					break
				}
				p.next()
			}
			return d, p.expect("}")
		}
	}
	return nil, fmt.Errorf("unexpected %q", t.s)
}

func (p *parser) postfix(x Node) (Node, error) {
	for {
		switch {
		case p.isOp("."):
			p.next()
			t := p.next()
			if t.kind != "name" && t.kind != "int" {
				return nil, fmt.Errorf("expected an attribute after '.', found %q", t.s)
			}
			x = attr{x, t.s}
		case p.isOp("["):
			p.next()
			var lo, hi Node
			var err error
			if !p.isOp(":") {
				if lo, err = p.expr(); err != nil {
					return nil, err
				}
			}
			if p.isOp(":") { // a slice x[lo:hi]
				p.next()
				if !p.isOp("]") {
					if hi, err = p.expr(); err != nil {
						return nil, err
					}
				}
				if err := p.expect("]"); err != nil {
					return nil, err
				}
				x = slice{x, lo, hi}
				continue
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			x = index{x, lo}
		case p.isOp("("):
			args, kw, err := p.args()
			if err != nil {
				return nil, err
			}
			x = call{x, args, kw}
		default:
			return x, nil
		}
	}
}

func (p *parser) args() ([]Node, map[string]Node, error) {
	if err := p.expect("("); err != nil {
		return nil, nil, err
	}
	var args []Node
	kw := map[string]Node{}
	for !p.isOp(")") {
		if p.peek().kind == "name" && p.toks[p.pos+1].kind == "op" && p.toks[p.pos+1].s == "=" {
			k := p.next().s
			p.next()
			v, err := p.expr()
			if err != nil {
				return nil, nil, err
			}
			kw[k] = v
		} else {
			v, err := p.expr()
			if err != nil {
				return nil, nil, err
			}
			args = append(args, v)
		}
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	return args, kw, p.expect(")")
}

// filters parses the | filters and is tests following x.
func (p *parser) filters(x Node) (Node, error) {
	for {
		switch {
		case p.isOp("|"):
			p.next()
			n, err := p.dottedName()
			if err != nil {
				return nil, err
			}
			f := filter{x: x, n: n}
			if p.isOp("(") {
				if f.args, f.kwargs, err = p.args(); err != nil {
					return nil, err
				}
			}
			x = f
		case p.isName("is"):
			p.next()
			t := test{x: x}
			if p.isName("not") {
				p.next()
				t.neg = true
			}
			n, err := p.dottedName()
			if err != nil {
				return nil, err
			}
			t.n = n
			nt := p.peek()
			switch {
			case p.isOp("("):
				if t.args, _, err = p.args(); err != nil {
					return nil, err
				}
			case nt.kind == "str" || nt.kind == "int" || nt.kind == "float" ||
				nt.kind == "name" && nt.s != "else" && nt.s != "or" && nt.s != "and" && nt.s != "if" && nt.s != "is" && nt.s != "not" && nt.s != "in":
				a, err := p.primary()
				if err != nil {
					return nil, err
				}
				if a, err = p.postfix(a); err != nil {
					return nil, err
				}
				t.args = []Node{a}
			}
			x = t
		default:
			return x, nil
		}
	}
}

// dottedName reads a filter or test name, FQCN included
// (ansible.utils.ipaddr); the collection prefix is dropped.
func (p *parser) dottedName() (string, error) {
	t := p.next()
	if t.kind != "name" {
		return "", fmt.Errorf("expected a name after | or is, found %q", t.s)
	}
	n := t.s
	for p.isOp(".") && p.toks[p.pos+1].kind == "name" {
		p.next()
		n = p.next().s
	}
	return n, nil
}
