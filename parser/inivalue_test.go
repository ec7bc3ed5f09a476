package parser

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestINIValueNotLiteral: the values iniValue takes for strings without
// evaluating them are strings by ast.literal_eval too, and the literals
// among look-alikes are still evaluated.
func TestINIValueNotLiteral(t *testing.T) {
	texts := []string{"r4", "etcd1", "ubuntu", "_x", "not", "lambda", "if", "b", "rb", "x1_2",
		"10.0.0.4", "1.2.3", "..1", "1..", "0.0.0.0", "192.168.10.254"}
	r := rand.New(rand.NewPCG(3, 4))
	for _, alphabet := range []string{"abTNe_019", "0123456789.", "0123456789._e"} {
		for range 2000 {
			b := make([]byte, 1+r.IntN(10))
			for i := range b {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
			texts = append(texts, string(b))
		}
	}
	fast := 0
	for _, s := range texts {
		pos := Pos{File: "hosts", Line: 3, Col: 7}
		want, werr := iniValueEval(s, pos, OriginINIHost)
		got, err := iniValue(s, pos, OriginINIHost)
		assert.Equal(t, werr, err, s)
		assert.Equal(t, want, got, s)
		if notPyLiteral(s) {
			fast++
			assert.Equal(t, KindString, want.Kind, s)
		}
	}
	assert.Greater(t, fast, 1000, "the fast path is taken")
	for _, s := range []string{"True", "False", "None", "set", "1", "1.5", "1e5", "0x1f", "1_000", "'a'", ".5", "5."} {
		assert.False(t, notPyLiteral(s), s)
	}
}
