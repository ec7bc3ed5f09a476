package lint

import (
	"path/filepath"
	"testing"

	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/testutil"
)

// Sources in different directories: each location names its directory
// relative to their common parent; one directory keeps the short form.
func TestWhereWithSourcesInDifferentDirectories(t *testing.T) {
	root := t.TempDir()
	testutil.WriteTree(t, root, map[string]string{
		"site/a/hosts.ini":            "[kube_control_plane]\nnode1\n[etcd]\nnode1\n[kube_node]\nnode1\n",
		"site/a/group_vars/all/x.yml": "helm_enabled: \"true\"\n",
		"site/b/hosts.ini":            "[kube_node]\nnode2\n",
		"site/b/group_vars/all/x.yml": "helm_enabled: \"yes\"\n",
		"site/b/extra.ini":            "[kube_node]\nnode3\n",
	})
	load := func(src ...string) *Report {
		inv, err := parser.Load(src...)
		if err != nil {
			t.Fatal(err)
		}
		return Run(Input{Inventory: inv, Catalogue: catalogue(t)})
	}
	r := load(filepath.Join(root, "site/a"), filepath.Join(root, "site/b"))
	got := map[string]bool{}
	for _, f := range find(r, "string-as-bool", "helm_enabled") {
		got[f.Where] = true
	}
	if !got["b/group_vars/all/x.yml:1:15"] || len(got) != 1 {
		// b's group_vars win for every host (later source), a's value is overridden
		t.Errorf("locations %v, want b/group_vars/all/x.yml:1:15\n%s", got, dump(r))
	}
	if r.LocationsRelativeTo != filepath.Join(root, "site") {
		t.Errorf("LocationsRelativeTo = %q", r.LocationsRelativeTo)
	}
	// one file per directory: both group_vars are read for their own -i
	r = load(filepath.Join(root, "site/b/hosts.ini"), filepath.Join(root, "site/a/hosts.ini"))
	got = map[string]bool{}
	for _, f := range find(r, "string-as-bool", "helm_enabled") {
		got[f.Where] = true
	}
	if !got["a/group_vars/all/x.yml:1:15"] {
		t.Errorf("locations %v, want a/group_vars/all/x.yml:1:15\n%s", got, dump(r))
	}
	// two sources in one directory: short locations, as for one source
	r = load(filepath.Join(root, "site/b/hosts.ini"), filepath.Join(root, "site/b/extra.ini"))
	f := one(t, r, "string-as-bool", "helm_enabled")
	if f.Where != "group_vars/all/x.yml:1:15" || r.LocationsRelativeTo != "" {
		t.Errorf("one directory: where %q, relative to %q", f.Where, r.LocationsRelativeTo)
	}
}

func TestCommonBase(t *testing.T) {
	for _, tt := range []struct {
		bases []string
		want  string
		multi bool
	}{
		{[]string{"/x/a"}, "", false},
		{[]string{"/x/a", "/x/a"}, "/x/a", false},
		{[]string{"/x/a", "/x/b"}, "/x", true},
		{[]string{"/x/a", "/x/a/sub"}, "/x/a", true},
		{[]string{"/x/ab", "/x/a"}, "/x", true},
		{[]string{"/x/a", "/y/b"}, "/", true},
	} {
		got, multi := commonBase(tt.bases)
		if multi != tt.multi || (multi && got != tt.want) {
			t.Errorf("commonBase(%q) = %q, %v; want %q, %v", tt.bases, got, multi, tt.want, tt.multi)
		}
	}
}
