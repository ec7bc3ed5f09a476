//go:build shared

package lint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/testutil"
)

// A mutation of kubespray's sample inventory. Host mutations become one
// host each (its own play) of one batch inventory; group mutations change
// the inventory's groups and get an inventory of their own.
type mutation struct {
	name string
	// vars are host variables (YAML flow values) of the mutation's host.
	vars map[string]string
	// hosts replaces the batch's hosts: group -> hosts; groupVars are
	// written to group_vars/all/mutation.yml (group mutations only).
	hosts     map[string][]string
	groupVars map[string]string
}

// hostMutations cover every inventory-only assert of kubespray v2.24.3 to
// master: choices, versions, booleans, networks, plugin combinations,
// removed and deprecated variables, host names.
var hostMutations = []mutation{
	{name: "sample"},
	{name: "plugin-weave", vars: map[string]string{"kube_network_plugin": "weave"}},
	{name: "plugin-none", vars: map[string]string{"kube_network_plugin": "none"}},
	{name: "plugin-bogus", vars: map[string]string{"kube_network_plugin": "calico2"}},
	{name: "dns-mode", vars: map[string]string{"dns_mode": "kubedns"}},
	{name: "proxy-mode", vars: map[string]string{"kube_proxy_mode": "userspace"}},
	{name: "proxy-nftables", vars: map[string]string{"kube_proxy_mode": "nftables"}},
	{name: "cert-management", vars: map[string]string{"cert_management": "vault"}},
	{name: "resolvconf-mode", vars: map[string]string{"resolvconf_mode": "systemd"}},
	{name: "etcd-docker", vars: map[string]string{"etcd_deployment_type": "docker"}},
	{name: "etcd-type", vars: map[string]string{"etcd_deployment_type": "podman"}},
	{name: "container-manager", vars: map[string]string{"container_manager": "podman"}},
	{name: "docker-etcd-docker", vars: map[string]string{"container_manager": "docker", "etcd_deployment_type": "docker"}},
	{name: "bool-download-run-once", vars: map[string]string{"download_run_once": `"yes"`}},
	{name: "bool-helm", vars: map[string]string{"helm_enabled": `"true"`}},
	{name: "bool-always-pull", vars: map[string]string{"download_always_pull": `"false"`}},
	{name: "bool-lbaas", vars: map[string]string{"openstack_lbaas_enabled": `"no"`}},
	{name: "bool-netchecker", vars: map[string]string{"deploy_netchecker": `"true"`}},
	{name: "download-localhost", vars: map[string]string{"download_localhost": "true", "download_run_once": "false"}},
	{name: "kata-docker", vars: map[string]string{"kata_containers_enabled": "true", "container_manager": "docker"}},
	{name: "gvisor-crio", vars: map[string]string{"gvisor_enabled": "true", "container_manager": "crio"}},
	{name: "external-ca-renew", vars: map[string]string{"kube_external_ca_mode": "true", "auto_renew_certificates": "true"}},
	{name: "kube-version-old", vars: map[string]string{"kube_version": "1.20.0"}},
	{name: "kube-version-v", vars: map[string]string{"kube_version": "v1.29.5"}},
	{name: "containerd-old", vars: map[string]string{"containerd_version": "1.5.0"}},
	{name: "services-host-bits", vars: map[string]string{"kube_service_addresses": "10.233.0.5/18"}},
	{name: "pods-not-cidr", vars: map[string]string{"kube_pods_subnet": "10.233.64.0"}},
	{name: "pods-in-services", vars: map[string]string{"kube_pods_subnet": "10.233.0.0/20", "kube_service_addresses": "10.233.0.0/18"}},
	{name: "node-prefix-pods", vars: map[string]string{"kube_network_plugin": "flannel", "kube_network_node_prefix": "28"}},
	{name: "node-prefix-range", vars: map[string]string{"kube_network_plugin": "flannel", "kube_network_node_prefix": "17"}},
	{name: "cloud-provider-aws", vars: map[string]string{"cloud_provider": "aws"}},
	{name: "cloud-provider-bogus", vars: map[string]string{"cloud_provider": "nimbus"}},
	{name: "external-cloud-provider", vars: map[string]string{"cloud_provider": "external", "external_cloud_provider": "nimbus"}},
	{name: "ipv6-services", vars: map[string]string{"ipv6_stack": "true", "kube_service_addresses_ipv6": `"fd85:ee78:d8a6:8607::1:0/112"`}},
	{name: "ipv6-pods-in-services", vars: map[string]string{"ipv6_stack": "true", "kube_service_addresses_ipv6": `"fd85::/64"`, "kube_pods_subnet_ipv6": `"fd85::/80"`}},
	{name: "removed-static-pod-path", vars: map[string]string{"kubelet_static_pod_path": "/etc/kubernetes/manifests"}},
	{name: "etcd-kubeadm-enabled", vars: map[string]string{"etcd_kubeadm_enabled": "true"}},
	{name: "containerd-config", vars: map[string]string{"containerd_config": "{}"}},
	{name: "admission-plugins-comma", vars: map[string]string{"kube_apiserver_enable_admission_plugins": `["NodeRestriction,PodSecurity"]`}},
	{name: "dashboard-no-rbac", vars: map[string]string{"dashboard_enabled": "true", "rbac_enabled": "false"}},
	{name: "oci-no-rbac", vars: map[string]string{"cloud_provider": "oci", "rbac_enabled": "false"}},
	{name: "yq-version-v", vars: map[string]string{"yq_version": "v4.42.1"}},
	{name: "ignore-assert-errors", vars: map[string]string{"ignore_assert_errors": "true", "kube_network_plugin": "weave", "dns_mode": "kubedns"}},
	{name: "Bad_Host"},
}

// groupMutations change the groups (the batch has cp1 in
// kube_control_plane and etcd, the mutation hosts in kube_node).
var groupMutations = []mutation{
	{name: "kube-node-empty", hosts: map[string][]string{"kube_control_plane": {"cp1"}, "etcd": {"cp1"}}},
	{name: "control-plane-empty", hosts: map[string][]string{"kube_node": {"n1"}, "etcd": {"n1"}}},
	{name: "etcd-empty", hosts: map[string][]string{"kube_control_plane": {"cp1"}, "kube_node": {"n1"}}},
	{name: "etcd-empty-kubeadm", hosts: map[string][]string{"kube_control_plane": {"cp1"}, "kube_node": {"n1"}}, groupVars: map[string]string{"etcd_deployment_type": "kubeadm"}},
	{name: "etcd-even", hosts: map[string][]string{"kube_control_plane": {"cp1", "cp2"}, "etcd": {"cp1", "cp2"}, "kube_node": {"n1"}}},
	{name: "overlap", hosts: map[string][]string{"kube_control_plane": {"cp1"}, "etcd": {"cp1"}, "kube_node": {"cp1", "n1"}}},
	{name: "nodes-exceed-range", hosts: map[string][]string{"kube_control_plane": {"cp1"}, "etcd": {"cp1"}, "kube_node": {"n1", "n2"}},
		groupVars: map[string]string{"kube_network_plugin": "flannel", "kube_pods_subnet": "10.233.64.0/24", "kube_network_node_prefix": "25"}},
}

// factVars are the facts the pre-v2.28 asserts (0040-verify-settings.yml)
// read, set as play vars so that the asserts on them pass: the lint
// leaves those asserts to the run (needs-fact in the coverage table).
// resolvconf_stat and resolvconf_slurp are the registered results v2.27's
// "Stop if /etc/resolv.conf has no configured nameservers" reads through
// configured_nameservers.
const factVars = `    ansible_service_mgr: systemd
    ansible_distribution: Ubuntu
    ansible_os_family: Debian
    ansible_distribution_major_version: "24"
    ansible_memtotal_mb: 65536
    ansible_kernel: 6.8.0-45-generic
    ansible_all_ipv4_addresses: [10.0.0.1]
    ansible_all_ipv6_addresses: []
    resolvconf_stat: {stat: {exists: true}}
    resolvconf_slurp: {content: bmFtZXNlcnZlciAxMC4wLjAuNTMK}
`

// TestAssertTasksAgainstKubespray runs each bundled release's own
// inventory asserts (validate_inventory from v2.28, 0040-verify-settings.yml
// before) under the ansible its requirements.txt pins, on mutations of its
// sample inventory, and requires the lint to reject every inventory
// kubespray rejects, naming the same assert (task and file:line). A
// kubespray-preflight finding on a host kubespray accepts fails too: the
// generated assert tasks must not invent failures.
func TestAssertTasksAgainstKubespray(t *testing.T) {
	start := time.Now()
	var mu sync.Mutex
	var counts []string
	releases := kubespray.ReleaseOrder()
	if only := os.Getenv("LAYERCHECK_ASSERT_RELEASES"); only != "" {
		releases = strings.Split(only, ",")
	}
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			rejected, runs := assertTasksRelease(t, rel)
			mu.Lock()
			counts = append(counts, fmt.Sprintf("%s: %d mutations, %d hosts or inventories rejected by kubespray, %d ansible-playbook run(s)", rel, len(hostMutations)+len(groupMutations), rejected, runs))
			mu.Unlock()
		})
	}
	t.Cleanup(func() {
		sort.Strings(counts)
		t.Logf("%s\nin %s", strings.Join(counts, "\n"), time.Since(start).Round(time.Second))
	})
}

// ansibleSlots bounds the ansible-playbook processes running at once.
var ansibleSlots = make(chan struct{}, 2)

func assertTasksRelease(t *testing.T, rel string) (rejected, runs int) {
	tree, err := filepath.Abs(testutil.Shared(t, "kubespray-full", rel))
	require.NoError(t, err)
	req, err := os.ReadFile(filepath.Join(tree, "requirements.txt"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^ansible==([0-9.]+)`).FindSubmatch(req)
	require.NotNil(t, m, "%s/requirements.txt pins no ansible", rel)
	venv := filepath.Join(testutil.RepoRoot(), ".venv-ansible-"+string(m[1]))
	playbook := filepath.Join(venv, "bin", "ansible-playbook")
	if _, err := os.Stat(playbook); err != nil {
		t.Fatalf("%s not found: run `make venv` (scripts/venv-kubespray.sh makes one venv per pinned ansible): %v", playbook, err)
	}
	cat, err := kubespray.Bundled(rel)
	require.NoError(t, err)
	pre := cat.AssertTasks()
	require.NotEmpty(t, pre, "the %s catalogue has no assert tasks", rel)
	legacy := strings.Contains(pre[0].File, "0040-verify-settings")

	work := t.TempDir()
	cfg := assertTasksConfig(t, work, tree, legacy)
	type job struct {
		dir   string
		hosts []string            // mutation hosts, one play each (nil: one play on the play's hosts)
		names map[string][]string // host -> the mutations it carries
	}
	var jobs []job
	// the batch: cp1 (kube_control_plane, etcd) and kube_node hosts each
	// carrying mutations that no assert task reads together
	batch := filepath.Join(work, "batch")
	hostVars, names := packMutations(cat)
	var hosts []string
	for h := range names {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	t.Logf("%s: %d host mutations on %d hosts", rel, len(hostMutations), len(hosts))
	writeAssertTasksInventory(t, tree, batch, map[string][]string{"kube_control_plane": {"cp1"}, "etcd": {"cp1"}, "kube_node": hosts}, hostVars)
	jobs = append(jobs, job{batch, hosts, names})
	for gi, mu := range groupMutations {
		dir := filepath.Join(work, mu.name)
		groups := map[string][]string{}
		hv := map[string]map[string]string{}
		for g, hs := range mu.hosts {
			for _, h := range hs {
				// names of their own: a run's host state never leaks from one inventory to the next
				n := fmt.Sprintf("g%d-%s", gi, h)
				groups[g] = append(groups[g], n)
				// group variables go on each host: above the sample's
				// group_vars, and read anew when the run refreshes its
				// inventory (a vars plugin caches group_vars files by path)
				hv[n] = mu.groupVars
			}
		}
		writeAssertTasksInventory(t, tree, dir, groups, hv)
		jobs = append(jobs, job{dir, nil, map[string][]string{"": {mu.name}}})
	}
	stages := make([]stage, len(jobs))
	for i, j := range jobs {
		stages[i] = stage{dir: j.dir, hosts: j.hosts}
	}
	ansibleSlots <- struct{}{}
	runStart := time.Now()
	results, plays, err := runAssertTasks(playbook, cfg, work, stages, legacy)
	<-ansibleSlots
	t.Logf("%s: one ansible-playbook run, %d inventories, %d plays: %s", rel, len(stages), plays, time.Since(runStart).Round(100*time.Millisecond))
	require.NoError(t, err, rel)
	runs = 1
	for i, j := range jobs {
		inv, err := parser.Load(filepath.Join(j.dir, "hosts.yml"))
		require.NoError(t, err)
		r := Run(Input{Inventory: inv, Catalogue: cat})
		checkHosts := j.hosts
		if checkHosts == nil {
			for _, g := range inv.Groups {
				if g.Name == "all" {
					for _, h := range inv.Hosts {
						checkHosts = append(checkHosts, h.Name)
					}
				}
			}
		}
		what := func(h string) string {
			if n := j.names[h]; n != nil {
				return strings.Join(n, "+")
			}
			return strings.Join(j.names[""], "+")
		}
		// a run_once task runs on the play's first host only: its failure
		// stops the play for every host of it
		runOnce := map[string]bool{}
		if j.names[""] != nil {
			for _, fails := range results[i] {
				for _, ks := range fails {
					for _, pt := range pre {
						if pt.Task == ks.task && pt.RunOnce {
							runOnce[ks.task] = true
						}
					}
				}
			}
		}
		stageRejected := false
		for _, h := range checkHosts {
			fails := results[i][h]
			failed := map[string]bool{}
			for task := range runOnce {
				failed[task] = true
			}
			for _, ks := range fails {
				failed[ks.task] = true
				if !hasAssertTask(pre, ks.task) {
					// a task probing the host (v2.25-v2.27: "Stop if cgroups are
					// not enabled on nodes" runs stat on the node), no assert
					continue
				}
				src := assertTaskSource(pre, ks)
				if !lintNames(r, h, ks.task, src) {
					t.Errorf("%s %s: kubespray stops at %q (%s, %s) on %s, the lint does not say so:\n%s", rel, what(h), ks.task, src, ks.assertion, h, reportText(r, h))
				}
			}
			if len(fails) > 0 {
				if j.names[h] != nil {
					rejected++
				}
				stageRejected = true
			}
			for _, f := range r.Findings {
				if f.assertTask != nil && (len(f.Hosts) == 0 || containsStr(f.Hosts, h)) && !failed[f.assertTask.task] {
					t.Errorf("%s %s: kubespray accepts it on %s, the lint's assert tasks reject it: %s", rel, what(h), h, f.Message)
				}
			}
		}
		if stageRejected && j.names[""] != nil {
			rejected++
		}
	}
	return rejected, runs
}

// packMutations puts the host mutations on as few hosts as it can: a
// mutation joins a host when no assert task reads a variable of both
// (so one cannot hide the other's failure; kubespray's tasks run on with
// ignore_errors and each failure is compared). A mutation setting nothing
// the assert tasks read is left out: it cannot change what kubespray
// decides. It returns each host's variables and mutation names.
func packMutations(cat *kubespray.Catalogue) (map[string]map[string]string, map[string][]string) {
	pre := cat.AssertTasks()
	taskReads := make([]map[string]bool, len(pre))
	for i, t := range pre {
		taskReads[i] = assertTaskReads(cat, t)
	}
	tasksOf := func(mu mutation) map[int]bool {
		out := map[int]bool{}
		for i, rd := range taskReads {
			for k := range mu.vars {
				if rd[k] || rd["*varnames*"] && strings.HasPrefix(mu.name, "removed-") {
					out[i] = true
				}
			}
			if len(mu.vars) == 0 && rd["inventory_hostname"] {
				out[i] = true
			}
		}
		return out
	}
	type host struct {
		name  string
		vars  map[string]string
		tasks map[int]bool
		muts  []string
	}
	var hs []*host
	for _, mu := range hostMutations {
		ts := tasksOf(mu)
		if mu.name != "sample" && len(ts) == 0 {
			continue
		}
		if mu.name == "sample" || mu.name == "Bad_Host" {
			n := "sample"
			if mu.name == "Bad_Host" {
				n = mu.name
			}
			hs = append(hs, &host{name: n, vars: map[string]string{}, tasks: ts, muts: []string{mu.name}})
			continue
		}
		var into *host
		for _, h := range hs {
			if h.name == "sample" || h.name == "Bad_Host" {
				continue
			}
			clash := false
			for k := range mu.vars {
				if _, ok := h.vars[k]; ok {
					clash = true
				}
			}
			for ti := range ts {
				clash = clash || h.tasks[ti]
			}
			if !clash {
				into = h
				break
			}
		}
		if into == nil {
			into = &host{name: fmt.Sprintf("m%02d", len(hs)), vars: map[string]string{}, tasks: map[int]bool{}}
			hs = append(hs, into)
		}
		for k, v := range mu.vars {
			into.vars[k] = v
		}
		for ti := range ts {
			into.tasks[ti] = true
		}
		into.muts = append(into.muts, mu.name)
	}
	vars, names := map[string]map[string]string{}, map[string][]string{}
	for _, h := range hs {
		vars[h.name], names[h.name] = h.vars, h.muts
	}
	return vars, names
}

// assertTaskReads are the variables an assert task reads, also through
// the Jinja of kubespray's defaults (ipv4_stack reads
// enable_dual_stack_networks); "*varnames*" for a task listing variables
// by name (query('varnames')).
func assertTaskReads(cat *kubespray.Catalogue, t kubespray.AssertTask) map[string]bool {
	jinjaRE := regexp.MustCompile(`(?s)\{\{(.*?)\}\}`)
	reads := map[string]bool{}
	var add func(expr string, depth int)
	add = func(expr string, depth int) {
		for _, n := range kubespray.ExprVars(expr) {
			if reads[n] || depth > 10 {
				continue
			}
			reads[n] = true
			if v := cat.Lookup(n); v != nil {
				for _, d := range v.Defs {
					if s, ok := d.Default.(string); ok {
						for _, m := range jinjaRE.FindAllStringSubmatch(s, -1) {
							add(m[1], depth+1)
						}
					}
				}
			}
		}
	}
	{
		for _, w := range t.When {
			add(w, 0)
		}
		for _, it := range t.That {
			add(it.Expr, 0)
		}
		for _, v := range t.Vars {
			if s, ok := v.(string); ok {
				for _, m := range jinjaRE.FindAllStringSubmatch(s, -1) {
					add(m[1], 0)
				}
			}
		}
		for _, it := range t.Loop {
			add(fmt.Sprint(it), 0)
			if m, ok := it.(map[string]any); ok {
				for _, v := range m {
					if s, ok := v.(string); ok {
						for _, mm := range jinjaRE.FindAllStringSubmatch(s, -1) {
							add(mm[1], 0)
						}
					}
				}
			}
		}
		if len(t.Vars) > 0 {
			reads["*varnames*"] = true // query('varnames'): any variable may count
		}
	}
	return reads
}

// hasAssertTask reports whether the catalogue's assert tasks have the task.
func hasAssertTask(pre []kubespray.AssertTask, task string) bool {
	for _, t := range pre {
		if t.Task == task {
			return true
		}
	}
	return false
}

func hostOr(h string) string {
	if h == "" {
		return "the inventory"
	}
	return h
}

// failure is a task kubespray failed on a host.
type failure struct {
	task, assertion string
	item            any
}

// assertTaskSource is the file:line of the assert kubespray failed at: the
// failing that: item's line, else the task's.
func assertTaskSource(pre []kubespray.AssertTask, f failure) string {
	for _, t := range pre {
		if t.Task != f.task {
			continue
		}
		for _, it := range t.That {
			if strings.TrimSpace(it.Expr) == strings.TrimSpace(f.assertion) {
				return fmt.Sprintf("%s:%d", t.File, it.Line)
			}
		}
		if len(t.That) == 1 {
			return fmt.Sprintf("%s:%d", t.File, t.That[0].Line)
		}
		if f.assertion == "" {
			// the task errored (a template it cannot evaluate): kubespray
			// names no item, any line of the file will do
			return t.File + ":"
		}
		return fmt.Sprintf("%s:%d", t.File, t.Line)
	}
	return "(a task outside the catalogue's assert tasks)"
}

// lintNames reports whether an error of the report on host h (or on the
// inventory as a whole) names the task and its file:line.
func lintNames(r *Report, h, task, src string) bool {
	for _, f := range r.Findings {
		if f.Severity != SeverityError || h != "" && len(f.Hosts) > 0 && !containsStr(f.Hosts, h) {
			continue
		}
		text := f.Message + " " + f.Why
		if strings.Contains(text, task) && strings.Contains(text, src) {
			return true
		}
	}
	return false
}

func reportText(r *Report, h string) string {
	var b strings.Builder
	for _, f := range r.Findings {
		if h != "" && len(f.Hosts) > 0 && !containsStr(f.Hosts, h) {
			continue
		}
		fmt.Fprintf(&b, "  %s %s %v %s | %s\n", f.Severity, f.Rule, f.Hosts, f.Message, f.Why)
	}
	return b.String()
}

// assertTasksConfig writes the ansible.cfg and, before v2.28, the roles
// that give 0040-verify-settings.yml kubespray's defaults and the
// preinstall role's defaults and vars without their tasks (which gather
// facts and install packages).
func assertTasksConfig(t *testing.T, work, tree string, legacy bool) string {
	roles := filepath.Join(work, "roles")
	if legacy {
		defaultsRole := "kubespray-defaults"
		if _, err := os.Stat(filepath.Join(tree, "roles", "kubespray_defaults")); err == nil {
			defaultsRole = "kubespray_defaults"
		}
		link := func(target, name string) {
			if _, err := os.Stat(target); err != nil {
				return
			}
			require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
			require.NoError(t, os.Symlink(target, name))
		}
		for _, d := range []string{"defaults", "vars"} {
			for _, n := range []string{"main", "main.yml", "main.yaml"} {
				link(filepath.Join(tree, "roles", defaultsRole, d, n), filepath.Join(roles, "lc_defaults", d, n))
			}
			link(filepath.Join(tree, "roles/kubernetes/preinstall", d, "main.yml"), filepath.Join(roles, "lc_preinstall", d, "main.yml"))
		}
		testutil.WriteTree(t, roles, map[string]string{
			"lc_preinstall/meta/main.yml":  "dependencies:\n  - role: lc_defaults\n",
			"lc_preinstall/tasks/main.yml": "- name: Kubespray's checks\n  import_tasks: " + filepath.Join(tree, "roles/kubernetes/preinstall/tasks/0040-verify-settings.yml") + "\n",
		})
	}
	cfg := filepath.Join(work, "ansible.cfg")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`[defaults]
force_valid_group_names = ignore
roles_path = %s:%s
library = %s
gathering = explicit
stdout_callback = json
deprecation_warnings = False
retry_files_enabled = False
interpreter_python = auto_silent
localhost_warning = False
forks = 1
`, filepath.Join(tree, "roles"), roles, filepath.Join(tree, "library"))), 0o644))
	return cfg
}

// writeAssertTasksInventory writes dir/hosts.yml (groups as kubespray's
// sample has them, k8s_cluster made of kube_control_plane, kube_node and
// calico_rr) with hostVars, and the sample's group_vars.
func writeAssertTasksInventory(t *testing.T, tree, dir string, groups map[string][]string, hostVars map[string]map[string]string) {
	testutil.CopyTree(t, filepath.Join(tree, "inventory", "sample", "group_vars"), filepath.Join(dir, "group_vars"))
	var b strings.Builder
	b.WriteString("all:\n  vars:\n    ansible_connection: local\n  children:\n")
	for _, g := range []string{"kube_control_plane", "etcd", "kube_node", "calico_rr"} {
		fmt.Fprintf(&b, "    %s:\n      hosts:\n", g)
		if len(groups[g]) == 0 {
			b.WriteString("        {}\n")
		}
		for _, h := range groups[g] {
			fmt.Fprintf(&b, "        %s:\n", h)
			keys := make([]string, 0, len(hostVars[h]))
			for k := range hostVars[h] {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, "          %s: %s\n", k, hostVars[h][k])
			}
		}
	}
	b.WriteString("    k8s_cluster:\n      children:\n        kube_control_plane:\n        kube_node:\n        calico_rr:\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hosts.yml"), []byte(b.String()), 0o644))
}

// stage is one inventory of a run of the asserts: dir/hosts.yml, with one
// play per host of hosts (the host's own run_once), or one play on the
// hosts kubespray runs the asserts on when hosts is nil.
type stage struct {
	dir   string
	hosts []string
}

// runAssertTasks runs the asserts' role on every stage's inventory in one
// ansible-playbook: before each stage a play on the implicit localhost
// points work/current at the stage's directory and refreshes the
// inventory. Every assert task runs with ignore_errors, so one run
// collects each host's first failure; the result is per stage.
func runAssertTasks(playbook, cfg, work string, stages []stage, legacy bool) ([]map[string][]failure, int, error) {
	role, facts, pattern := "validate_inventory", "", "all"
	if legacy {
		role, facts, pattern = "lc_preinstall", factVars, "k8s_cluster:etcd"
	}
	current := filepath.Join(work, "current")
	var b strings.Builder
	var playStage []int // stage of each play, -1 for a switch
	for si, st := range stages {
		fmt.Fprintf(&b, "- name: inventory %d\n  hosts: localhost\n  gather_facts: false\n  tasks:\n", si)
		fmt.Fprintf(&b, "    - ansible.builtin.file: {src: %q, dest: %q, state: link, force: true}\n", st.dir, current)
		b.WriteString("    - ansible.builtin.meta: refresh_inventory\n")
		playStage = append(playStage, -1)
		plays := st.hosts
		if plays == nil {
			plays = []string{pattern}
		}
		for _, h := range plays {
			fmt.Fprintf(&b, "- name: asserts %s\n  hosts: %s\n  gather_facts: false\n", h, h)
			if facts != "" {
				b.WriteString("  vars:\n" + facts)
			}
			fmt.Fprintf(&b, "  roles:\n    - role: %s\n      ignore_errors: true\n", role)
			playStage = append(playStage, si)
		}
	}
	pb := filepath.Join(work, "asserts.yml")
	if err := os.WriteFile(pb, []byte(b.String()), 0o644); err != nil {
		return nil, 0, err
	}
	if err := os.Symlink(stages[0].dir, current); err != nil {
		return nil, 0, err
	}
	dir := work
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, playbook, "-i", filepath.Join(current, "hosts.yml"), pb)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ANSIBLE_CONFIG="+cfg, "ANSIBLE_HOME="+filepath.Join(dir, ".ansible"),
		"ANSIBLE_LOCAL_TEMP="+filepath.Join(dir, ".ansible", "tmp"), "ANSIBLE_NOCOLOR=1")
	var stdout, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &errb
	if err := cmd.Run(); err != nil {
		return nil, 0, fmt.Errorf("ansible-playbook: %v\n%s\n%s", err, errb.String(), stdout.String())
	}
	var res struct {
		Plays []struct {
			Tasks []struct {
				Task  struct{ Name string }
				Hosts map[string]map[string]any
			}
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return nil, 0, fmt.Errorf("ansible-playbook output: %v\n%s", err, stdout.String())
	}
	if len(res.Plays) != len(playStage) {
		return nil, 0, fmt.Errorf("ansible-playbook ran %d plays of %d\n%s", len(res.Plays), len(playStage), errb.String())
	}
	out := make([]map[string][]failure, len(stages))
	for i := range out {
		out[i] = map[string][]failure{}
	}
	for pi, p := range res.Plays {
		if playStage[pi] < 0 {
			continue
		}
		first := out[playStage[pi]]
		for _, tk := range p.Tasks {
			name := tk.Task.Name
			if i := strings.Index(name, " : "); i >= 0 {
				name = name[i+3:]
			}
			for h, r := range tk.Hosts {
				if r["failed"] != true {
					continue
				}
				f := failure{task: name}
				f.assertion, _ = r["assertion"].(string)
				if items, ok := r["results"].([]any); ok {
					for _, it := range items {
						if m, ok := it.(map[string]any); ok && m["failed"] == true {
							f.assertion, _ = m["assertion"].(string)
							f.item = m["item"]
							break
						}
					}
				}
				first[h] = append(first[h], f)
			}
		}
	}
	return out, len(playStage), nil
}
