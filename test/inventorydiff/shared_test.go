//go:build shared

package inventorydiff_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
)

// TestKubespraySampleInventory compares kubespray's sample inventory
// (inventory/sample of v2.31.0 and master) with its commented "# node1" to
// "# node3" host lines enabled, and a variant with all six sample nodes and
// a k8s_cluster group so that group_vars/k8s_cluster applies too.
func TestKubespraySampleInventory(t *testing.T) {
	reNode16 := regexp.MustCompile(`(?m)^# (node[1-6] )`)
	for _, ver := range []string{"v2.31.0", "master"} {
		t.Run(ver, func(t *testing.T) {
			src := testutil.Shared(t, "kubespray", ver, "inventory", "sample")
			dst := filepath.Join(t.TempDir(), "sample")
			testutil.CopyTree(t, src, dst)
			ini := filepath.Join(dst, "inventory.ini")
			b := testutil.EnableSampleNodes(t, ini, nil)
			compareList(t, 3, "-i", ini)
			compareList(t, 3, "-i", dst)

			all := reNode16.ReplaceAllString(string(b), "$1") + "\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n"
			if err := os.WriteFile(ini, []byte(all), 0o644); err != nil {
				t.Fatal(err)
			}
			compareList(t, 6, "-i", ini)
		})
	}
}

// TestRealInventories compares every inventory of the fixtures corpus
// (see its MANIFEST.tsv): the fixture directory as one source, each file
// that is not a vars file on its own, and each directory holding
// group_vars/ or host_vars/. A directory with group_vars but no hosts
// (some fixtures ship group_vars only) is given a generated INI file with
// one host in each group that has group_vars, so that its vars are read.
//
// Whole-file ansible-vault vars files: ansible-inventory then fails with
// "Attempting to decrypt but no vault secrets found" (and, given a vault
// password file, with a vault format/decryption error), while
// layercheck loads the inventory without them and warns. For those
// sources the test checks exactly that: ansible-inventory fails with
// that message, layercheck warns naming each vault file, and layercheck's
// output equals ansible-inventory's on a copy without the vault files.
func TestRealInventories(t *testing.T) {
	root := testutil.Shared(t, "fixtures", "inventories")
	dirs := manifestDirs(t, filepath.Join(root, "MANIFEST.tsv"))
	if len(dirs) < 40 {
		t.Fatalf("MANIFEST.tsv lists %d inventories, expected about 41", len(dirs))
	}
	for _, d := range dirs {
		t.Run(d, func(t *testing.T) {
			work := filepath.Join(t.TempDir(), d)
			testutil.CopyTree(t, filepath.Join(root, d), work)
			addHostsForVarsOnlyDirs(t, work)
			for _, src := range sourcesIn(t, work) {
				rel, _ := filepath.Rel(work, src)
				t.Run(strings.ReplaceAll(rel, "/", "|"), func(t *testing.T) {
					compareSource(t, work, src)
				})
			}
		})
	}
}

func manifestDirs(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var dirs []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		if d, _, ok := strings.Cut(sc.Text(), "\t"); ok && d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// sourcesIn lists the -i arguments to try in a fixture.
func sourcesIn(t *testing.T, work string) []string {
	t.Helper()
	srcs := []string{work}
	err := filepath.Walk(work, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		name := info.Name()
		if info.IsDir() {
			if name == "group_vars" || name == "host_vars" || (strings.HasPrefix(name, ".") && p != work) {
				return filepath.SkipDir
			}
			if p != work && (exists(filepath.Join(p, "group_vars")) || exists(filepath.Join(p, "host_vars"))) {
				srcs = append(srcs, p)
			}
			return nil
		}
		srcs = append(srcs, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return srcs
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// addHostsForVarsOnlyDirs writes generated-hosts.ini beside a group_vars
// directory that has no inventory file beside it.
func addHostsForVarsOnlyDirs(t *testing.T, work string) {
	t.Helper()
	_ = filepath.Walk(work, func(p string, info os.FileInfo, err error) error {
		if err != nil || !info.IsDir() || info.Name() != "group_vars" {
			return err
		}
		parent := filepath.Dir(p)
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				return filepath.SkipDir // it has an inventory file (or something) already
			}
		}
		groups := map[string]bool{}
		gv, _ := os.ReadDir(p)
		for _, e := range gv {
			n := e.Name()
			for _, ext := range []string{".yml", ".yaml", ".json"} {
				n = strings.TrimSuffix(n, ext)
			}
			if n != "all" && !strings.HasPrefix(n, ".") {
				groups[n] = true
			}
		}
		names := make([]string, 0, len(groups))
		for g := range groups {
			names = append(names, g)
		}
		sort.Strings(names)
		var sb strings.Builder
		sb.WriteString("# generated by the test: one host per group that has group_vars\nvarsonly0\n")
		for i, g := range names {
			sb.WriteString("[" + g + "]\nvarsonly" + string(rune('1'+i%9)) + "\n")
		}
		testutil.WriteTree(t, parent, map[string]string{"generated-hosts.ini": sb.String()})
		return filepath.SkipDir
	})
}

func compareSource(t *testing.T, work, src string) {
	t.Helper()
	a := ansibleInventory(t, "-i", src, "--list")
	if a.code == 0 && strings.Contains(a.stderr, "Unable to parse "+src+" as an inventory source") {
		// a file no plugin can read, given on its own: ansible-inventory
		// warns and prints an empty inventory, layercheck refuses it
		l := layercheck(t, "-i", src, "--list")
		if l.code != 1 || !strings.Contains(l.stderr, src) {
			t.Fatalf("layercheck on a source ansible cannot parse: exit %d, stderr:\n%s", l.code, l.stderr)
		}
		return
	}
	if a.code == 0 {
		compareWith(t, a, 0, "-i", src, "--list")
		return
	}
	const vaultMsg = "Attempting to decrypt but no vault secrets found"
	if !strings.Contains(a.stderr, vaultMsg) {
		t.Fatalf("ansible-inventory -i %s failed (exit %d) for a reason other than a whole-file vault:\n%s", src, a.code, a.stderr)
	}
	// the narrow, documented difference: drop the whole-file vaults and compare
	var vaults []string
	_ = filepath.Walk(work, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			if b, err := os.ReadFile(p); err == nil && strings.HasPrefix(string(b), "$ANSIBLE_VAULT") {
				vaults = append(vaults, p)
			}
		}
		return nil
	})
	if len(vaults) == 0 {
		t.Fatalf("ansible-inventory says %q but no whole-file vault is in %s", vaultMsg, work)
	}
	l := layercheck(t, "-i", src, "--list")
	if l.code != 0 {
		t.Fatalf("layercheck inventory failed on an inventory with whole-file vaults (exit %d):\n%s", l.code, l.stderr)
	}
	warned := 0
	for _, v := range vaults {
		if strings.Contains(l.stderr, v+": whole-file ansible-vault") {
			warned++
		}
	}
	if warned == 0 {
		t.Errorf("layercheck did not warn about any of the whole-file vaults %v:\n%s", vaults, l.stderr)
	}
	// with a vault password file it fails as well (the corpus' vault texts
	// are not decryptable with any password we could give it)
	pw := filepath.Join(t.TempDir(), "vault-pass")
	testutil.WriteTree(t, filepath.Dir(pw), map[string]string{"vault-pass": "not-the-password\n"})
	if ap := ansibleInventory(t, "-i", src, "--list", "--vault-password-file", pw); ap.code == 0 {
		t.Errorf("ansible-inventory with a wrong vault password accepted %s", src)
	}
	// compare on a copy without the vault files, so that later sources of
	// the same fixture still meet them
	clean := filepath.Join(t.TempDir(), "novault")
	testutil.CopyTree(t, work, clean)
	for _, v := range vaults {
		rel, _ := filepath.Rel(work, v)
		if err := os.Remove(filepath.Join(clean, rel)); err != nil {
			t.Fatal(err)
		}
	}
	rel, _ := filepath.Rel(work, src)
	t.Logf("ansible-inventory fails on whole-file vaults %v; compared without them", vaults)
	compareList(t, 0, "-i", filepath.Join(clean, rel))
}
