package scan

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// The binary form of a File: what a lint reads at its start. The JSON form
// (FileName) is what Generate writes and review reads; decoding it took
// most of a small lint's time (encoding/json scans every byte and makes a
// string per occurrence). The binary form holds the same File, its
// numbers already converted (NormalizeNumbers), every string once in a
// table, so that a decode makes one string for all of them and then only
// reads varints. BinaryFileName's files are made from the JSON ones by
// Transcode (go generate, after Generate); a test keeps them in step.
//
// Layout: binMagic; the string table (count, each length, then the bytes
// of all of them); the File, field by field in declaration order.
// Integers are varints, strings and map keys indexes into the table, a
// bool one byte. A slice or map is its length plus one, 0 for nil (the
// JSON's absent field and its empty list differ, and so do they here); a
// pointer 0 (nil) or 1 and the value; a map's keys are sorted. A value of
// type any is a tag (valNil ... valMap) and its payload.
const binMagic = "layercheck kubespray catalogue 1\n"

// BinaryFileName is the bundled binary catalogue's file name for a version.
func BinaryFileName(version string) string { return "catalogue_" + version + ".bin.gz" }

// Tags of a value of type any.
const (
	valNil byte = iota
	valFalse
	valTrue
	valInt   // int64, zigzag varint
	valFloat // float64, 8 bytes little-endian
	valString
	valList
	valMap
)

// maxShapeDepth bounds the nesting of Shape.Items and of values a decode
// follows: deeper is a corrupt file, not a catalogue.
const maxShapeDepth = 64

// NormalizeNumbers gives f's values the Go types the YAML loader gives (as
// a checkout's catalogue has them), in place: a JSON decode (UseNumber)
// leaves json.Number, which becomes int64 when it is an integer, else
// float64, and float64 at the top of a definition of type float. Lists
// and maps are converted throughout: the definitions' defaults and the
// assert tasks' vars and loop items.
func NormalizeNumbers(f *File) {
	for _, defs := range f.Vars {
		for i := range defs {
			defs[i].Default = fromJSON(defs[i].Default, defs[i].Type)
		}
	}
	if f.Release != nil {
		for i := range f.Release.AssertTasks {
			t := &f.Release.AssertTasks[i]
			for k, v := range t.Vars {
				t.Vars[k] = fromJSON(v, "")
			}
			for j := range t.Loop {
				t.Loop[j] = fromJSON(t.Loop[j], "")
			}
		}
	}
}

// fromJSON converts one value for NormalizeNumbers (typ says the type at
// the top level; nested, a number without '.' or exponent is an int).
func fromJSON(v any, typ string) any {
	switch x := v.(type) {
	case json.Number:
		if typ == TypeFloat {
			f, _ := x.Float64()
			return f
		}
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = fromJSON(x[i], "")
		}
	case map[string]any:
		for k := range x {
			x[k] = fromJSON(x[k], "")
		}
	}
	return v
}

// Transcode reads a gzipped JSON catalogue (FileName's) and returns its
// gzipped binary form (BinaryFileName's).
func Transcode(jsonGz []byte) ([]byte, error) {
	f, err := Decode(jsonGz)
	if err != nil {
		return nil, err
	}
	NormalizeNumbers(f)
	b, err := EncodeBinary(f)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeBinaryGz reads a gzipped binary catalogue (BinaryFileName's).
func DecodeBinaryGz(gz []byte) (*File, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	// room for the whole (gzip's trailer gives its size) at once
	var size uint32
	if len(gz) >= 4 {
		size = binary.LittleEndian.Uint32(gz[len(gz)-4:])
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(int(size), 64<<20)+bytes.MinRead))
	if _, err := buf.ReadFrom(zr); err != nil {
		return nil, err
	}
	return DecodeBinary(buf.Bytes())
}

// binWriter writes the body and collects the string table.
type binWriter struct {
	body []byte
	ids  map[string]int
	strs []string
	err  error
}

// EncodeBinary renders f in the binary form. Its numbers must be
// normalized (NormalizeNumbers): a value of another type than nil, bool,
// int64, float64, string, []any and map[string]any is an error.
func EncodeBinary(f *File) ([]byte, error) {
	w := &binWriter{ids: map[string]int{}}
	w.file(f)
	if w.err != nil {
		return nil, w.err
	}
	out := []byte(binMagic)
	out = binary.AppendUvarint(out, uint64(len(w.strs)))
	for _, s := range w.strs {
		out = binary.AppendUvarint(out, uint64(len(s)))
	}
	for _, s := range w.strs {
		out = append(out, s...)
	}
	return append(out, w.body...), nil
}

func (w *binWriter) uvarint(n uint64) { w.body = binary.AppendUvarint(w.body, n) }
func (w *binWriter) int(n int)        { w.body = binary.AppendVarint(w.body, int64(n)) }

func (w *binWriter) bool(b bool) {
	if b {
		w.body = append(w.body, 1)
	} else {
		w.body = append(w.body, 0)
	}
}

func (w *binWriter) str(s string) {
	id, ok := w.ids[s]
	if !ok {
		id = len(w.strs)
		w.ids[s] = id
		w.strs = append(w.strs, s)
	}
	w.uvarint(uint64(id))
}

// length writes a slice's or map's length, 0 for nil.
func (w *binWriter) length(n int, isNil bool) {
	if isNil {
		w.uvarint(0)
		return
	}
	w.uvarint(uint64(n) + 1)
}

func (w *binWriter) ptr(isNil bool) { w.bool(!isNil) }

func (w *binWriter) strList(ss []string) {
	w.length(len(ss), ss == nil)
	for _, s := range ss {
		w.str(s)
	}
}

func (w *binWriter) strMap(m map[string]string) {
	w.length(len(m), m == nil)
	for _, k := range sortedKeys(m) {
		w.str(k)
		w.str(m[k])
	}
}

func (w *binWriter) strsMap(m map[string][]string) {
	w.length(len(m), m == nil)
	for _, k := range sortedKeys(m) {
		w.str(k)
		w.strList(m[k])
	}
}

func (w *binWriter) value(v any) {
	switch x := v.(type) {
	case nil:
		w.body = append(w.body, valNil)
	case bool:
		if x {
			w.body = append(w.body, valTrue)
		} else {
			w.body = append(w.body, valFalse)
		}
	case int64:
		w.body = append(w.body, valInt)
		w.body = binary.AppendVarint(w.body, x)
	case float64:
		w.body = append(w.body, valFloat)
		w.body = binary.LittleEndian.AppendUint64(w.body, math.Float64bits(x))
	case string:
		w.body = append(w.body, valString)
		w.str(x)
	case []any:
		w.body = append(w.body, valList)
		w.length(len(x), x == nil)
		for _, y := range x {
			w.value(y)
		}
	case map[string]any:
		w.body = append(w.body, valMap)
		w.length(len(x), x == nil)
		for _, k := range sortedKeys(x) {
			w.str(k)
			w.value(x[k])
		}
	default:
		if w.err == nil {
			w.err = fmt.Errorf("binary catalogue: a value of type %T (normalize the numbers first)", v)
		}
	}
}

func (w *binWriter) file(f *File) {
	w.str(f.Kubespray)
	w.str(f.Commit)
	w.str(f.CommitDate)
	w.str(f.Galaxy)
	w.strList(f.Files)
	w.strList(f.Skipped)
	w.length(len(f.Vars), f.Vars == nil)
	for _, name := range sortedKeys(f.Vars) {
		w.str(name)
		defs := f.Vars[name]
		w.length(len(defs), defs == nil)
		for i := range defs {
			w.def(&defs[i])
		}
	}
	w.ptr(f.Release == nil)
	if f.Release != nil {
		w.release(f.Release)
	}
}

func (w *binWriter) def(d *Def) {
	w.str(d.Type)
	w.bool(d.Inferred)
	w.bool(d.StringBool)
	w.value(d.Default)
	w.bool(d.DefaultOmitted)
	w.str(d.File)
	w.int(d.Line)
	w.str(d.Scope)
}

func (w *binWriter) release(r *Release) {
	w.str(r.AnsibleMin)
	w.str(r.AnsibleMax)
	w.str(r.AnsibleSource)
	w.length(len(r.Components), r.Components == nil)
	for _, k := range sortedKeys(r.Components) {
		w.str(k)
		c := r.Components[k]
		w.ptr(c == nil)
		if c != nil {
			w.strList(c.Versions)
			w.str(c.Checksums)
			w.str(c.Source)
			w.str(c.MinRequired)
			w.str(c.MinSource)
		}
	}
	w.ptr(r.Asserts == nil)
	if a := r.Asserts; a != nil {
		w.length(len(a.Choices), a.Choices == nil)
		for _, c := range a.Choices {
			w.str(c.Var)
			w.strList(c.Values)
			w.str(c.Expr)
			w.str(c.Task)
			w.str(c.Msg)
			w.str(c.Source)
		}
		w.length(len(a.Removed), a.Removed == nil)
		for _, x := range a.Removed {
			w.str(x.Name)
			w.str(x.Source)
		}
		w.bool(a.RemovedFound)
	}
	w.strMap(r.Exprs)
	w.length(len(r.Uses), r.Uses == nil)
	for _, k := range sortedKeys(r.Uses) {
		w.str(k)
		forms := r.Uses[k]
		w.length(len(forms), forms == nil)
		for _, form := range sortedKeys(forms) {
			w.str(form)
			u := forms[form]
			w.ptr(u == nil)
			if u != nil {
				w.str(u.Source)
				w.str(u.Expr)
				w.int(u.Count)
			}
		}
	}
	w.length(len(r.AssertTasks), r.AssertTasks == nil)
	for i := range r.AssertTasks {
		w.assertTask(&r.AssertTasks[i])
	}
	w.length(len(r.Checksums), r.Checksums == nil)
	for _, k := range sortedKeys(r.Checksums) {
		w.str(k)
		w.strsMap(r.Checksums[k])
	}
	w.shapes(r.Shapes)
	w.length(len(r.Guarded), r.Guarded == nil)
	for _, k := range sortedKeys(r.Guarded) {
		w.str(k)
		reads := r.Guarded[k]
		w.length(len(reads), reads == nil)
		for _, rd := range reads {
			w.str(rd.Source)
			w.length(len(rd.Guards), rd.Guards == nil)
			for _, g := range rd.Guards {
				w.str(g.Expr)
				w.str(g.Source)
				w.str(g.Kind)
				w.str(g.Else)
			}
		}
	}
}

func (w *binWriter) assertTask(t *AssertTask) {
	w.str(t.Task)
	w.str(t.File)
	w.int(t.Line)
	w.bool(t.Fail)
	w.strList(t.When)
	w.length(len(t.That), t.That == nil)
	for _, it := range t.That {
		w.str(it.Expr)
		w.int(it.Line)
	}
	w.str(t.Msg)
	w.length(len(t.Vars), t.Vars == nil)
	for _, k := range sortedKeys(t.Vars) {
		w.str(k)
		w.value(t.Vars[k])
	}
	w.length(len(t.Loop), t.Loop == nil)
	for _, v := range t.Loop {
		w.value(v)
	}
	w.bool(t.RunOnce)
	w.strsMap(t.Assume)
	w.strList(t.PlayHosts)
	w.str(t.Status)
	w.strList(t.Needs)
}

func (w *binWriter) shapes(m map[string]*Shape) {
	w.length(len(m), m == nil)
	for _, k := range sortedKeys(m) {
		w.str(k)
		s := m[k]
		w.ptr(s == nil)
		if s != nil {
			w.str(s.Kind)
			w.str(s.Elem)
			w.strList(s.Fields)
			w.str(s.Source)
			w.strMap(s.Reads)
			w.shapes(s.Items)
		}
	}
}

// binReader reads what binWriter wrote; the first error sticks, and
// every later read returns zero values.
type binReader struct {
	b    []byte
	strs []string
	err  error
}

var errCorrupt = errors.New("binary catalogue: corrupt or truncated")

// DecodeBinary reads a binary catalogue (EncodeBinary's).
func DecodeBinary(b []byte) (*File, error) {
	rest, ok := bytes.CutPrefix(b, []byte(binMagic))
	if !ok {
		return nil, errors.New("binary catalogue: not one (no header)")
	}
	r := &binReader{b: rest}
	n := r.count()
	lens := make([]int, n)
	total := 0
	for i := range lens {
		lens[i] = r.count()
		total += lens[i]
	}
	if r.err != nil || total > len(r.b) {
		return nil, errCorrupt
	}
	all := string(r.b[:total]) // one string; the table slices it
	r.b = r.b[total:]
	r.strs = make([]string, n)
	at := 0
	for i, l := range lens {
		r.strs[i] = all[at : at+l]
		at += l
	}
	f := r.file()
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("binary catalogue: %d bytes after the end", len(r.b))
	}
	return f, nil
}

func (r *binReader) fail() {
	if r.err == nil {
		r.err = errCorrupt
	}
	r.b = nil
}

func (r *binReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *binReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *binReader) int() int { return int(r.varint()) }

// count is a count or length that cannot exceed what is left to read.
func (r *binReader) count() int {
	v := r.uvarint()
	if v > uint64(len(r.b)) {
		r.fail()
		return 0
	}
	return int(v)
}

func (r *binReader) octet() byte {
	if len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *binReader) bool() bool {
	switch r.octet() {
	case 0:
		return false
	case 1:
		return true
	}
	r.fail()
	return false
}

func (r *binReader) str() string {
	id := r.uvarint()
	if id >= uint64(len(r.strs)) {
		r.fail()
		return ""
	}
	return r.strs[id]
}

// length reads a slice's or map's length: isNil for 0. Every element
// takes at least one byte, so a length beyond what is left is corrupt.
func (r *binReader) length() (n int, isNil bool) {
	v := r.uvarint()
	if v == 0 {
		return 0, true
	}
	if v-1 > uint64(len(r.b)) {
		r.fail()
		return 0, true
	}
	return int(v - 1), false
}

func (r *binReader) strList() []string {
	n, isNil := r.length()
	if isNil {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

func (r *binReader) strMap() map[string]string {
	n, isNil := r.length()
	if isNil {
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := r.str()
		m[k] = r.str()
	}
	return m
}

func (r *binReader) strsMap() map[string][]string {
	n, isNil := r.length()
	if isNil {
		return nil
	}
	m := make(map[string][]string, n)
	for range n {
		k := r.str()
		m[k] = r.strList()
	}
	return m
}

func (r *binReader) value(depth int) any {
	if depth > maxShapeDepth {
		r.fail()
		return nil
	}
	switch r.octet() {
	case valNil:
		return nil
	case valFalse:
		return false
	case valTrue:
		return true
	case valInt:
		return r.varint()
	case valFloat:
		if len(r.b) < 8 {
			r.fail()
			return nil
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
		r.b = r.b[8:]
		return f
	case valString:
		return r.str()
	case valList:
		n, isNil := r.length()
		if isNil {
			return []any(nil)
		}
		out := make([]any, n)
		for i := range out {
			out[i] = r.value(depth + 1)
		}
		return out
	case valMap:
		n, isNil := r.length()
		if isNil {
			return map[string]any(nil)
		}
		m := make(map[string]any, n)
		for range n {
			k := r.str()
			m[k] = r.value(depth + 1)
		}
		return m
	}
	r.fail()
	return nil
}

func (r *binReader) file() *File {
	f := &File{}
	f.Kubespray = r.str()
	f.Commit = r.str()
	f.CommitDate = r.str()
	f.Galaxy = r.str()
	f.Files = r.strList()
	f.Skipped = r.strList()
	if n, isNil := r.length(); !isNil {
		f.Vars = make(map[string][]Def, n)
		for range n {
			name := r.str()
			m, isNil := r.length()
			var defs []Def
			if !isNil {
				defs = make([]Def, m)
				for i := range defs {
					r.def(&defs[i])
				}
			}
			f.Vars[name] = defs
		}
	}
	if r.bool() {
		f.Release = r.release()
	}
	return f
}

func (r *binReader) def(d *Def) {
	d.Type = r.str()
	d.Inferred = r.bool()
	d.StringBool = r.bool()
	d.Default = r.value(0)
	d.DefaultOmitted = r.bool()
	d.File = r.str()
	d.Line = r.int()
	d.Scope = r.str()
}

func (r *binReader) release() *Release {
	rel := &Release{}
	rel.AnsibleMin = r.str()
	rel.AnsibleMax = r.str()
	rel.AnsibleSource = r.str()
	if n, isNil := r.length(); !isNil {
		rel.Components = make(map[string]*Component, n)
		for range n {
			k := r.str()
			var c *Component
			if r.bool() {
				c = &Component{}
				c.Versions = r.strList()
				c.Checksums = r.str()
				c.Source = r.str()
				c.MinRequired = r.str()
				c.MinSource = r.str()
			}
			rel.Components[k] = c
		}
	}
	if r.bool() {
		a := &Asserts{}
		if n, isNil := r.length(); !isNil {
			a.Choices = make([]ChoiceItem, n)
			for i := range a.Choices {
				c := &a.Choices[i]
				c.Var = r.str()
				c.Values = r.strList()
				c.Expr = r.str()
				c.Task = r.str()
				c.Msg = r.str()
				c.Source = r.str()
			}
		}
		if n, isNil := r.length(); !isNil {
			a.Removed = make([]RemovedItem, n)
			for i := range a.Removed {
				a.Removed[i].Name = r.str()
				a.Removed[i].Source = r.str()
			}
		}
		a.RemovedFound = r.bool()
		rel.Asserts = a
	}
	rel.Exprs = r.strMap()
	if n, isNil := r.length(); !isNil {
		rel.Uses = make(map[string]map[string]*UseSite, n)
		for range n {
			k := r.str()
			m, isNil := r.length()
			var forms map[string]*UseSite
			if !isNil {
				forms = make(map[string]*UseSite, m)
				for range m {
					form := r.str()
					var u *UseSite
					if r.bool() {
						u = &UseSite{Source: r.str(), Expr: r.str(), Count: r.int()}
					}
					forms[form] = u
				}
			}
			rel.Uses[k] = forms
		}
	}
	if n, isNil := r.length(); !isNil {
		rel.AssertTasks = make([]AssertTask, n)
		for i := range rel.AssertTasks {
			r.assertTask(&rel.AssertTasks[i])
		}
	}
	if n, isNil := r.length(); !isNil {
		rel.Checksums = make(map[string]map[string][]string, n)
		for range n {
			k := r.str()
			rel.Checksums[k] = r.strsMap()
		}
	}
	rel.Shapes = r.shapes(0)
	if n, isNil := r.length(); !isNil {
		rel.Guarded = make(map[string][]GuardedRead, n)
		for range n {
			k := r.str()
			m, isNil := r.length()
			var reads []GuardedRead
			if !isNil {
				reads = make([]GuardedRead, m)
				for i := range reads {
					reads[i].Source = r.str()
					if g, isNil := r.length(); !isNil {
						reads[i].Guards = make([]Guard, g)
						for j := range reads[i].Guards {
							gd := &reads[i].Guards[j]
							gd.Expr = r.str()
							gd.Source = r.str()
							gd.Kind = r.str()
							gd.Else = r.str()
						}
					}
				}
			}
			rel.Guarded[k] = reads
		}
	}
	return rel
}

func (r *binReader) assertTask(t *AssertTask) {
	t.Task = r.str()
	t.File = r.str()
	t.Line = r.int()
	t.Fail = r.bool()
	t.When = r.strList()
	if n, isNil := r.length(); !isNil {
		t.That = make([]ThatItem, n)
		for i := range t.That {
			t.That[i].Expr = r.str()
			t.That[i].Line = r.int()
		}
	}
	t.Msg = r.str()
	if n, isNil := r.length(); !isNil {
		t.Vars = make(map[string]any, n)
		for range n {
			k := r.str()
			t.Vars[k] = r.value(0)
		}
	}
	if n, isNil := r.length(); !isNil {
		t.Loop = make([]any, n)
		for i := range t.Loop {
			t.Loop[i] = r.value(0)
		}
	}
	t.RunOnce = r.bool()
	t.Assume = r.strsMap()
	t.PlayHosts = r.strList()
	t.Status = r.str()
	t.Needs = r.strList()
}

func (r *binReader) shapes(depth int) map[string]*Shape {
	if depth > maxShapeDepth {
		r.fail()
		return nil
	}
	n, isNil := r.length()
	if isNil {
		return nil
	}
	m := make(map[string]*Shape, n)
	for range n {
		k := r.str()
		var s *Shape
		if r.bool() {
			s = &Shape{}
			s.Kind = r.str()
			s.Elem = r.str()
			s.Fields = r.strList()
			s.Source = r.str()
			s.Reads = r.strMap()
			s.Items = r.shapes(depth + 1)
		}
		m[k] = s
	}
	return m
}
