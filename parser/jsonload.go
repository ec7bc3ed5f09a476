package parser

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// loadJSON parses data as Python's json.loads with ansible-core's legacy
// decoder: NaN/Infinity accepted, unbounded ints, later duplicate keys win,
// {"__ansible_vault": ...} and {"__ansible_unsafe": ...} objects decoded.
// ok is false when data is not JSON (Ansible then tries YAML).
func loadJSON(file string, data []byte) (v *Value, ok bool) {
	p := &jsonParser{file: file, s: string(data)}
	defer func() {
		if r := recover(); r != nil {
			v, ok = nil, false
		}
	}()
	p.ws()
	val, good := p.value(0)
	if !good {
		return nil, false
	}
	p.ws()
	if p.i != len(p.s) {
		return nil, false
	}
	return val, true
}

type jsonParser struct {
	file      string
	s         string
	i         int
	line      int // 0-based line of p.i
	lineStart int
}

func (p *jsonParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '\n':
			p.line++
			p.lineStart = p.i + 1
			fallthrough
		case ' ', '\t', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) pos() Pos {
	return Pos{File: p.file, Line: p.line + 1, Col: utf8.RuneCountInString(p.s[p.lineStart:p.i]) + 1}
}

func (p *jsonParser) value(depth int) (*Value, bool) {
	if p.i >= len(p.s) || depth > 10000 {
		return nil, false
	}
	pos := p.pos()
	mk := func(k Kind) *Value { return &Value{Kind: k, Pos: pos, Origin: OriginJSON} }
	c := p.s[p.i]
	switch {
	case c == '{':
		p.i++
		m := NewMap()
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			v := mk(KindMap)
			v.Map = m
			return v, true
		}
		for {
			p.ws()
			if p.i >= len(p.s) || p.s[p.i] != '"' {
				return nil, false
			}
			k, ok := p.str()
			if !ok {
				return nil, false
			}
			p.ws()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, false
			}
			p.i++
			p.ws()
			item, ok := p.value(depth + 1)
			if !ok {
				return nil, false
			}
			m.Set(k, item)
			p.ws()
			if p.i >= len(p.s) {
				return nil, false
			}
			if p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.s[p.i] == '}' {
				p.i++
				break
			}
			return nil, false
		}
		if vv := m.Get("__ansible_vault"); vv != nil && vv.Kind == KindString {
			r := mk(KindVault)
			r.Str, r.Raw = vv.Str, vv.Str
			return r, true
		}
		if uv := m.Get("__ansible_unsafe"); uv != nil && uv.Kind == KindString {
			r := mk(KindString)
			r.Str, r.Raw, r.Unsafe = uv.Str, uv.Str, true
			return r, true
		}
		v := mk(KindMap)
		v.Map = m
		return v, true
	case c == '[':
		p.i++
		v := mk(KindList)
		v.List = []*Value{}
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return v, true
		}
		for {
			p.ws()
			item, ok := p.value(depth + 1)
			if !ok {
				return nil, false
			}
			v.List = append(v.List, item)
			p.ws()
			if p.i >= len(p.s) {
				return nil, false
			}
			if p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.s[p.i] == ']' {
				p.i++
				return v, true
			}
			return nil, false
		}
	case c == '"':
		s, ok := p.str()
		if !ok {
			return nil, false
		}
		v := mk(KindString)
		v.Str, v.Raw, v.Quoted = s, s, true
		return v, true
	}
	for _, lit := range []struct {
		text string
		set  func(*Value)
		kind Kind
	}{
		{"true", func(v *Value) { v.Bool = true }, KindBool},
		{"false", func(*Value) {}, KindBool},
		{"null", func(*Value) {}, KindNull},
		{"NaN", func(v *Value) { v.Float = math.NaN() }, KindFloat},
		{"Infinity", func(v *Value) { v.Float = math.Inf(1) }, KindFloat},
		{"-Infinity", func(v *Value) { v.Float = math.Inf(-1) }, KindFloat},
	} {
		if strings.HasPrefix(p.s[p.i:], lit.text) {
			p.i += len(lit.text)
			v := mk(lit.kind)
			v.Raw = lit.text
			lit.set(v)
			return v, true
		}
	}
	// number: -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?
	start := p.i
	j := p.i
	if j < len(p.s) && p.s[j] == '-' {
		j++
	}
	digits := func() int {
		k := j
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		return j - k
	}
	if j < len(p.s) && p.s[j] == '0' {
		j++
	} else if digits() == 0 {
		return nil, false
	}
	isFloat := false
	if j < len(p.s) && p.s[j] == '.' {
		save := j
		j++
		if digits() == 0 {
			j = save
		} else {
			isFloat = true
		}
	}
	if j < len(p.s) && (p.s[j] == 'e' || p.s[j] == 'E') {
		save := j
		j++
		if j < len(p.s) && (p.s[j] == '+' || p.s[j] == '-') {
			j++
		}
		if digits() == 0 {
			j = save
		} else {
			isFloat = true
		}
	}
	text := p.s[start:j]
	p.i = j
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			return nil, false
		}
		v := mk(KindFloat)
		v.Float, v.Raw = f, text
		return v, true
	}
	n, ok := new(big.Int).SetString(text, 10)
	if !ok {
		return nil, false
	}
	v := mk(KindInt)
	v.Int, v.Raw = n, text
	return v, true
}

func (p *jsonParser) str() (string, bool) {
	p.i++ // opening quote
	var sb strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return sb.String(), true
		case c < 0x20:
			return "", false
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", false
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				sb.WriteByte(e)
			case 'b':
				sb.WriteByte('\b')
			case 'f':
				sb.WriteByte('\f')
			case 'n':
				sb.WriteByte('\n')
			case 'r':
				sb.WriteByte('\r')
			case 't':
				sb.WriteByte('\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", false
				}
				if utf16.IsSurrogate(r) && strings.HasPrefix(p.s[p.i:], "\\u") {
					save := p.i
					p.i += 2
					r2, ok := p.hex4()
					if ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							sb.WriteRune(d)
							continue
						}
					}
					p.i = save
				}
				sb.WriteRune(r)
			default:
				return "", false
			}
		default:
			sb.WriteByte(c)
			p.i++
		}
	}
	return "", false
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}

// loadData is ansible-core's DataLoader.load: JSON first, then YAML.
func loadData(file string, data []byte, warn func(string)) (*Value, error) {
	if v, ok := loadJSON(file, data); ok {
		return v, checkDepth(v)
	}
	v, err := loadYAML(file, data, warn)
	if err != nil {
		return nil, err
	}
	return v, checkDepth(v)
}

// MaxNestingDepth is how deeply lists and dicts may nest in one YAML or
// JSON file, the document's top-level collection counting 1. ansible-core
// 2.19 (Python's default recursion limit of 1000) fails to load a document
// nested about 163 (block style) to 168 (flow style) levels deep with
// "maximum recursion depth exceeded": a group_vars file exits 250, an
// inventory source is skipped with a warning. Anything layercheck loads,
// ansible-core loads too.
const MaxNestingDepth = 160

// DepthError is a document nested deeper than MaxNestingDepth.
type DepthError struct {
	Pos   Pos // the first collection past the limit
	Limit int
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("%s: maximum nesting depth exceeded: lists and dicts nest more than %d levels deep here, which ansible-core cannot load (RecursionError)", e.Pos, e.Limit)
}

// checkDepth returns a *DepthError when v nests deeper than MaxNestingDepth.
func checkDepth(v *Value) error {
	if p, ok := tooDeep(v, 1); ok {
		return &DepthError{Pos: p, Limit: MaxNestingDepth}
	}
	return nil
}

func tooDeep(v *Value, depth int) (Pos, bool) {
	if v == nil || (v.Kind != KindList && v.Kind != KindMap) {
		return Pos{}, false
	}
	if depth > MaxNestingDepth {
		return v.Pos, true
	}
	for _, it := range v.List {
		if p, ok := tooDeep(it, depth+1); ok {
			return p, true
		}
	}
	if v.Kind == KindMap && v.Map != nil {
		for _, k := range v.Map.Keys {
			if p, ok := tooDeep(v.Map.Values[k], depth+1); ok {
				return p, true
			}
		}
	}
	return Pos{}, false
}
