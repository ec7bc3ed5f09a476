//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
)

// results is what `make e2e` records in test/e2e/RESULTS.md (or
// $LAYERCHECK_E2E_RESULTS): per release, each stage's wall time, each
// layer's verdict on the healthy nodes, and what found each break.
type results struct {
	start    time.Time
	releases []*releaseResult
	// path is the file written (default RESULTS.md); cluster: the run is
	// the whole cluster.yml (TestKubesprayCluster), not the etcd stage.
	path    string
	cluster bool
	// cni is the cluster's network plugin (E2E_CNI); settings, for
	// kubespray's defaults (calico), what the inventory sets that differs
	// from kubespray's sample, and why.
	cni      string
	settings []difference
	// day2: the run is TestKubesprayDay2: phases (releases with a title),
	// the preflights and the trap table.
	day2 bool
	// resumed: the day-2 traps alone, on the cluster a kept run left; the
	// file keeps that run's results, and this run's follow them.
	resumed    bool
	resumedAt  string
	preflights []preflightRun
	traps      []*trapResult
}

// preflightRun is one `layercheck lint --cluster-from` of the day-2 run.
type preflightRun struct {
	Name             string
	Took             time.Duration
	Errors, Warnings int
	Findings         []lint.Finding
}

// trapResult is one row of the day-2 trap table: what the preflight said
// before the run, what kubespray did without the fix, and after it.
type trapResult struct {
	Name, Preflight, Without, After string
}

func (res *results) trap(name string) *trapResult {
	tr := &trapResult{Name: name}
	res.traps = append(res.traps, tr)
	return tr
}

// phase is a day-2 stage of the run, under a title of its own.
func (res *results) phase(r release, title string) *releaseResult {
	rr := res.release(r)
	rr.Title = title
	return rr
}

type releaseResult struct {
	r       release
	Title   string   // day 2: the phase
	Notes   []string // day 2: what the phase showed beside the layers
	Stages  []stageResult
	Recap   string
	Healthy map[string]map[string]verify.Status
	Settled *settledRun // e2e-cluster: layercheck verify once the cluster has settled
	Breaks  []*breakResult
}

// settledRun is `layercheck verify --cluster-from first-control-plane`
// run again on the healthy cluster, once the first run and verify.yml have
// left it settled: its wall time and where that went.
type settledRun struct {
	Wall time.Duration
	// Layers: each cluster layer's time, and each node layer's on the
	// slowest host (layers and hosts run side by side).
	Layers []layerTime
	Probe  *cluster.ProbeTimings
	Addons *cluster.AddonsTimings
}

type layerTime struct {
	Scope, Layer string
	MS           int64
}

type stageResult struct {
	Name     string
	Duration time.Duration
	OK       bool
}

type breakResult struct {
	Name, Host, Layer string
	Want              verify.Status
	YML, CLI          string
	// YMLTime and CLITime are each tool's wall time on the break.
	YMLTime, CLITime time.Duration
	Duration         time.Duration
}

func (res *results) release(r release) *releaseResult {
	if res.start.IsZero() {
		res.start = time.Now()
	}
	rr := &releaseResult{r: r}
	res.releases = append(res.releases, rr)
	return rr
}

// timed runs f as a stage and records its wall time; a stage that stops
// the test (t.Fatal) is recorded as failed.
// timedCell is a break's verdict cell with the tool's time, if measured.
func timedCell(verdict string, d time.Duration) string {
	if d == 0 {
		return cell(verdict)
	}
	return "(" + fmtDuration(d) + ") " + cell(verdict)
}

func (rr *releaseResult) timed(name string, f func()) {
	start := time.Now()
	i := len(rr.Stages)
	rr.Stages = append(rr.Stages, stageResult{Name: name})
	// A stage that fails ends in t.Fatal (runtime.Goexit): its time is
	// still recorded.
	defer func() { rr.Stages[i].Duration = time.Since(start) }()
	f()
	rr.Stages[i].OK = true
}

func (res *results) write(t *testing.T) {
	if len(res.releases) == 0 {
		return
	}
	path := res.path
	if path == "" {
		path = os.Getenv("LAYERCHECK_E2E_RESULTS")
	}
	if path == "" {
		path = filepath.Join(repoRoot, "test", "e2e", "RESULTS.md")
	}
	var b strings.Builder
	if res.resumed {
		if old, err := os.ReadFile(path); err == nil {
			head := string(old)
			if i := strings.Index(head, "\n## Not run here"); i >= 0 {
				head = head[:i+1]
			}
			b.WriteString(head)
		}
		where := "on the kept cluster"
		if res.resumedAt == "trap9" {
			where = "on new machines (trap 9 alone)"
		}
		fmt.Fprintf(&b, "# Resumed %s (LAYERCHECK_E2E_DAY2_RESUME=%s), %s; %s\n\n",
			where, res.resumedAt, res.start.UTC().Format("2006-01-02 15:04 MST"), fmtDuration(time.Since(res.start)))
	} else if res.day2 {
		fmt.Fprintf(&b, "# End-to-end results: day 2 on node machines (upgrade %s → %s, scale, remove), kubespray as the judge\n\n", day2From, day2To)
		fmt.Fprintf(&b, "Written by `make e2e-day2` (test/e2e) on %s, %d cores, %s/%s; total %s.\n\n",
			res.start.UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, fmtDuration(time.Since(res.start)))
		b.WriteString(day2Intro)
	} else if res.cluster {
		fmt.Fprintf(&b, "# End-to-end results: kubespray's whole cluster.yml on node machines, then verify.yml in the same command\n\n")
		fmt.Fprintf(&b, "Written by `make e2e-cluster` (test/e2e) on %s, %d cores, %s/%s; total %s.\n\n",
			res.start.UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, fmtDuration(time.Since(res.start)))
		b.WriteString(clusterIntro(res.cni))
		writeSettings(&b, res.settings)
	} else {
		fmt.Fprintf(&b, "# End-to-end results: kubespray's own roles on node machines, then verify\n\n")
		fmt.Fprintf(&b, "Written by `make e2e` (test/e2e) on %s, %d cores, %s/%s; total %s.\n\n",
			res.start.UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, fmtDuration(time.Since(res.start)))
		b.WriteString(etcdStageIntro)
	}
	for _, rr := range res.releases {
		if rr.Title != "" {
			fmt.Fprintf(&b, "## %s\n\n", rr.Title)
		} else {
			fmt.Fprintf(&b, "## kubespray %s, etcd %s\n\n", rr.r.Name, rr.r.EtcdVersion)
			fmt.Fprintf(&b, "etcd %s: %s.\n\n", rr.r.EtcdVersion, rr.r.EtcdWhy)
		}
		b.WriteString("| stage | wall time | result |\n|---|---|---|\n")
		for _, s := range rr.Stages {
			ok := "ok"
			if !s.OK {
				ok = "FAILED"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", s.Name, fmtDuration(s.Duration), ok)
		}
		if rr.Recap != "" {
			fmt.Fprintf(&b, "\nkubespray's recap:\n\n```\n%s\n```\n", rr.Recap)
		}
		if len(rr.Healthy) > 0 {
			b.WriteString("\nEach layer on the healthy nodes (verify.yml and `layercheck verify` agree):\n\n")
			hosts := sortedKeys(rr.Healthy)
			seen := map[string]bool{}
			for _, h := range hosts {
				for l := range rr.Healthy[h] {
					seen[l] = true
				}
			}
			layers := sortedKeys(seen)
			b.WriteString("| host | " + strings.Join(layers, " | ") + " |\n|---|" + strings.Repeat("---|", len(layers)) + "\n")
			for _, h := range hosts {
				row := []string{h}
				for _, l := range layers {
					st := string(rr.Healthy[h][l])
					if st == "" {
						st = "-"
					}
					row = append(row, st)
				}
				b.WriteString("| " + strings.Join(row, " | ") + " |\n")
			}
		}
		for _, n := range rr.Notes {
			fmt.Fprintf(&b, "\n- %s", n)
		}
		if len(rr.Notes) > 0 {
			b.WriteString("\n")
		}
		if st := rr.Settled; st != nil {
			writeSettled(&b, st)
		}
		if len(rr.Breaks) > 0 {
			b.WriteString("\nBreaks, seeded one at a time (each tool's wall time in brackets):\n\n| break | expected | verify.yml | layercheck verify |\n|---|---|---|---|\n")
			for _, br := range rr.Breaks {
				fmt.Fprintf(&b, "| %s | %s %s %s | %s | %s |\n", br.Name, br.Host, br.Layer, br.Want, timedCell(br.YML, br.YMLTime), timedCell(br.CLI, br.CLITime))
			}
		}
		b.WriteString("\n")
	}
	if res.day2 {
		res.writeDay2(&b)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Errorf("results: %v", err)
	} else {
		t.Logf("results written to %s", path)
	}
}

const etcdStageIntro = "Three Debian 12 machines (systemd-nspawn, each in a network namespace of its own on a lab bridge;\n" +
	"see test/nodes/nodes.sh). kubespray runs from its release tree with the ansible its requirements.txt pins,\n" +
	"offline: etcd is built from go.etcd.io/etcd and served from a local files_repo, with its checksum in the\n" +
	"inventory. The stage is cluster.yml's plays up to and including \"Install etcd\" (boilerplate with\n" +
	"validate_inventory, facts with bootstrap_os, preinstall, kubespray's download role for etcd alone, the etcd role\n" +
	"with `etcd_deployment_type: host`). `enable_nodelocaldns: false`: this kernel has no dummy module.\n\n"

// clusterIntro says what the cluster run was, for its network plugin.
func clusterIntro(cni string) string {
	head := "Three Debian 12 machines (systemd-nspawn, each in a network namespace of its own on a lab bridge, each in\n" +
		"cgroup v1 directories of its own; see test/nodes/nodes.sh). kubespray runs from its release tree with the ansible\n" +
		"its requirements.txt pins, offline: every binary is built from Go modules or source trees (test/e2e/artefacts.sh)\n" +
		"and served from a local files_repo with its checksum in the inventory; every image is assembled without a\n" +
		"container engine and served by a registry (distribution) inside the lab (test/e2e/images). One command runs\n" +
		"kubespray's cluster.yml and layercheck's verify.yml; then `layercheck verify --cluster-from first-control-plane`\n" +
		"runs on the same cluster. node1 is the control plane and etcd; node1-3 are nodes.\n"
	if cni == "flannel" {
		return head + "E2E_CNI=flannel: flannel, not kubespray's default calico; no nodelocaldns, dns-autoscaler or nginx-proxy;\n" +
			"kube-proxy iptables. Settings this machine forces, each with its reason, are in the inventory\n" +
			"test/e2e/cluster_test.go writes.\n\n"
	}
	return head + "kubespray's defaults (E2E_CNI=calico): its inventory/sample with the group_vars the release ships (calico\n" +
		"with VXLAN, nodelocaldns, dns-autoscaler, nginx-proxy on the workers), the add-ons operators enable first, and\n" +
		"only what this machine forces; each node has a bridge named nodelocaldns for node-cache (no dummy link type in\n" +
		"this kernel: `nodes.sh nodelocaldns`).\n\n"
}

// writeSettings lists what the defaults cluster's inventory sets that
// differs from kubespray's sample, as read back from both inventories.
func writeSettings(b *strings.Builder, diffs []difference) {
	if len(diffs) == 0 {
		return
	}
	fmt.Fprintf(b, "## What the inventory sets beside kubespray %s's inventory/sample, and why\n\n", clusterRelease)
	b.WriteString("Read back from both inventories (the same hosts and groups; the sample's group_vars as they are, and with\n" +
		"these settings), so this is what the run had.\n\n")
	b.WriteString("| variable | the sample | here | why |\n|---|---|---|---|\n")
	for _, d := range diffs {
		sample := d.Sample
		if sample == "" {
			sample = "unset"
			if d.Default != "" {
				sample += "; role default " + d.Default
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", d.Name, cellN(sample, 120), cellN(orUnset(d.Set), 120), cellN(d.Why, 400))
	}
	b.WriteString("\n")
}

func cell(s string) string {
	if s == "" {
		return "not run"
	}
	s = strings.ReplaceAll(s, "|", `\|`)
	if r := []rune(s); len(r) > 160 {
		s = string(r[:157]) + "..."
	}
	return s
}

// writeDay2 adds the preflights (each with its wall time and its cluster
// findings) and the trap table.
func (res *results) writeDay2(b *strings.Builder) {
	if len(res.preflights) > 0 {
		b.WriteString("## The preflights: `layercheck lint --kubespray-version R --cluster-from first-control-plane`\n\n")
		b.WriteString("| when | wall time | errors | warnings | what it said of the cluster |\n|---|---|---|---|---|\n")
		for _, p := range res.preflights {
			var said []string
			for _, f := range p.Findings {
				said = append(said, fmt.Sprintf("%s %s: %s", f.Severity, f.Rule, f.Message))
			}
			fmt.Fprintf(b, "| %s | %.2f s | %d | %d | %s |\n", p.Name, p.Took.Seconds(), p.Errors, p.Warnings, cellN(strings.Join(said, " • "), 600))
		}
		b.WriteString("\n")
	}
	if len(res.traps) > 0 {
		b.WriteString("## Traps: kubespray is the judge\n\n")
		b.WriteString("| trap | (a) the preflight before the run | (b) kubespray without the fix | (c) after the fix |\n|---|---|---|---|\n")
		for _, tr := range res.traps {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", tr.Name, cellN(tr.Preflight, 600), cellN(tr.Without, 600), cellN(tr.After, 600))
		}
		b.WriteString("\n")
	}
	b.WriteString(day2Untested)
}

const day2Intro = "Four Debian 12 machines (systemd-nspawn, see test/nodes/nodes.sh), the same lab as `make e2e-cluster`:\n" +
	"every binary built from Go modules (etcd 3.5.26 from its source tree, which the module proxy refuses), every image\n" +
	"assembled without a container engine; kubespray runs from each release's tree with the ansible its\n" +
	"requirements.txt pins (v2.30.0: ansible 10.7.0, ansible-core 2.17; v2.31.0: ansible 11.13.0, ansible-core 2.18).\n" +
	"node1 is the control plane and etcd, node2 and node3 are workers; node4 waits for scale.yml. The settings this\n" +
	"machine forces are those of `make e2e-cluster` (test/e2e/cluster_test.go: flannel, no nodelocaldns, kube-proxy\n" +
	"iptables, cgroup v1, the rlimit, the eviction threshold, offline URLs), plus `auto_renew_certificates: true`.\n\n"

// day2Untested says what this machine does not run, and why.
const day2Untested = "## Not run here\n\n" +
	"- Trap 9 runs last, on three new node machines: v2.30.0 at Kubernetes 1.33.5, with pause 3.10 and coredns 1.12.0,\n" +
	"  what v2.30.0 pins for 1.33. Not 1.33.6: k8s.io/kubernetes v1.33.6 is on the module proxy, but its staging modules\n" +
	"  at v0.33.6 (k8s.io/kube-proxy, kube-scheduler, kube-controller-manager, cri-client, externaljwt) are refused (403).\n" +
	"- calico (trap 3 is run on flannel's backend), nodelocaldns, nginx-proxy and dns-autoscaler: as in `make e2e-cluster`.\n" +
	"- A trap whose row is missing above was not reached: the run stopped before it (see the failures above).\n"

func cellN(s string, n int) string {
	if s == "" {
		return "not run"
	}
	s = strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-3]) + "..."
	}
	return s
}

// writeSettled writes where a settled cluster's verify spent its time.
func writeSettled(b *strings.Builder, st *settledRun) {
	fmt.Fprintf(b, "\nThe settled cluster: `layercheck verify --cluster-from first-control-plane` again, right after the first run, every layer as above: %.1f s wall (the goal: 6 s). Layers and hosts run side by side, so their times overlap; a node layer's is the slowest host's:\n\n", st.Wall.Seconds())
	b.WriteString("| scope | layer | time |\n|---|---|---|\n")
	for _, l := range st.Layers {
		fmt.Fprintf(b, "| %s | %s | %.2f s |\n", l.Scope, l.Layer, float64(l.MS)/1000)
	}
	if a := st.Addons; a != nil {
		fmt.Fprintf(b, "\nThe add-ons, side by side: metrics-server %.2f s, local-path-provisioner with its PVC probe %.2f s (a pod on the claim, the provisioner's helper pod making the volume, the claim bound), helm %.2f s.\n",
			float64(a.MetricsServer)/1000, float64(a.LocalPath)/1000, float64(a.Helm)/1000)
	}
	if p := st.Probe; p != nil {
		fmt.Fprintf(b, "\nThe probe, step by step: namespace, Deployment and Service created %.2f s; both pods Ready %.2f s (kubelet's part, the floor: scheduling, sandboxes, containers from an image already present, the first readiness probe); both answered through the Service %.2f s; the lookup from a pod (service_dns) %.2f s; its namespace's deletion asked %.2f s (not waited for: kube-controller-manager empties a deleted namespace only after 5 s).\n",
			float64(p.CreateMS)/1000, float64(p.ReadyMS)/1000, float64(p.ServiceMS)/1000, float64(p.DNSMS)/1000, float64(p.CleanupMS)/1000)
	}
}
