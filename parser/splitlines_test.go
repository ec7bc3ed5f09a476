package parser

import (
	"slices"
	"testing"
)

// pySplitLines on valid UTF-8 gives what the rune by rune reading gives.
func TestPySplitLines(t *testing.T) {
	for _, s := range []string{
		"", "a", "a\n", "a\nb", "a\r\nb\rc\n\nd", "\n", "\r\n\r\n", "x\vy\fz\x1cq\x1dr\x1es",
		"é\u0085ü\u2028z\u2029", "tail\u2028", "\u00e9\u00e8\n\u4e16\u754c", "a\r", "\r",
	} {
		got, want := pySplitLines(s), pySplitLinesRunes(s)
		if !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("pySplitLines(%q) = %q, want %q", s, got, want)
		}
	}
	if got := pySplitLines("a\xffb\nc"); !slices.Equal(got, []string{"a\uFFFDb", "c"}) {
		t.Errorf("invalid UTF-8: %q", got)
	}
}

func FuzzPySplitLines(f *testing.F) {
	f.Add("a\r\nb\u2028c")
	f.Fuzz(func(t *testing.T, s string) {
		got, want := pySplitLines(s), pySplitLinesRunes(s)
		if !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("pySplitLines(%q) = %q, want %q", s, got, want)
		}
	})
}
