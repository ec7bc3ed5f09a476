package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Facts arrive from Ansible: the collection's action plugin sends them as
// Python's json.dumps writes them, and the report reads them with Python's
// rules, as the action plugin did when it drew the report itself: a value
// is printed as str() prints it, "x or default" falls back on every falsy
// value, and expected/found values are shown as json.dumps(sort_keys=True)
// writes them. Numbers are kept as written (Python wrote them as it prints
// them); objects keep their keys' order (a repeated key its first place
// and last value, as json.loads does).

// pyDict is a JSON object with its keys in order.
type pyDict struct {
	keys []string
	vals map[string]any
}

// get is dict.get: the value of k, nil (None) when there is none.
func (d *pyDict) get(k string) any {
	if d == nil {
		return nil
	}
	return d.vals[k]
}

// asDict is v when it is an object (a Mapping), else nil.
func asDict(v any) *pyDict {
	d, _ := v.(*pyDict)
	return d
}

// decodePy reads one JSON value: nil, bool, json.Number, string, []any or
// *pyDict.
func decodePy(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodePyValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func decodePyValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			d := &pyDict{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodePyValue(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := d.vals[k]; !dup {
					d.keys = append(d.keys, k)
				}
				d.vals[k] = v
			}
			_, err := dec.Token() // }
			return d, err
		case '[':
			l := []any{}
			for dec.More() {
				v, err := decodePyValue(dec)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := dec.Token() // ]
			return l, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}

// pyStr is str(v).
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

// pyOr is str(v or def): def when v is falsy.
func pyOr(v any, def string) string {
	if !pyTruthy(v) {
		return def
	}
	return pyStr(v)
}

// pyTruthy is bool(v).
func pyTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return err != nil || f != 0
	case []any:
		return len(x) > 0
	case *pyDict:
		return len(x.keys) > 0
	}
	return true
}

// pyEmpty is v in (None, "", [], {}).
func pyEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case *pyDict:
		return len(x.keys) == 0
	}
	return false
}

// pyRepr is repr(v).
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case json.Number:
		return string(x)
	case string:
		return pyStrRepr(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *pyDict:
		parts := make([]string, len(x.keys))
		for i, k := range x.keys {
			parts[i] = pyStrRepr(k) + ": " + pyRepr(x.vals[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// pyStrRepr is repr(s) of a str: single quotes unless s holds one and no
// double quote; non-printable characters escaped.
func pyStrRepr(s string) string {
	quote := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	var b strings.Builder
	b.WriteRune(quote)
	for _, r := range s {
		switch {
		case r == quote || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < ' ' || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f || unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteRune(quote)
	return b.String()
}

// pyJSON is json.dumps(v, sort_keys=True): ASCII only, ", " and ": "
// between items.
func pyJSON(v any) string {
	var b strings.Builder
	writePyJSON(&b, v)
	return b.String()
}

func writePyJSON(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case json.Number:
		b.WriteString(string(x))
	case string:
		writePyJSONString(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writePyJSON(b, e)
		}
		b.WriteByte(']')
	case *pyDict:
		keys := append([]string(nil), x.keys...)
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writePyJSONString(b, k)
			b.WriteString(": ")
			writePyJSON(b, x.vals[k])
		}
		b.WriteByte('}')
	default:
		writePyJSONString(b, fmt.Sprint(v))
	}
}

func writePyJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r >= ' ' && r <= '~':
			b.WriteRune(r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			fmt.Fprintf(b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
}

// runes is len(s) in Python: characters, not bytes.
func runes(s string) int { return utf8.RuneCountInString(s) }

// ljust is s.ljust(width).
func ljust(s string, width int) string {
	if n := runes(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// rstrip is s.rstrip(): Python's whitespace also holds the separators
// U+001C to U+001F.
func rstrip(s string) string {
	return strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) })
}

// truncate is s when it has at most n characters, else its first n and
// "...".
func truncate(s string, n int) string {
	if runes(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k] + "..."
		}
		i++
	}
	return s
}
