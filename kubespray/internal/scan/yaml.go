package scan

import (
	"fmt"
	"math"
	"regexp"

	"github.com/layercheck/layercheck/parser"
)

// PyYAML's timestamp resolvers: a plain scalar matching them is a Python
// date or datetime.
var (
	reDate = regexp.MustCompile(`^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]$`)
	reTime = regexp.MustCompile(`^[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?$`)
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
// rendering (ints as int64 or decimal strings when too big, non-finite
// floats as written, dict keys as Python's str() of the key). Unsafe is
// true for a !unsafe string, which Ansible never templates.
type Value struct {
	Type   string
	Data   any
	Line   int
	Col    int
	Unsafe bool
}

// Entry is one top-level key of a vars file with its value.
type Entry struct {
	Name  string
	Line  int
	Value Value
}

// LoadVarsYAML loads a vars file (defaults, vars, group_vars) with the
// parser package's YAML loader, which follows ansible-core's AnsibleLoader:
// YAML 1.1 implicit types, quoted scalars are str, !unsafe marks strings
// never templated, !vault is an encrypted str, merge keys apply and a
// repeated key keeps its first place and last value. It returns the
// top-level keys in file order. An empty file or one holding only comments
// (or an explicit null) yields no entries; a file whose document is not a
// mapping is an error naming file:line:col.
func LoadVarsYAML(file string, data []byte) ([]Entry, error) {
	root, err := parser.LoadYAML(file, data, nil)
	if err != nil {
		return nil, err
	}
	if root == nil || root.Kind == parser.KindNull {
		return nil, nil
	}
	if root.Kind != parser.KindMap || root.Map == nil {
		return nil, fmt.Errorf("%s: vars file is not a mapping of variable names to values", root.Pos)
	}
	out := make([]Entry, 0, root.Map.Len())
	for _, k := range root.Map.Keys {
		v := root.Map.Get(k)
		line := root.Map.KeyPos(k).Line
		if line == 0 && v != nil {
			line = v.Pos.Line
		}
		out = append(out, Entry{Name: k, Line: line, Value: fromParser(v)})
	}
	return out, nil
}

// fromParser gives a loaded value's Python type and JSON-compatible data.
func fromParser(v *parser.Value) Value {
	if v == nil {
		return Value{Type: TypeNone}
	}
	out := Value{Line: v.Pos.Line, Col: v.Pos.Col, Unsafe: v.Unsafe}
	switch v.Kind {
	case parser.KindNull:
		out.Type = TypeNone
	case parser.KindBool:
		out.Type, out.Data = TypeBool, v.Bool
	case parser.KindInt:
		out.Type = TypeInt
		switch {
		case v.Int == nil:
			out.Data = int64(0)
		case v.Int.IsInt64():
			out.Data = v.Int.Int64()
		default:
			out.Data = v.Int.String()
		}
	case parser.KindFloat:
		out.Type = TypeFloat
		if math.IsInf(v.Float, 0) || math.IsNaN(v.Float) {
			out.Data = v.Raw
		} else {
			out.Data = v.Float
		}
	case parser.KindString:
		out.Type, out.Data = TypeStr, v.Str
		// The loader renders a YAML timestamp as its isoformat() str;
		// Ansible's type is date or datetime.
		if !v.Quoted && v.Raw != "" {
			switch {
			case reDate.MatchString(v.Raw):
				out.Type = TypeDate
			case reTime.MatchString(v.Raw):
				out.Type = TypeDatetime
			}
		}
	case parser.KindVault:
		out.Type, out.Data = TypeVault, "<vault>"
	case parser.KindList:
		list := make([]any, 0, len(v.List))
		for _, e := range v.List {
			list = append(list, fromParser(e).Data)
		}
		out.Type, out.Data = TypeList, list
	case parser.KindMap:
		m := make(map[string]any, v.Map.Len())
		if v.Map != nil {
			for _, k := range v.Map.Keys {
				m[k] = fromParser(v.Map.Get(k)).Data
			}
		}
		out.Type, out.Data = TypeDict, m
	default:
		out.Type = v.Kind.String()
	}
	return out
}
