//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/internal/fleet"
	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/node"
)

const (
	timeoutVenv      = 15 * time.Minute
	timeoutNodes     = 10 * time.Minute
	timeoutArtefacts = 20 * time.Minute
	timeoutKubespray = 30 * time.Minute
	timeoutVerify    = 5 * time.Minute
)

// The layers that must be OK on nodes where kubespray laid down the hosts
// and etcd, and nothing of Kubernetes yet; the others must skip.
var (
	etcdStageOK      = []string{"certificates", "dns", "etcd", "install"}
	etcdStageSkipped = []string{"addons", "cni", "kubelet"}
)

// brk is a break seeded on healthy nodes, and what must find it.
type brk struct {
	Name string
	// Seed breaks the nodes; Restore mends them (nil: the break is the
	// last one, the nodes are torn down after it).
	Seed, Restore func(t *testing.T, s *stage)
	// Host, Layer and Status: where the finding must be; Check matches the
	// failing result's check, Remedy its remediation.
	Host, Layer string
	Status      verify.Status
	Check       *regexp.Regexp
	Remedy      *regexp.Regexp
	// Chance are layers whose verdict the break leaves to chance (traffic
	// kube-proxy sends to an endpoint on a node the break cut off, a pod
	// placed there, an APIService the aggregator rechecks): the two tools'
	// verdicts on them are not compared.
	Chance []string
}

// stage is one release's run on fresh nodes.
type stage struct {
	r       release
	ksDir   string
	inv     string
	play    string
	logDir  string
	results *results
}

func TestKubesprayEtcdStage(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the node machines need root (network namespaces, mounts, systemd-nspawn)")
	}
	if _, err := os.Stat(filepath.Join(repoRoot, "bin", "layercheck")); err != nil {
		t.Fatal("bin/layercheck is not built: run make build (make e2e does)")
	}
	want := os.Getenv("LAYERCHECK_E2E_RELEASES")
	res := &results{}
	t.Cleanup(func() { res.write(t) })
	for _, r := range releases {
		if want != "" && !slices.Contains(strings.Split(want, ","), r.Name) {
			continue
		}
		t.Run(r.Name, func(t *testing.T) { etcdStage(t, r, res) })
	}
}

func etcdStage(t *testing.T, r release, res *results) {
	ksDir := filepath.Join(kubesprayDir, r.Name)
	if _, err := os.Stat(filepath.Join(ksDir, "playbooks", "cluster.yml")); err != nil {
		t.Fatalf("kubespray %s: %v (the e2e runs kubespray from ../shared/kubespray-full)", r.Name, err)
	}
	logDir := filepath.Join(cacheDir, "logs", r.Name)
	_ = os.RemoveAll(logDir)
	s := &stage{r: r, ksDir: ksDir, logDir: logDir, results: res}
	rec := res.release(r)

	rec.timed("ansible venv (requirements.txt)", func() { ensureVenv(t, r, ksDir, s.log("venv")) })

	var tgz string
	rec.timed("artefacts: etcd "+r.EtcdVersion+" from go.etcd.io/etcd", func() {
		out, err := run(t, timeoutArtefacts, s.log("artefacts"), repoRoot, nil, filepath.Join(repoRoot, "test", "e2e", "artefacts.sh"), "etcd", r.EtcdVersion)
		if err != nil {
			t.Fatalf("building etcd %s: %v\n%s", r.EtcdVersion, err, out)
		}
		tgz = strings.TrimSpace(lastLine(out))
	})
	fields := strings.Fields(tgz)
	if len(fields) != 2 || !strings.HasPrefix(fields[1], "sha256:") {
		t.Fatalf("artefacts.sh printed %q, not a path and its sha256", tgz)
	}

	// Nodes torn down however the test ends.
	_, _ = run(t, timeoutNodes, s.log("nodes"), repoRoot, nil, nodesScript(), "down")
	t.Cleanup(func() {
		if out, err := run(t, timeoutNodes, s.log("nodes"), repoRoot, nil, nodesScript(), "down"); err != nil {
			t.Errorf("nodes down: %v\n%s", err, out)
		}
	})
	rec.timed("nodes up (3 systemd-nspawn machines)", func() {
		if out, err := run(t, timeoutNodes, s.log("nodes"), repoRoot, nil, nodesScript(), "up", "3"); err != nil {
			t.Fatalf("nodes up: %v\n%s", err, out)
		}
	})
	filesRepo := startFilesRepo(t, filepath.Join(cacheDir, "files"))

	work := t.TempDir()
	extra := map[string]any{}
	if r.SetEtcdVersion {
		extra["etcd_version"] = r.EtcdVersion
	}
	s.inv = writeInventory(t, work, filesRepo, fields[1], extra)
	s.play = filepath.Join(work, "etcd-stage.yml")
	etcdStagePlaybook(t, ksDir, s.play)

	rec.timed("kubespray "+r.Name+": boilerplate, facts, preinstall, download (etcd), etcd", func() {
		out, err := s.ansible(t, "kubespray", s.play)
		rc, ok := recap(out)
		rec.Recap = rc
		if err != nil || !ok {
			t.Fatalf("kubespray's playbook failed (%v); log %s\n%s", err, s.log("kubespray"), tail(out, 60))
		}
	})

	// Healthy: both tools, every layer as expected, and the same verdicts.
	var healthyYML map[string]*node.Report
	var healthyCLI *fleet.Report
	rec.timed("verify.yml on the healthy nodes", func() { healthyYML = s.verifyYML(t, "healthy", true) })
	rec.timed("layercheck verify on the healthy nodes", func() { healthyCLI = s.verifyCLI(t, "healthy") })
	rec.Healthy = verdicts(healthyYML)
	for host, rep := range healthyYML {
		for _, l := range etcdStageOK {
			if lr := rep.Layers[l]; lr == nil || lr.Status != verify.StatusOK {
				t.Errorf("healthy %s: layer %s is %s, want ok: %s", host, l, statusOf(lr), failing(lr))
			}
		}
		for _, l := range etcdStageSkipped {
			if lr := rep.Layers[l]; lr == nil || lr.Status != verify.StatusSkipped {
				t.Errorf("healthy %s: layer %s is %s, want skipped: %s", host, l, statusOf(lr), failing(lr))
			}
		}
	}
	sameVerdicts(t, "healthy", healthyYML, healthyCLI)
	rec.timed("monitor role: service, timer and layercheck.prom on each node", func() { s.monitor(t) })

	for _, b := range breaks(s) {
		found := &breakResult{Name: b.Name, Host: b.Host, Layer: b.Layer, Want: b.Status}
		rec.Breaks = append(rec.Breaks, found)
		ok := t.Run(strings.ReplaceAll(b.Name, " ", "_"), func(t *testing.T) {
			start := time.Now()
			b.Seed(t, s)
			yml := s.verifyYML(t, b.Name, false)
			cli := s.verifyCLI(t, b.Name)
			found.YML = judge(t, "verify.yml", b, yml[b.Host])
			var cliRep *node.Report
			for _, h := range cli.Hosts {
				if h.Host == b.Host {
					cliRep = h.Report
				}
			}
			found.CLI = judge(t, "layercheck verify", b, cliRep)
			sameVerdicts(t, b.Name, yml, cli)
			if b.Restore != nil {
				b.Restore(t, s)
			}
			found.Duration = time.Since(start)
		})
		if !ok && b.Restore != nil {
			// The nodes may be left broken: later breaks would judge a
			// mixture.
			t.Fatalf("break %q was not found as it should be; stopping this release's breaks", b.Name)
		}
	}
}

func (s *stage) log(name string) string { return filepath.Join(s.logDir, name+".log") }

// ansible runs a playbook as an operator does from the release's tree:
// its ansible.cfg, its pinned ansible, inside the lab namespace.
func (s *stage) ansible(t *testing.T, logName, playbook string, extra ...string) (string, error) {
	t.Helper()
	env := []string{"ANSIBLE_CONFIG=" + filepath.Join(s.ksDir, "ansible.cfg"), "ANSIBLE_FORCE_COLOR=0", "ANSIBLE_NOCOLOR=1"}
	args := append([]string{"-i", s.inv, playbook}, extra...)
	return inLab(t, timeoutKubespray, s.log(logName), s.ksDir, env, venvBin(s.r, "ansible-playbook"), args...)
}

// verifyYML runs playbooks/verify.yml and returns each host's
// layercheck_node facts, read from a fact cache of its own.
func (s *stage) verifyYML(t *testing.T, name string, wantPass bool) map[string]*node.Report {
	t.Helper()
	facts, out, err := s.runVerifyYML(t)
	_, ok := recap(out)
	if wantPass && (err != nil || !ok) {
		t.Errorf("%s: verify.yml did not pass (%v):\n%s", name, err, tail(out, 60))
	}
	reps, _ := readVerifyFacts(t, name, facts, out)
	return reps
}

// runVerifyYML runs playbooks/verify.yml alone, as between runs, with a
// jsonfile fact cache of its own, and returns that cache's directory.
func (s *stage) runVerifyYML(t *testing.T) (facts, out string, err error) {
	t.Helper()
	facts = t.TempDir()
	env := []string{
		"ANSIBLE_CONFIG=" + filepath.Join(s.ksDir, "ansible.cfg"), "ANSIBLE_NOCOLOR=1",
		"ANSIBLE_CACHE_PLUGIN=jsonfile", "ANSIBLE_CACHE_PLUGIN_CONNECTION=" + facts,
	}
	out, err = inLab(t, timeoutVerify, s.log("verify-yml"), s.ksDir, env, venvBin(s.r, "ansible-playbook"),
		"-i", s.inv, filepath.Join(repoRoot, "playbooks", "verify.yml"))
	return facts, out, err
}

// readVerifyFacts reads, from a jsonfile fact cache, each node's
// layercheck_node and the first control plane's (node1's)
// layercheck_cluster, nil when the play set none.
func readVerifyFacts(t *testing.T, name, facts, out string) (map[string]*node.Report, *cluster.Report) {
	t.Helper()
	return readVerifyFactsOf(t, name, facts, out, []string{"node1", "node2", "node3"})
}

// jsonReportStart is where the JSON report begins in out (stdout and
// stderr together): the first line that opens with "{". A warning before
// it may quote a Jinja template ("{{ kube_config_dir }}/ssl"), whose brace
// is not the report's; -1 when no line opens with one.
func jsonReportStart(out string) int {
	if strings.HasPrefix(out, "{") {
		return 0
	}
	if i := strings.Index(out, "\n{"); i >= 0 {
		return i + 1
	}
	return -1
}

// verifyCLI runs `layercheck verify -i INV --format json` (and args) from
// the lab.
func (s *stage) verifyCLI(t *testing.T, name string, args ...string) *fleet.Report {
	t.Helper()
	out, err := inLab(t, timeoutVerify, s.log("verify-cli"), repoRoot, nil, filepath.Join(repoRoot, "bin", "layercheck"),
		append([]string{"verify", "-i", s.inv, "--format", "json"}, args...)...)
	i := jsonReportStart(out)
	if i < 0 {
		t.Fatalf("%s: layercheck verify (%v) printed no JSON report\n%s", name, err, tail(out, 40))
	}
	var rep fleet.Report
	if jerr := json.Unmarshal([]byte(out[i:]), &rep); jerr != nil {
		t.Fatalf("%s: layercheck verify (%v) printed no JSON report: %v\n%s", name, err, jerr, tail(out, 40))
	}
	for _, h := range rep.Hosts {
		if h.Report == nil {
			t.Fatalf("%s: layercheck verify: %s is %s: %s", name, h.Host, h.Status, h.Msg)
		}
	}
	return &rep
}

// sameVerdicts: both tools give every host's every layer, but those of
// skip, the same status.
func sameVerdicts(t *testing.T, name string, yml map[string]*node.Report, cli *fleet.Report, skip ...string) {
	t.Helper()
	for _, h := range cli.Hosts {
		y := yml[h.Host]
		if y == nil {
			t.Errorf("%s: %s in layercheck verify, not in verify.yml", name, h.Host)
			continue
		}
		for l, lr := range h.Report.Layers {
			if slices.Contains(skip, l) {
				continue
			}
			if yl := y.Layers[l]; yl == nil || yl.Status != lr.Status {
				t.Errorf("%s: %s layer %s: verify.yml says %s, layercheck verify %s", name, h.Host, l, statusOf(yl), lr.Status)
			}
		}
	}
}

// judge checks that rep has the break's finding and returns it as found.
func judge(t *testing.T, tool string, b brk, rep *node.Report) string {
	t.Helper()
	if rep == nil {
		t.Errorf("%s: %s: no report for %s", b.Name, tool, b.Host)
		return "no report"
	}
	lr := rep.Layers[b.Layer]
	if lr == nil || lr.Status != b.Status {
		t.Errorf("%s: %s: %s layer %s is %s, want %s: %s", b.Name, tool, b.Host, b.Layer, statusOf(lr), b.Status, failing(lr))
		return fmt.Sprintf("missed (%s %s)", b.Layer, statusOf(lr))
	}
	for _, res := range lr.Results {
		if res.Status != b.Status || !b.Check.MatchString(res.Check) {
			continue
		}
		if !b.Remedy.MatchString(res.Remediation) {
			t.Errorf("%s: %s: %s %s/%s: remediation %q does not match %s", b.Name, tool, b.Host, b.Layer, res.Check, res.Remediation, b.Remedy)
		}
		return fmt.Sprintf("%s %s/%s: %s", res.Status, b.Layer, res.Check, res.Msg)
	}
	t.Errorf("%s: %s: %s layer %s has no %s result whose check matches %s: %s", b.Name, tool, b.Host, b.Layer, b.Status, b.Check, failing(lr))
	return "missed (no matching check)"
}

func statusOf(lr *verify.LayerReport) string {
	if lr == nil {
		return "absent"
	}
	return string(lr.Status)
}

// failing lists a layer's results that are not ok, for messages.
func failing(lr *verify.LayerReport) string {
	if lr == nil {
		return ""
	}
	var b strings.Builder
	for _, r := range lr.Results {
		if r.Status != verify.StatusOK {
			fmt.Fprintf(&b, "\n    [%s] %s: %s (fix: %s)", r.Status, r.Check, r.Msg, r.Remediation)
		}
	}
	return b.String()
}

func verdicts(reps map[string]*node.Report) map[string]map[string]verify.Status {
	v := map[string]map[string]verify.Status{}
	for h, rep := range reps {
		v[h] = map[string]verify.Status{}
		for l, lr := range rep.Layers {
			v[h][l] = lr.Status
		}
	}
	return v
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
