//go:build bench

package sshverify

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/testutil"
)

// TestBenchFleet times `layercheck verify` and `ansible-playbook
// playbooks/verify.yml` (the collection's node_facts module copied to each
// host over SSH) against the same simulated hosts behind real sshd servers,
// for each host count in LAYERCHECK_BENCH_FLEET (default "20,100"), and
// prints the median wall times and their ratio. It asserts only that both
// succeed: no timing is asserted. Run it with bench/fleet.sh.
func TestBenchFleet(t *testing.T) {
	counts := []int{20, 100}
	if s := os.Getenv("LAYERCHECK_BENCH_FLEET"); s != "" {
		counts = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			require.NoError(t, err, "LAYERCHECK_BENCH_FLEET=%q: want host counts, e.g. 20,100", s)
			counts = append(counts, n)
		}
	}
	runs := 3
	if s := os.Getenv("LAYERCHECK_BENCH_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		runs = n
	}
	work := t.TempDir()
	cli := testutil.BuildCLI(t, work)
	coll := filepath.Join(work, "collections")
	require.NoError(t, testutil.LayOutCollection(coll, "node_facts", "layercheck"))
	playbook := filepath.Join(coll, "ansible_collections", "layercheck", "kubespray", "playbooks", "verify.yml")
	python, err := exec.LookPath("python3")
	require.NoError(t, err, "ansible-playbook needs python3 on the (simulated) hosts")

	for _, n := range counts {
		f := newFleet(t, n, fleetOpts{})
		f.AllVars["ansible_python_interpreter"] = python
		f.AllVars["layercheck_cluster_enabled"] = false
		inv := f.inventory(t)

		var ours, theirs []time.Duration
		for i := 0; i < runs; i++ {
			start := time.Now()
			out, err := exec.Command(cli, "verify", "-i", inv, "--forks", "50").CombinedOutput()
			ours = append(ours, time.Since(start))
			require.NoError(t, err, "layercheck verify on %d hosts:\n%s", n, out)
			f.noSecrets(t, string(out))

			start = time.Now()
			pout, err := testutil.RunPlaybook(t, work, testutil.AnsibleEnv(
				"ANSIBLE_COLLECTIONS_PATH="+coll,
				"ANSIBLE_LOCAL_TEMP="+filepath.Join(work, "tmp"),
				"ANSIBLE_STDOUT_CALLBACK=default",
			), 30*time.Minute, "-i", inv, "-f", "50", playbook)
			theirs = append(theirs, time.Since(start))
			require.NoError(t, err, "ansible-playbook playbooks/verify.yml on %d hosts:\n%s", n, tail(pout, 60))
		}
		mo, mt := median(ours), median(theirs)
		t.Logf("BENCH hosts=%d runs=%d layercheck_verify_median=%.2fs ansible_playbook_verify_median=%.2fs ratio=%.1fx (target >= 10x)",
			n, runs, mo.Seconds(), mt.Seconds(), mt.Seconds()/mo.Seconds())
	}
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return fmt.Sprint(strings.Join(lines, "\n"))
}
