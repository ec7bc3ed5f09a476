package parser

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// Pos is where a value was written: a file with 1-based line and column, or
// the command line for extra vars (File "-e", Line and Col 0).
type Pos struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
}

// ExtraVarsFile is the File of a Pos for a value given with -e on the command line.
const ExtraVarsFile = "-e"

// String renders the position as "file:line:col", "file:line", "file" or "-e".
func (p Pos) String() string {
	switch {
	case p.File == "":
		return ""
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Kind is the Python type Ansible gives a value after loading it.
type Kind uint8

// Kinds, named after the Python type Ansible's loaders produce.
const (
	KindNull   Kind = iota // None
	KindBool               // bool
	KindInt                // int
	KindFloat              // float
	KindString             // str
	KindList               // list
	KindMap                // dict
	KindVault              // !vault-encrypted str; never decrypted
)

var kindNames = [...]string{"NoneType", "bool", "int", "float", "str", "list", "dict", "vault"}

// String is the Python type name ("str", "bool", ...), as Ansible's error messages say it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Origin says which syntax produced a value, so findings can word the fix
// the way the user wrote it.
type Origin uint8

// Origins of values.
const (
	OriginYAML     Origin = iota // YAML file: inventory, group_vars, host_vars, -e @file.yml
	OriginJSON                   // JSON file or inline JSON extra vars
	OriginINIHost                // INI inventory host line: ast.literal_eval, else str
	OriginINIGroup               // INI [group:vars] section: ast.literal_eval, else str
	OriginExtraKV                // -e key=value: always str
	OriginAnsible                // a value Ansible resolved and handed to a module
)

var originNames = [...]string{"yaml", "json", "ini-host", "ini-group-vars", "extra-vars-kv", "ansible"}

func (o Origin) String() string {
	if int(o) < len(originNames) {
		return originNames[o]
	}
	return fmt.Sprintf("Origin(%d)", o)
}

// Value is one loaded value with the type Ansible gives it and where it was written.
//
// Exactly one of the payload fields is meaningful, chosen by Kind:
// Bool, Int, Float, Str (KindString, and the ciphertext of KindVault), List, Map.
type Value struct {
	Kind   Kind
	Bool   bool
	Int    *big.Int // Python ints are unbounded
	Float  float64
	Str    string
	List   []*Value
	Map    *Map
	Pos    Pos
	Origin Origin
	// Quoted is true for a YAML scalar written in quotes (or a block scalar)
	// and for an INI value written in quotes: its Kind is str by choice of syntax.
	Quoted bool
	// Raw is the scalar's text as written (without quotes), for messages.
	Raw string
	// Unsafe is true for a string marked !unsafe (or "__ansible_unsafe" in
	// JSON): Ansible never templates it, and ansible-inventory prints it as
	// {"__ansible_unsafe": "..."}.
	Unsafe bool
}

// Templated reports whether the value is a string holding Jinja ("{{", "{%"
// or "{#"): Ansible renders it at run time, so its literal type says nothing.
func (v *Value) Templated() bool {
	if v == nil || v.Kind != KindString {
		return false
	}
	return strings.Contains(v.Str, "{{") || strings.Contains(v.Str, "{%") || strings.Contains(v.Str, "{#")
}

// IsVault reports whether the value is an encrypted !vault string.
func (v *Value) IsVault() bool { return v != nil && v.Kind == KindVault }

// Display renders the value for a finding: strings in double quotes, vault
// values as "<vault>" (never their ciphertext), lists and maps abridged.
func (v *Value) Display() string {
	if v == nil {
		return "null"
	}
	switch v.Kind {
	case KindNull:
		return "null"
	case KindBool:
		if v.Bool {
			return "true"
		}
		return "false"
	case KindInt:
		if v.Int == nil {
			return "0"
		}
		return v.Int.String()
	case KindFloat:
		return fmt.Sprint(v.Float)
	case KindString:
		return fmt.Sprintf("%q", v.Str)
	case KindVault:
		return "<vault>"
	case KindList:
		return fmt.Sprintf("[list of %d]", len(v.List))
	case KindMap:
		n := 0
		if v.Map != nil {
			n = len(v.Map.Keys)
		}
		return fmt.Sprintf("{map of %d}", n)
	}
	return "?"
}

// Map is an ordered mapping, as Python dicts keep insertion order. Keys are
// the str() of the loaded key, as json.dumps writes non-string keys.
type Map struct {
	Keys   []string
	Values map[string]*Value

	keyPos map[string]Pos
	// keyKind records keys that were not strings in the source (an int or
	// bool YAML key), by their kind.
	keyKind map[string]Kind
}

// NewMap returns an empty Map. Its Values map is made by the first Set, so
// the million empty Maps of a large inventory's hosts cost no map each.
func NewMap() *Map { return &Map{} }

// Get returns the value of key, or nil.
func (m *Map) Get(key string) *Value {
	if m == nil {
		return nil
	}
	return m.Values[key]
}

// Set adds or replaces key; a replaced key keeps its place, as in a Python dict.
func (m *Map) Set(key string, v *Value) {
	if m.Values == nil {
		m.Values = map[string]*Value{}
	}
	if _, ok := m.Values[key]; !ok {
		m.Keys = append(m.Keys, key)
	}
	m.Values[key] = v
}

// grow makes room for n more keys.
func (m *Map) grow(n int) {
	if m.Values == nil {
		m.Values = make(map[string]*Value, n)
	}
	m.Keys = slices.Grow(m.Keys, n)
}

// Len is the number of keys.
func (m *Map) Len() int {
	if m == nil {
		return 0
	}
	return len(m.Keys)
}

// KeyPos is where key was written (its own line:col, not its value's), or
// the zero Pos when unknown.
func (m *Map) KeyPos(key string) Pos {
	if m == nil || m.keyPos == nil {
		return Pos{}
	}
	return m.keyPos[key]
}

// SetKeyPos records where key was written.
func (m *Map) SetKeyPos(key string, p Pos) {
	if m.keyPos == nil {
		m.keyPos = map[string]Pos{}
	}
	m.keyPos[key] = p
}

// KeyKind is the type the key had in the source: KindString for a string
// key, else KindInt, KindBool, KindFloat or KindNull (JSON-style text in Keys).
func (m *Map) KeyKind(key string) Kind {
	if m == nil || m.keyKind == nil {
		return KindString
	}
	if k, ok := m.keyKind[key]; ok {
		return k
	}
	return KindString
}

// Scalar is v's payload as a plain Go value, as parser/ansiblebool takes
// it: nil (None), bool, *big.Int, float64 or string. A list, a map or a
// vault value is returned as v itself (no scalar).
func (v *Value) Scalar() any {
	if v == nil {
		return nil
	}
	switch v.Kind {
	case KindNull:
		return nil
	case KindBool:
		return v.Bool
	case KindInt:
		if v.Int == nil {
			return new(big.Int)
		}
		return v.Int
	case KindFloat:
		return v.Float
	case KindString:
		return v.Str
	}
	return v
}
