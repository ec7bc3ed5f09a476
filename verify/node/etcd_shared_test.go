//go:build shared

package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/test/testutil"
	"github.com/layercheck/layercheck/verify"
)

// etcdCopyFixture copies files of the kubespray v2.31.0 node1 fixture tree
// (../shared/fixtures/node/root) into a fresh node root.
func etcdCopyFixture(t *testing.T, rels ...string) string {
	t.Helper()
	src := testutil.Shared(t, "fixtures", "node", "root")
	root := t.TempDir()
	for _, rel := range rels {
		dst := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		testutil.CopyTree(t, filepath.Join(src, rel), dst)
	}
	return root
}

// TestEtcdLayerFixture runs a real three-member etcd cluster on loopback
// with the fixture's member certificates (member-node1..3, made by
// kubespray's make-ssl-etcd.sh; their SANs include 127.0.0.1) and checks
// node1 with the fixture's own /etc/etcd.env and certificates. The fixture
// addresses 10.10.0.11-13 are mapped to the loopback ports through
// Env.AddrMap.
func TestEtcdLayerFixture(t *testing.T) {
	root := etcdCopyFixture(t, "etc/etcd.env", "etc/ssl/etcd/ssl")
	ssl := filepath.Join(root, "etc/ssl/etcd/ssl")
	members, addr := harness.FixtureEtcdMembers(t, ssl)
	stop := harness.StartEtcd(t, filepath.Join(ssl, "ca.pem"), members)

	env := &Env{
		FS: verify.FS{Root: root}, Host: "node1", Now: time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC),
		NetTimeout: 3 * time.Second, LayerTimeout: 30 * time.Second,
		Options: Options{Groups: []string{"kube_control_plane", "etcd", "k8s_cluster"}, EtcdMembers: []string{"node1", "node2", "node3"},
			EtcdCertDir: "/etc/ssl/etcd/ssl", EtcdDeploymentType: "host"},
		AddrMap: addr, Systemd: etcdRunning,
	}
	// A fresh 3-member cluster may still be electing.
	var res []verify.Result
	var facts any
	deadline := time.Now().Add(10 * time.Second)
	for {
		var err error
		res, facts, err = etcdLayer{}.Check(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := etcdWorst(t, res, "leader"); st == verify.StatusOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, r := range res {
		if r.Status != verify.StatusOK {
			t.Errorf("[%s] %s: %s", r.Status, r.Check, r.Msg)
		}
	}
	f := facts.(*EtcdFacts)
	if len(f.Members) != 3 || f.MemberName != "etcd1" || f.Env.RenderedFor != "3.6.10" || f.Certificates["member"].SubjectCN != "etcd-member-node1" {
		t.Errorf("facts: members %+v name %q rendered %q member cert %+v", f.Members, f.MemberName, f.Env.RenderedFor, f.Certificates["member"])
	}

	stop()
	env.NetTimeout = time.Second
	start := time.Now()
	res, _, err := etcdLayer{}.Check(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > env.NetTimeout+2*time.Second {
		t.Errorf("layer took %s with NetTimeout %s", el, env.NetTimeout)
	}
	st, msg := etcdWorst(t, res, "endpoint_status")
	if st != verify.StatusFail || !strings.Contains(msg, "etcd endpoint https://10.10.0.11:2379") || !strings.Contains(msg, "etcd endpoint https://127.0.0.1:2379") {
		t.Errorf("stopped cluster: [%s] %s", st, msg)
	}
}
