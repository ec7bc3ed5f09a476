//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/layercheck/layercheck/internal/fleet"
	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/node"
)

// The whole command an operator runs, offline on the node machines:
//
//	ansible-playbook -i <nodes> <kubespray>/cluster.yml <layercheck>/playbooks/verify.yml
//
// with every binary built from Go modules (test/e2e/artefacts.sh cluster)
// and every image assembled without a container engine and served by a
// registry inside the lab (test/e2e/images).

const (
	registryPort      = "5000"
	timeoutClusterRun = 100 * time.Minute
	timeoutImages     = 20 * time.Minute
	clusterRelease    = "v2.31.0"
	clusterEtcd       = "3.6.10"
	clusterResultMD   = "CLUSTER-RESULTS.md"
)

// clusterResultFile is where a run records its results: kubespray's
// defaults (calico) in CLUSTER-RESULTS.md, flannel in
// CLUSTER-RESULTS-flannel.md, so that each run keeps the other's record.
func clusterResultFile(cni string) string {
	if cni == "calico" {
		return clusterResultMD
	}
	return strings.TrimSuffix(clusterResultMD, ".md") + "-" + cni + ".md"
}

// The layers that must be OK everywhere on the healthy cluster.
var (
	clusterNodeLayers    = []string{"addons", "certificates", "cni", "dns", "etcd", "install", "kubelet"}
	clusterClusterLayers = []string{"addons", "cni", "kube_system", "nodes", "probe"}
)

// clusterRun is the cluster e2e's state: the release, the inventory,
// and the healthy verdicts the breaks are judged against.
type clusterRun struct {
	*stage
	work string
}

func TestKubesprayCluster(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the node machines need root (network namespaces, mounts, systemd-nspawn)")
	}
	if _, err := os.Stat(filepath.Join(repoRoot, "bin", "layercheck")); err != nil {
		t.Fatal("bin/layercheck is not built: run make build (make e2e-cluster does)")
	}
	r := release{Name: clusterRelease, EtcdVersion: clusterEtcd, EtcdWhy: "the release's default (kube_version 1.35.4)"}
	ksDir := filepath.Join(kubesprayDir, r.Name)
	if _, err := os.Stat(filepath.Join(ksDir, "cluster.yml")); err != nil {
		t.Fatalf("kubespray %s: %v (the e2e runs kubespray from ../shared/kubespray-full)", r.Name, err)
	}
	cni := clusterCNI(t)
	res := &results{path: filepath.Join(repoRoot, "test", "e2e", clusterResultFile(cni)), cluster: true, cni: cni}
	t.Cleanup(func() { res.write(t) })
	logDir := filepath.Join(cacheDir, "logs", "cluster-"+r.Name)
	_ = os.RemoveAll(logDir)
	// The inventory is kept beside the logs, to rerun a command by hand.
	work := filepath.Join(cacheDir, "cluster-"+r.Name)
	_ = os.RemoveAll(work)
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &clusterRun{stage: &stage{r: r, ksDir: ksDir, logDir: logDir, results: res}, work: work}
	rec := res.release(r)

	rec.timed("ansible venv (requirements.txt)", func() { ensureVenv(t, r, ksDir, s.log("venv")) })

	vars := map[string]any{}
	var built []setting
	rec.timed("artefacts: binaries from Go modules and source trees (E2E_CNI="+cni+" artefacts.sh cluster)", func() {
		script := filepath.Join(repoRoot, "test", "e2e", "artefacts.sh")
		out := stdoutOf(t, timeoutCluster, s.log("artefacts"), []string{"E2E_CNI=" + cni}, script, "cluster")
		if err := yaml.Unmarshal([]byte(out), &vars); err != nil {
			t.Fatalf("artefacts.sh cluster printed no YAML: %v\n%s", err, out)
		}
		var err error
		if built, err = artefactSettings(out); err != nil {
			t.Fatal(err)
		}
	})
	imagesBin := filepath.Join(cacheDir, "bin", "images")
	rec.timed("images tool (test/e2e/images)", func() {
		if out, err := run(t, timeoutImages, s.log("images"), filepath.Join(repoRoot, "test", "e2e", "images"), nil,
			"go", "build", "-o", imagesBin, "."); err != nil {
			t.Fatalf("building test/e2e/images: %v\n%s", err, out)
		}
	})

	// LAYERCHECK_E2E_REUSE: run on the nodes a kept run left up (kubespray
	// is idempotent), to work on a later stage without a fresh install.
	reuse := false
	if os.Getenv("LAYERCHECK_E2E_REUSE") != "" {
		out, _ := run(t, time.Minute, "", repoRoot, nil, nodesScript(), "status")
		reuse = strings.Count(out, "running") == 3
	}
	if !reuse {
		_, _ = run(t, timeoutNodes, s.log("nodes"), repoRoot, nil, nodesScript(), "down")
	}
	downAtEnd(t, s.log("nodes"))
	if !reuse {
		rec.timed("nodes up (3 systemd-nspawn machines)", func() {
			if out, err := run(t, timeoutNodes, s.log("nodes"), repoRoot, nil, nodesScript(), "up", "3"); err != nil {
				t.Fatalf("nodes up: %v\n%s", err, out)
			}
		})
	}
	if cni == "calico" {
		rec.timed("nodelocaldns: what it needs of this kernel on each node (nodes.sh nodelocaldns)", func() {
			if out, err := run(t, timeoutNodes, s.log("nodes"), repoRoot, nil, nodesScript(), "nodelocaldns"); err != nil {
				t.Fatalf("nodes.sh nodelocaldns: %v\n%s", err, out)
			}
		})
	}
	filesRepo := startFilesRepo(t, filepath.Join(cacheDir, "files"))
	registry := startRegistry(t, imagesBin, filepath.Join(cacheDir, "registry"), s.log("registry"))
	rec.timed("images pushed to the lab's registry", func() {
		out, err := inLab(t, timeoutImages, s.log("images"), repoRoot, nil, imagesBin, "push",
			"--registry", registry, "--build-dir", filepath.Join(cacheDir, "build"), "--rootfs", filepath.Join(nodesDir(), "rootfs"))
		if err != nil {
			t.Fatalf("images push: %v\n%s", err, tail(out, 40))
		}
		// push skips, saying so, an image whose binaries are not built:
		// the run would stop much later at its pull.
		if missing := notPushed(out, clusterImages(cni)); len(missing) > 0 {
			t.Fatalf("images push left out %s (E2E_CNI=%s artefacts.sh cluster builds them):\n%s", strings.Join(missing, ", "), cni, tail(out, 40))
		}
	})

	if cni == "flannel" {
		s.inv = writeClusterInventory(t, s.work, filesRepo, registry, vars)
	} else {
		s.inv, res.settings = writeDefaultsInventory(t, s.work, ksDir, lab{
			FilesRepo: filesRepo, Registry: registry, Resolver: labGateway, Nofile: hardNofile(t), Built: built,
		})
	}
	facts := filepath.Join(s.work, "facts")
	var out string
	rec.timed("ansible-playbook cluster.yml playbooks/verify.yml (one command)", func() {
		env := []string{
			"ANSIBLE_CONFIG=" + filepath.Join(ksDir, "ansible.cfg"), "ANSIBLE_FORCE_COLOR=0", "ANSIBLE_NOCOLOR=1",
			"ANSIBLE_CACHE_PLUGIN=jsonfile", "ANSIBLE_CACHE_PLUGIN_CONNECTION=" + facts,
		}
		var err error
		out, err = inLab(t, timeoutClusterRun, s.log("kubespray"), ksDir, env, venvBin(r, "ansible-playbook"),
			"-i", s.inv, filepath.Join(ksDir, "cluster.yml"), filepath.Join(repoRoot, "playbooks", "verify.yml"))
		rc, ok := recap(out)
		rec.Recap = rc
		if err != nil || !ok {
			t.Fatalf("cluster.yml + verify.yml failed (%v); log %s\n%s", err, s.log("kubespray"), tail(out, 80))
		}
	})
	healthyYML, healthyCluster := readVerifyFacts(t, "healthy", facts, out)
	needCluster(t, "healthy", healthyCluster, out)
	var healthyCLI *fleet.Report
	rec.timed("layercheck verify --cluster-from first-control-plane", func() { healthyCLI = s.verifyClusterCLI(t, "healthy") })
	rec.Healthy = verdicts(healthyYML)
	rec.Healthy["cluster"] = clusterVerdicts(healthyCluster)
	for host, rep := range healthyYML {
		for _, l := range clusterNodeLayers {
			want := verify.StatusOK
			if l == "etcd" && host != "node1" {
				// node1 is the only etcd host: not applicable elsewhere.
				want = verify.StatusSkipped
			}
			if lr := rep.Layers[l]; lr == nil || lr.Status != want {
				t.Errorf("healthy %s: layer %s is %s, want %s: %s", host, l, statusOf(lr), want, failing(lr))
			}
		}
	}
	for _, l := range clusterClusterLayers {
		if lr := healthyCluster.Layers[l]; lr == nil || lr.Status != verify.StatusOK {
			t.Errorf("healthy cluster: layer %s is %s, want ok: %s", l, statusOf(lr), failing(lr))
		}
	}
	if cni == "calico" {
		defaultsHealthy(t, healthyYML, healthyCluster)
		defaultsHealthy(t, reportsOf(healthyCLI), healthyCLI.Cluster)
		rec.Notes = append(rec.Notes, workersThroughNginx(t)...)
	}
	sameVerdicts(t, "healthy", healthyYML, healthyCLI)
	sameClusterVerdicts(t, "healthy", healthyCluster, healthyCLI.Cluster)
	rec.Settled = s.settled(t, healthyCLI)

	for _, b := range clusterBreaks(cni) {
		found := &breakResult{Name: b.Name, Host: b.Host, Layer: b.Layer, Want: b.Status}
		rec.Breaks = append(rec.Breaks, found)
		ok := t.Run(strings.ReplaceAll(b.Name, " ", "_"), func(t *testing.T) {
			start := time.Now()
			b.Seed(t, s.stage)
			ymlStart := time.Now()
			yml, ycl := s.verifyClusterYML(t, b.Name)
			found.YMLTime = time.Since(ymlStart)
			cliStart := time.Now()
			cli := s.verifyClusterCLI(t, b.Name)
			found.CLITime = time.Since(cliStart)
			found.YML = judgeAny(t, "verify.yml", b, yml, ycl)
			found.CLI = judgeAny(t, "layercheck verify", b, reportsOf(cli), cli.Cluster)
			sameVerdicts(t, b.Name, yml, cli, b.Chance...)
			sameClusterVerdicts(t, b.Name, ycl, cli.Cluster, b.Chance...)
			if b.Restore != nil {
				b.Restore(t, s.stage)
			}
			found.Duration = time.Since(start)
		})
		if !ok && b.Restore != nil {
			t.Fatalf("break %q was not found as it should be; stopping the breaks", b.Name)
		}
	}
}

// clusterCNI is the e2e cluster's network plugin, E2E_CNI: calico, the
// default, runs kubespray's defaults; flannel the cluster this e2e ran
// before them.
func clusterCNI(t *testing.T) string {
	switch c := os.Getenv("E2E_CNI"); c {
	case "", "calico":
		return "calico"
	case "flannel":
		return "flannel"
	default:
		t.Fatalf("E2E_CNI=%s: calico (the default: kubespray's defaults) or flannel", c)
		return ""
	}
}

// stdoutOf runs a command, with env added to this process's environment,
// and returns its standard output alone (its standard error goes to the
// log).
func stdoutOf(t *testing.T, timeout time.Duration, logFile string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), env...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	_ = os.MkdirAll(filepath.Dir(logFile), 0o755)
	if f, err := os.OpenFile(logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		defer f.Close()
		fmt.Fprintf(f, "$ %s %s\n", name, strings.Join(args, " "))
		cmd.Stderr = f
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v (log %s)\n%s", name, strings.Join(args, " "), err, logFile, tail(stdout.String(), 20))
	}
	return stdout.String()
}

// startRegistry serves the image registry (distribution) at
// labGateway:registryPort inside the lab until the test ends.
func startRegistry(t *testing.T, bin, root, logFile string) string {
	t.Helper()
	addr := labGateway + ":" + registryPort
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	lf, err := os.OpenFile(logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nodesScript(), "exec", bin, "serve", "--addr", addr, "--root", root)
	cmd.Stdout, cmd.Stderr = lf, lf
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd); lf.Close() })
	for i := 0; i < 60; i++ {
		if _, err := inLab(t, 5*time.Second, "", "", nil, "curl", "-sf", "-o", "/dev/null", "--max-time", "2", "http://"+addr+"/v2/"); err == nil {
			return addr
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("the registry did not answer on %s within 30 s (log %s)", addr, logFile)
	return ""
}

// writeClusterInventory writes the operator's inventory for the whole of
// cluster.yml: node1 is the control plane and etcd, all three are nodes;
// everything comes from the lab's files_repo and registry; the add-ons
// operators enable first are on.
func writeClusterInventory(t *testing.T, dir, filesRepo, registry string, built map[string]any) string {
	t.Helper()
	return writeInventoryFiles(t, dir, nil, clusterGroups, clusterVars(t, filesRepo, registry, built))
}

// writeDefaultsInventory writes the defaults cluster's inventory in dir:
// the node harness's hosts, clusterGroups and kubespray's sample
// group_vars with defaultsSettings applied; and, in dir/sample, the same
// hosts and groups with the sample's group_vars as they are. It returns
// the inventory and what differs between the two, read back from both;
// a difference without a reason, a setting the sample already has, or a
// variable kubespray does not define stops the test.
func writeDefaultsInventory(t *testing.T, dir, ksDir string, l lab) (string, []difference) {
	t.Helper()
	hostsIni, err := os.ReadFile(filepath.Join(nodesDir(), "run", "hosts.ini"))
	if err != nil {
		t.Fatalf("the node harness wrote no inventory: %v", err)
	}
	settings := defaultsSettings(l)
	inv, err := writeSampleInventory(ksDir, dir, hostsIni, clusterGroups, settings)
	if err != nil {
		t.Fatal(err)
	}
	sample, err := writeSampleInventory(ksDir, filepath.Join(dir, "sample"), hostsIni, clusterGroups, nil)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := kubespray.Bundled(clusterRelease)
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := sampleDiff(sample, inv, []string{"node1", "node2", "node3"}, settings, cat)
	if err != nil {
		t.Fatal(err)
	}
	if bad := checkDiff(diffs, settings, cat); len(bad) > 0 {
		t.Fatalf("the defaults inventory %s against kubespray's sample:\n  %s", inv, strings.Join(bad, "\n  "))
	}
	return inv, diffs
}

// clusterImages are the images of the run's network plugin and add-ons,
// repository names as the catalogue of test/e2e/images has them, that
// push must have pushed (or found unchanged); the others are common to
// both runs.
func clusterImages(cni string) []string {
	common := []string{"pause", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy",
		"coredns/coredns", "metrics-server/metrics-server", "rancher/local-path-provisioner", "library/busybox",
		"e2e-test-images/agnhost"}
	if cni == "flannel" {
		return append(common, "flannel/flannel", "flannel/flannel-cni-plugin")
	}
	return append(common, "calico/node", "calico/cni", "calico/kube-controllers", "dns/k8s-dns-node-cache",
		"cpa/cluster-proportional-autoscaler", "library/nginx")
}

// notPushed lists the repositories of want with no "pushed REF@DIGEST" or
// "unchanged REF@DIGEST" line in images push's output.
func notPushed(out string, want []string) []string {
	have := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || (f[0] != "pushed" && f[0] != "unchanged") {
			continue
		}
		ref, _, _ := strings.Cut(f[1], "@")
		// HOST:PORT/REPO:TAG
		if _, repo, ok := strings.Cut(ref, "/"); ok {
			if i := strings.LastIndex(repo, ":"); i > 0 {
				have[repo[:i]] = true
			}
		}
	}
	var missing []string
	for _, r := range want {
		if !have[r] {
			missing = append(missing, r)
		}
	}
	return missing
}

// clusterVars are the flannel e2e cluster's group_vars/all (E2E_CNI=flannel,
// and day 2's): kubespray offline from the lab's files_repo and registry,
// the settings this machine forces (each with its reason), the add-ons
// operators enable first, and the artefacts' versions and checksums
// (built). kubespray's defaults are defaultsSettings'.
func clusterVars(t *testing.T, filesRepo, registry string, built map[string]any) map[string]any {
	t.Helper()
	// Offline: kubespray's own offline variables
	// (inventory/sample/group_vars/all/offline.yml), the registry's plain
	// HTTP and the local-path helper image.
	vars := settingsMap(offlineSettings(filesRepo, registry))
	for k, v := range map[string]any{
		"etcd_deployment_type": "host",
		"container_manager":    "containerd",
		// flannel, vxlan backend: the cluster of E2E_CNI=flannel and of day
		// 2, first proven here before kubespray's defaults could be built.
		"kube_network_plugin": "flannel",
		// No IPVS in this kernel.
		"kube_proxy_mode": "iptables",
		// nf_conntrack_max cannot be set from a network namespace: leave it.
		"kube_proxy_conntrack_max_per_core": 0,
		"kube_proxy_conntrack_min":          0,
		// The lab gateway is the nodes' only resolver. nodelocaldns,
		// cluster-proportional-autoscaler and nginx (the workers' localhost
		// load balancer) stay off in this cluster, as they were before
		// E2E_CNI=calico could build them; the workers reach the API
		// server at node1's address.
		"upstream_dns_servers":             []string{labGateway},
		"enable_nodelocaldns":              false,
		"enable_dns_autoscaler":            false,
		"loadbalancer_apiserver_localhost": false,
		// This machine: cgroups v1, and no CAP_SYS_RESOURCE (the pause
		// container's negative oom_score_adj would kill runc).
		"kubelet_fail_cgroup_v1": false,
		// kubeadm 1.35 refuses cgroup v1 in its SystemVerification
		// preflight unless that check is skipped as well ("You must also
		// explicitly skip this validation").
		// kubeadm upgrade apply's CreateJob check gives its health-check Job
		// 15 s; on this loaded 2-core machine the scheduler, just restarted,
		// took 8 s to place it and the Job completed after the deadline
		// (kubespray #12006, #12009; kubeadm raised it to a minute later).
		"kubeadm_ignore_preflight_errors": []string{"SystemVerification", "CreateJob"},
		"containerd_extra_runtime_args":   map[string]any{"restrict_oom_score_adj": true},
		// runc cannot raise RLIMIT_NOFILE above the hard limit this machine
		// gives (no CAP_SYS_RESOURCE); kubespray's base spec asks 65535.
		"containerd_base_runtime_spec_rlimit_nofile": hardNofile(t),
		// The nodes' disk is the host's, which other work fills: kubelet's
		// default 15% imagefs threshold would taint them with disk
		// pressure and evict the add-ons mid-run.
		"eviction_hard":               nodeEviction,
		"eviction_hard_control_plane": nodeEviction,
		// The add-ons operators enable first.
		"metrics_server_enabled":         true,
		"local_path_provisioner_enabled": true,
		"helm_enabled":                   true,
		// layercheck's workload probe, from the lab's registry.
		"layercheck_cluster_probe_image": registry + "/e2e-test-images/agnhost:2.53",
	} {
		vars[k] = v
	}
	for k, v := range built {
		vars[k] = v
	}
	return vars
}

// hardNofile is the hard RLIMIT_NOFILE of this process, which the node
// machines inherit, capped at kubespray's default (65535).
func hardNofile(t *testing.T) uint64 {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	return min(lim.Max, 65535)
}

// needCluster stops the test when verify.yml set no layercheck_cluster.
func needCluster(t *testing.T, name string, crep *cluster.Report, out string) *cluster.Report {
	t.Helper()
	if crep == nil {
		t.Fatalf("%s: no layercheck_cluster fact on node1 (the first kube_control_plane host)\n%s", name, tail(out, 40))
	}
	return crep
}

// verifyClusterYML runs playbooks/verify.yml alone, as between runs.
func (s *clusterRun) verifyClusterYML(t *testing.T, name string) (map[string]*node.Report, *cluster.Report) {
	t.Helper()
	facts, out, _ := s.runVerifyYML(t)
	reps, crep := readVerifyFacts(t, name, facts, out)
	return reps, needCluster(t, name, crep, out)
}

// verifyClusterCLI runs `layercheck verify --cluster-from first-control-plane`.
func (s *clusterRun) verifyClusterCLI(t *testing.T, name string) *fleet.Report {
	t.Helper()
	rep := s.verifyCLI(t, name, "--cluster-from", "first-control-plane")
	if rep.Cluster == nil {
		t.Fatalf("%s: layercheck verify --cluster-from gave no cluster report (%s)", name, rep.ClusterSkipped)
	}
	return rep
}

func reportsOf(rep *fleet.Report) map[string]*node.Report {
	m := map[string]*node.Report{}
	for _, h := range rep.Hosts {
		m[h.Host] = h.Report
	}
	return m
}

func clusterVerdicts(rep *cluster.Report) map[string]verify.Status {
	v := map[string]verify.Status{}
	for l, lr := range rep.Layers {
		v[l] = lr.Status
	}
	return v
}

// sameClusterVerdicts: both tools give every cluster layer, but those of
// skip, the same status.
func sameClusterVerdicts(t *testing.T, name string, yml, cli *cluster.Report, skip ...string) {
	t.Helper()
	if cli == nil {
		t.Errorf("%s: layercheck verify gave no cluster report", name)
		return
	}
	for l, lr := range cli.Layers {
		if slices.Contains(skip, l) {
			continue
		}
		if yl := yml.Layers[l]; yl == nil || yl.Status != lr.Status {
			t.Errorf("%s: cluster layer %s: verify.yml says %s, layercheck verify %s", name, l, statusOf(yl), lr.Status)
		}
	}
}

// judgeAny judges a break whose Host is a node or "cluster".
func judgeAny(t *testing.T, tool string, b brk, nodes map[string]*node.Report, c *cluster.Report) string {
	t.Helper()
	if b.Host != "cluster" {
		return judge(t, tool, b, nodes[b.Host])
	}
	if c == nil {
		t.Errorf("%s: %s: no cluster report", b.Name, tool)
		return "no report"
	}
	return judge(t, tool, b, &node.Report{Layers: c.Layers})
}

// kubectl on node1 with kubespray's admin.conf.
func kubectl(args string) string {
	return "/usr/local/bin/kubectl --kubeconfig /etc/kubernetes/admin.conf " + args
}

// clusterBreaks are seeded one at a time on the healthy cluster; each is
// mended before the next, except the last. The flannel cluster has its
// backend changed; kubespray's defaults (calico) have calicoBreaks instead,
// the IPPool's encapsulation first.
func clusterBreaks(cni string) []brk {
	taint := brk{
		Name: "control-plane taint left on node1, which is in kube_node",
		Seed: func(t *testing.T, _ *stage) {
			onNode(t, "node1", kubectl("taint node node1 node-role.kubernetes.io/control-plane=:NoSchedule --overwrite"))
		},
		Restore: func(t *testing.T, _ *stage) {
			onNode(t, "node1", kubectl("taint node node1 node-role.kubernetes.io/control-plane:NoSchedule-"))
		},
		Host: "cluster", Layer: "nodes", Status: verify.StatusFail,
		Check: regexp.MustCompile(`^taints$`), Remedy: regexp.MustCompile(`kubectl taint`),
	}
	stub := brk{
		Name: "kubelet's resolvConf on node2 is a stub resolver",
		Seed: func(t *testing.T, _ *stage) {
			onNode(t, "node2", "echo 'nameserver 127.0.0.53' >/etc/layercheck-e2e-stub-resolv.conf && "+
				"cp -p /etc/kubernetes/kubelet-config.yaml /etc/kubernetes/kubelet-config.yaml.e2e && "+
				"sed -i 's|^resolvConf:.*|resolvConf: \"/etc/layercheck-e2e-stub-resolv.conf\"|' /etc/kubernetes/kubelet-config.yaml")
			restartKubelet(t, "node2")
		},
		Restore: func(t *testing.T, _ *stage) {
			onNode(t, "node2", "mv /etc/kubernetes/kubelet-config.yaml.e2e /etc/kubernetes/kubelet-config.yaml && "+
				"rm -f /etc/layercheck-e2e-stub-resolv.conf")
			restartKubelet(t, "node2")
		},
		Host: "node2", Layer: "dns", Status: verify.StatusFail,
		Check: regexp.MustCompile(`resolv_conf`), Remedy: regexp.MustCompile(`kube_resolv_conf`),
	}
	backend := brk{
		Name:    "flannel's backend changed against the inventory",
		Seed:    func(t *testing.T, _ *stage) { flannelBackend(t, "host-gw") },
		Restore: func(t *testing.T, _ *stage) { flannelBackend(t, "vxlan") },
		Host:    "cluster", Layer: "cni", Status: verify.StatusFail,
		Check: regexp.MustCompile(`^flannel_backend$`), Remedy: regexp.MustCompile(`flannel_backend_type`),
	}
	metrics := brk{
		Name: "metrics-server scaled to 0",
		Seed: func(t *testing.T, _ *stage) {
			onNode(t, "node1", kubectl("-n kube-system scale deployment metrics-server --replicas=0"))
			// The break is in place once the aggregator says so: until
			// then one tool could see the APIService Available and the
			// other not.
			onNode(t, "node1", kubectl("wait --for=condition=Available=False apiservice/v1beta1.metrics.k8s.io --timeout=120s"))
		},
		Restore: func(t *testing.T, _ *stage) {
			onNode(t, "node1", kubectl("-n kube-system scale deployment metrics-server --replicas=1")+" && "+
				kubectl("-n kube-system rollout status deployment metrics-server --timeout=180s"))
			waitMetrics(t)
		},
		Host: "cluster", Layer: "addons", Status: verify.StatusFail,
		Check: regexp.MustCompile(`metrics`), Remedy: regexp.MustCompile(`metrics`),
	}
	coredns := brk{
		Name: "CoreDNS deleted",
		Seed: func(t *testing.T, _ *stage) {
			onNode(t, "node1", kubectl("-n kube-system delete deployment coredns --wait=true"))
		},
		Host: "cluster", Layer: "kube_system", Status: verify.StatusFail,
		Check: regexp.MustCompile(`coredns`), Remedy: regexp.MustCompile(`cluster.yml|coredns`),
	}
	if cni == "flannel" {
		return []brk{taint, stub, backend, metrics, coredns}
	}
	return slices.Concat([]brk{taint, stub}, calicoBreaks(), []brk{metrics, coredns})
}

// flannelBackend sets the Backend.Type of flannel's net-conf.json in the
// kube-flannel-cfg ConfigMap, as an operator editing it by hand would.
func flannelBackend(t *testing.T, typ string) {
	t.Helper()
	onNode(t, "node1", `python3 - <<'EOF'
import json, subprocess
k = ["/usr/local/bin/kubectl", "--kubeconfig", "/etc/kubernetes/admin.conf", "-n", "kube-system"]
cm = json.loads(subprocess.run(k + ["get", "cm", "kube-flannel-cfg", "-o", "json"], check=True, capture_output=True).stdout)
nc = json.loads(cm["data"]["net-conf.json"])
nc["Backend"]["Type"] = "`+typ+`"
subprocess.run(k + ["patch", "cm", "kube-flannel-cfg", "--type", "merge", "-p",
                    json.dumps({"data": {"net-conf.json": json.dumps(nc, indent=2)}})], check=True)
EOF`)
}

// waitMetrics waits until the metrics API answers for every node again.
func waitMetrics(t *testing.T) {
	t.Helper()
	var out string
	for i := 0; i < 90; i++ {
		out = onNode(t, "node1", kubectl("top nodes --no-headers 2>&1 || true"))
		if strings.Count(out, "node") >= 3 && !strings.Contains(out, "error") {
			return
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatalf("the metrics API did not answer for every node again:\n%s", out)
}

// settled runs `layercheck verify --cluster-from first-control-plane`
// once more on the healthy cluster, which the first run and verify.yml
// have left settled, and records its wall time and where it went. Its
// verdicts must be the first run's.
func (s *clusterRun) settled(t *testing.T, first *fleet.Report) *settledRun {
	t.Helper()
	start := time.Now()
	rep := s.verifyClusterCLI(t, "settled")
	st := &settledRun{Wall: time.Since(start)}
	sameVerdicts(t, "settled", reportsOf(first), rep)
	sameClusterVerdicts(t, "settled", first.Cluster, rep.Cluster)
	for _, l := range sortedKeys(rep.Cluster.Layers) {
		st.Layers = append(st.Layers, layerTime{Scope: "cluster", Layer: l, MS: rep.Cluster.Layers[l].DurationMS})
	}
	slowest := map[string]int64{}
	for _, h := range rep.Hosts {
		for l, lr := range h.Report.Layers {
			slowest[l] = max(slowest[l], lr.DurationMS)
		}
	}
	for _, l := range sortedKeys(slowest) {
		st.Layers = append(st.Layers, layerTime{Scope: "nodes", Layer: l, MS: slowest[l]})
	}
	if lr := rep.Cluster.Layers["probe"]; lr != nil && lr.Facts != nil {
		// The JSON report's facts decode as maps: read the probe's back
		// into its own type.
		var pf cluster.ProbeFacts
		if b, err := json.Marshal(lr.Facts); err == nil && json.Unmarshal(b, &pf) == nil {
			st.Probe = pf.Timings
		}
	}
	if lr := rep.Cluster.Layers["addons"]; lr != nil && lr.Facts != nil {
		var af cluster.AddonsFacts
		if b, err := json.Marshal(lr.Facts); err == nil && json.Unmarshal(b, &af) == nil {
			st.Addons = &af.Timings
		}
	}
	if st.Probe == nil {
		t.Errorf("settled: the probe layer gave no timings")
	}
	return st
}

// restartKubelet restarts kubelet on node and waits until it has said
// Ready since: a kubelet just started posts its Node NotReady ("CSINode is
// not yet initialized") for a few seconds, and a verify run then would find
// the nodes layer failed in one tool and not in the other. The Node's
// Ready condition must be True with a heartbeat no older than the restart
// (kubelet posts its status when it starts and when it changes).
func restartKubelet(t *testing.T, node string) {
	t.Helper()
	out := onNode(t, node, "echo restart-at=$(date +%s) && systemctl restart kubelet")
	m := regexp.MustCompile(`restart-at=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("restart kubelet on %s: no time in\n%s", node, out)
	}
	since, _ := strconv.ParseInt(m[1], 10, 64)
	var got string
	for i := 0; i < 90; i++ {
		got = strings.TrimSpace(onNode(t, "node1", kubectl("get node "+node+` -o jsonpath='{range .status.conditions[?(@.type=="Ready")]}{.status} {.lastHeartbeatTime}{end}'`)))
		if st, hb, ok := strings.Cut(got, " "); ok && st == "True" {
			if at, err := time.Parse(time.RFC3339, hb); err == nil && at.Unix() >= since {
				return
			}
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatalf("kubelet on %s: not Ready since its restart after three minutes (Ready, heartbeat: %s)", node, got)
}
