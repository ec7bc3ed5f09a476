package clusterverify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/layercheck/layercheck/clusterstate"
	"github.com/layercheck/layercheck/internal/app"
	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/test/testutil"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/cluster/clustertest"
)

// preflightHosts is the inventory of the preflight cluster: node1 the
// control plane and etcd, node2 and node3 workers.
const preflightHosts = `[kube_control_plane]
node1
[etcd]
node1
[kube_node]
node2
node3
`

// preflightOptions are preflightHosts' groups.
func preflightOptions() cluster.Options {
	return cluster.Options{KubeControlPlane: []string{"node1"}, KubeNode: []string{"node2", "node3"}, Etcd: []string{"node1"}}
}

// preflightWorld is the cluster kubespray v2.31.0's defaults leave for
// preflightHosts: Kubernetes 1.35.4 (kubelets, static pods), containerd
// 2.2.3, calico in VXLAN mode with /26 blocks, kube-proxy in ipvs mode,
// CoreDNS with nodelocaldns, podCIDRs /24 (kube_network_node_prefix), and
// mutate's changes on top.
func preflightWorld(t testing.TB, mutate func(w *clustertest.World)) *APIServer {
	t.Helper()
	proxy := StartConnectProxy(t)
	srv := StartAPIServer(t, proxy.Addr)
	o := preflightOptions()
	o.Defaults()
	w := clustertest.Healthy(o, 4)
	for i, n := range w.Nodes {
		n.Status.NodeInfo.ContainerRuntimeVersion = "containerd://2.2.3"
		n.Spec.PodCIDR = podCIDR(i)
	}
	for _, p := range w.Pods {
		if p.Labels["tier"] == "control-plane" {
			p.Spec.Containers[0].Image += ":v1.35.4"
		}
	}
	if mutate != nil {
		mutate(w)
	}
	ctx := context.Background()
	require.NoError(t, w.Apply(ctx, srv.Kube, 8))
	cms := map[string]map[string]string{
		"kubeadm-config": {"ClusterConfiguration": `apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
clusterName: cluster.local
kubernetesVersion: v1.35.4
networking:
  dnsDomain: cluster.local
  serviceSubnet: "10.233.0.0/18"
  podSubnet: "10.233.64.0/18"
controllerManager:
  extraArgs:
  - name: node-cidr-mask-size-ipv4
    value: "24"
`},
		"kube-proxy":    {"config.conf": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n"},
		"calico-config": {"calico_backend": "vxlan", "cluster_type": "kubespray"},
	}
	for name, data := range cms {
		_, err := srv.Kube.CoreV1().ConfigMaps("kube-system").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"}, Data: data}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	InstallIPPool(t, srv, "10.233.64.0/18", "Never", "Always")
	return srv
}

func podCIDR(i int) string { return fmt.Sprintf("10.233.%d.0/24", 64+i) }

// preflightInventory writes hosts (INI) and group_vars/k8s_cluster/k8s-cluster.yml.
func preflightInventory(t testing.TB, hosts, vars string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hosts.ini"), []byte(hosts), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "group_vars", "k8s_cluster"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "group_vars", "k8s_cluster", "k8s-cluster.yml"), []byte("---\n"+vars), 0o644))
	return dir
}

// clusterFindings lints dir for the release target against st and keeps
// the cluster-* findings.
func clusterFindings(t *testing.T, dir, target string, st *clusterstate.State) []lint.Finding {
	t.Helper()
	rep := lintWith(t, dir, target, st)
	var out []lint.Finding
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Rule, "cluster-") {
			out = append(out, f)
		}
	}
	return out
}

// lintWith lints dir for the release target against st.
func lintWith(t testing.TB, dir, target string, st *clusterstate.State) *lint.Report {
	t.Helper()
	inv, err := parser.Load(dir)
	require.NoError(t, err)
	cat, err := kubespray.Bundled(target)
	require.NoError(t, err)
	return lint.Run(lint.Input{Inventory: inv, Catalogue: cat, Cluster: st})
}

// upgradeFrom is the upgrade-from finding's message ("" without one).
func upgradeFrom(rep *lint.Report) string {
	for _, f := range rep.Findings {
		if f.Rule == "upgrade-from" {
			return f.Message
		}
	}
	return ""
}

func readState(t *testing.T, srv *APIServer) *clusterstate.State {
	t.Helper()
	st, err := cluster.ReadStateRequest(context.Background(), &cluster.Request{Options: preflightOptions(), Kubeconfig: srv.Kubeconfig, Timeout: 30})
	require.NoError(t, err)
	require.Empty(t, st.Unread)
	return st
}

// TestPreflightOneFindingPerChange is the acceptance test: a cluster built
// from kubespray v2.31.0's defaults, linted for the next release (master)
// with one inventory field changed at a time, gets exactly one cluster-*
// finding per change, naming the variable, the inventory's location and
// the cluster's object; the unchanged inventory and changes the cluster
// allows get none.
func TestPreflightOneFindingPerChange(t *testing.T) {
	srv := preflightWorld(t, nil)
	st := readState(t, srv)
	assert.Equal(t, KubeVersion, st.ServerVersion)
	assert.Len(t, st.Nodes, 3)
	require.NotNil(t, st.KubeadmConfig)
	assert.Equal(t, "24", st.KubeadmConfig.NodeCIDRMaskSize)
	require.NotNil(t, st.IPPool)
	assert.Equal(t, 26, st.IPPool.BlockSize)

	// Without --upgrade-from the release is read from the control plane:
	// 1.35.4 is v2.31.0's default, so master is an upgrade from v2.31.0,
	// and v2.31.0 itself a re-run.
	assert.Equal(t, "no --upgrade-from: the control plane runs Kubernetes 1.35.4 (Pod kube-system/kube-apiserver-node1 image registry.k8s.io/kube-apiserver:v1.35.4), kubespray v2.31.0's default (1.35.4): the upgrade-* rules judge an upgrade from v2.31.0",
		upgradeFrom(lintWith(t, preflightInventory(t, preflightHosts, ""), "master", st)))
	assert.Empty(t, upgradeFrom(lintWith(t, preflightInventory(t, preflightHosts, ""), "v2.31.0", st)))

	cases := []struct {
		name, hosts, vars string
		rule, variable    string // "" rule: no finding
		sev               lint.Severity
		msg               string // in the message
	}{
		{name: "defaults", hosts: preflightHosts},
		{name: "newer patch", hosts: preflightHosts, vars: "kube_version: 1.35.8\n"},
		{name: "kube_version downgrade", hosts: preflightHosts, vars: "kube_version: 1.34.11\n", rule: "cluster-version", variable: "kube_version", sev: lint.SeverityError,
			msg: `kube_version "1.34.11" (group_vars/k8s_cluster/k8s-cluster.yml:2:15) is older than the control plane's 1.35.4 (Pod kube-system/kube-apiserver-node1 image registry.k8s.io/kube-apiserver:v1.35.4)`},
		{name: "containerd downgrade", hosts: preflightHosts, vars: "containerd_version: 2.1.7\n", rule: "cluster-version", variable: "containerd_version", sev: lint.SeverityError,
			msg: "is older than containerd 2.2.3 on 3 node(s) (Node status.nodeInfo.containerRuntimeVersion: node1, node2, node3)"},
		{name: "container_manager", hosts: preflightHosts, vars: "container_manager: crio\n", rule: "cluster-version", variable: "container_manager", sev: lint.SeverityError,
			msg: "but 3 node(s) run containerd 2.2.3"},
		{name: "kube_pods_subnet", hosts: preflightHosts, vars: "kube_pods_subnet: 10.244.0.0/16\n", rule: "cluster-network", variable: "kube_pods_subnet", sev: lint.SeverityError,
			msg: "but the cluster has 10.233.64.0/18 (ConfigMap kube-system/kubeadm-config ClusterConfiguration.networking.podSubnet)"},
		{name: "kube_service_addresses", hosts: preflightHosts, vars: "kube_service_addresses: 10.96.0.0/16\n", rule: "cluster-network", variable: "kube_service_addresses", sev: lint.SeverityError,
			msg: "ClusterConfiguration.networking.serviceSubnet"},
		{name: "kube_network_node_prefix", hosts: preflightHosts, vars: "kube_network_node_prefix: 25\n", rule: "cluster-network", variable: "kube_network_node_prefix", sev: lint.SeverityError,
			msg: "node-cidr-mask-size-ipv4"},
		{name: "cluster_name", hosts: preflightHosts, vars: "cluster_name: prod.local\n", rule: "cluster-network", variable: "cluster_name", sev: lint.SeverityError,
			msg: "ClusterConfiguration.clusterName"},
		{name: "kube_proxy_mode", hosts: preflightHosts, vars: "kube_proxy_mode: iptables\n", rule: "cluster-network", variable: "kube_proxy_mode", sev: lint.SeverityWarning,
			msg: "but the cluster has ipvs (ConfigMap kube-system/kube-proxy config.conf mode)"},
		{name: "kube_network_plugin", hosts: preflightHosts, vars: "kube_network_plugin: flannel\n", rule: "cluster-network", variable: "kube_network_plugin", sev: lint.SeverityError,
			msg: "but the cluster has calico (DaemonSet kube-system/calico-node)"},
		{name: "calico_ipip_mode", hosts: preflightHosts, vars: "calico_ipip_mode: Always\n", rule: "cluster-network", variable: "calico_ipip_mode", sev: lint.SeverityError,
			msg: "IPPool default-pool (crd.projectcalico.org/v1) spec.ipipMode"},
		{name: "calico_vxlan_mode", hosts: preflightHosts, vars: "calico_vxlan_mode: CrossSubnet\n", rule: "cluster-network", variable: "calico_vxlan_mode", sev: lint.SeverityError,
			msg: "spec.vxlanMode"},
		{name: "calico_pool_cidr", hosts: preflightHosts, vars: "calico_pool_cidr: 10.233.128.0/18\n", rule: "cluster-network", variable: "calico_pool_cidr", sev: lint.SeverityError,
			msg: "but the cluster has 10.233.64.0/18 (IPPool default-pool (crd.projectcalico.org/v1) spec.cidr)"},
		{name: "calico_pool_cidr as the pool's", hosts: preflightHosts, vars: "calico_pool_cidr: 10.233.64.0/18\n"},
		{name: "calico_pool_blocksize", hosts: preflightHosts, vars: "calico_pool_blocksize: 24\n", rule: "cluster-network", variable: "calico_pool_blocksize", sev: lint.SeverityError,
			msg: "but the cluster has 26 (IPPool default-pool (crd.projectcalico.org/v1) spec.blockSize)"},
		{name: "calico_network_backend", hosts: preflightHosts, vars: "calico_network_backend: bird\n", rule: "cluster-network", variable: "calico_network_backend", sev: lint.SeverityError,
			msg: "ConfigMap kube-system/calico-config calico_backend"},
		{name: "dns_mode", hosts: preflightHosts, vars: "dns_mode: none\n", rule: "cluster-network", variable: "dns_mode", sev: lint.SeverityWarning,
			msg: "but the cluster has coredns"},
		{name: "dns_mode coredns_dual", hosts: preflightHosts, vars: "dns_mode: coredns_dual\n", rule: "cluster-network", variable: "dns_mode", sev: lint.SeverityInfo,
			msg: "but the cluster has no coredns-secondary Deployment (Deployment kube-system/coredns-secondary): cluster.yml and upgrade-cluster.yml deploy it again"},
		{name: "enable_nodelocaldns", hosts: preflightHosts, vars: "enable_nodelocaldns: false\n", rule: "cluster-network", variable: "enable_nodelocaldns", sev: lint.SeverityWarning,
			msg: "DaemonSet kube-system/nodelocaldns present: true"},
		{name: "node_labels", hosts: preflightHosts, vars: "node_labels:\n  disk: ssd\n", rule: "cluster-membership", variable: "node_labels", sev: lint.SeverityWarning,
			msg: "differ from the labels of 3 Node(s) (Node metadata.labels: node1, node2, node3): disk=ssd (now absent)"},
		{name: "node_labels the Nodes have", hosts: preflightHosts, vars: "node_labels:\n  kubernetes.io/os: linux\n"},
		{name: "node_taints", hosts: preflightHosts, vars: "node_taints: [\"dedicated=infra:NoSchedule\"]\n", rule: "cluster-membership", variable: "node_taints", sev: lint.SeverityWarning,
			msg: "node_taints dedicated=infra:NoSchedule (group_vars/k8s_cluster/k8s-cluster.yml:2:14) are not on 3 Node(s) (Node spec.taints: node1, node2, node3)"},
		{name: "host added", hosts: preflightHosts + "node4\n", rule: "cluster-membership", sev: lint.SeverityInfo,
			msg: "1 k8s_cluster host(s) have no Node in the cluster (node4): scale.yml"},
		{name: "host removed", hosts: strings.Replace(preflightHosts, "node3\n", "", 1), rule: "cluster-membership", sev: lint.SeverityWarning,
			msg: "1 Node(s) of the cluster are not in the inventory's k8s_cluster (node3)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := clusterFindings(t, preflightInventory(t, tc.hosts, tc.vars), "master", st)
			if tc.rule == "" {
				assert.Empty(t, fs)
				return
			}
			require.Len(t, fs, 1, "%+v", fs)
			f := fs[0]
			t.Logf("%s %s %s: %s\n  fix: %s", f.Severity, f.Rule, f.Where, f.Message, f.Fix)
			assert.Equal(t, tc.rule, f.Rule)
			assert.Equal(t, tc.variable, f.Variable)
			assert.Equal(t, tc.sev, f.Severity)
			assert.Contains(t, f.Message, tc.msg)
			assert.NotEmpty(t, f.Why)
			assert.NotEmpty(t, f.Fix)
			if tc.variable != "" {
				assert.True(t, strings.HasPrefix(f.Where, "group_vars/k8s_cluster/k8s-cluster.yml:"), "where %q", f.Where)
			}
		})
	}
}

// TestPreflightClusterSide: what the cluster shows rather than the
// inventory: a control plane two minors behind the target, a kubelet more
// than 3 minors behind it, a control-plane Node not Ready and without its
// taint; and the CLI's lint --kubeconfig carries them to its JSON.
func TestPreflightClusterSide(t *testing.T) {
	srv := preflightWorld(t, func(w *clustertest.World) {
		for _, p := range w.Pods {
			if p.Labels["component"] == "kube-apiserver" {
				p.Spec.Containers[0].Image = "registry.k8s.io/kube-apiserver:v1.34.3"
			}
		}
		w.Node("node3").Status.NodeInfo.KubeletVersion = "v1.32.9"
		n1 := w.Node("node1")
		n1.Spec.Taints = nil
		n1.Status.Conditions[0].Status = corev1.ConditionFalse
		n1.Status.Conditions[0].Reason = "KubeletNotReady"
	})
	st := readState(t, srv)
	fs := clusterFindings(t, preflightInventory(t, preflightHosts, ""), "master", st)
	var got []string
	for _, f := range fs {
		got = append(got, string(f.Severity)+" "+f.Rule+": "+f.Message)
	}
	assert.ElementsMatch(t, []string{
		`error cluster-version: kube_version "1.36.4" (kubespray master's default) is 2 minors ahead of the control plane's 1.34.3 (Pod kube-system/kube-apiserver-node1 image registry.k8s.io/kube-apiserver:v1.34.3): kubeadm upgrades one minor at a time`,
		`error cluster-version: kube_version "1.36.4" (kubespray master's default) is 4 minors ahead of the kubelet v1.32.9 on 1 node(s) (Node status.nodeInfo.kubeletVersion: node3): kubelets may lag kube-apiserver by at most 3 minors`,
		`error cluster-membership: 1 kube_control_plane Node(s) not Ready (Node status.conditions Ready): node1 (Ready False (KubeletNotReady))`,
		`warning cluster-membership: 1 kube_control_plane host(s) not in kube_node lack the taint node-role.kubernetes.io/control-plane:NoSchedule on their Node (spec.taints): node1`,
	}, got)

	// 1.34.3 is v2.30.0's default: master is two releases on (upgrade-path)
	rep := lintWith(t, preflightInventory(t, preflightHosts, ""), "master", st)
	assert.Contains(t, upgradeFrom(rep), "kubespray v2.30.0's default (1.34.3): the upgrade-* rules judge an upgrade from v2.30.0")
	var path []string
	for _, f := range rep.Findings {
		if f.Rule == "upgrade-path" {
			path = append(path, f.Message)
		}
	}
	assert.Equal(t, []string{"upgrading from kubespray v2.30.0 to master skips 1 minor release(s)"}, path)

	// the same through `layercheck lint --kubeconfig --format json`
	var out, errOut bytes.Buffer
	err := app.Run(context.Background(), []string{"lint", "-i", preflightInventory(t, preflightHosts, ""), "--kubespray-version", "master",
		"--kubeconfig", srv.Kubeconfig, "--format", "json"}, app.Streams{Out: &out, ErrOut: &errOut})
	require.Error(t, err, "errors found: exit 1")
	var cli lint.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &cli), "%s\n%s", out.String(), errOut.String())
	n := 0
	for _, f := range cli.Findings {
		if strings.HasPrefix(f.Rule, "cluster-") {
			n++
		}
	}
	assert.Equal(t, 4, n, "%s", out.String())
}

// TestLintRoleWithCluster runs the lint role from the collection with
// layercheck_lint_cluster (cluster_facts preflight on the controller with
// the harness kubeconfig, then inventory_lint with its cluster_state): a
// changed kube_pods_subnet fails the play with the cluster-network finding;
// the inventory as the cluster runs it passes.
func TestLintRoleWithCluster(t *testing.T) {
	srv := preflightWorld(t, nil)
	coll := t.TempDir()
	require.NoError(t, testutil.LayOutCollection(coll, "inventory_lint", "cluster_facts"))
	play := filepath.Join(coll, "lint.yml")
	require.NoError(t, os.WriteFile(play, []byte("- hosts: all\n  gather_facts: false\n  roles:\n    - role: layercheck.kubespray.lint\n"), 0o644))
	run := func(vars string) (string, error) {
		dir := preflightInventory(t, strings.Replace(preflightHosts, "node1\n", "node1 ansible_connection=local ansible_python_interpreter=\"{{ ansible_playbook_python }}\"\n", 1), vars)
		ev, _ := json.Marshal(map[string]any{"layercheck_lint_cluster": true, "layercheck_lint_cluster_kubeconfig": srv.Kubeconfig,
			"layercheck_lint_kubespray_version": "master"})
		return testutil.RunPlaybook(t, dir, testutil.AnsibleEnv("ANSIBLE_COLLECTIONS_PATH="+coll, "ANSIBLE_STDOUT_CALLBACK=default",
			"ANSIBLE_LOCAL_TEMP="+filepath.Join(dir, "tmp")), 3*time.Minute, "-i", filepath.Join(dir, "hosts.ini"), play, "-e", string(ev))
	}
	out, err := run("")
	require.NoError(t, err, "%s", out)
	assert.NotContains(t, out, "cluster-")
	out, err = run("kube_pods_subnet: 10.244.0.0/16\n")
	require.Error(t, err, "%s", out)
	assert.Contains(t, out, "cluster-network")
	assert.Contains(t, out, "but the cluster has 10.233.64.0/18 (ConfigMap kube-system/kubeadm-config ClusterConfiguration.networking.podSubnet)")
}

// etcdHosts is the inventory of the etcd preflight: three etcd members on
// loopback (their peer URLs are https://127.0.0.1:<port>), node1 the
// control plane.
const etcdHosts = `[kube_control_plane]
node1
[etcd]
node1
node2
node3
[kube_node]
node2
node3
[all:vars]
ip=127.0.0.1
`

// TestPreflightEtcd reads a real three-member etcd (TLS, client
// certificates from a kubespray-like tree) through its JSON gateway and
// lints etcd_version and the etcd group against its members and their
// versions: one finding per change, none for the inventory that matches.
func TestPreflightEtcd(t *testing.T) {
	tr, err := harness.Build(filepath.Join(t.TempDir(), "node1"), harness.Config{Now: time.Now().Add(-time.Hour), Host: "node1",
		Hosts: []string{"node1", "node2", "node3"}, IPs: []string{"10.10.0.11", "10.10.0.12", "10.10.0.13"}})
	require.NoError(t, err)
	ssl := filepath.Join(tr.Root, "etc/ssl/etcd/ssl")
	members, _ := harness.FixtureEtcdMembers(t, ssl)
	harness.StartEtcd(t, filepath.Join(ssl, "ca.pem"), members)
	srv := preflightWorld(t, nil)
	access := cluster.EtcdAccess{Endpoints: []string{fmt.Sprintf("https://127.0.0.1:%d", members[0].ClientPort)},
		CACert: filepath.Join(ssl, "ca.pem"), Cert: filepath.Join(ssl, "admin-node1.pem"), Key: filepath.Join(ssl, "admin-node1-key.pem")}
	read := func(want int) *clusterstate.State {
		t.Helper()
		var st *clusterstate.State
		for range 100 { // a fresh cluster may still be electing
			st, err = cluster.ReadStateRequest(context.Background(), &cluster.Request{Options: preflightOptions(), Kubeconfig: srv.Kubeconfig, Timeout: 10, EtcdAccess: access})
			require.NoError(t, err)
			if st.Etcd != nil && len(st.Etcd.Members) == want {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		require.NotNil(t, st.Etcd, "%v", st.Unread)
		require.Len(t, st.Etcd.Members, want)
		return st
	}
	st := read(3)
	for _, m := range st.Etcd.Members {
		assert.Equal(t, "3.7.3", m.Version, "member %s", m.Name)
	}

	pinned := "etcd_version: \"3.7.3\"\n"
	cases := []struct {
		name, hosts, vars string
		sev               lint.Severity
		msg               string // "" : no finding
	}{
		{name: "matching", hosts: etcdHosts, vars: pinned},
		{name: "release default downgrades etcd", hosts: etcdHosts, sev: lint.SeverityError,
			msg: `etcd_version "3.6.14" (kubespray master's default) is older than etcd 3.7.3 that member(s) etcd1, etcd2, etcd3 run`},
		{name: "host left the etcd group", hosts: strings.Replace(etcdHosts, "node3\n[kube_node]", "[kube_node]", 1), vars: pinned, sev: lint.SeverityWarning,
			msg: "etcd member etcd3 (peer https://127.0.0.1:"},
		{name: "host re-added at a new address", hosts: strings.Replace(etcdHosts, "node3\n[kube_node]", "node3 ip=10.10.0.99\n[kube_node]", 1), vars: pinned, sev: lint.SeverityError,
			msg: "but host node3, which runs as etcd3, is at 10.10.0.99: a stale member of a host being re-added"},
	}
	check := func(st *clusterstate.State, hosts, vars string, sev lint.Severity, msg string) {
		t.Helper()
		fs := clusterFindings(t, preflightInventory(t, hosts, vars), "master", st)
		if msg == "" {
			assert.Empty(t, fs)
			return
		}
		require.Len(t, fs, 1, "%+v", fs)
		t.Logf("%s %s: %s\n  fix: %s", fs[0].Severity, fs[0].Rule, fs[0].Message, fs[0].Fix)
		assert.Equal(t, sev, fs[0].Severity)
		assert.Contains(t, fs[0].Message, msg)
		assert.NotEmpty(t, fs[0].Fix)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { check(st, tc.hosts, tc.vars, tc.sev, tc.msg) })
	}

	// A learner added and never started (an interrupted member add): it
	// has the peer URL of a host the inventory is adding, then of none.
	cfg, err := (&access).TLSConfig()
	require.NoError(t, err)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{fmt.Sprintf("127.0.0.1:%d", members[0].ClientPort)}, DialTimeout: 5 * time.Second,
		TLS: cfg, Logger: zap.NewNop()})
	require.NoError(t, err)
	defer cli.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = cli.MemberAddAsLearner(ctx, []string{"https://10.10.0.14:2380"})
		cancel()
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond) // etcd refuses adds until every member has been up a while
	}
	require.NoError(t, err)
	st = read(4)
	t.Run("learner of a host being added", func(t *testing.T) {
		check(st, strings.Replace(etcdHosts, "node3\n[kube_node]", "node3\nnode4 ip=10.10.0.14\n[kube_node]", 1), pinned, lint.SeverityError,
			"has the peer URL https://10.10.0.14:2380 of host node4")
	})
	t.Run("learner of no host", func(t *testing.T) {
		check(st, etcdHosts, pinned, lint.SeverityWarning, "is a learner that no host of the etcd group accounts for")
	})
}
