package output_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/internal/app"
	"github.com/layercheck/layercheck/internal/fleet"
	"github.com/layercheck/layercheck/internal/output"
	"github.com/layercheck/layercheck/test/testutil"
	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/node"
)

// goldenFormat compares got with testdata/formats/<name>.
func goldenFormat(t *testing.T, name string, got []byte) {
	t.Helper()
	output.Golden(t, filepath.Join("formats", name), got)
}

// formatsNode is a node report with a failure, a warning, an error, a
// skipped layer and the certificates layer's families.
func formatsNode() *node.Report {
	expiry := time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)
	return &node.Report{Host: "node1", Root: "/", Status: verify.StatusError,
		Summary: verify.Summary{Total: 5, OK: 1, Warn: 1, Failed: 1, Skipped: 1, Errored: 1},
		Layers: map[string]*verify.LayerReport{
			"certificates": {Status: verify.StatusFail, DurationMS: 22, Results: []verify.Result{
				{Layer: "certificates", Check: "certificate:/etc/kubernetes/ssl/apiserver.crt", Status: verify.StatusFail,
					Msg: "/etc/kubernetes/ssl/apiserver.crt on node1: expired on 2026-11-30T14:22:03Z", Remediation: "on node1 run `kubeadm certs renew apiserver` | then restart <it>",
					Expected: "not expired", Actual: map[string]any{"days_left": -1}},
				{Layer: "certificates", Check: "family/kubeadm", Status: verify.StatusWarn, Msg: "soon & \"quoted\""},
			}, Facts: &node.CertificatesFacts{
				Families: map[string]node.FamilyInfo{
					"kubeadm":     {Count: 9, EarliestExpiry: expiry, EarliestPath: "/etc/kubernetes/ssl/apiserver.crt", DaysLeft: -1, Status: verify.StatusFail},
					"etcd-script": {Count: 4, EarliestExpiry: expiry.Add(90 * 24 * time.Hour), EarliestPath: "/etc/ssl/etcd/ssl/ca.pem", DaysLeft: 89, Status: verify.StatusOK},
				},
				Certificates: []node.CertInfo{{Path: "/etc/kubernetes/ssl/apiserver.crt", Family: node.FamilyKubeadm, SubjectCN: "kube-apiserver", IssuerCN: "kubernetes", NotAfter: expiry}},
			}},
			"kubelet": {Status: verify.StatusOK, DurationMS: 3, Results: []verify.Result{{Layer: "kubelet", Check: "cluster_domain", Status: verify.StatusOK, Msg: "cluster.local"}}},
			"etcd":    {Status: verify.StatusError, DurationMS: 30000, Results: []verify.Result{{Layer: "etcd", Check: "run", Status: verify.StatusError, Msg: "timed out after 30s"}}},
			"addons":  {Status: verify.StatusSkipped, Results: []verify.Result{{Layer: "addons", Check: "run", Status: verify.StatusSkipped, Msg: "no addon enabled"}}},
		}}
}

func formatsCluster() *cluster.Report {
	return &cluster.Report{Server: "https://10.10.0.11:6443", ServerVersion: "v1.35.4", Status: verify.StatusFail, Requests: 17,
		Summary: verify.Summary{Total: 3, OK: 1, Failed: 1, Warn: 1},
		Layers: map[string]*verify.LayerReport{
			"nodes": {Status: verify.StatusOK, DurationMS: 20, Results: []verify.Result{{Layer: "nodes", Check: "ready", Status: verify.StatusOK, Msg: "3 nodes Ready"}}},
			"cni": {Status: verify.StatusFail, DurationMS: 5, Results: []verify.Result{
				{Layer: "cni", Check: "ippool_cidr", Status: verify.StatusFail, Msg: "IPPool 10.244.0.0/16 | inventory 10.233.64.0/18", Remediation: "set kube_pods_subnet back"},
				{Layer: "cni", Check: "network_policy", Status: verify.StatusWarn, Msg: "flannel does not enforce NetworkPolicies"}}},
		}}
}

func formatsFleet(withCluster bool) *fleet.Report {
	n := formatsNode()
	r := fleet.NewReport(
		&fleet.HostReport{Host: "node1", Address: "root@10.10.0.11:22", Status: n.Status, Report: n, DurationMS: 1250},
		&fleet.HostReport{Host: "node2", Status: fleet.StatusUnreachable, Msg: "connect to 10.10.0.12:22: connection refused", DurationMS: 10000},
		&fleet.HostReport{Host: "node3-with-a-long-name.example", Status: verify.StatusError, Msg: "sudo: a password is required"},
	)
	if withCluster {
		r.AddCluster(formatsCluster())
	} else {
		r.ClusterSkipped = "no kubeconfig given"
	}
	return r
}

// Every format of every report the CLI writes, byte for byte: the lint
// of the broken sample (text, json, sarif, junit), a node and a cluster
// report (text, json, junit, markdown, prometheus), a fleet run with and
// without the cluster (text, json, junit, markdown).
func TestFormatsGolden(t *testing.T) {
	broken := filepath.Join("..", "..", "inventory-samples", "broken")
	for _, f := range []string{"text", "json", "sarif", "junit"} {
		var out, errOut bytes.Buffer
		err := app.Run(context.Background(), []string{"lint", "-i", broken, "--format", f}, app.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		require.Equal(t, 1, app.ExitCode(err), "%v: %s", err, errOut.String())
		// The JSON and SARIF say where the locations are relative to, an
		// absolute path: the checkout's is written as <repo>.
		goldenFormat(t, "lint."+f, bytes.ReplaceAll(out.Bytes(), []byte(testutil.RepoRoot()), []byte("<repo>")))
	}
	run := output.Run{Start: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC), Duration: 1500 * time.Millisecond}
	for _, f := range output.CheckFormats {
		var b bytes.Buffer
		require.NoError(t, output.WriteCheck(&b, f, output.Check{Node: formatsNode(), Title: "layercheck node", Run: run}))
		goldenFormat(t, "node."+f, b.Bytes())
		b.Reset()
		require.NoError(t, output.WriteCheck(&b, f, output.Check{Cluster: formatsCluster(), Title: "layercheck cluster", Run: run}))
		goldenFormat(t, "cluster."+f, b.Bytes())
	}
	for _, f := range output.FleetFormats {
		for name, withCluster := range map[string]bool{"fleet": true, "fleet-skipped": false} {
			var b bytes.Buffer
			require.NoError(t, output.WriteFleet(&b, f, formatsFleet(withCluster)))
			goldenFormat(t, name+"."+f, b.Bytes())
		}
	}
}
