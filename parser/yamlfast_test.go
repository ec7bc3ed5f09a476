package parser

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/layercheck/layercheck/test/testutil"
)

// sameNodes says where the trees a and b differ in what the loader reads
// of a node (kind, style, tag when written, value, place, anchor, alias,
// content), "" when they do not.
func sameNodes(a, b *yaml.Node, at string) string {
	if a == nil || b == nil {
		if a != b {
			return at + ": one is nil"
		}
		return ""
	}
	if a.Kind != b.Kind || a.Style != b.Style || a.Value != b.Value || a.Line != b.Line || a.Column != b.Column || a.Anchor != b.Anchor {
		return fmt.Sprintf("%s: {%v %v %q %d:%d %q} vs {%v %v %q %d:%d %q}", at,
			a.Kind, a.Style, a.Value, a.Line, a.Column, a.Anchor, b.Kind, b.Style, b.Value, b.Line, b.Column, b.Anchor)
	}
	if a.Style&yaml.TaggedStyle != 0 && a.Tag != b.Tag {
		return fmt.Sprintf("%s: tag %q vs %q", at, a.Tag, b.Tag)
	}
	if (a.Alias == nil) != (b.Alias == nil) {
		return at + ": alias"
	}
	if len(a.Content) != len(b.Content) {
		return fmt.Sprintf("%s: %d vs %d children", at, len(a.Content), len(b.Content))
	}
	for i := range a.Content {
		if d := sameNodes(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", at, i)); d != "" {
			return d
		}
	}
	return ""
}

// checkFast fails when fastYAML reads data otherwise than yaml.v3; it
// reports whether fastYAML read it.
func checkFast(t *testing.T, data []byte) bool {
	t.Helper()
	fast, ok := fastYAML(data)
	if !ok {
		return false
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("fastYAML reads what yaml.v3 rejects (%v):\n%s", err, data)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		t.Fatalf("fastYAML reads a document yaml.v3 reads as %v with %d nodes:\n%s", doc.Kind, len(doc.Content), data)
	}
	if d := sameNodes(fast.Content[0], doc.Content[0], "doc"); d != "" {
		t.Fatalf("fastYAML and yaml.v3 differ at %s:\n%s", d, data)
	}
	return true
}

var fastYAMLSamples = []string{
	"a: 1\n",
	"---\na: 1\nb: two words\nc: \"q\"\nd: 'q'\n",
	"# head\n---\n# c\nnode_labels:\n  rack: r10\n  pool: \"p3\"\nkubelet_max_pods: 110\n",
	"a:\n  b:\n    c: x\n  d: y\ne: z\n",
	"list:\n- a\n- b\nnext: 1\n",
	"list:\n  - a\n  -   b\n  - '3'\nk: v\n",
	"a: http://x.y/z\nb: 10.0.0.1\nc: -1\nd: ~\ne: a=b+c\nf: /usr/local/bin\ng: x:y\n",
	"node-role.kubernetes.io/master: ''\nk8s.io_x: v\n",
	"a:   spaced   \nb: trailing  \n\n\nc: d\n",
	"a: 1\n  b: 2\n",
	"a:\nb: 1\n",
	"a: b: c\n",
	"a: [1, 2]\n",
	"a: {b: 1}\n",
	"a: &x 1\nb: *x\n",
	"a: !!str 1\n",
	"a: |\n  text\n",
	"a: \"esc\\n\"\n",
	"a: 'it''s'\n",
	"a: b\n   c\n",
	"a:\n\tb: 1\n",
	"a: é\n",
	"- a\n- b\n",
	"a:\n  - b: 1\n",
	"a:\n  -\n",
	"a: 1\n---\nb: 2\n",
	"a: 1 # note\n",
	"a: \"x\" \n",
	"a:\n  b: 1\n c: 2\n",
	"list:\n  - a\n  b: 1\n",
	"list:\n- a\n  - b\n",
	"?a: 1\n",
	"a : 1\n",
	"a:1\n",
	"\"a\": 1\n",
	"a: -\n",
	"a: - b\n",
	"a: 0755\nb: yes\nc: 1e3\nd: .5\n",
	"  a: 1\n",
	"",
	"# only\n",
	"---\n",
	"a: 1\n...\n",
	"a: 1\r\n",
	"a: \"\"\nb: ''\n",
}

func TestFastYAMLAgreesWithYAMLv3(t *testing.T) {
	read := 0
	for _, s := range fastYAMLSamples {
		if checkFast(t, []byte(s)) {
			read++
		}
	}
	if read < 10 {
		t.Fatalf("fastYAML read %d of the samples", read)
	}
	// the bundled samples' vars files
	files, _ := filepath.Glob(filepath.Join(testutil.RepoRoot(), "inventory-samples", "*", "*_vars", "*", "*.yml"))
	more, _ := filepath.Glob(filepath.Join(testutil.RepoRoot(), "inventory-samples", "*", "*_vars", "*.yml"))
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no sample vars files")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkFast(t, data)
	}
}

// The loader gives the same values, places included, either way.
func TestFastYAMLLoadsTheSame(t *testing.T) {
	data := []byte("---\nnode_labels:\n  rack: r10\n  pool: \"p3\"\nkubelet_max_pods: 110\nflag: yes\nlist:\n- a\n- 2\n")
	if _, ok := fastYAML(data); !ok {
		t.Fatal("not read by fastYAML")
	}
	fast, err := loadYAML("f.yml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	l := &yamlLoader{file: "f.yml", memo: map[memoKey]*Value{}, warn: func(string) {}}
	slow, err := l.construct(doc.Content[0])
	if err != nil {
		t.Fatal(err)
	}
	if got, want := dumpValue(fast), dumpValue(slow); got != want {
		t.Fatalf("fast:\n%s\nyaml.v3:\n%s", got, want)
	}
}

// dumpValue renders a value with its kind and place, all the way down.
func dumpValue(v *Value) string {
	var b strings.Builder
	var walk func(v *Value, depth int)
	walk = func(v *Value, depth int) {
		fmt.Fprintf(&b, "%s%v %s %v %q %v\n", strings.Repeat(" ", depth), v.Kind, v.Display(), v.Pos, v.Raw, v.Quoted)
		for _, x := range v.List {
			walk(x, depth+1)
		}
		if v.Map != nil {
			for _, k := range v.Map.Keys {
				fmt.Fprintf(&b, "%s%s @%v:\n", strings.Repeat(" ", depth+1), k, v.Map.KeyPos(k))
				walk(v.Map.Get(k), depth+2)
			}
		}
	}
	walk(v, 0)
	return b.String()
}

func FuzzFastYAML(f *testing.F) {
	for _, s := range fastYAMLSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkFast(t, []byte(s))
	})
}
