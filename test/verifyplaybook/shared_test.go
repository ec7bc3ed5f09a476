//go:build shared

package verifyplaybook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/test/testutil"
)

// The kubespray v2.31.0 node1 fixture's inventory (its README): three
// control-plane hosts, etcd = kube_control_plane, node2 and node3 workers.
// Only node1 is checked (--limit node1); groups['etcd'] still holds all three.
const fixtureInventory = `[kube_control_plane]
node1 ansible_connection=local ansible_python_interpreter="{{ ansible_playbook_python }}" ip=10.10.0.11 etcd_member_name=etcd1
node2 ansible_host=10.10.0.12 ip=10.10.0.12 etcd_member_name=etcd2
node3 ansible_host=10.10.0.13 ip=10.10.0.13 etcd_member_name=etcd3

[etcd:children]
kube_control_plane

[kube_node]
node2
node3

[all:vars]
kube_version=1.35.4
`

// fixtureNode copies the fixture tree to a temp root, adds what the fixture
// leaves out (the /etc/kubernetes/pki link kubespray's preinstall makes and
// the calico interface under /sys/class/net), starts a 3-member etcd with
// the fixture's member certificates and the cluster DNS, and returns the
// extra vars for the role.
func fixtureNode(t *testing.T, now time.Time, etcdUp bool) (root string, extra map[string]any) {
	t.Helper()
	root = t.TempDir()
	must(t, harness.CopyTree(testutil.Shared(t, "fixtures", "node", "root"), root))
	must(t, os.Symlink("/etc/kubernetes/ssl", filepath.Join(root, "etc/kubernetes/pki")))
	for _, ifc := range []string{"eth0", "vxlan.calico"} {
		must(t, os.MkdirAll(filepath.Join(root, "sys/class/net", ifc), 0o755))
	}
	ssl := filepath.Join(t.TempDir(), "ssl")
	must(t, harness.CopyTree(filepath.Join(root, "etc/ssl/etcd/ssl"), ssl))
	members, addr := harness.FixtureEtcdMembers(t, ssl)
	if etcdUp {
		harness.StartEtcd(t, filepath.Join(ssl, "ca.pem"), members)
	}
	d := harness.StartDNS(t, "127.0.0.1", "kubernetes.default.svc.cluster.local", "10.233.0.1", true).Addr
	addr["169.254.25.10:53"], addr["10.233.0.3:53"] = d, d
	return root, map[string]any{
		"layercheck_verify_root":        root,
		"layercheck_verify_become":      false,
		"layercheck_verify_now":         now.Format(time.RFC3339),
		"layercheck_verify_addr_map":    addr,
		"layercheck_verify_net_timeout": 3,
	}
}

func TestVerifyPlaybookFixtureNode(t *testing.T) {
	t.Parallel()
	_, extra := fixtureNode(t, time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC), true)
	// A fresh 3-member cluster may still be electing its leader: retry once.
	var run playbookRun
	for i := 0; i < 2; i++ {
		run = runVerify(t, "", fixtureInventory, extra, "--limit", "node1")
		if run.Err == nil {
			break
		}
		time.Sleep(2 * time.Second)
	}
	if run.Err != nil {
		t.Fatalf("fixture node1: ansible-playbook failed: %v\n%s", run.Err, run.Out)
	}
	facts := run.Facts["node1"]
	if facts == nil {
		t.Fatalf("no facts for node1\n%s", run.Out)
	}
	if bad := failedChecks(facts); len(bad) > 0 {
		t.Fatalf("fixture node1 has failed checks: %v", bad)
	}
	for _, c := range [][2]string{{"etcd", "members"}, {"dns", "query_nodelocaldns"}, {"install", "drift:kube_version"}, {"install", "drift:kube_pods_subnet"}, {"certificates", "family/etcd-script"}} {
		if st := resultStatus(facts, c[0], c[1]); len(st) == 0 || st[0] != "ok" {
			t.Errorf("%s %s: %v", c[0], c[1], st)
		}
	}
	if strings.Contains(run.Out, "node2") && !strings.Contains(run.Out, "node1") {
		t.Errorf("limit ignored")
	}
}

// A year and a day after the fixture was made, kubeadm's one-year
// certificates have expired while make-ssl-etcd.sh's still have 99 years.
func TestVerifyPlaybookFixtureNodeAYearLater(t *testing.T) {
	t.Parallel()
	_, extra := fixtureNode(t, time.Date(2027, 12, 1, 15, 0, 0, 0, time.UTC), true)
	run := runVerify(t, "", fixtureInventory, extra, "--limit", "node1")
	if run.Err == nil {
		t.Fatalf("expired kubeadm certificates passed:\n%s", run.Out)
	}
	for _, w := range []string{"[FAIL] node1 certificates ", "/etc/kubernetes/ssl/apiserver.crt on node1: expired on 2027-11-30T14:22:03Z", "kubeadm certs renew apiserver", "/etc/kubernetes/admin.conf#users[kubernetes-admin]", "layercheck: node1 failed node layer(s) certificates"} {
		if !strings.Contains(run.Out, w) {
			t.Errorf("output lacks %q", w)
		}
	}
	assertReadable(t, run.Out)
	assert.Equal(t, 1, strings.Count(run.Out, "/etc/kubernetes/ssl/apiserver.crt on node1: expired on 2027-11-30T14:22:03Z"), "the expiry said once")
	facts := run.Facts["node1"]
	fam := facts["layers"].(map[string]any)["certificates"].(map[string]any)["facts"].(map[string]any)["families"].(map[string]any)
	if fam["etcd-script"].(map[string]any)["status"] != "ok" || fam["kubeadm"].(map[string]any)["status"] != "fail" {
		t.Errorf("families: %v", fam)
	}
}
