package output

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/node"
)

// render writes what reg gathers with Write, lints it as promtool does,
// parses it back with expfmt and returns each family's series as
// `{labels} value` lines, sorted.
func render(t *testing.T, reg interface {
	Gather() ([]*dto.MetricFamily, error)
}) map[string][]string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, writeMetrics(&buf, reg))
	problems, err := promlint.New(bytes.NewReader(buf.Bytes())).Lint()
	require.NoError(t, err)
	assert.Empty(t, problems)
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err, buf.String())
	out := map[string][]string{}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			out[name] = append(out[name], fmt.Sprintf("{%s} %g", strings.Join(ls, ","), m.GetGauge().GetValue()))
		}
		sort.Strings(out[name])
	}
	return out
}

// What a node sees when etcd does not answer and a DNS tier times out:
// unhealthy endpoints, no leader, no members, the tier down without a
// latency; a layer that never ran its DNS queries sends no tier series.
func TestNodeMetricsBroken(t *testing.T) {
	etcd := &verify.LayerReport{Status: verify.StatusFail, DurationMS: 1500,
		Results: []verify.Result{{Check: "leader", Status: verify.StatusFail}},
		Facts: &node.EtcdFacts{Endpoints: []node.EtcdEndpointFacts{
			{Endpoint: "https://10.10.0.11:2379", Error: "connection refused"},
			{Endpoint: "https://10.10.0.12:2379", Healthy: true, MemberID: "8e9e05c52164694d", Alarms: []string{"NOSPACE"}},
			{Endpoint: "https://10.10.0.11:2379", Error: "listed twice"},
		}, Members: []node.EtcdMemberFacts{{ID: "8e9e05c52164694d", Name: "etcd2"}}}}
	dns := &verify.LayerReport{Status: verify.StatusFail,
		Results: []verify.Result{{Check: "query_nodelocaldns", Status: verify.StatusOK}, {Check: "query_coredns", Status: verify.StatusFail}},
		Facts: &node.DNSFacts{LoopHazard: node.DNSLoopLoopback, Tiers: []node.DNSTierFacts{
			{Tier: "nodelocaldns", Server: "169.254.25.10:53", LatencyMS: 2},
			{Tier: "coredns", Server: "10.233.0.3:53", Error: "i/o timeout", TimedOut: true},
		}}}
	start := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	rep := &node.Report{Layers: map[string]*verify.LayerReport{"etcd": etcd, "dns": dns}}
	reg, err := newRegistry(&collector{Scope: scopeNode, Layers: rep.Layers, Run: Run{Start: start, Duration: 2500 * time.Millisecond}})
	require.NoError(t, err)
	got := render(t, reg)

	assert.Equal(t, []string{`{endpoint="https://10.10.0.11:2379",member=""} 0`, `{endpoint="https://10.10.0.12:2379",member="etcd2"} 0`}, got["layercheck_etcd_endpoint_healthy"])
	assert.Equal(t, []string{`{} 0`}, got["layercheck_etcd_has_leader"])
	assert.Equal(t, []string{`{} 1`}, got["layercheck_etcd_members"])
	assert.Equal(t, []string{`{server="10.233.0.3:53",tier="coredns"} 0`, `{server="169.254.25.10:53",tier="nodelocaldns"} 1`}, got["layercheck_dns_tier_up"])
	assert.Equal(t, []string{`{server="169.254.25.10:53",tier="nodelocaldns"} 0.002`}, got["layercheck_dns_tier_latency_seconds"])
	assert.Equal(t, []string{`{kind="loopback"} 1`, `{kind="partial"} 0`, `{kind="total"} 0`}, got["layercheck_dns_resolver_loop_hazard"])
	assert.Contains(t, got["layercheck_layer_status"], `{layer="etcd",scope="node",status="fail"} 1`)
	assert.Contains(t, got["layercheck_layer_duration_seconds"], `{layer="etcd",scope="node"} 1.5`)
	assert.Equal(t, []string{fmt.Sprintf(`{scope="node"} %g`, float64(start.Unix()))}, got["layercheck_last_run_timestamp_seconds"])
	assert.Equal(t, []string{`{scope="node"} 2.5`}, got["layercheck_last_run_duration_seconds"])
	assert.NotContains(t, got, "layercheck_certificate_not_after_timestamp_seconds")

	// A host outside the etcd group: no etcd series at all; a dns layer
	// that stopped early (dns_mode none): no tiers, no loop verdict.
	rep = &node.Report{Layers: map[string]*verify.LayerReport{
		"etcd": {Status: verify.StatusSkipped, Facts: &node.EtcdFacts{}},
		"dns":  {Status: verify.StatusWarn, Facts: &node.DNSFacts{}},
	}}
	reg, err = newRegistry(&collector{Scope: scopeNode, Layers: rep.Layers, Run: Run{Start: start}})
	require.NoError(t, err)
	got = render(t, reg)
	for _, name := range []string{"layercheck_etcd_endpoint_healthy", "layercheck_etcd_has_leader", "layercheck_dns_tier_up", "layercheck_dns_resolver_loop_hazard"} {
		assert.NotContains(t, got, name)
	}
	assert.Contains(t, got["layercheck_layer_status"], `{layer="etcd",scope="node",status="skipped"} 1`)
}

func TestClusterMetrics(t *testing.T) {
	layers := map[string]*verify.LayerReport{
		"nodes": {Status: verify.StatusOK, DurationMS: 20},
		"cni":   {Status: verify.StatusFail, DurationMS: 5},
		"probe": {Status: verify.StatusError},
	}
	reg, err := newRegistry(&collector{Scope: scopeCluster, Layers: layers, Run: Run{Start: time.Unix(1796287659, 0), Duration: time.Second}})
	require.NoError(t, err)
	got := render(t, reg)
	assert.Len(t, got["layercheck_layer_status"], 3*len(Statuses))
	assert.Contains(t, got["layercheck_layer_status"], `{layer="cni",scope="cluster",status="fail"} 1`)
	assert.Contains(t, got["layercheck_layer_status"], `{layer="cni",scope="cluster",status="ok"} 0`)
	assert.Contains(t, got["layercheck_layer_status"], `{layer="probe",scope="cluster",status="error"} 1`)
	assert.Equal(t, []string{`{scope="cluster"} 1.796287659e+09`}, got["layercheck_last_run_timestamp_seconds"])
	assert.Len(t, got, 4, "only the run's families for a cluster")
}

// exporter is a layer's facts of a kind this package does not know.
type exporter []verify.Sample

func (e exporter) Metrics(_ *verify.LayerReport, send func(verify.Sample)) {
	for _, s := range e {
		send(s)
	}
}

// Any layer's facts that export series get them written, whatever the
// layer; a sample that does not fit its series fails the writing with the
// reason, never a panic.
func TestCollectorWalksEveryExporter(t *testing.T) {
	series := &verify.Series{Name: "layercheck_widgets", Help: "Widgets a layer counted.", Labels: []string{"kind"}}
	layers := map[string]*verify.LayerReport{"widget": {Status: verify.StatusOK,
		Facts: exporter{{Series: series, Value: 3, Labels: []string{"round"}}}}}
	reg, err := newRegistry(&collector{Scope: scopeNode, Layers: layers})
	require.NoError(t, err)
	assert.Equal(t, []string{`{kind="round"} 3`}, render(t, reg)["layercheck_widgets"])

	layers["widget"].Facts = exporter{{Series: series, Value: 3}}
	reg, err = newRegistry(&collector{Scope: scopeNode, Layers: layers})
	require.NoError(t, err)
	var buf bytes.Buffer
	assert.ErrorContains(t, writeMetrics(&buf, reg), "inconsistent label cardinality")
}
