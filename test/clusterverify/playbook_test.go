package clusterverify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/test/testutil"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/cluster/clustertest"
)

var (
	collOnce sync.Once
	collDir  string
	collErr  error
)

// collection lays out layercheck.kubespray from this checkout (links to
// meta, roles, plugins, playbooks/verify.yml) with freshly built
// node_facts and cluster_facts binaries for this machine, and layercheck,
// which draws the report.
func collection(t *testing.T) string {
	t.Helper()
	collOnce.Do(func() {
		dir, err := os.MkdirTemp("", "clusterverify-collection-")
		if err != nil {
			collErr = err
			return
		}
		if collErr = testutil.LayOutCollection(dir, "node_facts", "cluster_facts", "layercheck"); collErr == nil {
			collDir = dir
		}
	})
	if collErr != nil {
		t.Fatal(collErr)
	}
	return collDir
}

const oneNodeInventory = `[kube_control_plane]
node1 ansible_connection=local ansible_python_interpreter="{{ ansible_playbook_python }}"

[kube_node]
node1

[etcd:children]
kube_control_plane

[all:vars]
kube_network_plugin=calico
calico_vxlan_mode=Always
calico_ipip_mode=Never
etcd_deployment_type=host
metrics_server_enabled=true
`

var treeNow = time.Date(2026, 11, 30, 14, 22, 6, 0, time.UTC)

// runVerifyPlaybook runs playbooks/verify.yml from the collection: the
// node layers on node1 (localhost) against a generated node tree, the
// cluster layers on the controller against the harness API server.
func runVerifyPlaybook(t *testing.T, c *Cluster, args ...string) (string, error, map[string]any) {
	return runVerifyPlaybookVars(t, c, nil, args...)
}

// runVerifyPlaybookVars is runVerifyPlaybook with extra vars on top.
func runVerifyPlaybookVars(t *testing.T, c *Cluster, more map[string]any, args ...string) (string, error, map[string]any) {
	t.Helper()
	coll := collection(t)
	work := t.TempDir()
	tr, err := harness.Build(filepath.Join(work, "node1"), harness.Config{Now: treeNow, Hosts: []string{"node1"}, IPs: []string{"10.10.0.11"}})
	if err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(work, "hosts.ini")
	if err := os.WriteFile(inv, []byte(oneNodeInventory), 0o644); err != nil {
		t.Fatal(err)
	}
	extra := map[string]any{
		"layercheck_verify_root":           tr.Root,
		"layercheck_verify_become":         false,
		"layercheck_verify_now":            treeNow.Add(time.Hour).Format(time.RFC3339),
		"layercheck_verify_layers":         []string{"certificates", "install", "kubelet"},
		"layercheck_verify_summary":        false,
		"layercheck_cluster_kubeconfig":    c.S.Kubeconfig,
		"layercheck_cluster_probe_path":    "service_proxy",
		"layercheck_cluster_probe_port":    freePort(),
		"layercheck_cluster_probe_timeout": 20,
		"layercheck_cluster_timeout":       5,
	}
	for k, v := range more {
		if v == nil {
			delete(extra, k)
		} else {
			extra[k] = v
		}
	}
	ev, _ := json.Marshal(extra)
	evf := filepath.Join(work, "extra.json")
	if err := os.WriteFile(evf, ev, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(work, "facts")
	pb := filepath.Join(coll, "ansible_collections", "layercheck", "kubespray", "playbooks", "verify.yml")
	out, err := testutil.RunPlaybook(t, work, testutil.AnsibleEnv(
		"ANSIBLE_COLLECTIONS_PATH="+coll,
		"ANSIBLE_LOCAL_TEMP="+filepath.Join(work, "tmp"),
		"ANSIBLE_REMOTE_TMP="+filepath.Join(work, "rtmp"),
		"ANSIBLE_CACHE_PLUGIN=jsonfile",
		"ANSIBLE_CACHE_PLUGIN_CONNECTION="+cache,
		"ANSIBLE_STDOUT_CALLBACK=default",
	), 4*time.Minute, append([]string{"-i", inv, pb, "-e", "@" + evf}, args...)...)
	var facts map[string]any
	cached := testutil.FactCache(t, cache)
	hosts := make([]string, 0, len(cached))
	for h := range cached {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		if lc, ok := cached[h]["layercheck_cluster"].(map[string]any); ok {
			facts = lc
		}
	}
	return out, err, facts
}

func oneNode() cluster.Options {
	return cluster.Options{KubeControlPlane: []string{"node1"}, KubeNode: []string{"node1"}, Etcd: []string{"node1"},
		KubeNetworkPlugin: "calico", MetricsServerEnabled: true}
}

func TestVerifyPlaybookBothModules(t *testing.T) {
	c := newCluster(t, oneNode(), setup{})
	out, err, facts := runVerifyPlaybookVars(t, c, map[string]any{"layercheck_verify_summary": true})
	if err != nil {
		t.Fatalf("healthy: ansible-playbook failed: %v\n%s", err, out)
	}
	if facts == nil || facts["status"] != "ok" {
		t.Fatalf("layercheck_cluster facts: %v\n%s", facts, out)
	}
	// The report: the node table, then the cluster's layers once, in a
	// row of their own.
	assert.Len(t, regexp.MustCompile(`(?m)^HOST\s+certificates\s+install\s+kubelet\s+NODE$`).FindAllString(out, -1), 1, "node table once:\n%s", out)
	assert.Len(t, regexp.MustCompile(`(?m)^CLUSTER\s+nodes\s+kube_system\s+cni\s+addons\s+probe\s+STATUS$`).FindAllString(out, -1), 1, "cluster table once:\n%s", out)
	assert.Regexp(t, `(?m)^https://\S+\s+ok\s+ok\s+ok\s+ok\s+ok\s+OK$`, out)
	assert.Regexp(t, `(?m)^layercheck verify: 1 host: .*; cluster: OK$`, out)
	assert.NotContains(t, out, "Origin:")
	assert.NotRegexp(t, `(?m)^\[(FAIL|ERROR)\]`, out)
	for _, want := range []string{"Check the node layer by layer", "Check the cluster through its API server"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks task %q", want)
		}
	}
	if !strings.Contains(out, "[node1 -> localhost]") {
		t.Errorf("with layercheck_cluster_kubeconfig, cluster_facts did not run on the controller:\n%s", out)
	}
	c.assertNoProbeNamespace(t)

	// On the first kube_control_plane host with the admin kubeconfig there
	// (the default; the path is overridden since this host has no
	// /etc/kubernetes/admin.conf): not delegated to the controller.
	out, err, facts = runVerifyPlaybookVars(t, c, map[string]any{"layercheck_cluster_kubeconfig": nil, "layercheck_cluster_kubeconfig_path": c.S.Kubeconfig}, "-v")
	if err != nil || facts == nil || facts["status"] != "ok" {
		t.Fatalf("on node1: %v %v\n%s", err, facts, out)
	}
	if strings.Contains(out, "-> localhost") {
		t.Errorf("cluster_facts was delegated to the controller:\n%s", out)
	}

	// Without a kubeconfig the cluster layers are skipped with a message.
	out, err, facts = runVerifyPlaybookVars(t, c, map[string]any{"layercheck_cluster_kubeconfig": nil, "layercheck_cluster_kubeconfig_path": "/nonexistent/admin.conf"})
	if err != nil || facts != nil || !strings.Contains(out, "cluster layers skipped: no kubeconfig at /nonexistent/admin.conf on node1") {
		t.Errorf("no kubeconfig: %v %v\n%s", err, facts, out)
	}

	// --check: the probe is skipped and says so, the rest passes.
	out, err, facts = runVerifyPlaybook(t, c, "--check")
	if err != nil {
		t.Fatalf("--check: ansible-playbook failed: %v\n%s", err, out)
	}
	b, _ := json.Marshal(facts)
	if !strings.Contains(string(b), "check mode: the workload probe") {
		t.Errorf("check mode facts do not say the probe was skipped: %s", b)
	}
}

func TestVerifyPlaybookBrokenCluster(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup setup
		after func(c *Cluster) // changes the running cluster before the play
		want  []string
	}{
		{"taint", setup{mutate: func(w *clustertest.World) {
			w.Node("node1").Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
		}}, nil, []string{"[FAIL] cluster nodes ", "node1 is in kube_control_plane and kube_node but carries", "kubectl taint nodes node1 node-role.kubernetes.io/control-plane:NoSchedule-"}},
		{"ipip", setup{ipip: "Always", vxlan: "Never"}, nil, []string{"[FAIL] cluster cni ", "ipipMode is Always, the inventory says Never", "fix:"}},
		{"metrics", setup{metricsDown: true}, nil, []string{"[FAIL] cluster addons ", "is not Available: FailedDiscoveryCheck"}},
		{"etcd-pod", setup{mutate: func(w *clustertest.World) {
			w.Pods = append(w.Pods, clustertest.StaticPod("etcd", "node1"))
		}}, nil, []string{"[FAIL] cluster kube_system ", "etcd_deployment_type is host but kube-system has etcd pod(s): etcd-node1"}},
		{"one-pod-answers", setup{}, func(c *Cluster) { c.Kubelets.Answer = func(i int) bool { return i == 0 } },
			[]string{"[FAIL] cluster probe ", "never by ["}},
		{"apiserver-stopped", setup{}, func(c *Cluster) { c.S.Stop() },
			[]string{"[ERROR] cluster nodes ", "refused the connection"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, oneNode(), tc.setup)
			if tc.after != nil {
				tc.after(c)
			}
			out, err, _ := runVerifyPlaybook(t, c)
			if err == nil {
				t.Fatalf("ansible-playbook passed on a broken cluster:\n%s", out)
			}
			flat := strings.Join(strings.Fields(out), " ")
			for _, w := range tc.want {
				if !strings.Contains(flat, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if !strings.Contains(flat, "layercheck: node1 failed cluster layer(s)") {
				t.Errorf("no final verdict:\n%s", out)
			}
			// Each cluster problem once, no task source, no facts dump.
			for _, l := range regexp.MustCompile(`(?m)^\[(FAIL|ERROR|WARN)\] cluster .*$`).FindAllString(out, -1) {
				assert.Equal(t, 1, strings.Count(out, l), "said more than once: %q", l)
			}
			assert.NotContains(t, out, "Origin:")
			assert.NotContains(t, out, `"results":`)
			assert.Regexp(t, `(?m)^layercheck verify: 1 host: .*; cluster: FAIL \(`, out)
			if tc.name != "apiserver-stopped" { // nothing to list, nothing was created
				c.assertNoProbeNamespace(t)
			}
		})
	}
}
