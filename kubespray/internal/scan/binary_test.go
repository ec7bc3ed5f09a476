package scan

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bundledJSON lists the committed JSON catalogues (kubespray/catalogue_*.json.gz).
func bundledJSON(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "catalogue_*.json.gz"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 9, "bundled catalogues")
	return files
}

// The committed binary catalogues are the JSON ones transcoded, and hold
// the same File as the JSON one decoded with its numbers normalized.
func TestBinaryCataloguesMatchJSON(t *testing.T) {
	for _, jf := range bundledJSON(t) {
		version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(jf), "catalogue_"), ".json.gz")
		t.Run(version, func(t *testing.T) {
			js, err := os.ReadFile(jf)
			require.NoError(t, err)
			bin, err := os.ReadFile(filepath.Join("..", "..", BinaryFileName(version)))
			require.NoError(t, err, "run make generate")
			again, err := Transcode(js)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(again, bin), "kubespray/%s is stale: run make generate", BinaryFileName(version))

			want, err := Decode(js)
			require.NoError(t, err)
			NormalizeNumbers(want)
			got, err := DecodeBinaryGz(bin)
			require.NoError(t, err)
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("%s: the binary catalogue decodes to another File than the JSON one", version)
			}
		})
	}
}

// Every value the catalogue holds survives the binary form: nil and empty
// lists and maps stay apart, numbers keep their type.
func TestBinaryRoundTrip(t *testing.T) {
	f := &File{
		Kubespray: "v9.9.9", Commit: strings.Repeat("a", 40), Files: []string{}, Skipped: nil,
		Vars: map[string][]Def{
			"a": {{Type: TypeInt, Default: int64(-3), File: "roles/x/defaults/main.yml", Line: 4, Scope: ScopeDefaults}},
			"b": {{Type: TypeFloat, Default: 2.5}, {Type: TypeStr, Default: "x", StringBool: true, Inferred: true}},
			"c": {{Type: TypeList, Default: []any{nil, true, false, "s", int64(1) << 40, []any{}, map[string]any{}}}},
			"d": {{Type: TypeDict, Default: map[string]any{"k": map[string]any{"n": []any{1.5}}}, DefaultOmitted: true}},
			"e": nil,
		},
		Release: &Release{
			AnsibleMin: "2.18.0", Components: map[string]*Component{"kube_version": {Versions: []string{"1.35.4"}, MinRequired: "1.33.0"}, "nil": nil},
			Asserts: &Asserts{Choices: []ChoiceItem{{Var: "v", Values: []string{"a", "b"}, Msg: "m"}}, Removed: []RemovedItem{}, RemovedFound: true},
			Exprs:   map[string]string{"x in y": "f:1"},
			Uses:    map[string]map[string]*UseSite{"u": {FormBare: {Source: "f:2", Expr: "u", Count: 3}, FormNot: nil}, "empty": {}},
			AssertTasks: []AssertTask{{Task: "t", File: "f", Line: 7, Fail: true, When: []string{"a"}, That: []ThatItem{{Expr: "b", Line: 8}},
				Vars: map[string]any{"v": "{{ x }}"}, Loop: []any{"i", int64(2)}, RunOnce: true,
				Assume: map[string][]string{"ansible_architecture": {"amd64"}}, PlayHosts: []string{"k8s_cluster"}, Status: "evaluated", Needs: []string{}}},
			Checksums: map[string]map[string][]string{"kubelet_checksums": {"amd64": {"1.35.4"}, "arm64": nil}},
			Shapes:    map[string]*Shape{"s": {Kind: "list", Elem: "dict", Fields: []string{"a"}, Reads: map[string]string{"a": "f:9"}, Items: map[string]*Shape{"m": {Kind: "list"}}}},
			Guarded:   map[string][]GuardedRead{"g": {{Source: "f:10", Guards: []Guard{{Expr: "c", Source: "f:11", Kind: GuardIf, Else: "e.j2"}}}, {Source: "f:12"}}},
		},
	}
	b, err := EncodeBinary(f)
	require.NoError(t, err)
	got, err := DecodeBinary(b)
	require.NoError(t, err)
	assert.Equal(t, f, got)
	again, err := EncodeBinary(got)
	require.NoError(t, err)
	assert.Equal(t, b, again, "encoding is deterministic")

	_, err = EncodeBinary(&File{Vars: map[string][]Def{"x": {{Default: 3}}}})
	assert.ErrorContains(t, err, "a value of type int")
}

// A corrupt or truncated binary catalogue is an error, never a panic.
func TestBinaryCorrupt(t *testing.T) {
	js, err := os.ReadFile(bundledJSON(t)[0])
	require.NoError(t, err)
	f, err := Decode(js)
	require.NoError(t, err)
	NormalizeNumbers(f)
	b, err := EncodeBinary(f)
	require.NoError(t, err)
	for n := 0; n < len(b); n += 1 + n/8 {
		_, err := DecodeBinary(b[:n])
		assert.Error(t, err, "truncated at %d of %d bytes", n, len(b))
	}
	for i := len(binMagic); i < len(b); i += 997 {
		c := bytes.Clone(b)
		c[i] ^= 0xff
		_, _ = DecodeBinary(c) // may decode to other data; must not panic
	}
	_, err = DecodeBinary(append(bytes.Clone(b), 0))
	assert.ErrorContains(t, err, "after the end")
	_, err = DecodeBinary([]byte("{}"))
	assert.ErrorContains(t, err, "no header")
}

// The binary codec names every field of the types it writes: a field added
// to one of them must be added to EncodeBinary and DecodeBinary too (and
// here), or the bundled catalogues would lose it without a word.
func TestBinaryCoversEveryField(t *testing.T) {
	want := map[reflect.Type]string{
		reflect.TypeFor[File]():        "Kubespray Commit CommitDate Galaxy Files Skipped Vars Release",
		reflect.TypeFor[Def]():         "Type Inferred StringBool Default DefaultOmitted File Line Scope",
		reflect.TypeFor[Release]():     "AnsibleMin AnsibleMax AnsibleSource Components Asserts Exprs Uses AssertTasks Checksums Shapes Guarded",
		reflect.TypeFor[Component]():   "Versions Checksums Source MinRequired MinSource",
		reflect.TypeFor[Asserts]():     "Choices Removed RemovedFound",
		reflect.TypeFor[ChoiceItem]():  "Var Values Expr Task Msg Source",
		reflect.TypeFor[RemovedItem](): "Name Source",
		reflect.TypeFor[UseSite]():     "Source Expr Count",
		reflect.TypeFor[AssertTask]():  "Task File Line Fail When That Msg Vars Loop RunOnce Assume PlayHosts Status Needs",
		reflect.TypeFor[ThatItem]():    "Expr Line",
		reflect.TypeFor[Shape]():       "Kind Elem Fields Source Reads Items",
		reflect.TypeFor[GuardedRead](): "Source Guards",
		reflect.TypeFor[Guard]():       "Expr Source Kind Else",
	}
	for typ, fields := range want {
		var got []string
		for i := range typ.NumField() {
			got = append(got, typ.Field(i).Name)
		}
		assert.Equal(t, fields, strings.Join(got, " "), "fields of %s: update binary.go", typ.Name())
	}
}
