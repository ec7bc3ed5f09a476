package lint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/clusterstate"
	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
)

// TestUpgradeFromCannotTell: a control plane whose Kubernetes no bundled
// release installs by default, or none read at all, is said, and no
// release is assumed.
func TestUpgradeFromCannotTell(t *testing.T) {
	cat, err := kubespray.Bundled("master")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []*clusterstate.State{
		{Server: "https://192.0.2.1:6443", ServerVersion: "v1.20.4"},
		{Server: "https://192.0.2.1:6443"},
	} {
		from, note := inferUpgradeFrom(st, cat)
		if from != nil || note == nil || !strings.HasPrefix(note.Message, "cannot tell which kubespray release installed the cluster") || note.Fix == "" {
			t.Errorf("%+v: from %v, note %+v", st, from, note)
		}
	}
}

// TestEtcdMoveGate: the cluster of the day-2 run's trap 1 (kubespray
// v2.30.0 with etcd 3.5.24 on node1) against the inventory for v2.31.0,
// whose default etcd is 3.6.10: v2.31.0's etcd role stops at "Ensure etcd
// version is >=3.5.26" (roles/etcd/tasks/clean_v2_store.yml), so the
// preflight says so, with both values and kubespray's order as the fix.
// At 3.5.26 the move goes through, and v2.30.0 (no gate, etcd 3.5) says
// nothing.
func TestEtcdMoveGate(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.ini":              "[kube_control_plane]\nnode1\n[etcd]\nnode1\n[kube_node]\nnode2\nnode3\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n",
		"group_vars/all/all.yml": "etcd_deployment_type: host\n",
	})
	inv, err := parser.Load(dir)
	require.NoError(t, err)
	state := func(etcd string) *clusterstate.State {
		return &clusterstate.State{Server: "https://192.0.2.11:6443", ServerVersion: "v1.34.3",
			Etcd: &clusterstate.Etcd{Endpoint: "https://192.0.2.11:2379", Members: []clusterstate.Member{
				{Name: "etcd1", PeerURLs: []string{"https://192.0.2.11:2380"}, Version: etcd}}}}
	}
	lintWith := func(release, etcd string) *Report {
		cat, err := kubespray.Bundled(release)
		require.NoError(t, err)
		r := Run(Input{Inventory: inv, Catalogue: cat, Cluster: state(etcd)})
		checkSeverities(t, r)
		return r
	}
	gate := func(r *Report) []Finding {
		var out []Finding
		for _, f := range find(r, "cluster-version", "") {
			if strings.Contains(f.Message, "Ensure etcd version is >=") {
				out = append(out, f)
			}
		}
		return out
	}
	r := lintWith("v2.31.0", "3.5.24")
	g := gate(r)
	require.Len(t, g, 1, dump(r))
	assert.Equal(t, SeverityError, g[0].Severity)
	assert.Equal(t, `etcd_version "3.6.10" (kubespray v2.31.0's default) moves etcd to 3.6, but member(s) etcd1 (3.5.24) run etcd below 3.5.26 (etcd Maintenance.Status version at https://192.0.2.11:2379): kubespray v2.31.0 stops at roles/etcd/tasks/clean_v2_store.yml:14, "Ensure etcd version is >=3.5.26"`, g[0].Message)
	assert.Equal(t, `first run cluster.yml of kubespray v2.30.0 with etcd_version: "3.5.26" (or a later 3.5 patch it has checksums for), then this release's upgrade-cluster.yml: etcd has to reach 3.5.26 before the 3.6 move`, g[0].Fix)
	assert.Empty(t, gate(lintWith("v2.31.0", "3.5.26")))
	assert.Empty(t, gate(lintWith("v2.30.0", "3.5.24")))
}

// day2Hosts are the day-2 runs' node machines: node1 the control plane and
// etcd, node2 and node3 workers.
const day2Hosts = "[kube_control_plane]\nnode1\n[etcd]\nnode1\n[kube_node]\nnode2\nnode3\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n"

// day2State is the day-2 runs' cluster as the preflight reads it: kubespray
// v2.30.0's defaults with flannel (net-conf.json as cni-flannel.yml.j2
// renders it: vxlan, VNI 1, port 8472, no direct routing), etcd 3.5.24 as a
// host service on node1 (no etcd static pod), CoreDNS with nodelocaldns,
// kube-proxy in ipvs mode.
func day2State() *clusterstate.State {
	nc := &clusterstate.FlannelNetConf{Network: "10.233.64.0/18", EnableIPv4: true}
	nc.Backend.Type = "vxlan"
	vni, port, direct := 1, 8472, false
	nc.Backend.VNI, nc.Backend.Port, nc.Backend.DirectRouting = &vni, &port, &direct
	ipvs := "ipvs"
	st := &clusterstate.State{Server: "https://192.0.2.11:6443", ServerVersion: "v1.34.3",
		KubeadmConfig: &clusterstate.KubeadmConfig{KubernetesVersion: "v1.34.3", ClusterName: "cluster.local", PodSubnet: "10.233.64.0/18",
			ServiceSubnet: "10.233.0.0/18", DNSDomain: "cluster.local", NodeCIDRMaskSize: "24"},
		KubeProxyMode: &ipvs,
		DaemonSets:    []string{"kube-flannel", "kube-proxy", "nodelocaldns"},
		Deployments:   []string{"coredns", "dns-autoscaler"},
		Flannel:       nc,
		Etcd: &clusterstate.Etcd{Endpoint: "https://192.0.2.11:2379", Members: []clusterstate.Member{
			{Name: "etcd1", PeerURLs: []string{"https://192.0.2.11:2380"}, ClientURLs: []string{"https://192.0.2.11:2379"}, Version: "3.5.24"}}},
	}
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		st.ControlPlane = append(st.ControlPlane, clusterstate.StaticPod{Component: c, Node: "node1", Pod: c + "-node1",
			Image: "registry.k8s.io/" + c + ":v1.34.3", Version: "v1.34.3"})
	}
	for i, n := range []string{"node1", "node2", "node3"} {
		st.Nodes = append(st.Nodes, clusterstate.Node{Name: n, KubeletVersion: "v1.34.3", ContainerRuntimeVersion: "containerd://2.1.5",
			Ready: true, PodCIDR: fmt.Sprintf("10.233.%d.0/24", 64+i)})
	}
	return st
}

// lintDay2 lints the day-2 inventory (flannel, etcd on the host) with vars
// added in group_vars/k8s_cluster/k8s-net-flannel.yml against st for
// kubespray v2.31.0.
func lintDay2(t *testing.T, vars string, st *clusterstate.State) *Report {
	t.Helper()
	dir := writeTree(t, map[string]string{
		"hosts.ini":                                  day2Hosts,
		"group_vars/all/etcd.yml":                    "etcd_deployment_type: host\n",
		"group_vars/k8s_cluster/k8s-cluster.yml":     "kube_network_plugin: flannel\n",
		"group_vars/k8s_cluster/k8s-net-flannel.yml": "---\n" + vars,
	})
	inv, err := parser.Load(dir)
	require.NoError(t, err)
	r := Run(Input{Inventory: inv, Catalogue: catalogue(t), Cluster: st})
	checkSeverities(t, r)
	return r
}

// TestPreflightDay2Unchanged: the inventory that built the cluster gets no
// cluster-network or etcd_deployment_type finding.
func TestPreflightDay2Unchanged(t *testing.T) {
	r := lintDay2(t, "", day2State())
	assert.Empty(t, find(r, "cluster-network", ""), dump(r))
	assert.Empty(t, find(r, "cluster-membership", "etcd_deployment_type"), dump(r))
	// a flannel_vxlan_port 0 is the kernel's 8472, as flannel reads it
	assert.Empty(t, find(lintDay2(t, "flannel_vxlan_port: 0\n", day2State()), "cluster-network", ""))
}

const flannelWhy = `kubespray re-renders kube-system/kube-flannel-cfg from the inventory and applies it (roles/network_plugin/flannel ("Flannel | Create Flannel manifests" renders templates/cni-flannel.yml.j2, "Flannel | Start Resources" applies it)), but flannel reads net-conf.json only at start: the running flannel pods keep the cluster's %s until they restart, node by node when the DaemonSet rolls (a new flannel_image_tag, as in an upgrade) or at a node's reboot, and nodes on different %s cannot reach each other's pods.`

// TestPreflightFlannelBackend: trap 1, the inventory's flannel backend,
// VNI, port and direct routing against the running net-conf.json.
func TestPreflightFlannelBackend(t *testing.T) {
	f := one(t, lintDay2(t, "flannel_backend_type: host-gw\n", day2State()), "cluster-network", "flannel_backend_type")
	assert.Equal(t, SeverityError, f.Severity)
	assert.Equal(t, `flannel_backend_type "host-gw" (group_vars/k8s_cluster/k8s-net-flannel.yml:2:23) but the cluster has vxlan (ConfigMap kube-system/kube-flannel-cfg net-conf.json Backend.Type)`, f.Message)
	assert.Equal(t, fmt.Sprintf(flannelWhy, "backend", "backend"), f.Why)
	assert.Equal(t, `set flannel_backend_type: "vxlan" at group_vars/k8s_cluster/k8s-net-flannel.yml:2:23 (the running value); to change it on purpose: run cluster.yml --tags network with the new value, then restart every flannel pod at once (kubectl -n kube-system delete pod -l app=flannel) in a window where cross-node pod traffic stops, and delete the old vxlan device on each node (ip link del flannel.1, as roles/network_plugin/flannel/tasks/reset.yml does for flannel.1)`, f.Fix)
	// the vxlan fields are not judged against another backend
	assert.Len(t, find(lintDay2(t, "flannel_backend_type: host-gw\nflannel_vxlan_vni: 2\n", day2State()), "cluster-network", ""), 1)

	r := lintDay2(t, "flannel_vxlan_vni: 4096\nflannel_vxlan_port: 4789\nflannel_vxlan_direct_routing: true\n", day2State())
	vni := one(t, r, "cluster-network", "flannel_vxlan_vni")
	assert.Equal(t, SeverityError, vni.Severity)
	assert.Equal(t, `flannel_vxlan_vni 4096 (group_vars/k8s_cluster/k8s-net-flannel.yml:2:20) but the cluster has 1 (ConfigMap kube-system/kube-flannel-cfg net-conf.json Backend.VNI)`, vni.Message)
	assert.Equal(t, fmt.Sprintf(flannelWhy, "VXLAN VNI", "VXLAN VNI"), vni.Why)
	assert.Equal(t, `set flannel_vxlan_vni: 1 at group_vars/k8s_cluster/k8s-net-flannel.yml:2:20 (the running value); to change it on purpose: run cluster.yml --tags network with the new value, then restart every flannel pod at once (kubectl -n kube-system delete pod -l app=flannel) in a window where cross-node pod traffic stops, and delete the old vxlan device on each node (ip link del flannel.1, as roles/network_plugin/flannel/tasks/reset.yml does for flannel.1)`, vni.Fix)
	port := one(t, r, "cluster-network", "flannel_vxlan_port")
	assert.Equal(t, SeverityError, port.Severity)
	assert.Equal(t, `flannel_vxlan_port 4789 (group_vars/k8s_cluster/k8s-net-flannel.yml:3:21) but the cluster has 8472 (ConfigMap kube-system/kube-flannel-cfg net-conf.json Backend.Port)`, port.Message)
	assert.Equal(t, `set flannel_vxlan_port: 8472 at group_vars/k8s_cluster/k8s-net-flannel.yml:3:21 (the running value); to change it on purpose: run cluster.yml --tags network with the new value, then restart every flannel pod at once (kubectl -n kube-system delete pod -l app=flannel) in a window where cross-node pod traffic stops`, port.Fix)
	dr := one(t, r, "cluster-network", "flannel_vxlan_direct_routing")
	assert.Equal(t, SeverityWarning, dr.Severity)
	assert.Equal(t, `flannel_vxlan_direct_routing true (group_vars/k8s_cluster/k8s-net-flannel.yml:4:31) but the cluster has false (ConfigMap kube-system/kube-flannel-cfg net-conf.json Backend.DirectRouting)`, dr.Message)

	// a ConfigMap without the vxlan fields is read with flannel's defaults
	st := day2State()
	st.Flannel.Backend.VNI, st.Flannel.Backend.Port = nil, nil
	assert.Empty(t, find(lintDay2(t, "", st), "cluster-network", ""))
	f = one(t, lintDay2(t, "flannel_vxlan_vni: 2\n", st), "cluster-network", "flannel_vxlan_vni")
	assert.Equal(t, `flannel_vxlan_vni 2 (group_vars/k8s_cluster/k8s-net-flannel.yml:2:20) but the cluster has 1 (ConfigMap kube-system/kube-flannel-cfg net-conf.json Backend.VNI absent: flannel's default 1)`, f.Message)

	// not read (another plugin, or kube-flannel-cfg unreadable): silent
	st = day2State()
	st.Flannel = nil
	assert.Empty(t, find(lintDay2(t, "flannel_backend_type: host-gw\n", st), "cluster-network", ""))
}

// TestPreflightFlannelNetwork: kube_pods_subnet is judged once, against
// kubeadm's podSubnet, and against flannel's Network only without it.
func TestPreflightFlannelNetwork(t *testing.T) {
	r := lintDay2(t, "kube_pods_subnet: 10.244.0.0/16\n", day2State())
	f := one(t, r, "cluster-network", "kube_pods_subnet")
	assert.Contains(t, f.Message, "(ConfigMap kube-system/kubeadm-config ClusterConfiguration.networking.podSubnet)")

	st := day2State()
	st.KubeadmConfig = nil
	st.Unread = []string{"ConfigMap kube-system/kubeadm-config: not found"}
	f = one(t, lintDay2(t, "kube_pods_subnet: 10.244.0.0/16\n", st), "cluster-network", "kube_pods_subnet")
	assert.Equal(t, SeverityError, f.Severity)
	assert.Equal(t, `kube_pods_subnet "10.244.0.0/16" (group_vars/k8s_cluster/k8s-net-flannel.yml:2:19) but the cluster has 10.233.64.0/18 (ConfigMap kube-system/kube-flannel-cfg net-conf.json Network)`, f.Message)
	assert.Equal(t, `set kube_pods_subnet: "10.233.64.0/18" at group_vars/k8s_cluster/k8s-net-flannel.yml:2:19`, f.Fix)
}

// TestPreflightEtcdDeploymentType: trap 2, etcd_deployment_type kubeadm on
// the cluster whose etcd is a host service, and the reverse.
func TestPreflightEtcdDeploymentType(t *testing.T) {
	f := one(t, lintDay2(t, "etcd_deployment_type: kubeadm\n", day2State()), "cluster-membership", "etcd_deployment_type")
	assert.Equal(t, SeverityError, f.Severity)
	assert.Equal(t, `etcd_deployment_type "kubeadm" (group_vars/k8s_cluster/k8s-net-flannel.yml:2:23) but the cluster runs etcd outside kubeadm: no etcd static pod in kube-system (control-plane pods kube-apiserver-node1); etcd members answer at https://192.0.2.11:2379 (etcd1)`, f.Message)
	assert.Contains(t, f.Why, `playbooks/install_etcd.yml skips the etcd role (when: etcd_deployment_type != "kubeadm")`)
	assert.Contains(t, f.Why, `"Rewrite kubeadm managed etcd static pod manifests with updated configmap" (kubeadm init phase etcd local`)
	assert.Equal(t, `set etcd_deployment_type: "host" at group_vars/k8s_cluster/k8s-net-flannel.yml:2:23 (what runs); kubespray cannot move a running etcd into kubeadm's static pods`, f.Fix)

	// etcd members not read: the static pods alone tell
	st := day2State()
	st.Etcd = nil
	f = one(t, lintDay2(t, "etcd_deployment_type: kubeadm\n", st), "cluster-membership", "etcd_deployment_type")
	assert.Equal(t, `etcd_deployment_type "kubeadm" (group_vars/k8s_cluster/k8s-net-flannel.yml:2:23) but the cluster runs etcd outside kubeadm: no etcd static pod in kube-system (control-plane pods kube-apiserver-node1)`, f.Message)

	// the reverse: kubeadm's etcd runs, the inventory says host
	st = day2State()
	st.Etcd = nil
	st.ControlPlane = append(st.ControlPlane, clusterstate.StaticPod{Component: "etcd", Node: "node1", Pod: "etcd-node1", Image: "registry.k8s.io/etcd:3.5.24-0", Version: "3.5.24-0"})
	f = one(t, lintDay2(t, "", st), "cluster-membership", "etcd_deployment_type")
	assert.Equal(t, SeverityError, f.Severity)
	assert.Equal(t, `etcd_deployment_type "host" (group_vars/all/etcd.yml:1:23) but the cluster runs kubeadm's etcd: static pod(s) etcd-node1 in kube-system (component=etcd)`, f.Message)
	assert.Contains(t, f.Why, "installs etcd as a service (roles/etcd/tasks/install_host.yml, configure.yml)")
	assert.Equal(t, `set etcd_deployment_type: "kubeadm" at group_vars/all/etcd.yml:1:23 (what runs); kubespray cannot move a running cluster's etcd out of kubeadm's static pods`, f.Fix)
	assert.Empty(t, find(lintDay2(t, "etcd_deployment_type: kubeadm\n", st), "cluster-membership", "etcd_deployment_type"))

	// control-plane pods not read, or none seen: nothing to tell from
	st = day2State()
	st.ControlPlane, st.Unread = nil, []string{"control-plane pods in kube-system: forbidden"}
	assert.Empty(t, find(lintDay2(t, "etcd_deployment_type: kubeadm\n", st), "cluster-membership", "etcd_deployment_type"))
	st.Unread = nil
	assert.Empty(t, find(lintDay2(t, "etcd_deployment_type: kubeadm\n", st), "cluster-membership", "etcd_deployment_type"))
}

// TestPreflightDNSRecreated: trap 3, a CoreDNS or nodelocaldns the cluster
// lost is what the run deploys again (info), not a conflict; one the
// inventory turned off stays a warning.
func TestPreflightDNSRecreated(t *testing.T) {
	st := day2State()
	st.Deployments = []string{"dns-autoscaler"}
	f := one(t, lintDay2(t, "", st), "cluster-network", "dns_mode")
	assert.Equal(t, SeverityInfo, f.Severity)
	assert.Equal(t, `dns_mode "coredns" (kubespray v2.31.0's default) but the cluster has no CoreDNS Deployment (Deployment kube-system/coredns): cluster.yml and upgrade-cluster.yml deploy it again (roles/kubernetes-apps/ansible "Kubernetes Apps | CoreDNS")`, f.Message)
	assert.Equal(t, `roles/kubernetes-apps/ansible applies the manifests of the DNS dns_mode names on every cluster.yml and upgrade-cluster.yml run (scale.yml does not run it), so nothing conflicts; until it runs, cluster names do not resolve.`, f.Why)
	assert.Equal(t, `re-run cluster.yml (it recreates kube-system/coredns); set dns_mode: "none" in the inventory (group_vars/k8s_cluster/k8s-cluster.yml) only if the cluster is meant to have no cluster DNS`, f.Fix)
	// deploy_coredns false: kubespray deploys none, nothing to say
	assert.Empty(t, find(lintDay2(t, "deploy_coredns: false\n", st), "cluster-network", "dns_mode"))

	f = one(t, lintDay2(t, "dns_mode: coredns_dual\n", st), "cluster-network", "dns_mode")
	assert.Equal(t, SeverityInfo, f.Severity)
	assert.Equal(t, `dns_mode "coredns_dual" (group_vars/k8s_cluster/k8s-net-flannel.yml:2:11) but the cluster has no CoreDNS Deployments (Deployments kube-system/coredns, coredns-secondary): cluster.yml and upgrade-cluster.yml deploy it again (roles/kubernetes-apps/ansible "Kubernetes Apps | CoreDNS" and "Kubernetes Apps | CoreDNS Secondary")`, f.Message)
	assert.Equal(t, `re-run cluster.yml (it recreates kube-system/coredns, kube-system/coredns-secondary); set dns_mode: "none" at group_vars/k8s_cluster/k8s-net-flannel.yml:2:11 only if the cluster is meant to have no cluster DNS`, f.Fix)

	f = one(t, lintDay2(t, "dns_mode: coredns_dual\n", day2State()), "cluster-network", "dns_mode")
	assert.Equal(t, SeverityInfo, f.Severity)
	assert.Equal(t, `dns_mode "coredns_dual" (group_vars/k8s_cluster/k8s-net-flannel.yml:2:11) but the cluster has no coredns-secondary Deployment (Deployment kube-system/coredns-secondary): cluster.yml and upgrade-cluster.yml deploy it again (roles/kubernetes-apps/ansible "Kubernetes Apps | CoreDNS Secondary")`, f.Message)
	assert.Equal(t, `re-run cluster.yml (it recreates kube-system/coredns-secondary); set dns_mode: "coredns" at group_vars/k8s_cluster/k8s-net-flannel.yml:2:11 only if the cluster is meant to have one CoreDNS`, f.Fix)

	// what kubespray leaves running stays a warning
	f = one(t, lintDay2(t, "dns_mode: none\n", day2State()), "cluster-network", "dns_mode")
	assert.Equal(t, SeverityWarning, f.Severity)
	assert.Equal(t, `dns_mode "none" (group_vars/k8s_cluster/k8s-net-flannel.yml:2:11) but the cluster has coredns (Deployments kube-system/coredns, coredns-secondary)`, f.Message)
	assert.Empty(t, find(lintDay2(t, "dns_mode: manual\n", day2State()), "cluster-network", "dns_mode"))
	f = one(t, lintDay2(t, "enable_nodelocaldns: false\n", day2State()), "cluster-network", "enable_nodelocaldns")
	assert.Equal(t, SeverityWarning, f.Severity)
	assert.Equal(t, `enable_nodelocaldns false (group_vars/k8s_cluster/k8s-net-flannel.yml:2:22) but the cluster has true (DaemonSet kube-system/nodelocaldns present: true)`, f.Message)

	// nodelocaldns lost: the run deploys it again
	st = day2State()
	st.DaemonSets = []string{"kube-flannel", "kube-proxy"}
	f = one(t, lintDay2(t, "", st), "cluster-network", "enable_nodelocaldns")
	assert.Equal(t, SeverityInfo, f.Severity)
	assert.Equal(t, `enable_nodelocaldns true (kubespray v2.31.0's default) but the cluster has no nodelocaldns DaemonSet (DaemonSet kube-system/nodelocaldns): cluster.yml and upgrade-cluster.yml deploy it again (roles/kubernetes-apps/ansible "Kubernetes Apps | nodelocalDNS")`, f.Message)
	assert.Equal(t, `re-run cluster.yml (it recreates kube-system/nodelocaldns); set enable_nodelocaldns: false in the inventory (group_vars/k8s_cluster/k8s-cluster.yml) only if the cluster is meant to run without it`, f.Fix)
	assert.Empty(t, find(lintDay2(t, "enable_nodelocaldns: false\n", st), "cluster-network", "enable_nodelocaldns"))
}

// membershipFindings lints hosts (an INI inventory) for kubespray v2.31.0 against
// the cluster st and returns the cluster-membership findings whose
// message contains about.
func membershipFindings(t *testing.T, hosts string, st *clusterstate.State, about string) ([]Finding, *Report) {
	t.Helper()
	inv, err := parser.Load(writeTree(t, map[string]string{"hosts.ini": hosts}))
	require.NoError(t, err)
	cat, err := kubespray.Bundled("v2.31.0")
	require.NoError(t, err)
	r := Run(Input{Inventory: inv, Catalogue: cat, Cluster: st})
	checkSeverities(t, r)
	var got []Finding
	for _, f := range find(r, "cluster-membership", "") {
		if strings.Contains(f.Message, about) {
			got = append(got, f)
		}
	}
	return got, r
}

// The cluster the day-2 run's failed upgrade left: node1 cordoned. Before
// the next upgrade the preflight says kubespray will keep it cordoned.
func TestCordonedBeforeAnUpgrade(t *testing.T) {
	hosts := "[kube_control_plane]\nnode1\n[etcd]\nnode1\n[kube_node]\nnode2\nnode3\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n"
	st := &clusterstate.State{Server: "https://192.0.2.11:6443", ServerVersion: "v1.34.3", Nodes: []clusterstate.Node{
		{Name: "node1", Ready: true, Unschedulable: true, Taints: []string{"node-role.kubernetes.io/control-plane:NoSchedule", "node.kubernetes.io/unschedulable:NoSchedule"}},
		{Name: "node2", Ready: true}, {Name: "node3", Ready: true}}}
	got, r := membershipFindings(t, hosts, st, "cordoned")
	require.Len(t, got, 1, dump(r))
	assert.Equal(t, SeverityWarning, got[0].Severity)
	assert.Equal(t, "1 k8s_cluster host(s) are cordoned (Node spec.unschedulable): node1", got[0].Message)
	assert.Contains(t, got[0].Why, "needs_cordoning")
	st.Nodes[0].Unschedulable = false
	got, _ = membershipFindings(t, hosts, st, "cordoned")
	assert.Empty(t, got)
}

// Trap 7 of the day-2 run: node1, the control plane, added to kube_node
// while it carries kubeadm's taint. kubespray's cluster.yml removed the
// taint ("Kubeadm | Remove taint for control plane node with node role"),
// so the preflight says so, as information.
func TestControlPlaneAddedToKubeNode(t *testing.T) {
	st := &clusterstate.State{Server: "https://192.0.2.11:6443", ServerVersion: "v1.35.4", Nodes: []clusterstate.Node{
		{Name: "node1", Ready: true, Taints: []string{"node-role.kubernetes.io/control-plane:NoSchedule"}},
		{Name: "node2", Ready: true}, {Name: "node3", Ready: true}}}
	got, r := membershipFindings(t, "[kube_control_plane]\nnode1\n[etcd]\nnode1\n[kube_node]\nnode1\nnode2\nnode3\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n", st, "the run removes it")
	require.Len(t, got, 1, dump(r))
	assert.Equal(t, SeverityInfo, got[0].Severity)
	assert.Equal(t, []string{"node1"}, got[0].Hosts)
	assert.Contains(t, got[0].Why, "Kubeadm | Remove taint for control plane node with node role")
}

// Trap 9 on the day-2 machines: a v2.30.0 cluster at Kubernetes 1.33.5,
// the inventory for v2.31.0 (its default 1.35.4). v2.31.0's
// upgrade-cluster.yml stopped at "Kubeadm | Upgrade first control plane
// node" with kubeadm 1.35.4's own words, after cordoning node1.
func TestKubeVersionTwoMinorsAhead(t *testing.T) {
	st := day2State()
	for i := range st.ControlPlane {
		st.ControlPlane[i].Image = strings.Replace(st.ControlPlane[i].Image, "v1.34.3", "v1.33.5", 1)
		st.ControlPlane[i].Version = "v1.33.5"
	}
	for i := range st.Nodes {
		st.Nodes[i].KubeletVersion = "v1.33.5"
	}
	st.ServerVersion, st.KubeadmConfig.KubernetesVersion = "v1.33.5", "v1.33.5"
	st.Etcd.Members[0].Version = "3.5.26"
	r := lintDay2(t, "", st)
	var f Finding
	for _, x := range find(r, "cluster-version", "kube_version") {
		if strings.Contains(x.Message, "2 minors ahead of the control plane") {
			f = x
		}
	}
	require.NotEmpty(t, f.Message, dump(r))
	assert.Equal(t, SeverityError, f.Severity)
	assert.Contains(t, f.Message, `kube_version "1.35.4" (kubespray v2.31.0's default) is 2 minors ahead of the control plane's 1.33.5`)
	assert.Contains(t, f.Why, `"Kubeadm | Upgrade first control plane node"`)
	assert.Contains(t, f.Why, `kubeadm v1.35.4 refuses the cluster, "this version of kubeadm only supports deploying clusters with the control plane version >= 1.34.0. Current version: v1.33.5"`)
	assert.Contains(t, f.Fix, "first to Kubernetes 1.34")
}
