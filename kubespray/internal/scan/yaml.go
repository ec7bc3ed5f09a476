package scan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The implicit resolvers of PyYAML's yaml.resolver.Resolver (YAML 1.1),
// which ansible-core 2.19's AnsibleLoader uses: a plain (unquoted, untagged)
// scalar gets the first tag whose expression matches, else str.
var (
	reBool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	reFloat = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	reInt   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	reNull  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
	reDate  = regexp.MustCompile(`^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]$`)
	reTime  = regexp.MustCompile(`^[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?$`)
)

// Python type names of loaded values, as Ansible's type_debug says them.
const (
	TypeBool      = "bool"
	TypeStr       = "str"
	TypeInt       = "int"
	TypeFloat     = "float"
	TypeList      = "list"
	TypeDict      = "dict"
	TypeNone      = "NoneType"
	TypeDate      = "date"
	TypeDatetime  = "datetime"
	TypeVault     = "vault"
	TypeTemplated = "templated"
)

// Value is one loaded YAML value: its Python type and a JSON-compatible
// rendering (ints as json-safe numbers or decimal strings when too big,
// non-finite floats as strings, dict keys as Python's str() of the key).
type Value struct {
	Type string
	Data any
	Line int
	Col  int
}

// Entry is one top-level key of a vars file with its value.
type Entry struct {
	Name  string
	Line  int
	Value Value
}

// LoadVarsYAML loads a vars file (defaults, vars, group_vars) as
// ansible-core's AnsibleLoader does: YAML 1.1 implicit types, quoted scalars
// are str, !unsafe is str, !vault is an encrypted str, merge keys apply and
// a repeated key keeps its last value. It returns the top-level keys in file
// order (a repeated key at the place of its last definition). An empty file
// or one holding only comments yields no entries; a file whose document is
// not a mapping is an error naming file:line.
func LoadVarsYAML(file string, data []byte) ([]Entry, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("%s:%d: more than one YAML document in a vars file", file, extra.Line)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, nil
		}
		root = root.Content[0]
	}
	root = deref(root)
	if root.Kind == yaml.ScalarNode {
		if v, err := convert(file, root, 0); err == nil && v.Type == TypeNone {
			return nil, nil // only comments, or an explicit null
		}
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d:%d: vars file is not a mapping of variable names to values", file, root.Line, root.Column)
	}
	cv := &converter{file: file}
	pairs, err := cv.mappingPairs(root, 0)
	if err != nil {
		return nil, err
	}
	var out []Entry
	index := map[string]int{}
	for _, p := range pairs {
		k, err := cv.convert(p.key, 1)
		if err != nil {
			return nil, err
		}
		name := pyStr(k)
		v, err := cv.convert(p.val, 1)
		if err != nil {
			return nil, err
		}
		e := Entry{Name: name, Line: p.key.Line, Value: v}
		if i, ok := index[name]; ok {
			// A Python dict keeps the first insertion's place; the value is the last.
			out[i].Value = v
			out[i].Line = p.key.Line
			continue
		}
		index[name] = len(out)
		out = append(out, e)
	}
	return out, nil
}

type pair struct{ key, val *yaml.Node }

const maxDepth = 200

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxDepth; i++ {
		n = n.Alias
	}
	return n
}

// mappingPairs flattens merge keys ("<<") as PyYAML's flatten_mapping does:
// merged pairs come first, the mapping's own pairs after (and win).
func (cv *converter) mappingPairs(n *yaml.Node, depth int) ([]pair, error) {
	file := cv.file
	cv.nodes += len(n.Content) / 2
	if cv.nodes > maxNodes {
		return nil, fmt.Errorf("%s:%d:%d: too many values (merge keys expand to more than %d)", file, n.Line, n.Column, maxNodes)
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("%s:%d:%d: YAML nested too deep", file, n.Line, n.Column)
	}
	var merged, own []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 && k.Value == "<<" && (k.Style&yaml.TaggedStyle == 0 || k.Tag == "!!merge") {
			v = deref(v)
			var srcs []*yaml.Node
			switch v.Kind {
			case yaml.MappingNode:
				srcs = []*yaml.Node{v}
			case yaml.SequenceNode:
				for _, s := range v.Content {
					s = deref(s)
					if s.Kind != yaml.MappingNode {
						return nil, fmt.Errorf("%s:%d:%d: merge key expects mappings", file, s.Line, s.Column)
					}
					srcs = append(srcs, s)
				}
				// PyYAML merges a sequence of mappings last-first.
				for i, j := 0, len(srcs)-1; i < j; i, j = i+1, j-1 {
					srcs[i], srcs[j] = srcs[j], srcs[i]
				}
			default:
				return nil, fmt.Errorf("%s:%d:%d: merge key expects a mapping", file, v.Line, v.Column)
			}
			for _, s := range srcs {
				ps, err := cv.mappingPairs(s, depth+1)
				if err != nil {
					return nil, err
				}
				merged = append(merged, ps...)
			}
			continue
		}
		own = append(own, pair{k, v})
	}
	return append(merged, own...), nil
}

// maxNodes bounds the values built from one file, aliases expanded: a
// "billion laughs" document fails instead of exhausting memory.
const maxNodes = 1 << 18

type converter struct {
	file  string
	nodes int
}

func convert(file string, n *yaml.Node, depth int) (Value, error) {
	c := &converter{file: file}
	return c.convert(n, depth)
}

func (cv *converter) convert(n *yaml.Node, depth int) (Value, error) {
	file := cv.file
	cv.nodes++
	if cv.nodes > maxNodes {
		return Value{}, fmt.Errorf("%s:%d:%d: too many values (aliases expand to more than %d)", file, n.Line, n.Column, maxNodes)
	}
	if depth > maxDepth {
		return Value{}, fmt.Errorf("%s:%d:%d: YAML nested too deep", file, n.Line, n.Column)
	}
	n = deref(n)
	if n == nil {
		return Value{Type: TypeNone}, nil
	}
	at := func(typ string, data any) (Value, error) {
		return Value{Type: typ, Data: data, Line: n.Line, Col: n.Column}, nil
	}
	tagged := n.Style&yaml.TaggedStyle != 0
	switch n.Tag {
	case "!unsafe":
		if n.Kind != yaml.ScalarNode {
			// !unsafe on a collection marks its strings; the type is the collection's.
			break
		}
		return at(TypeStr, n.Value)
	case "!vault", "!vault-encrypted":
		return at(TypeVault, "<vault>")
	}
	switch n.Kind {
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := cv.convert(c, depth+1)
			if err != nil {
				return Value{}, err
			}
			list = append(list, v.Data)
		}
		return at(TypeList, list)
	case yaml.MappingNode:
		pairs, err := cv.mappingPairs(n, depth)
		if err != nil {
			return Value{}, err
		}
		m := make(map[string]any, len(pairs))
		for _, p := range pairs {
			k, err := cv.convert(p.key, depth+1)
			if err != nil {
				return Value{}, err
			}
			v, err := cv.convert(p.val, depth+1)
			if err != nil {
				return Value{}, err
			}
			m[pyStr(k)] = v.Data
		}
		return at(TypeDict, m)
	case yaml.ScalarNode:
	default:
		return Value{}, fmt.Errorf("%s:%d:%d: unexpected YAML node", file, n.Line, n.Column)
	}
	s := n.Value
	var tag string
	switch {
	case tagged:
		tag = n.ShortTag()
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		tag = "!!str"
	default:
		tag = resolve11(s)
	}
	switch tag {
	case "!!null":
		return at(TypeNone, nil)
	case "!!bool":
		switch strings.ToLower(s) {
		case "yes", "true", "on":
			return at(TypeBool, true)
		case "no", "false", "off":
			return at(TypeBool, false)
		}
		return Value{}, fmt.Errorf("%s:%d:%d: %q is not a YAML boolean", file, n.Line, n.Column, s)
	case "!!int":
		i, ok := parseInt11(s)
		if !ok {
			return Value{}, fmt.Errorf("%s:%d:%d: %q is not a YAML integer", file, n.Line, n.Column, s)
		}
		return at(TypeInt, intData(i))
	case "!!float":
		f, ok := parseFloat11(s)
		if !ok {
			return Value{}, fmt.Errorf("%s:%d:%d: %q is not a YAML float", file, n.Line, n.Column, s)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return at(TypeFloat, s)
		}
		return at(TypeFloat, f)
	case "!!timestamp":
		if reDate.MatchString(s) {
			return at(TypeDate, s)
		}
		return at(TypeDatetime, s)
	case "!!str", "!!binary":
		return at(TypeStr, s)
	}
	if tagged {
		return Value{}, fmt.Errorf("%s:%d:%d: unknown YAML tag %s", file, n.Line, n.Column, n.Tag)
	}
	return at(TypeStr, s)
}

// resolve11 is PyYAML's implicit resolution of a plain scalar.
func resolve11(s string) string {
	switch {
	case reBool.MatchString(s):
		return "!!bool"
	case reFloat.MatchString(s):
		return "!!float"
	case reInt.MatchString(s):
		return "!!int"
	case reNull.MatchString(s):
		return "!!null"
	case reDate.MatchString(s) || reTime.MatchString(s):
		return "!!timestamp"
	case s == "=":
		return "!!str" // tag:yaml.org,2002:value, constructed as str by Ansible's SafeConstructor
	}
	return "!!str"
}

// parseInt11 follows PyYAML SafeConstructor.construct_yaml_int.
func parseInt11(s string) (*big.Int, bool) {
	v := strings.ReplaceAll(s, "_", "")
	sign := 1
	if v != "" && (v[0] == '-' || v[0] == '+') {
		if v[0] == '-' {
			sign = -1
		}
		v = v[1:]
	}
	i := new(big.Int)
	var ok bool
	switch {
	case v == "0":
		ok = true
	case strings.HasPrefix(v, "0b"):
		_, ok = i.SetString(v[2:], 2)
	case strings.HasPrefix(v, "0x"):
		_, ok = i.SetString(v[2:], 16)
	case strings.HasPrefix(v, "0"):
		_, ok = i.SetString(v[1:], 8)
	case strings.Contains(v, ":"):
		ok = true
		base := big.NewInt(1)
		parts := strings.Split(v, ":")
		for j := len(parts) - 1; j >= 0; j-- {
			d, err := strconv.ParseInt(parts[j], 10, 64)
			if err != nil {
				return nil, false
			}
			i.Add(i, new(big.Int).Mul(big.NewInt(d), base))
			base.Mul(base, big.NewInt(60))
		}
	default:
		_, ok = i.SetString(v, 10)
	}
	if sign < 0 {
		i.Neg(i)
	}
	return i, ok
}

// parseFloat11 follows PyYAML SafeConstructor.construct_yaml_float.
func parseFloat11(s string) (float64, bool) {
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
		return sign * math.Inf(1), true
	case v == ".nan":
		return math.NaN(), true
	case strings.Contains(v, ":"):
		parts := strings.Split(v, ":")
		val, base := 0.0, 1.0
		for j := len(parts) - 1; j >= 0; j-- {
			d, err := strconv.ParseFloat(parts[j], 64)
			if err != nil {
				return 0, false
			}
			val += d * base
			base *= 60
		}
		return sign * val, true
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, false
	}
	return sign * f, true
}

// intData renders an int for JSON: an int64 when it fits, else its decimal text.
func intData(i *big.Int) any {
	if i.IsInt64() {
		return i.Int64()
	}
	return i.String()
}

// pyStr is Python's str() of a loaded dict key, as json.dumps and Ansible's
// hostvars show non-string keys.
func pyStr(v Value) string {
	switch d := v.Data.(type) {
	case nil:
		return "None"
	case bool:
		if d {
			return "True"
		}
		return "False"
	case string:
		return d
	case int64:
		return strconv.FormatInt(d, 10)
	case float64:
		return pyFloat(d)
	}
	return fmt.Sprint(v.Data)
}

// pyFloat is Python's repr() of a float (shortest round-trip, ".0" for
// integral values, exponent form outside 1e-4..1e16).
func pyFloat(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e16 {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	abs := math.Abs(f)
	if abs >= 1e16 || abs < 1e-4 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// Python writes e+16 / e-05 with at least two exponent digits; Go does too.
		return s
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
