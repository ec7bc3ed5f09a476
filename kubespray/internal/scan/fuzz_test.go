package scan

import (
	"strings"
	"testing"
)

// FuzzLoadVarsYAML: no input panics or hangs; errors name the file.
func FuzzLoadVarsYAML(f *testing.F) {
	for _, s := range []string{edgeYAML, "a: b\n", "- x\n", "a: &x [*x]\n", "<<: {a: 1}\n", "a: !vault |\n  x\n", "{{ a }}: 1\n", "a: [\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		_, err := LoadVarsYAML("fuzz.yml", []byte(src))
		if err != nil && !strings.HasPrefix(err.Error(), "fuzz.yml") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

// FuzzInferBool: no expression panics.
func FuzzInferBool(f *testing.F) {
	for _, s := range []string{"{{ a == b }}", "{{ (a) }}", "{{ 'x\\' }}", "{{ a if b }}", "{{ x | ternary(true, false) }}", "{{ ((( }}", "{{}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		InferBool(s, func(string) VarKind { return KindBool })
		InferStringBool(s, func(string) VarKind { return KindUndefined })
	})
}
