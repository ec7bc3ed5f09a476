// Package verifyplaybook runs playbooks/verify.yml with the real
// ansible-core 2.19 of the repository's venv against localhost, the
// node_facts module pointed at a node tree, while a real etcd (embedded
// go.etcd.io/etcd/server/v3, TLS with the tree's certificates) and a real
// DNS server (miekg/dns) serve on loopback, mapped in through the module's
// addr_map option.
package verifyplaybook

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/layercheck/layercheck/test/testutil"
)

var (
	collOnce sync.Once
	collDir  string // holds ansible_collections/layercheck/kubespray
	collErr  error
	tmpRoot  string
)

func TestMain(m *testing.M) {
	var err error
	tmpRoot, err = os.MkdirTemp("", "verifyplaybook-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tmpRoot)
	os.Exit(code)
}

// collection lays out the layercheck.kubespray collection from this
// checkout (links to meta, roles, plugins, playbooks/verify.yml) with
// freshly built node_facts_linux_<arch> and layercheck_linux_<arch> (which
// draws the report) binaries, and returns the directory to use as
// ANSIBLE_COLLECTIONS_PATH.
func collection(t *testing.T) string {
	t.Helper()
	collOnce.Do(func() {
		dir := filepath.Join(tmpRoot, "collections")
		if collErr = testutil.LayOutCollection(dir, "node_facts", "layercheck"); collErr == nil {
			collDir = dir
		}
	})
	if collErr != nil {
		t.Fatal(collErr)
	}
	return collDir
}

// playbookRun is one ansible-playbook run.
type playbookRun struct {
	Out   string
	Err   error
	Facts map[string]map[string]any // host -> ansible_facts.layercheck_node
}

// runVerify runs playbooks/verify.yml of the collection (target is the
// playbook path or the FQCN layercheck.kubespray.verify) with the given
// inventory text and extra vars. Facts are read back from a jsonfile fact
// cache, so they are the ones the module returned (in check mode too).
func runVerify(t *testing.T, target, inventory string, extra map[string]any, args ...string) playbookRun {
	t.Helper()
	coll := collection(t)
	work := t.TempDir()
	inv := filepath.Join(work, "hosts.ini")
	must(t, os.WriteFile(inv, []byte(inventory), 0o644))
	ev, _ := json.Marshal(extra)
	evf := filepath.Join(work, "extra.json")
	must(t, os.WriteFile(evf, ev, 0o644))
	cache := filepath.Join(work, "facts")
	if target == "" {
		target = filepath.Join(coll, "ansible_collections", "layercheck", "kubespray", "playbooks", "verify.yml")
	}
	targets := strings.Fields(target) // several playbooks in one command
	cmdArgs := append(append(append([]string{"-i", inv}, targets...), "-e", "@"+evf), args...)
	out, err := testutil.RunPlaybook(t, work, testutil.AnsibleEnv(
		"ANSIBLE_COLLECTIONS_PATH="+collectionsPath(coll, target),
		"ANSIBLE_LOCAL_TEMP="+filepath.Join(work, "tmp"),
		"ANSIBLE_REMOTE_TMP="+filepath.Join(work, "rtmp"),
		"ANSIBLE_CACHE_PLUGIN=jsonfile",
		"ANSIBLE_CACHE_PLUGIN_CONNECTION="+cache,
		"ANSIBLE_STDOUT_CALLBACK=default",
	), 4*time.Minute, cmdArgs...)
	r := playbookRun{Out: out, Err: err, Facts: map[string]map[string]any{}}
	for _, facts := range testutil.FactCache(t, cache) {
		if n, ok := facts["layercheck_node"].(map[string]any); ok {
			host, _ := n["host"].(string)
			r.Facts[host] = n
		}
	}
	return r
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// layerStatus reads facts.layers.<layer>.status.
func layerStatus(facts map[string]any, layer string) string {
	ls, _ := facts["layers"].(map[string]any)
	l, _ := ls[layer].(map[string]any)
	s, _ := l["status"].(string)
	return s
}

// collectionsPath is the test collection, except for a run of the
// checkout's own playbooks/verify.yml, which must find the collection
// through playbooks/collections next to it (an empty path elsewhere).
func collectionsPath(coll, target string) string {
	if strings.Contains(target, filepath.Join(testutil.RepoRoot(), "playbooks")) {
		return filepath.Join(tmpRoot, "no-collections")
	}
	return coll
}

// checkoutModule builds node_facts and layercheck (which draws the
// report) for this machine into the checkout's plugins/bin, as `make
// modules` does (the files are git-ignored), each via a rename so a
// concurrent reader never sees half a binary.
func checkoutModule(t *testing.T) {
	t.Helper()
	for _, m := range []string{"node_facts", "layercheck"} {
		dst := filepath.Join(testutil.RepoRoot(), "plugins", "bin", m+"_linux_"+runtime.GOARCH)
		must(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		tmp := dst + fmt.Sprintf(".tmp%d", os.Getpid())
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", tmp, "./cmd/"+m)
		cmd.Dir = testutil.RepoRoot()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/%s: %v\n%s", m, err, out)
		}
		must(t, os.Rename(tmp, dst))
	}
}
