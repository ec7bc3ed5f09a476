package kubespray

import (
	"regexp"
	"slices"
	"testing"
)

// wordRuns finds what the regexp \w+ finds, in every templated default of
// every bundled release and in a few edge cases.
func TestWordRunsIsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`\w+`)
	texts := []string{"", "x", "{{ a_b1 }}", "__", "é{{x}}ü_y", "{{ a.b['c-d'] | default(9) }}x", "a b  c\n"}
	for _, v := range Versions() {
		c, err := Bundled(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, variable := range c.Vars {
			for _, d := range variable.Defs {
				if s, ok := d.Default.(string); ok {
					texts = append(texts, s)
				}
			}
		}
	}
	for _, s := range texts {
		want := re.FindAllString(s, -1)
		got := slices.Collect(wordRuns(s))
		if !slices.Equal(got, want) {
			t.Fatalf("wordRuns(%q) = %q, want %q", s, got, want)
		}
	}
	// a consumer that stops early stops the scan
	for w := range wordRuns("a b c") {
		if w != "a" {
			t.Fatalf("first run %q", w)
		}
		break
	}
}
