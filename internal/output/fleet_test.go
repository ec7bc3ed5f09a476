package output

import (
	"bytes"
	"encoding/xml"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/internal/fleet"
	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/node"
)

func sampleFleet() *fleet.Report {
	node := &node.Report{Host: "node1", Status: verify.StatusFail, Layers: map[string]*verify.LayerReport{
		"certificates": {Status: verify.StatusFail, Results: []verify.Result{
			{Layer: "certificates", Check: "certificate:/etc/kubernetes/ssl/apiserver.crt", Status: verify.StatusFail, Msg: "expired", Remediation: "kubeadm certs renew apiserver"},
			{Layer: "certificates", Check: "family/kubeadm", Status: verify.StatusWarn, Msg: "soon"},
		}},
		"addons": {Status: verify.StatusSkipped, Results: []verify.Result{{Layer: "addons", Check: "run", Status: verify.StatusSkipped, Msg: "n/a"}}},
	}}
	r := fleet.NewReport(
		&fleet.HostReport{Host: "node1", Status: node.Status, Report: node},
		&fleet.HostReport{Host: "node2", Status: fleet.StatusUnreachable, Msg: "connect to 10.0.0.2:22: connection refused"},
	)
	r.AddCluster(&cluster.Report{Server: "https://10.0.0.1:6443", Status: verify.StatusOK, Layers: map[string]*verify.LayerReport{
		"nodes": {Status: verify.StatusOK, Results: []verify.Result{{Layer: "nodes", Check: "ready", Status: verify.StatusOK, Msg: "3 nodes Ready"}}},
	}})
	return r
}

func TestFleetJUnit(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, fleetJUnit(&b, sampleFleet()))
	var s struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Errors   int    `xml:"errors,attr"`
			Skipped  int    `xml:"skipped,attr"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(b.Bytes(), &s), b.String())
	require.Len(t, s.Suites, 3)
	assert.Equal(t, []any{"node1", 3, 1, 0, 1}, []any{s.Suites[0].Name, s.Suites[0].Tests, s.Suites[0].Failures, s.Suites[0].Errors, s.Suites[0].Skipped})
	assert.Equal(t, []any{"node2", 1, 1}, []any{s.Suites[1].Name, s.Suites[1].Tests, s.Suites[1].Errors})
	assert.Equal(t, []any{"cluster", 1, 0}, []any{s.Suites[2].Name, s.Suites[2].Tests, s.Suites[2].Failures})
	assert.Equal(t, []int{5, 1, 1}, []int{s.Tests, s.Failures, s.Errors})
	assert.Contains(t, b.String(), "fix: kubeadm certs renew apiserver")
	assert.Contains(t, b.String(), "WARN: soon")
}

func TestFleetTextAndMarkdown(t *testing.T) {
	r := sampleFleet()
	assert.Equal(t, verify.StatusError, r.Status)
	var b bytes.Buffer
	fleetText(&b, r)
	out := b.String()
	assert.Regexp(t, `node1\s+fail\s+skipped\s+FAIL\n`, out)
	assert.Contains(t, out, "fatal: [node2]: UNREACHABLE! => connect to 10.0.0.2:22: connection refused")
	assert.Contains(t, out, "[FAIL] node1 certificates certificate:/etc/kubernetes/ssl/apiserver.crt: expired\n    fix: kubeadm certs renew apiserver")
	assert.Contains(t, out, "cluster https://10.0.0.1:6443: OK")
	assert.Contains(t, out, "2 hosts: 0 ok, 0 warn, 1 failed, 1 unreachable: ERROR")
	b.Reset()
	fleetMarkdown(&b, r)
	md := b.String()
	assert.Contains(t, md, "## layercheck verify: ERROR")
	assert.Contains(t, md, "| node2 | - | - | **UNREACHABLE** |")
	assert.Contains(t, md, "- **node1** `certificates` certificate:/etc/kubernetes/ssl/apiserver.crt (fail): expired\n  - fix: kubeadm certs renew apiserver")
	assert.EqualError(t, WriteFleet(&b, "sarif", r), `unknown format "sarif" (want text, json, junit, markdown)`)
}
