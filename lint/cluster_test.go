package lint

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/lint/live"
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
	for _, st := range []*live.State{
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
	state := func(etcd string) *live.State {
		return &live.State{Server: "https://192.0.2.11:6443", ServerVersion: "v1.34.3",
			Etcd: &live.Etcd{Endpoint: "https://192.0.2.11:2379", Members: []live.Member{
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
