package parser

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// INIError is an INI inventory file that ansible-core cannot parse.
type INIError struct {
	Pos Pos
	Msg string
}

func (e *INIError) Error() string { return e.Pos.String() + ": " + e.Msg }

var (
	reINISection   = regexp.MustCompile(`^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:#.*)?$`)
	reINIGroupName = regexp.MustCompile(`^([^:\]\s]+)\s*(?:#.*)?$`)
)

type pendingDecl struct {
	line    int
	state   string
	name    string
	parents []string
}

// parseINI is ansible-core's ini inventory plugin (plugins/inventory/ini.py).
func (inv *Inventory) parseINI(file string, data []byte) error {
	var lines []string
	if utf8.Valid(data) {
		lines = pySplitLines(string(data))
	} else {
		// non-UTF-8 is tolerated in comment lines only
		for _, l := range bytesSplitLines(data) {
			if len(l) > 0 && (l[0] == '#' || l[0] == ';') {
				lines = append(lines, "")
				continue
			}
			// other lines are decoded with surrogateescape
			lines = append(lines, surrogateEscape(l))
		}
	}
	pending := map[string]*pendingDecl{}
	var pendingOrder []string
	addPending := func(d *pendingDecl) {
		pending[d.name] = d
		pendingOrder = append(pendingOrder, d.name)
	}
	groupname, state := "ungrouped", "hosts"
	for i, raw := range lines {
		lineNo := i + 1
		pos := Pos{File: file, Line: lineNo}
		fail := func(format string, a ...any) error {
			return &INIError{pos, fmt.Sprintf(format, a...)}
		}
		line := pyStrip(raw)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if m := reINISection.FindStringSubmatch(line); m != nil {
			groupname, state = m[1], m[2]
			if state == "" {
				state = "hosts"
			}
			if state != "hosts" && state != "children" && state != "vars" {
				return fail("Section [%s:%s] has unknown type: %s", m[1], m[2], state)
			}
			if inv.groups[groupname] == nil {
				if state == "vars" && pending[groupname] == nil {
					addPending(&pendingDecl{line: lineNo, state: state, name: groupname})
				}
				g := inv.addGroup(groupname)
				g.Pos = Pos{File: file, Line: lineNo, Col: 2}
			}
			if d := pending[groupname]; d != nil && state != "vars" {
				if d.state == "children" {
					if err := inv.addPendingChildren(groupname, pending); err != nil {
						return fail("%v", err)
					}
				} else if d.state == "vars" {
					delete(pending, groupname)
				}
			}
			continue
		} else if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			return fail("Invalid section entry: '%s'. Please make sure that there are no spaces in the section entry, and that there are no other invalid characters", line)
		}
		switch state {
		case "hosts":
			if err := inv.iniHostLine(file, lineNo, raw, line, groupname); err != nil {
				return err
			}
		case "vars":
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				return fail("Expected key=value, got: %s", line)
			}
			k, v = pyStrip(k), pyStrip(v)
			col := strings.Index(raw, "=") + 1
			for col < len(raw) && (raw[col] == ' ' || raw[col] == '\t') {
				col++
			}
			val, err := iniValue(v, Pos{File: file, Line: lineNo, Col: utf8.RuneCountInString(raw[:min(col, len(raw))]) + 1}, OriginINIGroup)
			if err != nil {
				return fail("%v", err)
			}
			if err := inv.setVariable(groupname, k, val); err != nil {
				return fail("%v", err)
			}
		case "children":
			m := reINIGroupName.FindStringSubmatch(line)
			if m == nil {
				return fail("Expected group name, got: %s", line)
			}
			child := m[1]
			if inv.groups[child] == nil {
				if d := pending[child]; d == nil {
					addPending(&pendingDecl{line: lineNo, state: state, name: child, parents: []string{groupname}})
				} else {
					d.parents = append(d.parents, groupname)
				}
			} else if err := inv.addChildByName(groupname, child); err != nil {
				return fail("%v", err)
			}
		}
	}
	for _, name := range pendingOrder {
		d := pending[name]
		if d == nil || d.name != name {
			continue
		}
		pos := Pos{File: file, Line: d.line}
		switch d.state {
		case "vars":
			return &INIError{pos, fmt.Sprintf("Section [%s:vars] not valid for undefined group '%s'.", d.name, d.name)}
		case "children":
			return &INIError{pos, fmt.Sprintf("Section [%s:children] includes undefined group '%s'.", d.parents[len(d.parents)-1], d.name)}
		}
	}
	return nil
}

func (inv *Inventory) addChildByName(parent, child string) error {
	p := inv.groups[parent]
	if p == nil {
		return fmt.Errorf("%s is not a known group", parent)
	}
	if c := inv.groups[child]; c != nil {
		return inv.addChild(p, c)
	}
	if h := inv.hosts[child]; h != nil {
		inv.groupAddHost(p, h)
		return nil
	}
	return fmt.Errorf("%s is not a known host nor group", child)
}

func (inv *Inventory) addPendingChildren(group string, pending map[string]*pendingDecl) error {
	d := pending[group]
	for _, parent := range d.parents {
		if err := inv.addChildByName(parent, group); err != nil {
			return err
		}
		if pd := pending[parent]; pd != nil && pd.state == "children" {
			if err := inv.addPendingChildren(parent, pending); err != nil {
				return err
			}
		}
	}
	delete(pending, group)
	return nil
}

func (inv *Inventory) iniHostLine(file string, lineNo int, raw, line, group string) error {
	pos := Pos{File: file, Line: lineNo}
	tokens, err := shlexSplit(line)
	if err != nil {
		return &INIError{pos, fmt.Sprintf("Error parsing host definition '%s': %v", line, err)}
	}
	if len(tokens) == 0 {
		return &INIError{pos, "Invalid empty host name provided"}
	}
	hosts, port, err := expandHostPattern(tokens[0])
	if err != nil {
		return &INIError{pos, err.Error()}
	}
	if strings.HasSuffix(strings.TrimSpace(tokens[0]), ":") && port == nil {
		return &INIError{pos, fmt.Sprintf("Invalid host pattern '%s' supplied, ending in ':' is not allowed, this character is reserved to provide a port.", tokens[0])}
	}
	for _, h := range hosts {
		if strings.TrimSpace(h) == "---" {
			return &INIError{pos, fmt.Sprintf("Invalid host pattern '%s' supplied, '---' is normally a sign this is a YAML file.", tokens[0])}
		}
	}
	// the line's variables in order; a key given twice keeps its first
	// place and its last value, as a Map does
	keys := make([]string, 0, len(tokens)-1)
	vals := make([]*Value, 0, len(tokens)-1)
	for _, t := range tokens[1:] {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			return &INIError{pos, fmt.Sprintf("Expected key=value host variable assignment, got: %s", t)}
		}
		col := 0
		if i := strings.Index(raw, k+"="); i >= 0 {
			col = utf8.RuneCountInString(raw[:i+len(k)+1]) + 1
		}
		val, err := iniValue(v, Pos{File: file, Line: lineNo, Col: col}, OriginINIHost)
		if err != nil {
			return &INIError{pos, err.Error()}
		}
		if at := slices.Index(keys, k); at >= 0 {
			vals[at] = val
		} else {
			keys, vals = append(keys, k), append(vals, val)
		}
	}
	if port != nil {
		port.Pos, port.Origin = Pos{File: file, Line: lineNo, Col: 1}, OriginINIHost
	}
	g := inv.groups[group]
	hpos := Pos{File: file, Line: lineNo, Col: 1 + utf8.RuneCountInString(raw) - utf8.RuneCountInString(strings.TrimLeft(raw, " \t"))}
	for _, name := range hosts {
		h, err := inv.addHost(name, g, port, hpos, file)
		if err != nil {
			return &INIError{pos, err.Error()}
		}
		if len(keys) > 0 && inv.groups[name] == nil && h.Vars.Values == nil {
			h.Vars.grow(len(keys)) // a new host's variables: room for them at once
		}
		for k, key := range keys {
			if err := inv.setVariable(name, key, vals[k]); err != nil {
				return &INIError{pos, err.Error()}
			}
		}
	}
	return nil
}

// iniValue is the ini plugin's _parse_value: ast.literal_eval, and the
// text itself when that fails; tuples and sets become lists, bytes and
// complex numbers and "..." become str.
func iniValue(text string, pos Pos, origin Origin) (*Value, error) {
	if notPyLiteral(text) {
		return &Value{Kind: KindString, Str: text, Raw: text, Pos: pos, Origin: origin}, nil
	}
	return iniValueEval(text, pos, origin)
}

// notPyLiteral reports, without evaluating it, whether text is one of the
// values ast.literal_eval certainly rejects that host lines are full of:
// a name ("r4", "etcd1", "ubuntu"; not True, False, None or set) or
// numbers joined by dots ("10.0.0.4").
func notPyLiteral(text string) bool {
	if text == "" {
		return false
	}
	switch text {
	case "True", "False", "None", "set":
		return false
	}
	name := text[0] == '_' || text[0] >= 'a' && text[0] <= 'z' || text[0] >= 'A' && text[0] <= 'Z'
	dots, digits := 0, 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if !name {
				return false
			}
		default:
			return false
		}
	}
	if name {
		return dots == 0
	}
	return dots >= 2 && digits > 0
}

// iniValueEval is iniValue by ast.literal_eval.
func iniValueEval(text string, pos Pos, origin Origin) (*Value, error) {
	pv, err := pyLiteralEval(text)
	if err != nil {
		if errors.Is(err, errUnhashable) {
			return nil, err
		}
		return &Value{Kind: KindString, Str: text, Raw: text, Pos: pos, Origin: origin}, nil
	}
	v := pyToValue(pv, pos, origin)
	v.Raw = text
	return v, nil
}

func pyToValue(p *pyVal, pos Pos, origin Origin) *Value {
	v := &Value{Pos: pos, Origin: origin}
	switch p.kind {
	case pyNone:
		v.Kind = KindNull
	case pyBool:
		v.Kind, v.Bool = KindBool, p.b
	case pyInt:
		v.Kind, v.Int = KindInt, p.i
	case pyFloat:
		v.Kind, v.Float = KindFloat, p.f
	case pyComplex:
		v.Kind, v.Str = KindString, pyComplexRepr(p.f, p.imag)
	case pyStr:
		v.Kind, v.Str, v.Quoted = KindString, p.s, true
	case pyBytes:
		// to_text of bytes is a str without template trust: ansible-inventory
		// prints it as {"__ansible_unsafe": ...}
		v.Kind, v.Str, v.Quoted, v.Unsafe = KindString, p.s, true, true
		if !utf8.ValidString(p.s) {
			// Python keeps the bytes as surrogates, ansible-inventory prints "?"
			v.Str = questionInvalid(p.s)
		}
	case pyEllipsis:
		v.Kind, v.Str = KindString, "..."
	case pyTuple, pyList, pySet:
		v.Kind = KindList
		items := p.items
		if p.kind == pySet {
			items = pySetOrder(items)
		}
		v.List = make([]*Value, 0, len(items))
		for _, it := range items {
			v.List = append(v.List, pyToValue(it, pos, origin))
		}
	case pyDict:
		v.Kind, v.Map = KindMap, NewMap()
		for i, k := range p.keys {
			kv := pyToValue(k, pos, origin)
			_, ks := keyIdentity(kv)
			v.Map.Set(ks, pyToValue(p.items[i], pos, origin))
		}
	}
	return v
}

// pySetOrder approximates CPython's iteration order of a small set of
// non-negative ints (by hash slot); other sets keep the written order
// (CPython's order for strings varies per process).
func pySetOrder(items []*pyVal) []*pyVal {
	allSmall := true
	for _, it := range items {
		if it.kind != pyInt || it.i.Sign() < 0 || it.i.Cmp(big.NewInt(math.MaxInt32)) > 0 {
			allSmall = false
		}
	}
	if !allSmall || len(items) == 0 {
		return items
	}
	// CPython: table of 8 slots for up to 4 items (grows at 3/5 full),
	// slot = hash & mask, linear probing first.
	size := 8
	for len(items)*5 >= size*3 {
		size *= 4
	}
	slots := make([]*pyVal, size)
	for _, it := range items {
		h := it.i.Int64()
		mask := int64(size - 1)
		i := h & mask
		perturb := h
		for slots[i] != nil {
			// LINEAR_PROBES (9) then perturbation; good enough for small sets
			perturb >>= 5
			i = (i*5 + 1 + perturb) & mask
		}
		slots[i] = it
	}
	out := make([]*pyVal, 0, len(items))
	for _, s := range slots {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// pyStrip is Python's str.strip() for the whitespace an inventory line can hold.
func pyStrip(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		switch r {
		case ' ', '\t', '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
			return true
		}
		return r >= 0x2000 && r <= 0x200a
	})
}

// pySplitLines is Python's str.splitlines(). The lines of valid UTF-8 are
// pieces of s itself: a large inventory's text is not copied rune by rune.
func pySplitLines(s string) []string {
	if !utf8.ValidString(s) {
		return pySplitLinesRunes(s)
	}
	out := make([]string, 0, strings.Count(s, "\n")+1)
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		size := 1
		sep := false
		switch {
		case c == '\n', c == '\r', c == '\v', c == '\f', c == 0x1c, c == 0x1d, c == 0x1e:
			sep = true
		case c >= 0x80:
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			sep = r == 0x85 || r == 0x2028 || r == 0x2029
		}
		if !sep {
			i += size
			continue
		}
		out = append(out, s[start:i])
		i += size
		if c == '\r' && i < len(s) && s[i] == '\n' {
			i++
		}
		start = i
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// pySplitLinesRunes is pySplitLines for any string, rune by rune (an
// invalid byte becomes U+FFFD, as []rune makes it).
func pySplitLinesRunes(s string) []string {
	var out []string
	rs := []rune(s)
	var cur []rune
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch r {
		case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			out = append(out, string(cur))
			cur = cur[:0]
			if r == '\r' && i+1 < len(rs) && rs[i+1] == '\n' {
				i++
			}
			continue
		}
		cur = append(cur, r)
	}
	if len(cur) > 0 {
		out = append(out, string(cur))
	}
	return out
}

func bytesSplitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i])
		if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			i++
		}
		b = b[i+1:]
	}
	return out
}

// questionInvalid replaces each byte that is not UTF-8 with "?".
func questionInvalid(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			sb.WriteByte('?')
		} else {
			sb.WriteString(s[i : i+n])
		}
		i += n
	}
	return sb.String()
}

// surrogateEscapeBase maps an undecodable byte b to the rune base+b, in a
// private-use plane, as Python's surrogateescape maps it to U+DC00+b (a
// surrogate cannot live in a Go string). ansible-inventory prints such a
// character as "?", and so does ListJSON.
const surrogateEscapeBase = 0x10FF00

func surrogateEscape(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(surrogateEscapeBase + rune(b[0]))
		} else {
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String()
}
