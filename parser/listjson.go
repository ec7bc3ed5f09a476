package parser

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"
)

// internalStaticVars is ansible-core's C.INTERNAL_STATIC_VARS, which
// ansible-inventory removes from the host variables it prints.
var internalStaticVars = map[string]bool{}

func init() {
	for _, k := range []string{"ansible_async_path", "ansible_collection_name", "ansible_config_file",
		"ansible_dependent_role_names", "ansible_diff_mode", "ansible_facts", "ansible_forks",
		"ansible_inventory_sources", "ansible_limit", "ansible_play_batch", "ansible_play_hosts",
		"ansible_play_hosts_all", "ansible_play_role_names", "ansible_playbook_python", "ansible_role_name",
		"ansible_role_names", "ansible_run_tags", "ansible_skip_tags", "ansible_verbosity", "ansible_version",
		"inventory_dir", "inventory_file", "inventory_hostname", "inventory_hostname_short", "groups",
		"group_names", "hostvars", "playbook_dir", "play_hosts", "role_name", "role_names", "role_path",
		"role_uuid"} {
		internalStaticVars[k] = true
	}
}

// ListJSON renders the inventory as `ansible-inventory --list` does.
//
// The shape is ansible-core 2.19's: one key per non-empty group with
// "hosts" and "children" lists (empty lists and empty groups left out,
// "all" never lists hosts), and "_meta" with "hostvars" (each host's
// resolved variables, see HostVars, without Ansible's internal variables)
// and "profile": "inventory_legacy". Keys are sorted and indented by four
// spaces, as json.dumps(sort_keys=True, indent=4). Values print as Ansible
// prints them: floats in Python's repr (1.0, 1e+20, Infinity, NaN), !vault
// values as {"__ansible_vault": "<ciphertext>"}, !unsafe strings as
// {"__ansible_unsafe": "..."}; templated strings verbatim.
func (inv *Inventory) ListJSON() ([]byte, error) { return inv.ListJSONExtra(nil) }

// ListJSONExtra is ListJSON with extra vars (-e) applied to every host,
// as `ansible-inventory --list -e ...` does.
func (inv *Inventory) ListJSONExtra(extra *Map) ([]byte, error) {
	var buf bytes.Buffer
	if err := inv.WriteListJSON(&buf, extra); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteListJSON writes ListJSONExtra's output to w as it is rendered:
// _meta.hostvars, most of the output, is never held whole in memory (for
// a large group_vars file it is several times the file's size).
func (inv *Inventory) WriteListJSON(w io.Writer, extra *Map) error {
	root := NewMap()
	seen := map[string]bool{}
	var format func(g *Group)
	format = func(g *Group) {
		gm := NewMap()
		root.Set(g.Name, &Value{Kind: KindMap, Map: gm})
		if g.Name != "all" {
			var hs []*Value
			for _, h := range g.Hosts {
				hs = append(hs, &Value{Kind: KindString, Str: h.Name})
			}
			if len(hs) > 0 {
				gm.Set("hosts", &Value{Kind: KindList, List: hs})
			}
		}
		var cs []*Value
		for _, c := range g.Children {
			cs = append(cs, &Value{Kind: KindString, Str: c.Name})
			if !seen[c.Name] {
				format(c)
				seen[c.Name] = true
			}
		}
		if len(cs) > 0 {
			gm.Set("children", &Value{Kind: KindList, List: cs})
		}
		if gm.Len() == 0 {
			delete(root.Values, g.Name)
			for i, k := range root.Keys {
				if k == g.Name {
					root.Keys = append(root.Keys[:i:i], root.Keys[i+1:]...)
					break
				}
			}
		}
	}
	if all := inv.groups["all"]; all != nil {
		format(all)
	}
	// _meta.hostvars is written straight to w where a marker stands in the
	// rendered root.
	meta := &Value{Kind: KindMap, Map: NewMap()}
	root.Set("_meta", meta)
	meta.Map.Set("hostvars", &Value{Kind: kindRawJSON, Str: hostvarsMarker})
	meta.Map.Set("profile", &Value{Kind: KindString, Str: "inventory_legacy"})
	var head bytes.Buffer
	writeJSON(&head, &Value{Kind: KindMap, Map: root}, 0)
	before, after, _ := bytes.Cut(head.Bytes(), []byte(hostvarsMarker))
	bw, ok := w.(jsonWriter)
	var flush func() error
	if !ok {
		b := bufio.NewWriterSize(w, 64<<10)
		bw, flush = b, b.Flush
	}
	bw.Write(before)
	inv.writeHostvars(bw, extra)
	if _, err := bw.Write(after); err != nil {
		return err
	}
	if flush != nil {
		return flush()
	}
	return nil
}

// jsonWriter is what the JSON writers write to: a bytes.Buffer, or a
// bufio.Writer (whose first error sticks and is returned by its last
// Write or Flush).
type jsonWriter interface {
	io.Writer
	io.ByteWriter
	io.StringWriter
	WriteRune(rune) (int, error)
}

// hostvarsMarker stands for _meta.hostvars in the rendered root; it cannot
// occur in JSON text (a raw NUL).
const hostvarsMarker = "\x00hostvars\x00"

// kindRawJSON marks a Value whose Str is JSON already rendered at the
// indentation it is written at; only ListJSON builds such values.
const kindRawJSON Kind = 255

// hostvarsIndent is the depth of a variable's value in --list output:
// root, _meta, hostvars, host.
const hostvarsIndent = 4

// writeHostvars writes _meta.hostvars: each host's variables, sorted,
// without Ansible's internal ones. Group variables are shared by many hosts
// through the same *Value, so each value is rendered once and reused.
func (inv *Inventory) writeHostvars(b jsonWriter, extra *Map) {
	rendered := map[*Value][]byte{}
	var scratch bytes.Buffer
	render := func(v *Value) []byte {
		if out, ok := rendered[v]; ok {
			return out
		}
		scratch.Reset()
		writeJSON(&scratch, v, hostvarsIndent)
		out := append([]byte(nil), scratch.Bytes()...)
		rendered[v] = out
		return out
	}
	// The group layer's keys are sorted once per layer (hosts in the same
	// groups share it); a host's own and the extra keys are merged in.
	groupKeys := map[*Map][]string{}
	sortedKeys := func(m *Map) []string {
		if ks, ok := groupKeys[m]; ok {
			return ks
		}
		var ks []string
		for _, k := range m.Keys {
			if !internalStaticVars[k] {
				ks = append(ks, k)
			}
		}
		sort.Slice(ks, func(i, j int) bool { return pyStrLess(ks[i], ks[j]) })
		groupKeys[m] = ks
		return ks
	}
	var sorted, own []string
	wroteHost := false
	hosts := inv.HostsUnder("all")
	sort.SliceStable(hosts, func(i, j int) bool { return pyStrLess(hosts[i].Name, hosts[j].Name) })
	for _, h := range hosts {
		group, hostLayer := inv.HostVarLayers(h)
		hv := hostVarsView{group, hostLayer, extra}
		own = own[:0]
		for _, m := range []*Map{hostLayer, extra} {
			for _, k := range m.keys() {
				if !internalStaticVars[k] && group.Get(k) == nil && !containsString(own, k) {
					own = append(own, k)
				}
			}
		}
		sort.Slice(own, func(i, j int) bool { return pyStrLess(own[i], own[j]) })
		sorted = mergeSorted(sorted[:0], sortedKeys(group), own)
		if len(sorted) == 0 {
			continue
		}
		if wroteHost {
			b.WriteString(",")
		} else {
			b.WriteString("{")
		}
		wroteHost = true
		b.WriteString("\n            ")
		writeJSONString(b, h.Name)
		b.WriteString(": {")
		for i, k := range sorted {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n                ")
			writeJSONString(b, k)
			b.WriteString(": ")
			b.Write(render(hv.get(k)))
		}
		b.WriteString("\n            }")
	}
	if !wroteHost {
		b.WriteString("{}")
		return
	}
	b.WriteString("\n        }")
}

// hostVarsView is HostVars as its layers: extra over host over group.
type hostVarsView struct{ group, host, extra *Map }

func (v hostVarsView) get(k string) *Value {
	if x := v.extra.Get(k); x != nil {
		return x
	}
	if x := v.host.Get(k); x != nil {
		return x
	}
	return v.group.Get(k)
}

// keys is m.Keys, nil for a nil map.
func (m *Map) keys() []string {
	if m == nil {
		return nil
	}
	return m.Keys
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// mergeSorted appends to dst the merge of a and b, both sorted by
// pyStrLess and without common keys.
func mergeSorted(dst, a, b []string) []string {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if pyStrLess(b[j], a[i]) {
			dst = append(dst, b[j])
			j++
		} else {
			dst = append(dst, a[i])
			i++
		}
	}
	dst = append(dst, a[i:]...)
	return append(dst, b[j:]...)
}

// GroupsUnder is group name and its descendants, breadth first as Ansible
// walks them, each once; nil for an unknown group.
func (inv *Inventory) GroupsUnder(name string) []*Group {
	g := inv.groups[name]
	if g == nil {
		return nil
	}
	ordered := []*Group{g}
	seen := map[*Group]bool{g: true}
	for k := 0; k < len(ordered); k++ {
		for _, c := range ordered[k].Children {
			if !seen[c] {
				seen[c] = true
				ordered = append(ordered, c)
			}
		}
	}
	return ordered
}

// HostsUnder is Ansible's group.get_hosts(), i.e. groups[name]: the hosts
// of the group and its descendants, breadth first as Ansible walks them,
// each once; nil for an unknown group.
func (inv *Inventory) HostsUnder(name string) []*Host {
	var hosts []*Host
	hseen := map[*Host]bool{}
	for _, kid := range inv.GroupsUnder(name) {
		for _, h := range kid.Hosts {
			if !hseen[h] {
				hseen[h] = true
				hosts = append(hosts, h)
			}
		}
	}
	return hosts
}

// writeJSON writes v as Python's json.dumps(v, sort_keys=True, indent=4,
// ensure_ascii=False) would.
func writeJSON(b jsonWriter, v *Value, indent int) {
	nl := func(n int) {
		b.WriteByte('\n')
		for i := 0; i < n; i++ {
			b.WriteString("    ")
		}
	}
	switch v.Kind {
	case kindRawJSON:
		b.WriteString(v.Str)
	case KindNull:
		b.WriteString("null")
	case KindBool:
		if v.Bool {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case KindInt:
		if v.Int == nil {
			b.WriteString("0")
		} else {
			b.WriteString(v.Int.String())
		}
	case KindFloat:
		b.WriteString(jsonFloat(v.Float))
	case KindString:
		if v.Unsafe {
			b.WriteString("{")
			nl(indent + 1)
			b.WriteString(`"__ansible_unsafe": `)
			writeJSONString(b, v.Str)
			nl(indent)
			b.WriteString("}")
			return
		}
		writeJSONString(b, v.Str)
	case KindVault:
		b.WriteString("{")
		nl(indent + 1)
		b.WriteString(`"__ansible_vault": `)
		writeJSONString(b, v.Str)
		nl(indent)
		b.WriteString("}")
	case KindList:
		if len(v.List) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[")
		for i, it := range v.List {
			if i > 0 {
				b.WriteString(",")
			}
			nl(indent + 1)
			writeJSON(b, it, indent+1)
		}
		nl(indent)
		b.WriteString("]")
	case KindMap:
		if v.Map.Len() == 0 {
			b.WriteString("{}")
			return
		}
		keys := append([]string(nil), v.Map.Keys...)
		sort.Slice(keys, func(i, j int) bool { return pyStrLess(keys[i], keys[j]) })
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",")
			}
			nl(indent + 1)
			writeJSONString(b, k)
			b.WriteString(": ")
			writeJSON(b, v.Map.Values[k], indent+1)
		}
		nl(indent)
		b.WriteString("}")
	}
}

// pyStrLess orders strings by code point, as Python sorts str.
func pyStrLess(a, b string) bool {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return ra < rb
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) < len(b)
}

// jsonFloat is how Python's json module writes a float.
func jsonFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	return pyFloatRepr(f)
}

// writeJSONString escapes as Python's json with ensure_ascii=False.
func writeJSONString(b jsonWriter, s string) {
	b.WriteByte('"')
	if plainJSONString(s) {
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				b.WriteByte('?') // an undecodable byte, as ansible-inventory shows it
				continue
			}
		}
		if r >= surrogateEscapeBase+0x80 && r <= surrogateEscapeBase+0xff {
			b.WriteByte('?')
			continue
		}
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteString(strconv.FormatInt(int64(r)>>4, 16))
				b.WriteString(strconv.FormatInt(int64(r)&15, 16))
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// HostJSON renders one host's variables as `ansible-inventory --host` does.
func (inv *Inventory) HostJSON(h *Host, extra *Map) ([]byte, error) {
	hv := inv.HostVars(h, extra)
	out := NewMap()
	for _, k := range hv.Keys {
		if !internalStaticVars[k] {
			out.Set(k, hv.Values[k])
		}
	}
	var buf bytes.Buffer
	writeJSON(&buf, &Value{Kind: KindMap, Map: out}, 0)
	return buf.Bytes(), nil
}

// plainJSONString reports whether s is printable ASCII needing no escape,
// the common case, which is then written as it is.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
