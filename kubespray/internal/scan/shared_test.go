//go:build shared

package scan

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
)

// TestGenerateReproducesBundled regenerates the catalogues from ../shared
// into a temp dir and compares them byte for byte with the committed ones.
func TestGenerateReproducesBundled(t *testing.T) {
	data := testutil.Shared(t, "kubespray")
	out := t.TempDir()
	dates, err := ReadCommitDates(filepath.Join(testutil.RepoRoot(), "kubespray", "commit_dates.txt"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(data, testutil.Shared(t, "kubespray-src"), out, Provenance{FullDir: testutil.Shared(t, "kubespray-full"), Dates: dates})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 9 {
		t.Fatalf("generated %d versions", len(files))
	}
	for _, f := range files {
		name := FileName(f.Kubespray)
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "kubespray", name))
		if err != nil {
			t.Fatalf("%s not committed: %v (run make generate)", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("kubespray/%s is stale: run make generate", name)
		}
		// Generating twice gives the same bytes (map order, float format).
		again, err := f.Encode()
		dec, derr := Decode(got)
		if err != nil || derr != nil {
			t.Fatalf("%s: %v %v", name, err, derr)
		}
		if once, err := dec.Encode(); err != nil || !bytes.Equal(again, once) {
			t.Errorf("%s: encoding is not deterministic", name)
		}
		if dec.Release == nil || dec.Release.AnsibleMin == "" || dec.Release.Components["kube_version"] == nil {
			t.Errorf("%s: release facts missing: %+v", name, dec.Release)
		}
	}
}

// TestTypesAgreeWithAnsible loads every kubespray vars file of every
// version with ansible-core's own loader and checks that each top-level
// variable has the Python type Load gives it (templated and inferred
// definitions are str to Ansible's loader).
func TestTypesAgreeWithAnsible(t *testing.T) {
	py := testutil.Ansible(t, "python")
	data := testutil.Shared(t, "kubespray")
	for _, version := range []string{"v2.31.0", "master"} {
		t.Run(version, func(t *testing.T) {
			root := filepath.Join(data, version)
			tree, err := Load(root)
			if err != nil {
				t.Fatal(err)
			}
			oracle := ansibleTypes(t, py, root, tree.Files)
			mine := map[string]map[string]string{}
			for name, defs := range tree.Defs {
				for _, d := range defs {
					typ := d.Type
					if typ == TypeTemplated || d.Inferred {
						typ = TypeStr
					}
					if mine[d.File] == nil {
						mine[d.File] = map[string]string{}
					}
					mine[d.File][name] = typ
				}
			}
			n := 0
			for _, f := range tree.Files {
				want := oracle[f]
				for k, typ := range want {
					n++
					if mine[f][k] != typ {
						t.Errorf("%s: %s: ansible-core says %s, we say %q", f, k, typ, mine[f][k])
					}
				}
				if len(mine[f]) != len(want) {
					t.Errorf("%s: ansible-core loads %d variables, we load %d", f, len(want), len(mine[f]))
				}
			}
			if n < 1000 {
				t.Errorf("only %d variables compared", n)
			}
		})
	}
}

// TestSampleInventoryCommentsDoNotDefine checks that commented-out sample
// variables are not in the catalogue while uncommented ones are.
func TestSampleInventoryCommentsDoNotDefine(t *testing.T) {
	root := testutil.Shared(t, "kubespray", "master")
	tree, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	// inventory/sample/group_vars/all/docker.yml sets docker_iptables_enabled;
	// k8s-net-custom-cni.yml only has commented examples.
	found := false
	for _, d := range tree.Defs["docker_iptables_enabled"] {
		found = found || d.File == "inventory/sample/group_vars/all/docker.yml"
	}
	if !found {
		t.Error("sample docker_iptables_enabled not recorded")
	}
	for name, defs := range tree.Defs {
		for _, d := range defs {
			if d.File == "inventory/sample/group_vars/k8s_cluster/k8s-net-custom-cni.yml" {
				t.Errorf("%s defined by a file holding only comments", name)
			}
		}
	}
}
