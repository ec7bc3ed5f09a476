package parser

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/runenames"
)

// This file is a faithful subset of Python's ast.literal_eval, which
// ansible-core's INI inventory plugin (_parse_value) applies to every value:
// str/bytes literals (with prefixes, escapes, implicit concatenation),
// int (decimal, 0x, 0o, 0b, "_" separators), float, complex, True, False,
// None, tuples, lists, dicts, sets, set(), one unary +/- on a number, and
// real+imaginary sums. Anything else is not a literal and the plugin keeps
// the text as a str.

// pyKind is the Python type of a literal_eval result.
type pyKind uint8

const (
	pyNone pyKind = iota
	pyBool
	pyInt
	pyFloat
	pyComplex
	pyStr
	pyBytes
	pyEllipsis
	pyTuple
	pyList
	pySet
	pyDict
)

type pyVal struct {
	kind  pyKind
	b     bool
	i     *big.Int
	f     float64 // float, or the real part of a complex
	imag  float64
	s     string
	items []*pyVal
	keys  []*pyVal // dict keys, parallel to items
	form  pyForm
}

// pyForm is the syntax a number came from, which literal_eval restricts.
type pyForm uint8

const (
	formOther pyForm = iota // container or binary operation
	formConst               // a bare constant
	formUnary               // +/- applied to a constant
)

// errNotLiteral is a ValueError/SyntaxError of literal_eval: the plugin keeps
// the value as str. errUnhashable is a TypeError: the plugin fails the file.
var (
	errNotLiteral = errors.New("not a Python literal")
	errUnhashable = errors.New("unhashable type in a Python literal (TypeError in ast.literal_eval)")
)

type pyTok struct {
	kind byte // 'n' number, 's' string, 'b' bytes, 'f' f-string, 'i' name, 'o' operator, 'e' end
	text string
	num  *pyVal
}

type pyLexer struct {
	src  []rune
	pos  int
	toks []pyTok
}

const pyMaxDepth = 200 // CPython's tokenizer: "too many nested parentheses"

// pyLiteralEval evaluates s as ast.literal_eval does.
func pyLiteralEval(s string) (*pyVal, error) {
	s = strings.TrimLeft(s, " \t")
	lx := &pyLexer{src: []rune(s)}
	if err := lx.lex(); err != nil {
		return nil, err
	}
	p := &pyParser{toks: lx.toks}
	v, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != 'e' {
		return nil, errNotLiteral
	}
	return v, nil
}

func isPyIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isPyIdent(r rune) bool      { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func (lx *pyLexer) lex() error {
	depth := 0
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\f':
			lx.pos++
		case c == '\n' || c == '\r':
			if depth == 0 {
				// a newline ends the expression; only blank/comment lines may follow
				lx.pos++
				for lx.pos < len(lx.src) {
					r := lx.src[lx.pos]
					if r == '#' {
						for lx.pos < len(lx.src) && lx.src[lx.pos] != '\n' {
							lx.pos++
						}
						continue
					}
					if r != ' ' && r != '\t' && r != '\n' && r != '\r' && r != '\f' {
						return errNotLiteral
					}
					lx.pos++
				}
				continue
			}
			lx.pos++
		case c == '\\':
			if lx.pos+1 < len(lx.src) && lx.src[lx.pos+1] == '\n' {
				lx.pos += 2
				continue
			}
			return errNotLiteral
		case c == '#':
			for lx.pos < len(lx.src) && lx.src[lx.pos] != '\n' {
				lx.pos++
			}
		case c >= '0' && c <= '9' || (c == '.' && lx.pos+1 < len(lx.src) && lx.src[lx.pos+1] >= '0' && lx.src[lx.pos+1] <= '9'):
			if err := lx.number(); err != nil {
				return err
			}
		case c == '\'' || c == '"':
			if err := lx.str(""); err != nil {
				return err
			}
		case isPyIdentStart(c):
			start := lx.pos
			for lx.pos < len(lx.src) && isPyIdent(lx.src[lx.pos]) {
				lx.pos++
			}
			word := string(lx.src[start:lx.pos])
			if lx.pos < len(lx.src) && (lx.src[lx.pos] == '\'' || lx.src[lx.pos] == '"') && isStrPrefix(word) {
				if err := lx.str(strings.ToLower(word)); err != nil {
					return err
				}
				continue
			}
			lx.toks = append(lx.toks, pyTok{kind: 'i', text: word})
		default:
			// operators and delimiters
			if lx.pos+2 < len(lx.src) && string(lx.src[lx.pos:lx.pos+3]) == "..." {
				lx.toks = append(lx.toks, pyTok{kind: 'o', text: "..."})
				lx.pos += 3
				continue
			}
			switch c {
			case '(', '[', '{':
				depth++
				if depth >= pyMaxDepth {
					return errNotLiteral
				}
			case ')', ']', '}':
				depth--
			}
			if strings.ContainsRune("()[]{},:+-", c) {
				lx.toks = append(lx.toks, pyTok{kind: 'o', text: string(c)})
				lx.pos++
				continue
			}
			// any other operator makes a valid or invalid expression that is
			// not a literal either way
			return errNotLiteral
		}
	}
	lx.toks = append(lx.toks, pyTok{kind: 'e'})
	return nil
}

func isStrPrefix(w string) bool {
	switch strings.ToLower(w) {
	case "r", "u", "b", "br", "rb", "f", "fr", "rf":
		return true
	}
	return false
}

func digitsOK(s string, isDigit func(rune) bool) bool {
	// digit (["_"] digit)*
	if s == "" {
		return false
	}
	prevUnderscore := true
	for _, r := range s {
		if r == '_' {
			if prevUnderscore {
				return false
			}
			prevUnderscore = true
			continue
		}
		if !isDigit(r) {
			return false
		}
		prevUnderscore = false
	}
	return !prevUnderscore
}

func isDec(r rune) bool { return r >= '0' && r <= '9' }

func (lx *pyLexer) number() error {
	start := lx.pos
	for lx.pos < len(lx.src) {
		r := lx.src[lx.pos]
		if isPyIdent(r) || r == '.' {
			lx.pos++
			continue
		}
		if (r == '+' || r == '-') && lx.pos > start {
			p := lx.src[lx.pos-1]
			lit := strings.ToLower(string(lx.src[start:lx.pos]))
			if (p == 'e' || p == 'E') && !strings.HasPrefix(lit, "0x") {
				lx.pos++
				continue
			}
		}
		break
	}
	text := string(lx.src[start:lx.pos])
	v, err := parsePyNumber(text)
	if err != nil {
		return err
	}
	lx.toks = append(lx.toks, pyTok{kind: 'n', text: text, num: v})
	return nil
}

func parsePyNumber(text string) (*pyVal, error) {
	lower := strings.ToLower(text)
	if strings.HasPrefix(lower, "0x") || strings.HasPrefix(lower, "0o") || strings.HasPrefix(lower, "0b") {
		base := map[byte]int{'x': 16, 'o': 8, 'b': 2}[lower[1]]
		body := lower[2:]
		if strings.HasPrefix(body, "_") {
			body = body[1:]
		}
		ok := digitsOK(body, func(r rune) bool {
			d, err := strconv.ParseInt(string(r), 36, 8)
			return err == nil && int(d) < base
		})
		if !ok {
			return nil, errNotLiteral
		}
		n, ok := new(big.Int).SetString(strings.ReplaceAll(body, "_", ""), base)
		if !ok {
			return nil, errNotLiteral
		}
		return &pyVal{kind: pyInt, i: n, form: formConst}, nil
	}
	imag := false
	if strings.HasSuffix(lower, "j") {
		imag = true
		lower = lower[:len(lower)-1]
	}
	// split mantissa / exponent
	mant, exp := lower, ""
	if k := strings.IndexByte(lower, 'e'); k >= 0 {
		mant, exp = lower[:k], lower[k+1:]
		e := strings.TrimLeft(exp, "+-")
		if len(exp)-len(e) > 1 || !digitsOK(e, isDec) {
			return nil, errNotLiteral
		}
	}
	isFloat := exp != "" || strings.Contains(mant, ".")
	if strings.Contains(lower, "e") && exp == "" {
		return nil, errNotLiteral
	}
	if isFloat || imag {
		ip, fp := mant, ""
		if k := strings.IndexByte(mant, '.'); k >= 0 {
			ip, fp = mant[:k], mant[k+1:]
			if strings.Contains(fp, ".") {
				return nil, errNotLiteral
			}
		}
		if ip == "" && fp == "" {
			return nil, errNotLiteral
		}
		if ip != "" && !digitsOK(ip, isDec) || fp != "" && !digitsOK(fp, isDec) {
			return nil, errNotLiteral
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(lower, "_", ""), 64)
		if err != nil {
			var ne *strconv.NumError
			if !errors.As(err, &ne) || ne.Err != strconv.ErrRange {
				return nil, errNotLiteral
			}
		}
		if imag {
			return &pyVal{kind: pyComplex, imag: f, form: formConst}, nil
		}
		return &pyVal{kind: pyFloat, f: f, form: formConst}, nil
	}
	if !digitsOK(mant, isDec) {
		return nil, errNotLiteral
	}
	digits := strings.ReplaceAll(mant, "_", "")
	if len(digits) > 1 && digits[0] == '0' && strings.Trim(digits, "0") != "" {
		return nil, errNotLiteral // leading zeros in a decimal literal
	}
	n, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return nil, errNotLiteral
	}
	return &pyVal{kind: pyInt, i: n, form: formConst}, nil
}

func (lx *pyLexer) str(prefix string) error {
	raw := strings.Contains(prefix, "r")
	isBytes := strings.Contains(prefix, "b")
	q := lx.src[lx.pos]
	triple := lx.pos+2 < len(lx.src) && lx.src[lx.pos+1] == q && lx.src[lx.pos+2] == q
	if triple {
		lx.pos += 3
	} else {
		lx.pos++
	}
	var body []rune
	for {
		if lx.pos >= len(lx.src) {
			return errNotLiteral
		}
		c := lx.src[lx.pos]
		if c == q {
			if !triple {
				lx.pos++
				break
			}
			if lx.pos+2 < len(lx.src) && lx.src[lx.pos+1] == q && lx.src[lx.pos+2] == q {
				lx.pos += 3
				break
			}
		}
		if c == '\n' && !triple {
			return errNotLiteral
		}
		if c == '\\' {
			if lx.pos+1 >= len(lx.src) {
				return errNotLiteral
			}
			body = append(body, c, lx.src[lx.pos+1])
			lx.pos += 2
			continue
		}
		body = append(body, c)
		lx.pos++
	}
	kind := byte('s')
	if strings.Contains(prefix, "f") {
		kind = 'f'
	} else if isBytes {
		kind = 'b'
	}
	text := string(body)
	if isBytes {
		for _, r := range body {
			if r > 0x7f {
				return errNotLiteral // bytes can only contain ASCII literal characters
			}
		}
	}
	if !raw {
		var err error
		text, err = pyUnescape(body, isBytes)
		if err != nil {
			return err
		}
	}
	lx.toks = append(lx.toks, pyTok{kind: kind, text: text})
	return nil
}

// pyUnescape applies Python's string escapes; unknown escapes keep the backslash.
func pyUnescape(body []rune, isBytes bool) (string, error) {
	var sb strings.Builder
	var bb []byte
	emit := func(r rune) {
		if isBytes {
			bb = append(bb, byte(r))
		} else {
			sb.WriteRune(r)
		}
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' || i+1 >= len(body) {
			if isBytes {
				bb = append(bb, byte(c))
			} else {
				sb.WriteRune(c)
			}
			continue
		}
		i++
		e := body[i]
		switch e {
		case '\n':
		case '\\', '\'', '"':
			emit(e)
		case 'a':
			emit(7)
		case 'b':
			emit(8)
		case 'f':
			emit(12)
		case 'n':
			emit(10)
		case 'r':
			emit(13)
		case 't':
			emit(9)
		case 'v':
			emit(11)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n := 0
			j := i
			for ; j < len(body) && j < i+3 && body[j] >= '0' && body[j] <= '7'; j++ {
				n = n*8 + int(body[j]-'0')
			}
			i = j - 1
			if isBytes {
				bb = append(bb, byte(n))
			} else {
				sb.WriteRune(rune(n))
			}
		case 'x', 'u', 'U':
			size := map[rune]int{'x': 2, 'u': 4, 'U': 8}[e]
			if isBytes && e != 'x' {
				emit('\\')
				emit(e)
				continue
			}
			if i+1+size > len(body) {
				return "", errNotLiteral
			}
			n, err := strconv.ParseUint(string(body[i+1:i+1+size]), 16, 32)
			if err != nil || n > unicode.MaxRune {
				return "", errNotLiteral
			}
			i += size
			if isBytes {
				bb = append(bb, byte(n))
			} else {
				sb.WriteRune(rune(n))
			}
		case 'N':
			if isBytes {
				emit('\\')
				emit(e)
				continue
			}
			// \N{NAME}: a Unicode character by name
			end := -1
			if i+1 < len(body) && body[i+1] == '{' {
				for j := i + 2; j < len(body); j++ {
					if body[j] == '}' {
						end = j
						break
					}
				}
			}
			if end < 0 {
				return "", errNotLiteral
			}
			r, ok := runeByName(string(body[i+2 : end]))
			if !ok {
				return "", errNotLiteral
			}
			sb.WriteRune(r)
			i = end
		default:
			if isBytes {
				bb = append(bb, '\\')
				bb = append(bb, []byte(string(e))...)
			} else {
				sb.WriteRune('\\')
				sb.WriteRune(e)
			}
		}
	}
	if isBytes {
		return string(bb), nil
	}
	return sb.String(), nil
}

type pyParser struct {
	toks  []pyTok
	i     int
	depth int
}

func (p *pyParser) peek() pyTok { return p.toks[p.i] }
func (p *pyParser) next() pyTok { t := p.toks[p.i]; p.i++; return t }
func (p *pyParser) isOp(s string) bool {
	t := p.peek()
	return t.kind == 'o' && t.text == s
}

// expr parses a top-level expression: a tuple without parentheses allowed.
func (p *pyParser) expr() (*pyVal, error) {
	first, err := p.sum()
	if err != nil {
		return nil, err
	}
	if !p.isOp(",") {
		return first, nil
	}
	items := []*pyVal{first}
	for p.isOp(",") {
		p.next()
		if t := p.peek(); t.kind == 'e' || (t.kind == 'o' && (t.text == ")" || t.text == "]" || t.text == "}" || t.text == ":")) {
			break
		}
		v, err := p.sum()
		if err != nil {
			return nil, err
		}
		items = append(items, v)
	}
	return &pyVal{kind: pyTuple, items: items}, nil
}

// isNum is literal_eval's _convert_num test: type(value) in (int, float,
// complex) - a bool is not a number there.
func isNum(v *pyVal) bool {
	return v.kind == pyInt || v.kind == pyFloat || v.kind == pyComplex
}

// sum parses unary and binary +/- as far as literal_eval accepts them:
// BinOp(left, +/-, right) with left a (signed) int/float constant and right
// a complex constant; UnaryOp(+/-) on a numeric constant.
func (p *pyParser) sum() (*pyVal, error) {
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.isOp("+") || p.isOp("-") {
		op := p.next().text
		right, err := p.unary()
		if err != nil {
			return nil, err
		}
		if left.form == formOther || (left.kind != pyInt && left.kind != pyFloat) {
			return nil, errNotLiteral
		}
		if right.form != formConst || right.kind != pyComplex {
			return nil, errNotLiteral
		}
		re := left.toFloat()
		im := right.imag
		if op == "-" {
			im = -im
		}
		left = &pyVal{kind: pyComplex, f: re, imag: im, form: formOther}
	}
	return left, nil
}

func (v *pyVal) toFloat() float64 {
	switch v.kind {
	case pyInt:
		f, _ := new(big.Float).SetInt(v.i).Float64()
		return f
	case pyBool:
		if v.b {
			return 1
		}
		return 0
	}
	return v.f
}

func (p *pyParser) unary() (*pyVal, error) {
	if p.isOp("-") || p.isOp("+") {
		op := p.next().text
		v, err := p.atom()
		if err != nil {
			return nil, err
		}
		if v.form != formConst || !isNum(v) {
			return nil, errNotLiteral
		}
		r := *v
		r.form = formUnary
		switch v.kind {
		case pyInt:
			if op == "-" {
				r.i = new(big.Int).Neg(v.i)
			}
		case pyFloat:
			if op == "-" {
				r.f = -v.f
			}
		case pyComplex:
			if op == "-" {
				r.f = math.Copysign(0, -1)
				r.imag = -v.imag
			}
		}
		return &r, nil
	}
	return p.atom()
}

func (p *pyParser) atom() (*pyVal, error) {
	t := p.next()
	switch t.kind {
	case 'n':
		v := *t.num
		return &v, nil
	case 's', 'b', 'f':
		kind, text, fstr := t.kind, t.text, t.kind == 'f'
		for k := p.peek().kind; k == 's' || k == 'b' || k == 'f'; k = p.peek().kind {
			n := p.next()
			if (n.kind == 'b') != (kind == 'b') {
				return nil, errNotLiteral // cannot mix bytes and nonbytes literals
			}
			if n.kind == 'f' {
				fstr = true
			}
			text += n.text
		}
		if fstr {
			return nil, errNotLiteral
		}
		if kind == 'b' {
			return &pyVal{kind: pyBytes, s: text, form: formConst}, nil
		}
		return &pyVal{kind: pyStr, s: text, form: formConst}, nil
	case 'i':
		switch t.text {
		case "True":
			return &pyVal{kind: pyBool, b: true, form: formConst}, nil
		case "False":
			return &pyVal{kind: pyBool, form: formConst}, nil
		case "None":
			return &pyVal{kind: pyNone, form: formConst}, nil
		case "set":
			if p.isOp("(") {
				p.next()
				if p.isOp(")") {
					p.next()
					return &pyVal{kind: pySet}, nil
				}
			}
		}
		return nil, errNotLiteral
	case 'o':
		switch t.text {
		case "...":
			return &pyVal{kind: pyEllipsis, form: formConst}, nil
		case "(":
			if p.isOp(")") {
				p.next()
				return &pyVal{kind: pyTuple}, nil
			}
			v, err := p.expr()
			if err != nil {
				return nil, err
			}
			if !p.isOp(")") {
				return nil, errNotLiteral
			}
			p.next()
			return v, nil
		case "[":
			items, err := p.seq("]")
			if err != nil {
				return nil, err
			}
			return &pyVal{kind: pyList, items: items}, nil
		case "{":
			return p.dictOrSet()
		}
	}
	return nil, errNotLiteral
}

func (p *pyParser) seq(end string) ([]*pyVal, error) {
	var items []*pyVal
	for !p.isOp(end) {
		v, err := p.sum()
		if err != nil {
			return nil, err
		}
		items = append(items, v)
		if p.isOp(",") {
			p.next()
			continue
		}
		if !p.isOp(end) {
			return nil, errNotLiteral
		}
	}
	p.next()
	return items, nil
}

func (p *pyParser) dictOrSet() (*pyVal, error) {
	if p.isOp("}") {
		p.next()
		return &pyVal{kind: pyDict}, nil
	}
	first, err := p.sum()
	if err != nil {
		return nil, err
	}
	if p.isOp(":") {
		d := &pyVal{kind: pyDict}
		k := first
		for {
			if !p.isOp(":") {
				return nil, errNotLiteral
			}
			p.next()
			v, err := p.sum()
			if err != nil {
				return nil, err
			}
			d.keys = append(d.keys, k)
			d.items = append(d.items, v)
			if p.isOp(",") {
				p.next()
			} else if !p.isOp("}") {
				return nil, errNotLiteral
			}
			if p.isOp("}") {
				p.next()
				break
			}
			if k, err = p.sum(); err != nil {
				return nil, err
			}
		}
		return d.dedupe()
	}
	items := []*pyVal{first}
	if p.isOp(",") {
		p.next()
		rest, err := p.seq("}")
		if err != nil {
			return nil, err
		}
		items = append(items, rest...)
	} else if p.isOp("}") {
		p.next()
	} else {
		return nil, errNotLiteral
	}
	s := &pyVal{kind: pySet}
	seen := map[string]bool{}
	for _, it := range items {
		h, err := it.hashKey()
		if err != nil {
			return nil, err
		}
		if !seen[h] {
			seen[h] = true
			s.items = append(s.items, it)
		}
	}
	return s, nil
}

// dedupe applies dict semantics: a repeated key keeps its first place and
// takes the last value. Unhashable keys are a TypeError.
func (d *pyVal) dedupe() (*pyVal, error) {
	out := &pyVal{kind: pyDict}
	idx := map[string]int{}
	for i, k := range d.keys {
		h, err := k.hashKey()
		if err != nil {
			return nil, err
		}
		if j, ok := idx[h]; ok {
			out.items[j] = d.items[i]
			continue
		}
		idx[h] = len(out.keys)
		out.keys = append(out.keys, k)
		out.items = append(out.items, d.items[i])
	}
	return out, nil
}

// hashKey is a key under Python equality (1 == 1.0 == True), or
// errUnhashable for list, dict and set.
func (v *pyVal) hashKey() (string, error) {
	switch v.kind {
	case pyNone:
		return "N", nil
	case pyBool, pyInt, pyFloat:
		if v.kind == pyFloat && (v.f != math.Trunc(v.f) || math.IsInf(v.f, 0)) {
			return "f" + strconv.FormatFloat(v.f, 'g', -1, 64), nil
		}
		if v.kind == pyFloat {
			bf, _ := new(big.Float).SetFloat64(v.f).Int(nil)
			return "i" + bf.String(), nil
		}
		if v.kind == pyBool {
			if v.b {
				return "i1", nil
			}
			return "i0", nil
		}
		return "i" + v.i.String(), nil
	case pyComplex:
		if v.imag == 0 {
			return (&pyVal{kind: pyFloat, f: v.f}).hashKey()
		}
		return "c" + strconv.FormatFloat(v.f, 'g', -1, 64) + "," + strconv.FormatFloat(v.imag, 'g', -1, 64), nil
	case pyStr:
		return "s" + v.s, nil
	case pyBytes:
		return "b" + v.s, nil
	case pyEllipsis:
		return "E", nil
	case pyTuple:
		var sb strings.Builder
		sb.WriteString("t(")
		for _, it := range v.items {
			h, err := it.hashKey()
			if err != nil {
				return "", err
			}
			sb.WriteString(strconv.Quote(h))
			sb.WriteByte(',')
		}
		sb.WriteByte(')')
		return sb.String(), nil
	}
	return "", errUnhashable
}

// pyFloatRepr is Python's repr(float): shortest round-trip digits, fixed
// notation when the exponent is in [-4, 16), else "1e+16" style, and a
// trailing ".0" on integral values.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddddde±XX
	mant, exps, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(exps)
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1
	var out string
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			out = "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			out = digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		default:
			out = digits[:decpt] + "." + digits[decpt:]
		}
	} else {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign = "-"
			exp = -exp
		}
		out = m + "e" + sign + fmt2(exp)
	}
	if neg {
		out = "-" + out
	}
	return out
}

func fmt2(n int) string {
	s := strconv.Itoa(n)
	if len(s) < 2 {
		s = "0" + s
	}
	return s
}

// pyComplexRepr is Python's str(complex): "1j", "(1+2j)", "(-0-1j)".
func pyComplexRepr(re, im float64) string {
	part := func(f float64) string {
		s := pyFloatRepr(f)
		return strings.TrimSuffix(s, ".0")
	}
	if re == 0 && !math.Signbit(re) {
		return part(im) + "j"
	}
	ims := part(im)
	if !strings.HasPrefix(ims, "-") {
		ims = "+" + ims
	}
	return "(" + part(re) + ims + "j)"
}

var (
	runeNamesOnce sync.Once
	runeNames     map[string]rune
)

// runeByName is unicodedata.lookup for \N{...}: case-insensitive Unicode
// character names (the table is built on first use).
func runeByName(name string) (rune, bool) {
	runeNamesOnce.Do(func() {
		runeNames = make(map[string]rune, 40000)
		for r := rune(0); r <= unicode.MaxRune; r++ {
			if n := runenames.Name(r); n != "" && !strings.HasPrefix(n, "<") {
				runeNames[n] = r
			}
		}
	})
	r, ok := runeNames[strings.ToUpper(name)]
	return r, ok
}
