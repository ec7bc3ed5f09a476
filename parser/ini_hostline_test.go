package parser

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
)

// A key given twice on a host line keeps its first place and its last
// value (the ini plugin fills a dict), also over what an earlier line
// gave the host; a host range gets the line's variables on every host.
func TestINIHostLineVariables(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteTree(t, dir, map[string]string{"hosts.ini": "[g]\nh1 z=0\nh1 a=1 b=2 a=3 z=9\nr[1:3] x=1 y=2\nh2:2222 a=1\n"})
	inv, err := Load(filepath.Join(dir, "hosts.ini"))
	if err != nil {
		t.Fatal(err)
	}
	h1 := inv.Host("h1").Vars
	if got := strings.Join(h1.Keys, ","); got != "z,a,b" {
		t.Errorf("h1 keys %s", got)
	}
	for k, want := range map[string]string{"z": "9", "a": "3", "b": "2"} {
		if v := h1.Get(k); v == nil || v.Display() != want {
			t.Errorf("h1 %s = %v, want %s", k, v, want)
		}
	}
	for _, n := range []string{"r1", "r2", "r3"} {
		if got := strings.Join(inv.Host(n).Vars.Keys, ","); got != "x,y" {
			t.Errorf("%s keys %s", n, got)
		}
	}
	if got := strings.Join(inv.Host("h2").Vars.Keys, ","); got != "ansible_port,a" {
		t.Errorf("h2 keys %s", got)
	}
}
