package parser

import (
	"bytes"
	"strings"

	"gopkg.in/yaml.v3"
)

// Most vars files are plain block YAML: "key: value" lines, nested
// mappings by indentation, lists of scalars, comments. yaml.v3 takes
// about 20 µs and a few KB of buffers for even a three-line host_vars
// file, and a large inventory has thousands of them. fastYAML reads that
// plain subset itself into the node tree yaml.v3 gives it (kind, style,
// value, line, column: what the loader reads) and refuses everything
// else, which yaml.v3 then reads: flow collections, anchors, aliases,
// tags, block scalars, multi-line and escaped scalars, tabs, CR, non-ASCII
// text, several documents. FuzzFastYAML holds the two readings equal.

// fastLine is one content line: 1-based number, indentation, the text
// after the indentation without trailing spaces.
type fastLine struct {
	no, indent int
	text       string
}

// fastYAML returns the document node of data, or ok false when data is not
// in the subset it reads.
func fastYAML(data []byte) (doc *yaml.Node, ok bool) {
	if bytes.IndexByte(data, '\r') >= 0 || bytes.IndexByte(data, '\t') >= 0 {
		return nil, false
	}
	var lines []fastLine
	text := string(data)
	started := false // a "---" or content seen
	for no := 1; len(text) > 0; no++ {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		for i := 0; i < len(line); i++ {
			if line[i] >= 0x7f || line[i] < 0x20 { // DEL, control characters, non-ASCII
				return nil, false
			}
		}
		trimmed := strings.TrimLeft(line, " ")
		trimmed = strings.TrimRight(trimmed, " ")
		switch {
		case trimmed == "":
			continue
		case trimmed[0] == '#':
			continue
		case trimmed == "---" && len(trimmed) == len(line) && !started:
			started = true
			continue
		case strings.IndexByte(trimmed, '#') >= 0, strings.HasPrefix(trimmed, "---"), strings.HasPrefix(trimmed, "..."):
			return nil, false
		}
		started = true
		lines = append(lines, fastLine{no: no, indent: len(line) - len(strings.TrimLeft(line, " ")), text: trimmed})
	}
	if len(lines) == 0 || lines[0].indent != 0 {
		return nil, false
	}
	p := fastParser{lines: lines}
	root, ok := p.block(-1)
	if !ok || p.at != len(lines) {
		return nil, false
	}
	return &yaml.Node{Kind: yaml.DocumentNode, Line: root.Line, Column: root.Column, Content: []*yaml.Node{root}}, true
}

type fastParser struct {
	lines []fastLine
	at    int // the next line
}

// block reads the mapping or sequence starting at the current line, the
// value of a key indented by parentIndent (-1 for the document's).
func (p *fastParser) block(parentIndent int) (*yaml.Node, bool) {
	l := p.lines[p.at]
	if l.indent <= parentIndent && !(l.indent == parentIndent && isSeqItem(l.text)) {
		return nil, false
	}
	if isSeqItem(l.text) {
		return p.sequence(l.indent, parentIndent)
	}
	return p.mapping(l.indent, parentIndent)
}

func isSeqItem(s string) bool { return s == "-" || strings.HasPrefix(s, "- ") }

// mapping reads "key: value" lines indented by indent.
func (p *fastParser) mapping(indent, parentIndent int) (*yaml.Node, bool) {
	first := p.lines[p.at]
	m := &yaml.Node{Kind: yaml.MappingNode, Line: first.no, Column: indent + 1}
	for p.at < len(p.lines) {
		l := p.lines[p.at]
		if l.indent < indent {
			if l.indent > parentIndent {
				return nil, false // between this mapping and its parent's
			}
			break
		}
		if l.indent > indent || isSeqItem(l.text) {
			return nil, false
		}
		colon := keyEnd(l.text)
		if colon <= 0 {
			return nil, false
		}
		key := l.text[:colon]
		if !plainKey(key) {
			return nil, false
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key, Line: l.no, Column: indent + 1})
		rest := strings.TrimLeft(l.text[colon+1:], " ")
		p.at++
		if rest == "" {
			// the value is the block below: deeper, or a list at the key's indentation
			if p.at == len(p.lines) {
				return nil, false
			}
			next := p.lines[p.at]
			if next.indent < indent || next.indent == indent && !isSeqItem(next.text) {
				return nil, false // an empty value: null, left to yaml.v3
			}
			v, ok := p.block(indent)
			if !ok {
				return nil, false
			}
			m.Content = append(m.Content, v)
			continue
		}
		v, ok := scalarNode(rest, l.no, len(l.text)-len(rest)+indent+1)
		if !ok {
			return nil, false
		}
		m.Content = append(m.Content, v)
		if p.at < len(p.lines) && p.lines[p.at].indent > indent {
			return nil, false // a continuation line, or a block after a value
		}
	}
	return m, true
}

// sequence reads "- scalar" lines indented by indent.
func (p *fastParser) sequence(indent, parentIndent int) (*yaml.Node, bool) {
	first := p.lines[p.at]
	s := &yaml.Node{Kind: yaml.SequenceNode, Line: first.no, Column: indent + 1}
	for p.at < len(p.lines) {
		l := p.lines[p.at]
		if l.indent != indent || !isSeqItem(l.text) {
			switch {
			case l.indent > indent:
				return nil, false
			case l.indent == indent && indent > parentIndent:
				return nil, false // not an item, in a list indented under its key
			case l.indent < indent && l.indent > parentIndent:
				return nil, false // between this list and its parent's
			}
			break
		}
		item := strings.TrimLeft(strings.TrimPrefix(l.text, "-"), " ")
		if item == "" || isSeqItem(item) || keyEnd(item) >= 0 {
			return nil, false // a null, nested list or mapping item: left to yaml.v3
		}
		v, ok := scalarNode(item, l.no, len(l.text)-len(item)+indent+1)
		if !ok {
			return nil, false
		}
		s.Content = append(s.Content, v)
		p.at++
		if p.at < len(p.lines) && p.lines[p.at].indent > indent {
			return nil, false
		}
	}
	return s, true
}

// keyEnd is the index of the colon ending a mapping key in s (a ':'
// followed by a space or the end), or -1.
func keyEnd(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' && (i+1 == len(s) || s[i+1] == ' ') {
			return i
		}
	}
	return -1
}

// plainKey accepts the keys vars files use: letters, digits, '_', '-',
// '.' and '/', starting with a letter, a digit or '_', shorter than the
// 1024 characters YAML allows a simple key.
func plainKey(s string) bool {
	if s == "" || len(s) > 1000 || !(isAlnum(s[0]) || s[0] == '_') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(isAlnum(c) || c == '_' || c == '-' || c == '.' || c == '/') {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// scalarNode reads a one-line scalar at line:col: quoted without escapes
// or quotes inside, or plain of letters, digits, spaces and "_-./:+=~"
// (starting with a letter, a digit, '_', '.', '/', '~', or '-' before a
// digit).
func scalarNode(s string, line, col int) (*yaml.Node, bool) {
	n := &yaml.Node{Kind: yaml.ScalarNode, Line: line, Column: col}
	switch s[0] {
	case '"':
		inner := s[1:]
		if len(inner) == 0 || inner[len(inner)-1] != '"' {
			return nil, false
		}
		inner = inner[:len(inner)-1]
		if strings.ContainsAny(inner, "\"\\") {
			return nil, false
		}
		n.Style, n.Value = yaml.DoubleQuotedStyle, inner
		return n, true
	case '\'':
		inner := s[1:]
		if len(inner) == 0 || inner[len(inner)-1] != '\'' {
			return nil, false
		}
		inner = inner[:len(inner)-1]
		if strings.IndexByte(inner, '\'') >= 0 {
			return nil, false
		}
		n.Style, n.Value = yaml.SingleQuotedStyle, inner
		return n, true
	}
	c0 := s[0]
	if !(isAlnum(c0) || c0 == '_' || c0 == '.' || c0 == '/' || c0 == '~' || c0 == '-' && len(s) > 1 && '0' <= s[1] && s[1] <= '9') {
		return nil, false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isAlnum(c), c == '_', c == '-', c == '.', c == '/', c == '+', c == '=', c == '~':
		case c == ' ':
			if s[i-1] == ':' {
				return nil, false
			}
		case c == ':':
			if i+1 == len(s) || s[i+1] == ' ' {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	n.Value = s
	return n, true
}
