package verifyplaybook

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/test/testutil"
)

// The tree is made at treeNow and judged an hour later; nothing depends on
// today's date.
var treeNow = time.Date(2026, 11, 30, 14, 22, 6, 0, time.UTC)

const inventory = `[kube_control_plane]
node1 ansible_connection=local ansible_python_interpreter="{{ ansible_playbook_python }}"

[kube_node]
node1

[etcd:children]
kube_control_plane
`

// liveNode is a generated one-node tree with its etcd and DNS on loopback.
type liveNode struct {
	tree  *harness.Tree
	extra map[string]any
}

// newLiveNode builds node1 (control plane, etcd, node) and starts its
// etcd (unless etcdUp is false: then the etcd addresses lead to a closed
// loopback port) and the cluster DNS. The etcd server gets its own copy of
// the member certificate, so a variant may break the tree's files.
func newLiveNode(t *testing.T, etcdUp bool) *liveNode {
	t.Helper()
	tr, err := harness.Build(t.TempDir(), harness.Config{Now: treeNow, Hosts: []string{"node1"}, IPs: []string{"10.10.0.11"}})
	must(t, err)
	addr := harness.StartServices(t, tr, etcdUp)
	return &liveNode{tree: tr, extra: map[string]any{
		"layercheck_verify_root":        tr.Root,
		"layercheck_verify_become":      false,
		"layercheck_verify_now":         treeNow.Add(time.Hour).Format(time.RFC3339),
		"layercheck_verify_addr_map":    addr,
		"layercheck_verify_net_timeout": 10, // room for a busy machine; a closed port is refused at once
	}}
}

// failedChecks lists "layer/check" of the fail and error results in facts.
func failedChecks(facts map[string]any) []string {
	var out []string
	ls, _ := facts["layers"].(map[string]any)
	for name, l := range ls {
		rs, _ := l.(map[string]any)["results"].([]any)
		for _, r := range rs {
			m := r.(map[string]any)
			if m["status"] == "fail" || m["status"] == "error" {
				out = append(out, fmt.Sprintf("%s/%v: %v", name, m["check"], m["msg"]))
			}
		}
	}
	return out
}

func resultStatus(facts map[string]any, layer, check string) []string {
	var out []string
	ls, _ := facts["layers"].(map[string]any)
	l, _ := ls[layer].(map[string]any)
	rs, _ := l["results"].([]any)
	for _, r := range rs {
		m := r.(map[string]any)
		if m["check"] == check {
			out = append(out, fmt.Sprint(m["status"]))
		}
	}
	return out
}

// summaryRow is node1's row of the report's table: the seven node layers
// in layercheck_verify_order, then the node's verdict.
var summaryRow = regexp.MustCompile(`(?m)^node1\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$`)

// tableHeader is the header line of the report's table.
var tableHeader = regexp.MustCompile(`(?m)^HOST\s+certificates\s+install\s+kubelet\s+etcd\s+dns\s+cni\s+addons\s+NODE$`)

// maxReportBytes bounds a one-host run's whole output: the report says each
// problem once, so nothing grows with the facts' size.
const maxReportBytes = 16 << 10

// assertReadable checks what every verify.yml run prints: the table once,
// no task source of the role (Origin:) and no role-internal template or
// JSON dump of the facts, a bounded size.
func assertReadable(t *testing.T, out string) {
	t.Helper()
	assert.Len(t, tableHeader.FindAllString(out, -1), 1, "the report's table header, once:\n%s", out)
	assert.NotContains(t, out, "Origin:", "a role's task source in the output")
	assert.NotContains(t, out, "{%", "a role template in the output")
	assert.NotContains(t, out, `"results":`, "a JSON dump of the facts in the output")
	assert.LessOrEqual(t, len(out), maxReportBytes, "output size:\n%s", out)
}

func TestVerifyPlaybookHealthyAndCheckMode(t *testing.T) {
	t.Parallel()
	n := newLiveNode(t, true)
	run := runVerify(t, "", inventory, n.extra, "-v")
	if run.Err != nil {
		t.Fatalf("healthy node: ansible-playbook failed: %v\n%s", run.Err, run.Out)
	}
	facts := run.Facts["node1"]
	if facts == nil {
		t.Fatalf("no layercheck_node facts cached for node1\n%s", run.Out)
	}
	if bad := failedChecks(facts); len(bad) > 0 {
		t.Fatalf("healthy node has failed checks: %v", bad)
	}
	// The live servers were really used.
	for _, c := range [][2]string{{"etcd", "members"}, {"etcd", "leader"}, {"dns", "query_nodelocaldns"}, {"dns", "query_coredns"}, {"certificates", "family/kubeadm"}, {"install", "drift:kube_pods_subnet"}, {"kubelet", "resolv_conf"}, {"cni", "interface:vxlan.calico"}} {
		if st := resultStatus(facts, c[0], c[1]); len(st) == 0 || st[0] != "ok" {
			t.Errorf("%s %s: %v", c[0], c[1], st)
		}
	}
	m := summaryRow.FindStringSubmatch(run.Out)
	require.NotNil(t, m, "no table row for node1 in the output:\n%s", run.Out)
	// Without systemd, etcd's service state is a warning; dns warns of
	// kubespray's default loop risk (upstream_dns_servers empty).
	assert.Equal(t, []string{"ok", "ok", "ok", "warn", "warn", "ok", "skip", "WARN"}, m[1:], "row %q", m[0])
	// -v prints each task's result (the facts too, as Ansible does); the
	// report is still one table, with no task source.
	assert.Len(t, tableHeader.FindAllString(run.Out, -1), 1, "the report's table header, once")
	assert.NotContains(t, run.Out, "Origin:")
	assert.Contains(t, run.Out, "layercheck verify: 1 host: 0 ok, 1 warn, 0 failed; cluster: skipped")
	assert.NotRegexp(t, `(?m)^\[(FAIL|ERROR)\]`, run.Out, "a healthy node reports no failure")
	assert.Equal(t, 1, strings.Count(run.Out, "[WARN] node1 etcd service: "), "each warning once")
	if !strings.Contains(run.Out, "ok=") || strings.Contains(run.Out, "failed=1") {
		t.Errorf("recap: %s", run.Out[strings.LastIndex(run.Out, "PLAY RECAP"):])
	}
	n.tree.AssertNoSecrets(t, run.Out)
	fb, _ := json.Marshal(facts)
	n.tree.AssertNoSecrets(t, string(fb))

	// Check mode through the collection's playbook name gives the same facts.
	check := runVerify(t, "layercheck.kubespray.verify", inventory, n.extra, "--check")
	if check.Err != nil {
		t.Fatalf("--check: ansible-playbook failed: %v\n%s", check.Err, check.Out)
	}
	assertReadable(t, check.Out)
	assert.Regexp(t, `(?m)^node1\s+ok\s+ok\s+ok\s+warn\s+warn\s+ok\s+skip\s+WARN$`, check.Out)
	cf := check.Facts["node1"]
	if cf == nil {
		t.Fatalf("no facts in check mode\n%s", check.Out)
	}
	a, b := normalize(facts), normalize(cf)
	if !reflect.DeepEqual(a, b) {
		ja, _ := json.MarshalIndent(a, "", " ")
		jb, _ := json.MarshalIndent(b, "", " ")
		t.Errorf("check mode facts differ:\n--- normal\n%s\n--- check\n%s", ja, jb)
	}
}

// normalize drops what differs between two runs of a healthy node by
// nature: durations and latencies (also inside messages), and etcd's live
// counters.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch k {
			case "duration_ms", "latency_ms", "raft_index", "raft_applied_index", "revision", "db_size", "db_size_in_use", "raft_term":
				continue
			}
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case string:
		return msLatency.ReplaceAllString(x, " in N ms")
	}
	return v
}

// msLatency is a measured round trip inside a message ("in 6.8 ms").
var msLatency = regexp.MustCompile(` in [0-9.]+ ms`)

// Each broken variant fails the play, naming the layer, the host and the fix.
func TestVerifyPlaybookBrokenVariants(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		etcdUp    bool
		inventory string
		breakIt   func(t *testing.T, tr *harness.Tree)
		layer     string
		want      []string
	}{
		{name: "expired apiserver certificate", etcdUp: true, layer: "certificates",
			breakIt: func(t *testing.T, tr *harness.Tree) {
				must(t, tr.ReissueLeaf("/etc/kubernetes/ssl/apiserver.crt", treeNow.Add(-400*24*time.Hour), treeNow.Add(-24*time.Hour), nil))
			},
			want: []string{"/etc/kubernetes/ssl/apiserver.crt on node1: expired on", "kubeadm certs renew apiserver"}},
		{name: "etcd member certificate missing", etcdUp: true, layer: "certificates",
			breakIt: func(t *testing.T, tr *harness.Tree) { must(t, tr.Remove("/etc/ssl/etcd/ssl/member-node1.pem")) },
			want:    []string{"/etc/ssl/etcd/ssl/member-node1.pem is missing on node1", "make-ssl-etcd.sh"}},
		{name: "loopback nameserver in the pods' resolv.conf", etcdUp: true, layer: "kubelet",
			breakIt: func(t *testing.T, tr *harness.Tree) { must(t, tr.SetResolvConf("127.0.0.53")) },
			want:    []string{"lists loopback nameserver 127.0.0.53", "kube_resolv_conf"}},
		{name: "podSubnet drift", etcdUp: true, layer: "install",
			inventory: inventory + "\n[all:vars]\nkube_pods_subnet=10.244.0.0/16\n",
			want:      []string{`kube_pods_subnet is "10.244.0.0/16" in the inventory but "10.233.64.0/18" on node1`, "podSubnet", "fix: kube_pods_subnet cannot change on an installed cluster: set kube_pods_subnet: 10.233.64.0/18 back"}},
		// The INI string "true" reaches node_facts through the role's | bool.
		{name: "auto_renew_certificates without its script", etcdUp: true, layer: "certificates",
			inventory: inventory + "\n[all:vars]\nauto_renew_certificates=true\n",
			want:      []string{"/usr/local/bin/k8s-certs-renew.sh is missing on node1", "cluster.yml --tags control-plane"}},
		{name: "etcd down", etcdUp: false, layer: "etcd",
			want: []string{"etcd endpoint https://127.0.0.1:2379", "connection refused", "systemctl status etcd"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := newLiveNode(t, tc.etcdUp)
			if tc.breakIt != nil {
				tc.breakIt(t, n.tree)
			}
			inv := tc.inventory
			if inv == "" {
				inv = inventory
			}
			run := runVerify(t, "", inv, n.extra)
			if run.Err == nil {
				t.Fatalf("ansible-playbook passed on a broken node:\n%s", run.Out)
			}
			// Each failure once: a "[FAIL] node1 <layer> <check>: ..." line
			// per distinct failed check, each said exactly once.
			lines := regexp.MustCompile(`(?m)^\[FAIL\] node1 `+tc.layer+` .*$`).FindAllString(run.Out, -1)
			require.NotEmpty(t, lines, "no failure of layer %s in the output:\n%s", tc.layer, run.Out)
			for _, l := range lines {
				assert.Equal(t, 1, strings.Count(run.Out, l), "said more than once: %q", l)
			}
			for _, w := range tc.want {
				assert.Contains(t, run.Out, w)
			}
			// The evidence, the fix and the verdict line: each once.
			assert.Equal(t, 1, strings.Count(run.Out, tc.want[0]), "evidence %q not said once:\n%s", tc.want[0], run.Out)
			assert.Contains(t, run.Out, "\n    fix: ", "no remedy in the output")
			assertReadable(t, run.Out)
			m := summaryRow.FindStringSubmatch(run.Out)
			if assert.NotNil(t, m, "no table row for node1:\n%s", run.Out) {
				assert.Equal(t, "FAIL", m[8], "row %q", m[0])
			}
			verdict := "layercheck: node1 failed node layer(s) " + tc.layer
			assert.Equal(t, 1, strings.Count(run.Out, verdict), "the host's one-line verdict %q, once:\n%s", verdict, run.Out)
			assert.Contains(t, run.Out, "failed=1", "host not failed in the recap")
			assert.Contains(t, run.Out, "layercheck verify: 1 host: 0 ok, 0 warn, 1 failed")
			if facts := run.Facts["node1"]; facts == nil || layerStatus(facts, tc.layer) != "fail" {
				t.Errorf("facts: layer %s status %q", tc.layer, layerStatus(run.Facts["node1"], tc.layer))
			}
			n.tree.AssertNoSecrets(t, run.Out)
		})
	}
}

// The operator's command: verify.yml from the checkout appended after
// cluster.yml in one ansible-playbook run (a stand-in cluster.yml here); the
// collection is found through playbooks/collections next to verify.yml.
func TestVerifyPlaybookAfterClusterYML(t *testing.T) {
	t.Parallel()
	checkoutModule(t)
	testutil.CheckoutCollections(t)
	n := newLiveNode(t, true)
	cluster := filepath.Join(t.TempDir(), "cluster.yml")
	must(t, os.WriteFile(cluster, []byte("- name: stand-in for kubespray's cluster.yml\n  hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug:\n        msg: cluster.yml ran\n"), 0o644))
	verifyYML := filepath.Join(testutil.RepoRoot(), "playbooks", "verify.yml")
	run := runVerify(t, cluster+" "+verifyYML, inventory, n.extra)
	if run.Err != nil {
		t.Fatalf("cluster.yml + playbooks/verify.yml: %v\n%s", run.Err, run.Out)
	}
	if !strings.Contains(run.Out, "cluster.yml ran") || summaryRow.FindString(run.Out) == "" || run.Facts["node1"] == nil {
		t.Errorf("both playbooks should run and verify.yml end with the summary:\n%s", run.Out)
	}
}

// Three hosts read the same node tree, whose pods' resolv.conf has a
// loopback nameserver: the failure all three share is said once with the
// three hosts (each message names its host: said as <host>); node1's own
// podSubnet drift (a control-plane check) once, for node1 alone; each
// failed host gets one verdict line and fails; the facts stay per host.
func TestVerifyPlaybookSharedFailureOnce(t *testing.T) {
	t.Parallel()
	n := newLiveNode(t, true)
	must(t, n.tree.SetResolvConf("127.0.0.53"))
	inv := `[kube_control_plane]
node1 kube_pods_subnet=10.244.0.0/16

[kube_node]
node1
node2
node3

[etcd:children]
kube_control_plane

[all:vars]
ansible_connection=local
ansible_python_interpreter="{{ ansible_playbook_python }}"
`
	extra := map[string]any{"layercheck_verify_layers": []string{"install", "kubelet"}}
	for k, v := range n.extra {
		extra[k] = v
	}
	run := runVerify(t, "", inv, extra)
	require.Error(t, run.Err, "ansible-playbook passed with failed layers:\n%s", run.Out)

	assert.Len(t, regexp.MustCompile(`(?m)^HOST\s+install\s+kubelet\s+NODE$`).FindAllString(run.Out, -1), 1, "table header once:\n%s", run.Out)
	for _, h := range []string{"node1", "node2", "node3"} {
		install := "ok"
		if h == "node1" {
			install = "fail"
		}
		assert.Regexp(t, `(?m)^`+h+`\s+`+install+`\s+fail\s+FAIL$`, run.Out, "row of %s", h)
		verdict := "layercheck: " + h + " failed node layer(s) "
		assert.Equal(t, 1, strings.Count(run.Out, verdict), "verdict of %s once:\n%s", h, run.Out)
		if assert.Contains(t, run.Facts, h) {
			assert.Equal(t, "fail", layerStatus(run.Facts[h], "kubelet"), "facts of %s", h)
		}
	}
	shared := regexp.MustCompile(`(?m)^\[FAIL\] node1, node2, node3 kubelet resolv_conf: .* on <host> lists loopback nameserver 127\.0\.0\.53.*$`).FindAllString(run.Out, -1)
	assert.Len(t, shared, 1, "the shared failure once, with its three hosts:\n%s", run.Out)
	assert.Equal(t, 1, strings.Count(run.Out, "loopback nameserver 127.0.0.53"), "the shared evidence once")
	drift := regexp.MustCompile(`(?m)^\[FAIL\] node1 install .*kube_pods_subnet is "10\.244\.0\.0/16" in the inventory but "10\.233\.64\.0/18" on node1.*$`).FindAllString(run.Out, -1)
	assert.Len(t, drift, 1, "node1's drift once:\n%s", run.Out)
	assert.Equal(t, 1, strings.Count(run.Out, "cannot change on an installed cluster"), "the drift's fix once")
	assert.Regexp(t, `node1 *: ok=\d+ .*failed=1`, run.Out)
	assert.Contains(t, run.Out, "layercheck verify: 3 hosts: 0 ok, 0 warn, 3 failed")
	assert.NotContains(t, run.Out, "Origin:")
	assert.NotContains(t, run.Out, `"results":`)
	assert.LessOrEqual(t, len(run.Out), maxReportBytes)
	n.tree.AssertNoSecrets(t, run.Out)
}

// A worker (node2, outside kube_control_plane) with kubespray's
// nginx-proxy: the role hands node_facts the control plane's addresses
// (node1's ip, as kubespray's main_access_ip) and the kubelet layer finds
// nginx.conf balancing over them, kubelet.conf through localhost and an
// API server answering on 127.0.0.1:6443 (a loopback TLS server with the
// tree's apiserver certificate, through addr_map). The files have the
// shape kubespray v2.31.0's templates render (package verify/node's tests
// hold the rendering itself).
func TestVerifyPlaybookWorkerThroughNginxProxy(t *testing.T) {
	t.Parallel()
	tr, err := harness.Build(t.TempDir(), harness.Config{Now: treeNow, Host: "node2", Hosts: []string{"node1"}, IPs: []string{"10.10.0.11"}})
	must(t, err)
	must(t, tr.WriteFile("/etc/nginx/nginx.conf", []byte("stream {\n  upstream kube_apiserver {\n    least_conn;\n    server 10.10.0.11:6443;\n    }\n\n"+
		"  server {\n    listen        127.0.0.1:6443;\n    proxy_pass    kube_apiserver;\n  }\n}\n"), 0o755))
	must(t, tr.WriteFile("/etc/kubernetes/manifests/nginx-proxy.yml", []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: nginx-proxy\n  namespace: kube-system\nspec:\n"+
		"  hostNetwork: true\n  containers:\n  - name: nginx-proxy\n    image: docker.io/library/nginx:1.28.2-alpine\n"+
		"  volumes:\n  - name: etc-nginx\n    hostPath:\n      path: /etc/nginx\n"), 0o640))
	kc, err := os.ReadFile(tr.Path("/etc/kubernetes/kubelet.conf"))
	must(t, err)
	must(t, tr.WriteFile("/etc/kubernetes/kubelet.conf", []byte(strings.Replace(string(kc), "server: https://10.10.0.11:6443", "server: https://localhost:6443", 1)), 0o600))
	cert, err := tls.LoadX509KeyPair(tr.Path("/etc/kubernetes/ssl/apiserver.crt"), tr.Path("/etc/kubernetes/ssl/apiserver.key"))
	must(t, err)
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	must(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	inv := `[kube_control_plane]
node1 ip=10.10.0.11

[kube_node]
node2 ansible_connection=local ansible_python_interpreter="{{ ansible_playbook_python }}"

[etcd:children]
kube_control_plane
`
	extra := map[string]any{
		"layercheck_verify_root":        tr.Root,
		"layercheck_verify_become":      false,
		"layercheck_verify_now":         treeNow.Add(time.Hour).Format(time.RFC3339),
		"layercheck_verify_addr_map":    map[string]string{"127.0.0.1:6443": l.Addr().String()},
		"layercheck_verify_layers":      []string{"kubelet"},
		"layercheck_verify_net_timeout": 10,
	}
	run := runVerify(t, "", inv, extra, "--limit", "node2")
	if run.Err != nil {
		t.Fatalf("worker through nginx-proxy: %v\n%s", run.Err, run.Out)
	}
	facts := run.Facts["node2"]
	require.NotNil(t, facts, run.Out)
	for _, c := range []string{"localhost_lb:manifest", "localhost_lb:listen", "localhost_lb:upstreams", "localhost_lb:kubelet_conf", "localhost_lb:connect"} {
		assert.Equal(t, []string{"ok"}, resultStatus(facts, "kubelet", c), c)
	}
	res := facts["layers"].(map[string]any)["kubelet"].(map[string]any)["results"].([]any)
	var upstreams string
	for _, r := range res {
		if m := r.(map[string]any); m["check"] == "localhost_lb:upstreams" {
			upstreams, _ = m["msg"].(string)
		}
	}
	assert.Equal(t, "/etc/nginx/nginx.conf balances over the 1 host of kube_control_plane (10.10.0.11:6443)", upstreams,
		"kube_control_plane_access_ips as the role computes it from node1's ip")
}
