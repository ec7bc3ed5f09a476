package lint

import (
	"slices"
	"testing"
)

func TestHostList(t *testing.T) {
	hosts := []string{"a", "b", "c", "d", "e", "f"}
	for _, idx := range [][]int{nil, {0}, {5}, {0, 1, 2}, {2, 3, 4, 5}, {0, 2}, {1, 2, 4, 5}, {0, 1, 2, 3, 4, 5}, {3, 5}} {
		var l hostList
		var want []string
		for _, i := range idx {
			l.add(hosts, i)
			want = append(want, hosts[i])
		}
		got := l.list(hosts)
		if !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("%v: list %q, want %q", idx, got, want)
		}
		// a caller's append never writes into hosts
		_ = append(got, "x")
		if !slices.Equal(hosts, []string{"a", "b", "c", "d", "e", "f"}) {
			t.Fatalf("%v: append wrote into the hosts: %q", idx, hosts)
		}
	}
}
