package parser

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// maxExpandedValues bounds how many values a YAML file may expand to through
// aliases: a "billion laughs" file fails with an error instead of eating
// memory (ansible-core itself would hang serialising it).
const maxExpandedValues = 1_000_000

// YAML 1.1 implicit resolvers, verbatim from PyYAML's yaml/resolver.py,
// which ansible-core's AnsibleLoader uses (yaml.v3's own resolution follows
// YAML 1.2 and must not be used).
var (
	reYAMLFloat = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	reYAMLInt   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	reYAMLTime  = regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`)
	// PyYAML's timestamp_regexp used by construct_yaml_timestamp.
	reYAMLTimeParts = regexp.MustCompile(`^([0-9][0-9][0-9][0-9])-([0-9][0-9]?)-([0-9][0-9]?)(?:(?:[Tt]|[ \t]+)([0-9][0-9]?):([0-9][0-9]):([0-9][0-9])(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9][0-9]?)(?::([0-9][0-9]))?))?)?$`)
)

const (
	tagNull  = "tag:yaml.org,2002:null"
	tagBool  = "tag:yaml.org,2002:bool"
	tagInt   = "tag:yaml.org,2002:int"
	tagFloat = "tag:yaml.org,2002:float"
	tagStr   = "tag:yaml.org,2002:str"
	tagTime  = "tag:yaml.org,2002:timestamp"
	tagMerge = "tag:yaml.org,2002:merge"
	tagValue = "tag:yaml.org,2002:value"
	tagMap   = "tag:yaml.org,2002:map"
	tagSeq   = "tag:yaml.org,2002:seq"
)

// yamlBools and yamlNulls are exactly what PyYAML's bool and null
// resolvers match (a map is faster than the regexes and says the same).
var (
	yamlBools = map[string]bool{"yes": true, "Yes": true, "YES": true, "no": true, "No": true, "NO": true,
		"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true,
		"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true}
	yamlNulls = map[string]bool{"~": true, "null": true, "Null": true, "NULL": true, "": true}
)

// resolvePlain is PyYAML's Resolver.resolve for a plain scalar: the
// resolvers registered for its first character, in registration order.
func resolvePlain(v string) string {
	if v == "" {
		return tagNull
	}
	first := v[0]
	if strings.IndexByte("yYnNtTfFoO", first) >= 0 && yamlBools[v] {
		return tagBool
	}
	if strings.IndexByte("-+0123456789.", first) >= 0 {
		if reYAMLFloat.MatchString(v) {
			return tagFloat
		}
		if first != '.' && reYAMLInt.MatchString(v) {
			return tagInt
		}
	}
	if first == '<' && v == "<<" {
		return tagMerge
	}
	if strings.IndexByte("~nN", first) >= 0 && yamlNulls[v] {
		return tagNull
	}
	if first >= '0' && first <= '9' && len(v) >= 10 && v[4] == '-' && reYAMLTime.MatchString(v) {
		return tagTime
	}
	if v == "=" {
		return tagValue
	}
	return tagStr
}

// longTag expands yaml.v3's "!!x" shorthand.
func longTag(t string) string {
	if strings.HasPrefix(t, "!!") {
		return "tag:yaml.org,2002:" + t[2:]
	}
	return t
}

type yamlLoader struct {
	file     string
	memo     map[memoKey]*Value
	sizes    map[*yaml.Node]int64
	expanded int64
	unsafe   int
	warn     func(string)
}

type memoKey struct {
	n      *yaml.Node
	unsafe bool
}

// YAMLError is a YAML file that ansible-core cannot load, with the place.
type YAMLError struct {
	Pos Pos
	Msg string
}

func (e *YAMLError) Error() string { return e.Pos.String() + ": " + e.Msg }

// loadYAML parses data as ansible-core's AnsibleLoader does (YAML 1.1
// scalars, !vault, !unsafe, merge keys) and returns its single document, or
// nil for an empty one. warn receives duplicate-key warnings.
func loadYAML(file string, data []byte, warn func(string)) (v *Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("%s: YAML could not be loaded: %v", file, r)
		}
	}()
	var doc yaml.Node
	if fast, ok := fastYAML(data); ok {
		doc = *fast
	} else if mayHoldSeveralDocs(data) {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, nil
			}
			return nil, yamlErrAt(file, data, err)
		}
		var second yaml.Node
		if err := dec.Decode(&second); err == nil {
			return nil, &YAMLError{Pos{file, second.Line, second.Column}, "expected a single document in the stream, but found another document"}
		} else if !errors.Is(err, io.EOF) {
			return nil, yamlErrAt(file, data, err)
		}
	} else if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlErrAt(file, data, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	if warn == nil {
		warn = func(string) {}
	}
	l := &yamlLoader{file: file, memo: map[memoKey]*Value{}, warn: warn}
	if hasAlias(doc.Content[0], 0) {
		l.sizes = map[*yaml.Node]int64{}
	}
	if l.sizes == nil {
		// no aliases: nothing can expand
	} else if n := l.size(doc.Content[0], 0); n > maxExpandedValues {
		return nil, &YAMLError{Pos{file, doc.Content[0].Line, doc.Content[0].Column},
			fmt.Sprintf("YAML aliases expand to more than %d values (an alias bomb?); refusing to load", maxExpandedValues)}
	}
	return l.construct(doc.Content[0])
}

var reYAMLErrLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

var reUnknownAnchor = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)

// yamlErrAt is yamlErr with the place found in data for the errors
// yaml.v3 gives without a line: an unknown alias (at its first "*name"),
// invalid UTF-8, and control characters such as NUL (at the first such
// byte). Lines and columns count from 1, columns in characters.
func yamlErrAt(file string, data []byte, err error) error {
	s := err.Error()
	if m := reUnknownAnchor.FindStringSubmatch(s); m != nil {
		re := regexp.MustCompile(`\*` + regexp.QuoteMeta(m[1]) + `(?:[\s,\]}]|$)`)
		if loc := re.FindIndex(data); loc != nil {
			return &YAMLError{offsetPos(file, data, loc[0]), fmt.Sprintf("found undefined alias %q", m[1])}
		}
		return &YAMLError{Pos{File: file}, fmt.Sprintf("found undefined alias %q", m[1])}
	}
	switch {
	case strings.Contains(s, "invalid leading UTF-8 octet"), strings.Contains(s, "invalid trailing UTF-8 octet"),
		strings.Contains(s, "incomplete UTF-8 octet sequence"):
		if i := invalidUTF8At(data); i >= 0 {
			return &YAMLError{offsetPos(file, data, i), fmt.Sprintf("invalid UTF-8 (byte 0x%02x): ansible-core reads YAML files as UTF-8", data[i])}
		}
	case strings.Contains(s, "control characters are not allowed"):
		if i := controlCharAt(data); i >= 0 {
			name := fmt.Sprintf("U+%04X", data[i])
			if data[i] == 0 {
				name = "NUL (U+0000)"
			}
			return &YAMLError{offsetPos(file, data, i), fmt.Sprintf("control character %s is not allowed in YAML", name)}
		}
	}
	return yamlErr(file, err)
}

// offsetPos is the line:col of byte offset i in data.
func offsetPos(file string, data []byte, i int) Pos {
	line := 1 + bytes.Count(data[:i], []byte{'\n'})
	start := bytes.LastIndexByte(data[:i], '\n') + 1
	return Pos{File: file, Line: line, Col: 1 + utf8.RuneCount(data[start:i])}
}

// invalidUTF8At is the offset of the first byte of data that is not UTF-8, or -1.
func invalidUTF8At(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// controlCharAt is the offset of the first C0 control character YAML
// forbids (all but tab, LF, CR), or DEL, or -1.
func controlCharAt(data []byte) int {
	for i, c := range data {
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f {
			return i
		}
	}
	return -1
}

// yamlErr turns yaml.v3's "yaml: line N: msg" into "file:N: msg".
func yamlErr(file string, err error) error {
	s := err.Error()
	if m := reYAMLErrLine.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &YAMLError{Pos{File: file, Line: n}, m[2]}
	}
	return fmt.Errorf("%s: %s", file, strings.TrimPrefix(s, "yaml: "))
}

// mayHoldSeveralDocs reports whether data has a document marker ("---" or
// "...") after its first line; only then is the slower stream decoder used
// to find a second document.
func mayHoldSeveralDocs(data []byte) bool {
	return bytes.Contains(data, []byte("\n---")) || bytes.Contains(data, []byte("\n..."))
}

// hasAlias reports whether the tree under n uses an alias (or is too deep
// to walk cheaply, in which case size decides).
func hasAlias(n *yaml.Node, depth int) bool {
	if n.Kind == yaml.AliasNode || depth > 10000 {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c, depth+1) {
			return true
		}
	}
	return false
}

// size is the number of values n expands to, aliases included, memoised so
// that a bomb is measured without being expanded.
func (l *yamlLoader) size(n *yaml.Node, depth int) int64 {
	if s, ok := l.sizes[n]; ok {
		return s
	}
	if depth > 10000 {
		return maxExpandedValues + 1
	}
	l.sizes[n] = maxExpandedValues + 1 // cycle guard
	var s int64 = 1
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		s = l.size(n.Alias, depth+1)
	}
	for _, c := range n.Content {
		s += l.size(c, depth+1)
		if s > maxExpandedValues {
			s = maxExpandedValues + 1
			break
		}
	}
	l.sizes[n] = s
	return s
}

func (l *yamlLoader) pos(n *yaml.Node) Pos { return Pos{File: l.file, Line: n.Line, Col: n.Column} }

func (l *yamlLoader) errf(n *yaml.Node, format string, a ...any) error {
	return &YAMLError{l.pos(n), fmt.Sprintf(format, a...)}
}

func (l *yamlLoader) construct(n *yaml.Node) (*Value, error) {
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return nil, l.errf(n, "unknown alias %q", n.Value)
		}
		return l.construct(n.Alias)
	}
	if n.Anchor == "" {
		// only anchored nodes can be reached twice
		return l.constructNew(n)
	}
	key := memoKey{n, l.unsafe > 0}
	if v, ok := l.memo[key]; ok {
		return v, nil
	}
	v, err := l.constructNew(n)
	if err != nil {
		return nil, err
	}
	l.memo[key] = v
	return v, nil
}

// nodeTag is the tag PyYAML's composer gives n: explicit, or resolved.
func (l *yamlLoader) nodeTag(n *yaml.Node) string {
	if n.Style&yaml.TaggedStyle != 0 && n.Tag != "" {
		t := longTag(n.Tag)
		if t == "!" {
			if n.Kind == yaml.ScalarNode {
				return tagStr
			}
		} else {
			return t
		}
	}
	switch n.Kind {
	case yaml.MappingNode:
		return tagMap
	case yaml.SequenceNode:
		return tagSeq
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return tagStr
	}
	return resolvePlain(n.Value)
}

func (l *yamlLoader) constructNew(n *yaml.Node) (*Value, error) {
	tag := l.nodeTag(n)
	switch tag {
	case "!unsafe", "!vault", "!vault-encrypted":
		// ansible-core re-resolves the node as if it were untagged and plain
		implicit := tagMap
		switch n.Kind {
		case yaml.SequenceNode:
			implicit = tagSeq
		case yaml.ScalarNode:
			implicit = resolvePlain(n.Value)
		}
		if tag == "!unsafe" {
			l.unsafe++
			defer func() { l.unsafe-- }()
		}
		v, err := l.constructAs(n, implicit)
		if err != nil {
			return nil, err
		}
		if tag == "!unsafe" {
			return v, nil
		}
		if v.Kind != KindString {
			return nil, l.errf(n, "the %q tag requires a string value", tag)
		}
		return &Value{Kind: KindVault, Str: v.Str, Pos: v.Pos, Origin: OriginYAML, Raw: v.Raw, Quoted: v.Quoted}, nil
	}
	return l.constructAs(n, tag)
}

func (l *yamlLoader) scalarValue(n *yaml.Node, k Kind) *Value {
	return &Value{Kind: k, Pos: l.pos(n), Origin: OriginYAML, Raw: n.Value,
		Quoted: n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0}
}

func (l *yamlLoader) constructAs(n *yaml.Node, tag string) (*Value, error) {
	if n.Kind != yaml.ScalarNode {
		switch {
		case tag == tagMap && n.Kind == yaml.MappingNode:
			return l.mapping(n)
		case tag == tagSeq && n.Kind == yaml.SequenceNode:
			v := &Value{Kind: KindList, Pos: l.pos(n), Origin: OriginYAML, List: make([]*Value, 0, len(n.Content))}
			for _, c := range n.Content {
				cv, err := l.construct(c)
				if err != nil {
					return nil, err
				}
				v.List = append(v.List, cv)
			}
			return v, nil
		case (tag == "tag:yaml.org,2002:omap" || tag == "tag:yaml.org,2002:pairs") && n.Kind == yaml.SequenceNode:
			// deprecated in ansible-core 2.19: a list of (key, value) pairs
			l.warn(fmt.Sprintf("%s: Use of the YAML `!!%s` tag is deprecated.", l.pos(n), strings.TrimPrefix(tag, "tag:yaml.org,2002:")))
			v := &Value{Kind: KindList, Pos: l.pos(n), Origin: OriginYAML, List: []*Value{}}
			for _, item := range n.Content {
				if item.Kind == yaml.AliasNode && item.Alias != nil {
					item = item.Alias
				}
				if item.Kind != yaml.MappingNode || len(item.Content) != 2 {
					return nil, l.errf(item, "while constructing an ordered map: expected a single mapping item")
				}
				k, err := l.construct(item.Content[0])
				if err != nil {
					return nil, err
				}
				val, err := l.construct(item.Content[1])
				if err != nil {
					return nil, err
				}
				v.List = append(v.List, &Value{Kind: KindList, Pos: l.pos(item), Origin: OriginYAML, List: []*Value{k, val}})
			}
			return v, nil
		case tag == "tag:yaml.org,2002:set" && n.Kind == yaml.MappingNode:
			m, err := l.mapping(n)
			if err != nil {
				return nil, err
			}
			v := &Value{Kind: KindList, Pos: l.pos(n), Origin: OriginYAML}
			for _, k := range m.Map.Keys {
				v.List = append(v.List, &Value{Kind: KindString, Str: k, Raw: k, Pos: m.Pos, Origin: OriginYAML})
			}
			return v, nil
		}
		return nil, l.errf(n, "could not determine a constructor for the tag %q", tag)
	}
	v := l.scalarValue(n, KindString)
	s := n.Value
	switch tag {
	case tagStr:
		v.Str = s
		v.Unsafe = l.unsafe > 0
		return v, nil
	case tagNull:
		v.Kind = KindNull
		return v, nil
	case tagBool:
		switch strings.ToLower(s) {
		case "yes", "true", "on":
			v.Kind, v.Bool = KindBool, true
		case "no", "false", "off":
			v.Kind = KindBool
		default:
			return nil, l.errf(n, "invalid boolean %q", s)
		}
		return v, nil
	case tagInt:
		i, err := yamlInt(s)
		if err != nil {
			return nil, l.errf(n, "invalid integer %q", s)
		}
		v.Kind, v.Int = KindInt, i
		return v, nil
	case tagFloat:
		f, err := yamlFloat(s)
		if err != nil {
			return nil, l.errf(n, "invalid float %q", s)
		}
		v.Kind, v.Float = KindFloat, f
		return v, nil
	case tagTime:
		ts, err := yamlTimestamp(s)
		if err != nil {
			return nil, l.errf(n, "invalid timestamp %q: %v", s, err)
		}
		v.Str = ts
		return v, nil
	case "tag:yaml.org,2002:binary":
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
		if err != nil {
			return nil, l.errf(n, "failed to decode base64 data: %v", err)
		}
		v.Str = string(b)
		return v, nil
	}
	return nil, l.errf(n, "could not determine a constructor for the tag %q", tag)
}

// mapping builds a dict as PyYAML's SafeConstructor (flatten_mapping for
// "<<" merge keys: merged pairs first, later keys win) and warns on
// duplicate keys as ansible-core does.
func (l *yamlLoader) mapping(n *yaml.Node) (*Value, error) {
	pairs, err := l.flatten(n, 0)
	if err != nil {
		return nil, err
	}
	m := NewMap()
	ids := map[string]string{}
	for _, p := range pairs {
		kv, err := l.construct(p[0])
		if err != nil {
			return nil, err
		}
		if kv.Kind == KindList || kv.Kind == KindMap {
			return nil, l.errf(p[0], "found unhashable key")
		}
		vv, err := l.construct(p[1])
		if err != nil {
			return nil, err
		}
		id, ks := keyIdentity(kv)
		if prev, dup := ids[id]; dup {
			l.warn(fmt.Sprintf("%s: Found duplicate mapping key %s. Using last defined value only.", l.pos(p[0]), ks))
			ks = prev
		}
		ids[id] = ks
		m.Set(ks, vv)
		m.SetKeyPos(ks, l.pos(p[0]))
		if kv.Kind != KindString && kv.Kind != KindVault {
			if m.keyKind == nil {
				m.keyKind = map[string]Kind{}
			}
			m.keyKind[ks] = kv.Kind
		}
	}
	return &Value{Kind: KindMap, Map: m, Pos: l.pos(n), Origin: OriginYAML}, nil
}

func (l *yamlLoader) flatten(n *yaml.Node, depth int) ([][2]*yaml.Node, error) {
	if depth > 1000 {
		return nil, l.errf(n, "merge keys nested too deeply")
	}
	var merged, own [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && l.nodeTag(k) == tagMerge {
			target := v
			if target.Kind == yaml.AliasNode && target.Alias != nil {
				target = target.Alias
			}
			switch target.Kind {
			case yaml.MappingNode:
				sub, err := l.flatten(target, depth+1)
				if err != nil {
					return nil, err
				}
				merged = append(merged, sub...)
			case yaml.SequenceNode:
				var subs [][][2]*yaml.Node
				for _, s := range target.Content {
					if s.Kind == yaml.AliasNode && s.Alias != nil {
						s = s.Alias
					}
					if s.Kind != yaml.MappingNode {
						return nil, l.errf(s, "while constructing a mapping: expected a mapping for merging, but found %s", nodeKindName(s))
					}
					sub, err := l.flatten(s, depth+1)
					if err != nil {
						return nil, err
					}
					subs = append(subs, sub)
				}
				for i := len(subs) - 1; i >= 0; i-- {
					merged = append(merged, subs[i]...)
				}
			default:
				return nil, l.errf(v, "while constructing a mapping: expected a mapping or list of mappings for merging, but found %s", nodeKindName(target))
			}
			continue
		}
		own = append(own, [2]*yaml.Node{k, v})
	}
	return append(merged, own...), nil
}

func nodeKindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return "scalar"
	case yaml.SequenceNode:
		return "sequence"
	case yaml.MappingNode:
		return "mapping"
	}
	return "node"
}

// keyIdentity returns a key's identity under Python equality (1 == 1.0 ==
// True) and its text as json.dumps writes a dict key.
func keyIdentity(k *Value) (id, text string) {
	switch k.Kind {
	case KindNull:
		return "N", "null"
	case KindBool:
		if k.Bool {
			return "i1", "true"
		}
		return "i0", "false"
	case KindInt:
		return "i" + k.Int.String(), k.Int.String()
	case KindFloat:
		t := jsonFloat(k.Float)
		if k.Float == math.Trunc(k.Float) && !math.IsInf(k.Float, 0) {
			bi, _ := new(big.Float).SetFloat64(k.Float).Int(nil)
			return "i" + bi.String(), t
		}
		return "f" + t, t
	case KindVault:
		return "v" + k.Str, k.Str
	}
	return "s" + k.Str, k.Str
}

// yamlInt is SafeConstructor.construct_yaml_int.
func yamlInt(s string) (*big.Int, error) {
	v := strings.ReplaceAll(s, "_", "")
	sign := 1
	if v != "" && (v[0] == '-' || v[0] == '+') {
		if v[0] == '-' {
			sign = -1
		}
		v = v[1:]
	}
	var n *big.Int
	ok := false
	switch {
	case v == "0":
		n, ok = big.NewInt(0), true
	case strings.HasPrefix(v, "0b"):
		n, ok = new(big.Int).SetString(v[2:], 2)
	case strings.HasPrefix(v, "0x"):
		n, ok = new(big.Int).SetString(v[2:], 16)
	case strings.HasPrefix(v, "0"):
		n, ok = new(big.Int).SetString(v, 8)
	case strings.Contains(v, ":"):
		n, ok = big.NewInt(0), true
		for _, part := range strings.Split(v, ":") {
			d, err := strconv.ParseInt(part, 10, 64)
			if err != nil {
				return nil, err
			}
			n.Mul(n, big.NewInt(60))
			n.Add(n, big.NewInt(d))
		}
	default:
		n, ok = new(big.Int).SetString(v, 10)
	}
	if !ok || n == nil {
		return nil, errors.New("invalid int")
	}
	if sign < 0 {
		n.Neg(n)
	}
	return n, nil
}

// yamlFloat is SafeConstructor.construct_yaml_float.
func yamlFloat(s string) (float64, error) {
	v := strings.ToLower(strings.ReplaceAll(s, "_", ""))
	sign := 1.0
	if v != "" && (v[0] == '-' || v[0] == '+') {
		if v[0] == '-' {
			sign = -1
		}
		v = v[1:]
	}
	switch {
	case v == ".inf":
		return sign * math.Inf(1), nil
	case v == ".nan":
		return math.NaN(), nil
	case strings.Contains(v, ":"):
		f := 0.0
		for _, part := range strings.Split(v, ":") {
			d, err := strconv.ParseFloat(part, 64)
			if err != nil {
				return 0, err
			}
			f = f*60 + d
		}
		return sign * f, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		var ne *strconv.NumError
		if !errors.As(err, &ne) || ne.Err != strconv.ErrRange {
			return 0, err
		}
	}
	return sign * f, nil
}

// yamlTimestamp is SafeConstructor.construct_yaml_timestamp rendered as
// Python's isoformat(), which is how ansible-inventory prints it.
func yamlTimestamp(s string) (string, error) {
	m := reYAMLTimeParts.FindStringSubmatch(s)
	if m == nil {
		return "", errors.New("not a timestamp")
	}
	atoi := func(x string) int { n, _ := strconv.Atoi(x); return n }
	year, month, day := atoi(m[1]), atoi(m[2]), atoi(m[3])
	if year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return "", errors.New("day is out of range for month")
	}
	date := fmt.Sprintf("%04d-%02d-%02d", year, month, day)
	if m[4] == "" {
		return date, nil
	}
	hour, minute, second := atoi(m[4]), atoi(m[5]), atoi(m[6])
	if hour > 23 || minute > 59 || second > 59 {
		return "", errors.New("time out of range")
	}
	out := fmt.Sprintf("%sT%02d:%02d:%02d", date, hour, minute, second)
	if m[7] != "" {
		frac := m[7]
		if len(frac) > 6 {
			frac = frac[:6]
		}
		for len(frac) < 6 {
			frac += "0"
		}
		if frac != "000000" {
			out += "." + frac
		}
	}
	switch {
	case m[9] != "":
		th, tm := atoi(m[10]), atoi(m[11])
		total := th*60 + tm
		if total >= 24*60 {
			return "", errors.New("offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24)")
		}
		sign := m[9]
		if total == 0 {
			sign = "+"
		}
		out += fmt.Sprintf("%s%02d:%02d", sign, total/60, total%60)
	case m[8] == "Z":
		out += "+00:00"
	}
	return out, nil
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
