package lint

import (
	"regexp"
	"testing"
)

// kubespray's pattern, as its "Stop if bad hostname" task writes it.
var hostnameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

func TestIsRFC1123IsKubesprayPattern(t *testing.T) {
	for _, s := range []string{"", "a", "node1", "node-1", "-a", "a-", "a.b", "a..b", ".a", "a.", "A", "a_b", "a.-b", "a-.b",
		"n1.example.com", "1", "1-2", "a\n", "é", "a b", "node1.", "x.y-z.0"} {
		if got, want := isRFC1123(s), hostnameRE.MatchString(s); got != want {
			t.Errorf("isRFC1123(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}

func FuzzIsRFC1123(f *testing.F) {
	f.Add("node-1.example.com")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isRFC1123(s), hostnameRE.MatchString(s); got != want {
			t.Fatalf("isRFC1123(%q) = %v, the pattern says %v", s, got, want)
		}
	})
}
