package kubespray

import (
	"sort"
	"testing"
)

func TestReadByIndexMatchesScan(t *testing.T) {
	for _, v := range []string{"v2.24.3", "master"} {
		c, err := Bundled(v)
		if err != nil {
			t.Fatal(err)
		}
		names := []string{"not_a_kubespray_name", "kube", "version", "my-var", "x.y"}
		for n := range c.Vars {
			names = append(names, n)
		}
		sort.Strings(names)
		// every fourth name: the scan is a regular expression per name
		for i := 0; i*4 < len(names); i++ {
			names[i] = names[i*4]
		}
		names = names[:(len(names)+3)/4]
		found := 0
		for _, n := range names {
			want := c.readByScan(n)
			if got := c.ReadBy(n); got != want {
				t.Errorf("%s: ReadBy(%q) = %q, want %q", v, n, got, want)
			}
			if want != "" {
				found++
			}
		}
		if found < 10 {
			t.Errorf("%s: only %d names are read by a default", v, found)
		}
	}
}
