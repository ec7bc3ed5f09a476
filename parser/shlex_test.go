package parser

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestShlexSplitPlainLines: the fast path for lines without quotes,
// backslashes, "#" or non-ASCII splits as the full state machine does.
func TestShlexSplitPlainLines(t *testing.T) {
	lines := []string{"", " ", "\t\r\n", "node1", "node1 ansible_host=10.0.0.1 ip=10.0.0.1",
		"  a=b\tc=d\r\n", "a\vb\fc", "x= y =z", "node[01:20] k=v", "a\x00b c"}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ab=_.:[]- \t\r\n\v\x00"
	for range 2000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		lines = append(lines, string(b))
	}
	for _, l := range lines {
		if !plainASCII(l) {
			t.Fatalf("%q: not plain", l)
		}
		got, err := shlexSplit(l)
		want, werr := shlexSplitQuoted(l)
		assert.Equal(t, werr, err, "%q", l)
		assert.Equal(t, want, got, "%q", l)
	}
	for _, l := range []string{`a="b c"`, `a='b'`, `a\ b`, "a=b#c", "é"} {
		assert.False(t, plainASCII(l), l)
	}
}
