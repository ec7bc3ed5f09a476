//go:build shared

// Package lintcorpus runs the lint on real inventories: kubespray's own
// sample inventories, which must lint clean, and the public kubespray
// inventories of the shared corpus, whose reviewed findings are kept as
// golden files (testdata/<inventory>.golden.json; -update rewrites them).
package lintcorpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/testutil"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

// copyTree copies src into a new temp dir and returns the copy's path.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	testutil.CopyTree(t, src, dst)
	return dst
}

func dump(r *lint.Report) string {
	b, _ := json.MarshalIndent(r, "", "  ")
	return string(b)
}

func TestKubespraySampleInventoriesLintClean(t *testing.T) {
	versions := kubespray.Versions()
	if len(versions) < 9 {
		t.Fatalf("bundled releases %v", versions)
	}
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			inv := copyTree(t, testutil.Shared(t, "kubespray", version, "inventory", "sample"))
			testutil.EnableSampleNodes(t, filepath.Join(inv, "inventory.ini"), nil)
			loaded, err := parser.Load(inv)
			if err != nil {
				t.Fatal(err)
			}
			if len(loaded.Hosts) != 3 {
				t.Fatalf("sample loads %d hosts, want node1-node3", len(loaded.Hosts))
			}
			cat, err := kubespray.Bundled(version)
			if err != nil {
				t.Fatal(err)
			}
			r := lint.Run(lint.Input{Inventory: loaded, Catalogue: cat})
			if r.Errors != 0 {
				t.Errorf("kubespray %s sample inventory: %d errors:\n%s", version, r.Errors, dump(r))
			}
			t.Logf("kubespray %s sample: %d errors, %d warnings", version, r.Errors, r.Warnings)
			for _, f := range r.Findings {
				t.Logf("  %s %s %s %s: %s", f.Severity, f.Rule, f.Variable, f.Where, f.Message)
			}
		})
	}
}

// sources finds the inventory sources of a corpus entry: directories
// holding group_vars/ or an inventory file.
func sources(t *testing.T, root string) []string {
	t.Helper()
	set := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		switch {
		case d.IsDir() && name == "group_vars":
			set[filepath.Dir(p)] = true
		case !d.IsDir() && (strings.HasSuffix(name, ".ini") || strings.HasPrefix(name, "hosts") ||
			(strings.HasPrefix(name, "inventory") && (strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".yaml")))):
			set[filepath.Dir(p)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// standIn is the hosts file for inventories that keep their hosts
// elsewhere (only group_vars in the repository): three nodes as kubespray's
// sample has them.
const standIn = testutil.ThreeNodeINI

// standInFor adds to the stand-in the old group names the inventory's
// group_vars use, as the real (unpublished) hosts file of such an
// inventory would have them.
func standInFor(inv *parser.Inventory) string {
	s := standIn
	legacy := map[string]string{
		"kube-master": "kube_control_plane\n",
		"kube-node":   "kube_node\n",
		"k8s-cluster": "kube_control_plane\nkube_node\n",
	}
	for _, name := range []string{"kube-master", "kube-node", "k8s-cluster"} {
		if len(inv.GroupVarsFiles[name]) > 0 {
			s += "[" + name + ":children]\n" + legacy[name]
		}
	}
	return s
}

// result is what a golden file holds for one inventory source.
type result struct {
	Source    string       `json:"source"`
	StandIn   bool         `json:"stand_in_hosts,omitempty"`
	LoadError string       `json:"load_error,omitempty"`
	Report    *lint.Report `json:"report,omitempty"`
}

func TestRealInventories(t *testing.T) {
	corpus := testutil.Shared(t, "fixtures", "inventories")
	manifest, err := os.ReadFile(filepath.Join(corpus, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, line := range strings.Split(strings.TrimSpace(string(manifest)), "\n") {
		if i == 0 {
			continue
		}
		names = append(names, strings.SplitN(line, "\t", 2)[0])
	}
	if len(names) < 40 {
		t.Fatalf("MANIFEST.tsv lists %d inventories", len(names))
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			root := copyTree(t, filepath.Join(corpus, name))
			var results []result
			for _, src := range sources(t, root) {
				rel, _ := filepath.Rel(root, src)
				res := result{Source: filepath.ToSlash(rel)}
				inv, err := parser.Load(src)
				if errors.Is(err, parser.ErrNoInventoryFile) {
					// only group_vars: read them as ansible-inventory does
					inv, err = parser.LoadWith(parser.LoadOptions{UnparsedIsWarning: true}, src)
				}
				if err == nil && len(inv.Hosts) == 0 {
					res.StandIn = true
					if err := os.WriteFile(filepath.Join(src, "layercheck-stand-in-hosts.ini"), []byte(standInFor(inv)), 0o644); err != nil {
						t.Fatal(err)
					}
					inv, err = parser.Load(src)
				}
				if err != nil {
					res.LoadError = strings.ReplaceAll(err.Error(), root, "<inventory>")
				} else {
					// as a new user runs it: outside any kubespray checkout,
					// without --kubespray-version (the release is inferred)
					cat, err := kubespray.ForInventory([]string{src})
					if err != nil {
						t.Fatal(err)
					}
					res.Report = lint.Run(lint.Input{Inventory: inv, Catalogue: cat})
				}
				results = append(results, res)
			}
			got, err := json.MarshalIndent(results, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(bytes.ReplaceAll(got, []byte(root), []byte("<inventory>")), '\n')
			testutil.Golden(t, filepath.Join("testdata", name+".golden.json"), got, *update, "lint of "+name)
		})
	}
}
