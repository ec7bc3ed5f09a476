package app

import (
	"fmt"
	"os"
	"path/filepath"
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

	"github.com/layercheck/layercheck/test/harness"
)

// parseExposition reads the text exposition format back with expfmt and
// lints it with promtool's metric lint (promlint): names, units, help.
func parseExposition(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	require.NoError(t, err, text)
	problems, err := promlint.New(strings.NewReader(text)).Lint()
	require.NoError(t, err)
	assert.Empty(t, problems, "promlint")
	for name, mf := range mfs {
		assert.True(t, strings.HasPrefix(name, "layercheck_"), name)
		assert.NotEmpty(t, mf.GetHelp(), name)
	}
	return mfs
}

// series renders a family's series as `{k="v",...} value` lines, sorted.
func series(mf *dto.MetricFamily) []string {
	if mf == nil {
		return nil
	}
	var out []string
	for _, m := range mf.GetMetric() {
		var ls []string
		for _, l := range m.GetLabel() {
			ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
		}
		out = append(out, fmt.Sprintf("{%s} %g", strings.Join(ls, ","), m.GetGauge().GetValue()))
	}
	sort.Strings(out)
	return out
}

// `layercheck node --format prometheus` on a generated node whose etcd and
// DNS run on loopback: every family parses back, passes promlint, and says
// what the layers found; --textfile writes the same to DIR/layercheck.prom.
func TestNodePrometheus(t *testing.T) {
	made := time.Date(2026, 11, 30, 14, 22, 6, 0, time.UTC)
	tr, err := harness.Build(t.TempDir(), harness.Config{Now: made, Hosts: []string{"node1"}, IPs: []string{"10.10.0.11"}})
	require.NoError(t, err)
	addr := harness.StartServices(t, tr, true)
	now := made.Add(time.Hour)
	args := []string{"--root", tr.Root, "--host", "node1", "--now", now.Format(time.RFC3339),
		"--group", "kube_control_plane", "--group", "etcd", "--group", "kube_node", "--etcd-member", "node1",
		"--net-timeout", "10s", "--vars", `{"kube_version": "1.35.4"}`}
	for from, to := range addr {
		args = append(args, "--addr-map", from+"="+to)
	}
	dir := t.TempDir()
	out, errOut, code := runNodeCLI(t, append(args, "--format", "prometheus", "--textfile", dir)...)
	require.Contains(t, []int{0, 1}, code, errOut)
	mfs := parseExposition(t, out)

	file, err := os.ReadFile(filepath.Join(dir, "layercheck.prom"))
	require.NoError(t, err)
	fi, err := os.Stat(filepath.Join(dir, "layercheck.prom"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "node_exporter runs as its own user")
	fromFile := parseExposition(t, string(file))
	assert.Equal(t, len(mfs), len(fromFile))
	left, _ := os.ReadDir(dir)
	assert.Len(t, left, 1, "no temporary file is left beside layercheck.prom")

	// Certificates of every family, with their renewer.
	certs := series(mfs["layercheck_certificate_not_after_timestamp_seconds"])
	etcdEnd := made.Add(36500 * 24 * time.Hour).Unix()
	kubeadmEnd := made.Add(8760 * time.Hour).Unix()
	assert.Contains(t, certs, fmt.Sprintf(`{family="etcd",issuer_cn="etcd-ca",path="/etc/ssl/etcd/ssl/member-node1.pem",renewer="make-ssl-etcd.sh",subject_cn="etcd-member-node1"} %g`, float64(etcdEnd)))
	assert.Contains(t, certs, fmt.Sprintf(`{family="trust_store_copy",issuer_cn="etcd-ca",path="/usr/local/share/ca-certificates/etcd-ca.crt",renewer="make-ssl-etcd.sh",subject_cn="etcd-ca"} %g`, float64(etcdEnd)))
	var kubeadm, kubelet int
	for _, s := range certs {
		if strings.Contains(s, `family="kubeadm"`) && strings.Contains(s, `renewer="kubeadm certs renew"`) {
			kubeadm++
		}
		if strings.Contains(s, `family="kubelet"`) && strings.Contains(s, `renewer="kubelet rotation"`) {
			kubelet++
		}
	}
	assert.Positive(t, kubeadm, certs)
	assert.Positive(t, kubelet, certs)
	assert.Contains(t, strings.Join(certs, "\n"), fmt.Sprintf(`path="/etc/kubernetes/ssl/apiserver.crt",renewer="kubeadm certs renew",subject_cn="kube-apiserver"} %g`, float64(kubeadmEnd)))

	// etcd and DNS as this node sees them.
	assert.Equal(t, []string{`{endpoint="https://10.10.0.11:2379",member="etcd1"} 1`, `{endpoint="https://127.0.0.1:2379",member="etcd1"} 1`},
		series(mfs["layercheck_etcd_endpoint_healthy"]))
	assert.Equal(t, []string{`{} 1`}, series(mfs["layercheck_etcd_has_leader"]))
	assert.Equal(t, []string{`{} 1`}, series(mfs["layercheck_etcd_members"]))
	assert.Equal(t, []string{`{server="10.233.0.3:53",tier="coredns"} 1`, `{server="169.254.25.10:53",tier="nodelocaldns"} 1`},
		series(mfs["layercheck_dns_tier_up"]))
	assert.Len(t, series(mfs["layercheck_dns_tier_latency_seconds"]), 2)
	// The generated node is kubespray's default: nodelocaldns beside a real
	// resolver and no upstream_dns_servers, a partial loop.
	assert.Equal(t, []string{`{kind="loopback"} 0`, `{kind="partial"} 1`, `{kind="total"} 0`}, series(mfs["layercheck_dns_resolver_loop_hazard"]))

	// Each layer's status as 0/1 gauges, and the run.
	st := series(mfs["layercheck_layer_status"])
	assert.Len(t, st, 5*7, st)
	assert.Contains(t, st, `{layer="certificates",scope="node",status="ok"} 1`)
	assert.Contains(t, st, `{layer="certificates",scope="node",status="fail"} 0`)
	// No systemd under --root: etcd.service cannot be read, a warning.
	assert.Contains(t, st, `{layer="etcd",scope="node",status="warn"} 1`)
	last := mfs["layercheck_last_run_timestamp_seconds"].GetMetric()
	require.Len(t, last, 1)
	assert.InDelta(t, float64(time.Now().Unix()), last[0].GetGauge().GetValue(), 300)
	assert.Len(t, series(mfs["layercheck_last_run_duration_seconds"]), 1)

	_, errOut, code = runNodeCLI(t, append(args, "--textfile", filepath.Join(dir, "missing"))...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--textfile "+filepath.Join(dir, "missing"))
}
