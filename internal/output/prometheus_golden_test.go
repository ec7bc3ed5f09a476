package output

import (
	"bytes"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/node"
)

// goldenMetrics compares the text exposition of what c collects with
// testdata/<name>.prom.
func goldenMetrics(t *testing.T, name string, c prometheus.Collector) {
	t.Helper()
	reg, err := newRegistry(c)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, writeMetrics(&buf, reg))
	golden(t, name+".prom", buf.Bytes())
}

// Every family a node run writes, from layers with all their facts: each
// certificate family and its renewer, a trust store copy, a certificate
// and a copy without not_after (left out), etcd endpoints (one listed
// twice, one with an alarm) and members, DNS tiers up, down and timed out,
// the loop hazard, a layer without facts of its own.
func TestNodeExpositionGolden(t *testing.T) {
	notAfter := time.Date(2027, 11, 30, 14, 22, 3, 0, time.UTC)
	certs := &verify.LayerReport{Status: verify.StatusWarn, DurationMS: 22, Facts: &node.CertificatesFacts{
		Certificates: []node.CertInfo{
			{Path: "/etc/kubernetes/ssl/apiserver.crt", Family: node.FamilyKubeadm, SubjectCN: "kube-apiserver", IssuerCN: "kubernetes", NotAfter: notAfter},
			{Path: "/etc/ssl/etcd/ssl/member-node1.pem", Family: node.FamilyEtcdScript, SubjectCN: "etcd-member-node1", IssuerCN: "etcd-ca", NotAfter: notAfter.Add(-20 * 24 * time.Hour)},
			{Path: "/var/lib/kubelet/pki/kubelet-client-current.pem", Family: node.FamilyKubelet, SubjectCN: "system:node:node1", IssuerCN: "kubernetes", NotAfter: notAfter.Add(time.Hour)},
			{Path: "/etc/other/odd.crt", Family: "other", SubjectCN: "odd \"quoted\"\\", IssuerCN: "odd-ca", NotAfter: notAfter.Add(2 * time.Hour)},
			{Path: "/etc/kubernetes/ssl/unreadable.crt", Family: node.FamilyKubeadm},
		},
		TrustStoreCopies: []node.CertCopy{
			{Path: "/usr/local/share/ca-certificates/etcd-ca.crt", Source: "/etc/ssl/etcd/ssl/ca.pem", SubjectCN: "etcd-ca", IssuerCN: "etcd-ca", NotAfter: notAfter.Add(3 * time.Hour)},
			{Path: "/etc/pki/ca-trust/source/anchors/etcd-ca.crt", Source: "/etc/ssl/etcd/ssl/ca.pem"},
		},
	}}
	etcd := &verify.LayerReport{Status: verify.StatusWarn, DurationMS: 1500,
		Results: []verify.Result{{Check: "leader", Status: verify.StatusOK}},
		Facts: &node.EtcdFacts{Endpoints: []node.EtcdEndpointFacts{
			{Endpoint: "https://10.10.0.11:2379", Healthy: true, MemberID: "a1"},
			{Endpoint: "https://10.10.0.12:2379", Healthy: true, MemberID: "b2", Alarms: []string{"NOSPACE"}},
			{Endpoint: "https://10.10.0.13:2379", Error: "connection refused"},
			{Endpoint: "https://10.10.0.11:2379", Error: "listed twice"},
		}, Members: []node.EtcdMemberFacts{{ID: "a1", Name: "etcd1"}, {ID: "b2", Name: "etcd2"}, {ID: "c3", Name: "etcd3"}}}}
	dns := &verify.LayerReport{Status: verify.StatusFail, DurationMS: 7,
		Results: []verify.Result{{Check: "query_nodelocaldns", Status: verify.StatusOK}, {Check: "query_coredns", Status: verify.StatusFail},
			{Check: "query_manual", Status: verify.StatusOK}},
		Facts: &node.DNSFacts{LoopHazard: node.DNSLoopPartial, Tiers: []node.DNSTierFacts{
			{Tier: "nodelocaldns", Server: "169.254.25.10:53", LatencyMS: 1.25},
			{Tier: "coredns", Server: "10.233.0.3:53", Error: "i/o timeout", TimedOut: true},
			{Tier: "manual", Server: "10.0.0.53:53", LatencyMS: 0},
		}}}
	rep := &node.Report{Layers: map[string]*verify.LayerReport{"certificates": certs, "etcd": etcd, "dns": dns,
		"kubelet": {Status: verify.StatusOK, DurationMS: 3}, "addons": {Status: verify.StatusSkipped}}}
	goldenMetrics(t, "node", &collector{Scope: scopeNode, Layers: rep.Layers, Run: Run{Start: time.Date(2026, 12, 3, 9, 0, 0, 123456789, time.UTC), Duration: 2500 * time.Millisecond}})
}

func TestClusterExpositionGolden(t *testing.T) {
	layers := map[string]*verify.LayerReport{
		"nodes": {Status: verify.StatusOK, DurationMS: 20},
		"cni":   {Status: verify.StatusFail, DurationMS: 5},
		"probe": {Status: verify.StatusError},
	}
	goldenMetrics(t, "cluster", &collector{Scope: scopeCluster, Layers: layers, Run: Run{Start: time.Unix(1796287659, 0), Duration: time.Second}})
}
