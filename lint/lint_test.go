package lint

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/testutil"
)

// writeTree writes files (path -> content) under a new temp dir.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	testutil.WriteTree(t, dir, files)
	return dir
}

func catalogue(t *testing.T) *kubespray.Catalogue {
	t.Helper()
	c, err := kubespray.Bundled("v2.31.0")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// lintTree loads dir with extra vars args and runs the lint.
func lintTree(t *testing.T, dir string, extra ...string) *Report {
	t.Helper()
	inv, err := parser.Load(dir)
	if err != nil {
		t.Fatalf("load %s: %v", dir, err)
	}
	var ev *parser.Map
	if len(extra) > 0 {
		if ev, err = parser.ParseExtraVars(extra); err != nil {
			t.Fatalf("extra vars %q: %v", extra, err)
		}
	}
	// judged under 2.19, where a string boolean fails (TestStringAsBoolVerdicts
	// covers the series a release pins)
	r := Run(Input{Inventory: inv, Extra: ev, Catalogue: catalogue(t), AnsibleCore: "2.19"})
	checkSeverities(t, r)
	return r
}

// checkSeverities fails when a finding has a severity its rule does not
// list in Rules (what `layercheck lint --rules` shows).
func checkSeverities(t *testing.T, r *Report) {
	t.Helper()
	listed := map[string][]Severity{}
	for _, ri := range Rules() {
		listed[ri.ID] = ri.Severities
	}
	for _, f := range r.Findings {
		ok := false
		for _, s := range listed[f.Rule] {
			ok = ok || s == f.Severity
		}
		if !ok {
			t.Errorf("%s reported as %s, Rules lists %v", f.Rule, f.Severity, listed[f.Rule])
		}
	}
}

// find returns the findings of rule about variable.
func find(r *Report, rule, variable string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Rule == rule && (variable == "" || f.Variable == variable) {
			out = append(out, f)
		}
	}
	return out
}

func one(t *testing.T, r *Report, rule, variable string) Finding {
	t.Helper()
	fs := find(r, rule, variable)
	if len(fs) != 1 {
		t.Fatalf("want one %s finding for %q, got %d:\n%s", rule, variable, len(fs), dump(r))
	}
	return fs[0]
}

func none(t *testing.T, r *Report, rule, variable string) {
	t.Helper()
	if fs := find(r, rule, variable); len(fs) != 0 {
		t.Fatalf("want no %s finding for %q, got:\n%s", rule, variable, dump(r))
	}
}

func dump(r *Report) string {
	b, _ := json.MarshalIndent(r, "", "  ")
	return string(b)
}

func TestStringAsBoolForms(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.ini": testutil.ThreeNodeINI + `node4 kubeconfig_localhost=true
[all:vars]
helm_enabled=true
download_localhost=True
`,
		"group_vars/all/all.yml": `---
download_always_pull: "false"
ntp_enabled: yes
ntp_manage_config: "no"
drain_nodes: 1
kube_profiling: 0
kube_vip_enabled: "{{ x }}"
docker_iptables_enabled: "false"
disable_ipv6_dns: "sometimes"
`,
	})
	r := lintTree(t, dir, "download_run_once=true", `{"openstack_lbaas_enabled": true}`)

	f := one(t, r, "string-as-bool", "helm_enabled")
	if f.Where != "hosts.ini:13:1" && !strings.HasPrefix(f.Where, "hosts.ini:13") {
		t.Errorf("helm_enabled where = %q, want hosts.ini:13", f.Where)
	}
	if f.Fix != "helm_enabled=True" || f.Value != `"true"` || f.Severity != SeverityError {
		t.Errorf("helm_enabled finding = %+v", f)
	}
	if len(f.Hosts) != 4 {
		t.Errorf("helm_enabled hosts = %v, want all 4", f.Hosts)
	}
	if !strings.Contains(f.Why, "Conditional result (True) was derived from value of type 'str'") ||
		!strings.Contains(f.Why, "validate_inventory stops on it too") {
		t.Errorf("helm_enabled why = %q", f.Why)
	}

	f = one(t, r, "string-as-bool", "kubeconfig_localhost")
	if !strings.HasPrefix(f.Where, "hosts.ini:11:") || len(f.Hosts) != 1 || f.Hosts[0] != "node4" || f.Fix != "kubeconfig_localhost=True" {
		t.Errorf("host-line finding = %+v", f)
	}
	if !strings.Contains(f.Why, "checks only download_run_once") {
		t.Errorf("kubeconfig_localhost why should say validate_inventory does not check it: %q", f.Why)
	}

	f = one(t, r, "string-as-bool", "download_always_pull")
	if f.Where != "group_vars/all/all.yml:2:23" || f.Fix != "download_always_pull: false" {
		t.Errorf("quoted YAML finding = %+v", f)
	}
	f = one(t, r, "string-as-bool", "ntp_manage_config")
	if f.Fix != "ntp_manage_config: false" {
		t.Errorf("\"no\" fix = %q", f.Fix)
	}
	f = one(t, r, "string-as-bool", "drain_nodes")
	if f.Value != "1" || f.Fix != "drain_nodes: true" || !strings.Contains(f.Why, "type 'int'") {
		t.Errorf("int 1 finding = %+v", f)
	}
	f = one(t, r, "string-as-bool", "kube_profiling")
	if f.Fix != "kube_profiling: false" || !strings.Contains(f.Why, "Conditional result (False)") {
		t.Errorf("int 0 finding = %+v", f)
	}
	f = one(t, r, "string-as-bool", "download_run_once")
	if f.Where != "-e" || f.Fix != `-e '{"download_run_once": true}'` {
		t.Errorf("-e k=v finding = %+v", f)
	}
	one(t, r, "not-a-bool", "disable_ipv6_dns")

	for _, fine := range []string{"download_localhost", "ntp_enabled", "kube_vip_enabled", "docker_iptables_enabled", "openstack_lbaas_enabled"} {
		none(t, r, "string-as-bool", fine)
		none(t, r, "not-a-bool", fine)
	}
	if r.Errors != len(find(r, "string-as-bool", ""))+len(find(r, "not-a-bool", "")) {
		t.Errorf("errors = %d:\n%s", r.Errors, dump(r))
	}
}

func TestVaultAndOverriddenValuesNotJudged(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.yml": "all:\n  children:\n    kube_control_plane:\n      hosts: {node1: {}}\n    kube_node:\n      hosts: {node1: {}}\n    etcd:\n      hosts: {node1: {}}\n",
		"group_vars/all.yml": `helm_enabled: !vault |
  $ANSIBLE_VAULT;1.1;AES256
  3132
registry_enabled: "true"
`,
		"host_vars/node1.yml": "registry_enabled: true\n",
	})
	r := lintTree(t, dir)
	none(t, r, "string-as-bool", "helm_enabled")
	none(t, r, "not-a-bool", "helm_enabled")
	none(t, r, "string-as-bool", "registry_enabled") // host_vars wins with a real bool
	for _, f := range r.Findings {
		if strings.Contains(f.Value, "ANSIBLE_VAULT") || strings.Contains(f.Value, "3132") {
			t.Errorf("vault text in a finding: %+v", f)
		}
	}
}

func TestChoicesAndAsserts(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.ini": testutil.ThreeNodeINI,
		"group_vars/k8s_cluster/k8s-cluster.yml": `kube_proxy_mode: IPVS
dns_mode: coredns
container_manager: containerd
etcd_deployment_type: docker
calico_ipip_mode: Always
calico_vxlan_mode: Always
calico_network_backend: bgp
`,
	})
	r := lintTree(t, dir)
	f := one(t, r, "choice", "kube_proxy_mode")
	if f.Fix != `kube_proxy_mode: "ipvs"` || f.Where != "group_vars/k8s_cluster/k8s-cluster.yml:1:18" {
		t.Errorf("choice finding = %+v", f)
	}
	one(t, r, "choice", "calico_network_backend")
	none(t, r, "choice", "dns_mode")
	none(t, r, "choice", "container_manager")
	cross := find(r, "kubespray-assert", "")
	var ids []string
	for _, f := range cross {
		ids = append(ids, f.Message)
	}
	joined := strings.Join(ids, "\n")
	for _, want := range []string{"etcd-docker-needs-docker", "calico-ipip-excludes-vxlan", "calico-vxlan-excludes-ipip"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no kubespray-assert %s in:\n%s", want, dump(r))
		}
	}

	// A setting that makes kubespray's default of another variable wrong.
	dir = writeTree(t, map[string]string{
		"hosts.ini":              testutil.ThreeNodeINI,
		"group_vars/all/all.yml": "cloud_provider: external\n",
	})
	r = lintTree(t, dir)
	f = one(t, r, "choice", "cloud_provider")
	if !strings.Contains(f.Message, "external_cloud_provider") || f.Where != "group_vars/all/all.yml:1:17" {
		t.Errorf("default made wrong = %+v", f)
	}

	// Calico's asserts apply only to calico clusters.
	dir = writeTree(t, map[string]string{
		"hosts.ini":                testutil.ThreeNodeINI,
		"group_vars/all/all.yml":   "kube_network_plugin: flannel\ncalico_network_backend: bgp\n",
		"group_vars/all/other.yml": "kube_proxy_mode: ipvs\n",
	})
	r = lintTree(t, dir)
	if r.Errors != 0 {
		t.Errorf("flannel cluster with a calico setting: %s", dump(r))
	}
}

func TestNetworks(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.ini": testutil.ThreeNodeINI,
		"group_vars/all/net.yml": `kube_service_addresses: 10.233.0.1/18
kube_pods_subnet: 10.233.0.0/17
nodelocaldns_ip: 10.233.70.10
`,
	})
	r := lintTree(t, dir)
	f := one(t, r, "network-cidr", "kube_service_addresses")
	if f.Fix != `kube_service_addresses: "10.233.0.0/18"` {
		t.Errorf("host bits fix = %q", f.Fix)
	}
	one(t, r, "network-overlap", "")
	f = one(t, r, "nodelocaldns-ip", "nodelocaldns_ip")
	if !strings.Contains(f.Message, "kube_pods_subnet") {
		t.Errorf("nodelocaldns message = %q", f.Message)
	}

	dir = writeTree(t, map[string]string{
		"hosts.ini":              testutil.ThreeNodeINI,
		"group_vars/all/net.yml": "kube_service_addresses: 10.233.0.0/33\nkube_pods_subnet: 10.240.0.0/16\nnodelocaldns_ip: not-an-ip\n",
	})
	r = lintTree(t, dir)
	one(t, r, "network-cidr", "kube_service_addresses")
	none(t, r, "network-cidr", "kube_pods_subnet")
	none(t, r, "network-overlap", "")
	one(t, r, "nodelocaldns-ip", "nodelocaldns_ip")
}

func TestGroups(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.ini": "[kube_control_plane]\n[etcd]\n[kube_node]\nnode1\n",
	})
	r := lintTree(t, dir)
	one(t, r, "control-plane-empty", "")
	f := one(t, r, "etcd-empty", "etcd_deployment_type")
	if f.Severity != SeverityError || !strings.HasPrefix(f.Where, "hosts.ini:2") {
		t.Errorf("etcd-empty = %+v", f)
	}

	dir = writeTree(t, map[string]string{
		"hosts.ini":              "[kube_control_plane]\nnode1\nnode2\n[etcd:children]\nkube_control_plane\n[kube_node]\nnode3\n[calico_rr]\nrr1\n",
		"group_vars/all/all.yml": "etcd_deployment_type: kubeadm\n",
	})
	r = lintTree(t, dir)
	none(t, r, "control-plane-empty", "")
	none(t, r, "etcd-empty", "")
	f = one(t, r, "etcd-even", "")
	if f.Severity != SeverityError || len(f.Hosts) != 2 {
		t.Errorf("etcd-even = %+v", f)
	}
	rr := find(r, "calico-rr", "")
	if len(rr) != 1 || rr[0].Severity != SeverityWarning || len(rr[0].Hosts) != 1 || rr[0].Hosts[0] != "rr1" {
		t.Errorf("calico-rr = %+v", rr)
	}

	// ignore_assert_errors: kubespray no longer stops, the lint warns.
	dir = writeTree(t, map[string]string{
		"hosts.ini":              "[kube_control_plane]\nnode1\nnode2\n[etcd:children]\nkube_control_plane\n[kube_node]\nnode1\n[calico_rr]\nrr1\n[k8s_cluster:children]\nkube_node\nkube_control_plane\ncalico_rr\n",
		"group_vars/all/all.yml": "ignore_assert_errors: true\nkube_network_plugin: flannel\n",
	})
	r = lintTree(t, dir)
	if f := one(t, r, "etcd-even", ""); f.Severity != SeverityWarning {
		t.Errorf("etcd-even with ignore_assert_errors = %+v", f)
	}
	rr = find(r, "calico-rr", "")
	if len(rr) != 1 || rr[0].Severity != SeverityError || rr[0].Variable != "kube_network_plugin" {
		t.Errorf("calico-rr on flannel = %+v", rr)
	}
}

func TestNames(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.ini": testutil.ThreeNodeINI,
		"group_vars/all/all.yml": `helm_enable: true
kubelet_static_pod_path: /etc/kubernetes/manifests
ansible_python_interpreter: /usr/bin/python3
my_company_setting: 3
`,
	})
	r := lintTree(t, dir)
	f := one(t, r, "unknown-variable", "helm_enable")
	if !strings.Contains(f.Message, "did you mean helm_enabled") || f.Fix != "rename it: helm_enabled: true" || f.Severity != SeverityWarning {
		t.Errorf("misspelling = %+v", f)
	}
	f = one(t, r, "removed-variable", "kubelet_static_pod_path")
	if f.Severity != SeverityError || !strings.HasPrefix(f.Where, "group_vars/all/all.yml:2:") {
		t.Errorf("removed = %+v", f)
	}
	none(t, r, "unknown-variable", "ansible_python_interpreter")
	none(t, r, "unknown-variable", "my_company_setting")

	// Not misspellings: a helper the inventory's templates use, one two
	// edits away whose first word differs, an old group's group_vars.
	dir = writeTree(t, map[string]string{
		"hosts.ini": testutil.ThreeNodeINI,
		"group_vars/all/all.yml": `gcr_image_repo: "{{ acr_image_repo }}/gcr"
acr_image_repo: registry.example
krew_enabled: false
`,
		"group_vars/k8s-cluster/k8s-cluster.yml": "kube_proxy_mode: ipvs\n",
		"group_vars/kube_node/a.yml":             "kube_proxy_mode: ipvs\n",
		"group_vars/kube_node.yml":               "kube_proxy_mode: iptables\n",
	})
	r = lintTree(t, dir)
	none(t, r, "unknown-variable", "acr_image_repo")
	none(t, r, "unknown-variable", "krew_enabled")
	unused := find(r, "group-vars-unused", "")
	if len(unused) != 2 || unused[0].Where != "group_vars/k8s-cluster/k8s-cluster.yml" || unused[0].Fix != "rename group_vars/k8s-cluster to group_vars/k8s_cluster" ||
		unused[1].Where != "group_vars/kube_node.yml" || !strings.Contains(unused[1].Message, "never read") {
		t.Errorf("group-vars-unused = %s", dump(r))
	}
}

func TestTradeOffs(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.ini": testutil.ThreeNodeINI + "node4\n",
		"group_vars/k8s_cluster/addons.yml": `metrics_server_enabled: true
local_path_provisioner_enabled: true
certificates_duration: 3650
`,
		"host_vars/node4.yml": "metrics_server_kubelet_insecure_tls: false\n",
	})
	r := lintTree(t, dir)
	ms := find(r, "metrics-server-tls", "")
	if len(ms) != 2 {
		t.Fatalf("metrics-server-tls findings = %d:\n%s", len(ms), dump(r))
	}
	for _, f := range ms {
		switch f.Severity {
		case SeverityWarning:
			if len(f.Hosts) != 3 || f.Variable != "metrics_server_enabled" {
				t.Errorf("insecure TLS warning = %+v", f)
			}
		case SeverityError:
			if len(f.Hosts) != 1 || f.Hosts[0] != "node4" || f.Where != "host_vars/node4.yml:1:38" {
				t.Errorf("no rotation error = %+v", f)
			}
		}
	}
	one(t, r, "local-path-provisioner", "local_path_provisioner_enabled")
	one(t, r, "certificates-duration", "certificates_duration")

	dir = writeTree(t, map[string]string{
		"hosts.ini": testutil.ThreeNodeINI,
		"group_vars/k8s_cluster/addons.yml": `metrics_server_enabled: true
metrics_server_kubelet_insecure_tls: false
kubelet_rotate_server_certificates: true
certificates_duration: 36500
`,
	})
	r = lintTree(t, dir)
	if len(r.Findings) != 0 {
		t.Errorf("secure metrics-server and default duration: %s", dump(r))
	}
}

func TestResolvedTypesWin(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.ini":              testutil.ThreeNodeINI,
		"group_vars/all/all.yml": "helm_enabled: \"true\"\nregistry_enabled: true\n",
	})
	inv, err := parser.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	resolved := map[string]*parser.Map{}
	for _, h := range []string{"node1", "node2", "node3"} {
		m := parser.NewMap()
		m.Set("helm_enabled", &parser.Value{Kind: parser.KindBool, Bool: true, Origin: parser.OriginAnsible})
		m.Set("registry_enabled", &parser.Value{Kind: parser.KindString, Str: "True", Origin: parser.OriginAnsible})
		resolved[h] = m
	}
	r := Run(Input{Inventory: inv, Catalogue: catalogue(t), Resolved: resolved})
	none(t, r, "string-as-bool", "helm_enabled")
	f := one(t, r, "string-as-bool", "registry_enabled")
	if f.Where != "group_vars/all/all.yml:2:19" || f.Value != `"True"` {
		t.Errorf("Ansible's type should be judged at our location: %+v", f)
	}
	if len(find(r, "ansible-type-mismatch", "")) != 2 {
		t.Errorf("want two info findings:\n%s", dump(r))
	}
	for _, f := range find(r, "ansible-type-mismatch", "") {
		if f.Severity != SeverityInfo {
			t.Errorf("mismatch severity = %s", f.Severity)
		}
	}
}

func TestForHostAndOrder(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.ini":           "[kube_control_plane]\nnode1\nnode2\n[etcd:children]\nkube_control_plane\n[kube_node]\nnode3\n",
		"host_vars/node3.yml": "helm_enabled: \"true\"\n",
		"group_vars/all.yml":  "local_path_provisioner_enabled: true\n" + strings.Repeat("\n", 9) + "registry_enabled: 1\n",
	})
	r := lintTree(t, dir)
	if r.Errors < 3 || r.Warnings < 1 {
		t.Fatalf("report: %s", dump(r))
	}
	// errors first; within a file by line as a number (2 < 11).
	for i := 1; i < len(r.Findings); i++ {
		if r.Findings[i-1].Severity.rank() > r.Findings[i].Severity.rank() {
			t.Errorf("not sorted by severity: %s", dump(r))
		}
	}
	h := r.ForHost("node3")
	if len(find(h, "string-as-bool", "helm_enabled")) != 1 || len(find(h, "etcd-even", "")) != 0 {
		t.Errorf("ForHost(node3): %s", dump(h))
	}
	if h1 := r.ForHost("node1"); len(find(h1, "string-as-bool", "helm_enabled")) != 0 || len(find(h1, "etcd-even", "")) != 1 {
		t.Errorf("ForHost(node1): %s", dump(h1))
	}
	if !whereLess("group_vars/all.yml:2:1", "group_vars/all.yml:11:1") || whereLess("-e", "a.yml:1") {
		t.Error("whereLess orders lines as text or -e first")
	}
}

func TestCleanSample(t *testing.T) {
	r := lintTree(t, filepath.Join("..", "inventory-samples", "kubespray-3node"))
	if len(r.Findings) != 0 {
		t.Errorf("the clean sample has findings:\n%s", dump(r))
	}
}

func TestRulesRegistered(t *testing.T) {
	ids := map[string]bool{}
	for _, r := range Rules() {
		ids[r.ID] = true
		if r.Summary == "" || (r.Severity != SeverityError && r.Severity != SeverityWarning && r.Severity != SeverityInfo) {
			t.Errorf("rule %+v", r)
		}
	}
	for _, want := range []string{"string-as-bool", "not-a-bool", "choice", "kubespray-assert", "network-cidr", "network-overlap",
		"nodelocaldns-ip", "control-plane-empty", "etcd-empty", "etcd-even", "calico-rr", "unknown-variable", "removed-variable",
		"metrics-server-tls", "local-path-provisioner", "certificates-duration", "ansible-type-mismatch", "group-vars-unused", "version", "network-plugin-none", "pod-address-space", "hostname", "calico-settings", "cilium-kube-owner"} {
		if !ids[want] {
			t.Errorf("rule %s not registered", want)
		}
	}
}

func TestRunOnEmptyInput(t *testing.T) {
	r := Run(Input{})
	if r == nil || r.Errors != 0 || r.Findings == nil {
		t.Fatalf("Run(Input{}) = %+v", r)
	}
	// No catalogue: the rules that need none still run, nothing panics.
	dir := writeTree(t, map[string]string{"hosts.ini": "[kube_control_plane]\n[kube_node]\nnode1 helm_enabled=true\n"})
	inv, err := parser.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r = Run(Input{Inventory: inv})
	if len(find(r, "control-plane-empty", "")) != 1 || len(find(r, "string-as-bool", "")) != 0 {
		t.Errorf("without a catalogue: %s", dump(r))
	}
	b, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(b), `"findings":[`) {
		t.Errorf("JSON: %s %v", b, err)
	}
}

// Two hosts that get the same warning from the same group_vars line but
// differ in host_vars the warning does not depend on (node1's pod subnet
// and rotated kubelet certificates, node2's labels) get one finding for
// both hosts, not one per combination of their other variables; a value
// that does differ (node2's own nodelocaldns_ip) stays its own finding.
func TestSameWarningOnceForHostsDifferingElsewhere(t *testing.T) {
	inv := "[kube_control_plane]\nnode1\n[etcd]\nnode1\n[kube_node]\nnode1\nnode2\nnode3\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n"
	dir := writeTree(t, map[string]string{
		"hosts.ini":              inv,
		"group_vars/all/all.yml": "metrics_server_enabled: true\nnodelocaldns_ip: 10.233.0.50\n",
		"host_vars/node1.yml":    "kubelet_rotate_server_certificates: true\nkube_pods_subnet: 10.234.64.0/18\n",
		"host_vars/node2.yml":    "node_labels: {disk: ssd}\n",
		"host_vars/node3.yml":    "nodelocaldns_ip: 10.233.0.51\n",
	})
	r := lintTree(t, dir)
	got := map[string][][]string{}
	for _, f := range r.Findings {
		got[f.Rule+" "+f.Where] = append(got[f.Rule+" "+f.Where], f.Hosts)
	}
	want := map[string][][]string{
		"metrics-server-tls group_vars/all/all.yml:1:25": {{"node1", "node2", "node3"}},
		"nodelocaldns-ip group_vars/all/all.yml:2:18":    {{"node1", "node2"}},
		"nodelocaldns-ip host_vars/node3.yml:1:18":       {{"node3"}},
	}
	for k, w := range want {
		if !equalHostLists(got[k], w) {
			t.Errorf("%s: hosts %v, want %v (one finding)", k, got[k], w)
		}
	}
	if r.Warnings != len(want) {
		t.Errorf("%d warnings, want %d: %s", r.Warnings, len(want), dump(r))
	}
}

func equalHostLists(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], ",") != strings.Join(b[i], ",") {
			return false
		}
	}
	return true
}

// A variable an older bundled release defines and this one does not is
// left over (krew was removed after v2.27); one no release defines, a
// generic name and one a later release adds are left alone.
func TestVariableNotInRelease(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.ini": testutil.ThreeNodeINI,
		"group_vars/all/all.yml": `krew_enabled: true
my_company_setting: 3
namespace: x
`,
	})
	r := lintTree(t, dir)
	f := one(t, r, "variable-not-in-release", "krew_enabled")
	if f.Severity != SeverityWarning || f.Where != "group_vars/all/all.yml:1:15" ||
		!strings.Contains(f.Message, "kubespray v2.31.0 no longer defines krew_enabled: the last bundled release that does is v2.27.1 (roles/") ||
		!strings.Contains(f.Why, "v2.24.3 … v2.27.1") || !strings.HasPrefix(f.Fix, "delete krew_enabled") {
		t.Errorf("krew_enabled = %+v", f)
	}
	none(t, r, "variable-not-in-release", "my_company_setting")
	none(t, r, "variable-not-in-release", "namespace")

	// additional_no_proxy gets a default only in v2.31.0; v2.30.0 reads it
	// without one.
	dir = writeTree(t, map[string]string{
		"hosts.ini":              testutil.ThreeNodeINI,
		"group_vars/all/all.yml": "additional_no_proxy: example.com\n",
	})
	inv, err := parser.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	old, err := kubespray.Bundled("v2.30.0")
	if err != nil {
		t.Fatal(err)
	}
	none(t, Run(Input{Inventory: inv, Catalogue: old}), "variable-not-in-release", "additional_no_proxy")

	// v2.28.1 to v2.30.0 define no enable_dual_stack_networks but still
	// read it, through ipv6_stack's default: neither rule fires.
	dir = writeTree(t, map[string]string{
		"hosts.ini":              testutil.ThreeNodeINI,
		"group_vars/all/all.yml": "enable_dual_stack_networks: false\n",
	})
	if inv, err = parser.Load(dir); err != nil {
		t.Fatal(err)
	}
	v229, err := kubespray.Bundled("v2.29.1")
	if err != nil {
		t.Fatal(err)
	}
	v227, err := kubespray.Bundled("v2.27.1")
	if err != nil {
		t.Fatal(err)
	}
	r = Run(Input{Inventory: inv, Catalogue: v229, UpgradeFrom: v227})
	none(t, r, "variable-not-in-release", "enable_dual_stack_networks")
	none(t, r, "upgrade-removed", "enable_dual_stack_networks")
}

// group_vars in a subdirectory of the inventory directory: Ansible parses
// the hosts file there but never the group_vars beside it.
func TestVarsDirUnread(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"sub/hosts.ini":                testutil.ThreeNodeINI,
		"sub/group_vars/all/all.yml":   "helm_enabled: \"true\"\n",
		"sub/host_vars/node1.yml":      "ip: 10.0.0.1\n",
		"group_vars/all/kubespray.yml": "kube_network_plugin: calico\n",
	})
	r := lintTree(t, dir)
	for _, where := range []string{"sub/group_vars", "sub/host_vars"} {
		var got *Finding
		for i, f := range r.Findings {
			if f.Rule == "vars-dir-unread" && f.Where == where {
				got = &r.Findings[i]
			}
		}
		if got == nil || got.Severity != SeverityWarning || !strings.Contains(got.Message, "Ansible never reads this "+filepath.Base(where)) {
			t.Errorf("%s: %+v\n%s", where, got, dump(r))
		}
	}
	none(t, r, "string-as-bool", "helm_enabled")
	// Given itself, the subdirectory's group_vars are read, also when its
	// parent is given too.
	r = lintTree(t, filepath.Join(dir, "sub"))
	none(t, r, "vars-dir-unread", "")
	one(t, r, "string-as-bool", "helm_enabled")
	inv, err := parser.Load(dir, filepath.Join(dir, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	r = Run(Input{Inventory: inv, Catalogue: catalogue(t)})
	none(t, r, "vars-dir-unread", "")
	one(t, r, "string-as-bool", "helm_enabled")
}

// A directory of group_vars only, given as a second -i next to an
// inventory file, is read as Ansible reads it; alone it is refused.
func TestVarsOnlyDirectorySource(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts/hosts.ini":               testutil.ThreeNodeINI,
		"common/group_vars/all/all.yml": "helm_enabled: \"true\"\n",
	})
	inv, err := parser.Load(filepath.Join(dir, "hosts", "hosts.ini"), filepath.Join(dir, "common"))
	if err != nil {
		t.Fatal(err)
	}
	r := Run(Input{Inventory: inv, Catalogue: catalogue(t)})
	one(t, r, "string-as-bool", "helm_enabled")
	if !strings.Contains(strings.Join(inv.Warnings, "\n"), "Unable to parse "+filepath.Join(dir, "common")+" as an inventory source: no file in this directory is an inventory") {
		t.Errorf("warnings: %q", inv.Warnings)
	}
	if _, err := parser.Load(filepath.Join(dir, "common")); !errors.Is(err, parser.ErrNoInventoryFile) {
		t.Errorf("group_vars only, alone: %v", err)
	}
}
