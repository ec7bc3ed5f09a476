// Package alertrules tests the Prometheus alerting rules the collection
// ships (monitoring/layercheck.rules.yml and the same groups as a
// PrometheusRule in monitoring/prometheusrule.yaml) with promtool, built
// from github.com/prometheus/prometheus by test/promharness (`make
// prom-harness`, which `make test` runs): `promtool check rules`,
// `promtool test rules` on monitoring/layercheck.rules_test.yml (each alert
// firing and not firing), and the real exposition output of `layercheck
// node` for a node whose etcd certificate is due in 20 days fed to
// `promtool test rules`, where the etcd certificate alert must fire.
package alertrules

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/layercheck/layercheck/internal/app"
	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/test/testutil"
)

// promtool returns the promtool test/promharness built, failing the test
// (never skipping it) when it is missing.
func promtool(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(testutil.RepoRoot(), "test", "promharness")
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/prometheus/prometheus")
	cmd.Dir = dir
	v, err := cmd.Output()
	require.NoError(t, err, "go list -m in test/promharness")
	bin := filepath.Join(testutil.RepoRoot(), ".cache", "prom", strings.TrimSpace(string(v)), "promtool")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("promtool not built: run `make prom-harness` (test/promharness/build.sh; `make test` runs it): %v", err)
	}
	return bin
}

func monitoring(name string) string {
	return filepath.Join(testutil.RepoRoot(), "monitoring", name)
}

// runPromtool runs promtool with args and returns its output and exit code.
func runPromtool(t *testing.T, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool(t), args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		require.True(t, ok, "promtool %v: %v\n%s", args, err, out)
		return string(out), ee.ExitCode()
	}
	return string(out), 0
}

func TestCheckRules(t *testing.T) {
	out, code := runPromtool(t, "check", "rules", monitoring("layercheck.rules.yml"))
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "SUCCESS: 11 rules found")
}

// Every alert fires where the test file says and nowhere else; a copy of
// the test file that expects one alert less fails, so the test can fail.
func TestRulesUnitTests(t *testing.T) {
	out, code := runPromtool(t, "test", "rules", monitoring("layercheck.rules_test.yml"))
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "SUCCESS")

	data, err := os.ReadFile(monitoring("layercheck.rules_test.yml"))
	require.NoError(t, err)
	var tf map[string]any
	require.NoError(t, yaml.Unmarshal(data, &tf))
	tf["rule_files"] = []string{monitoring("layercheck.rules.yml")}
	alerts := tf["tests"].([]any)[1].(map[string]any)["alert_rule_test"].([]any)
	last := alerts[len(alerts)-1].(map[string]any)
	require.Equal(t, "LayercheckEtcdNoLeader", last["alertname"])
	last["exp_alerts"] = []any{}
	broken, err := yaml.Marshal(tf)
	require.NoError(t, err)
	f := filepath.Join(t.TempDir(), "broken_test.yml")
	require.NoError(t, os.WriteFile(f, broken, 0o644))
	out, code = runPromtool(t, "test", "rules", f)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "LayercheckEtcdNoLeader")
}

// The PrometheusRule's spec.groups are the rules file's groups.
func TestPrometheusRuleMatchesRulesFile(t *testing.T) {
	var rules, pr map[string]any
	for f, v := range map[string]*map[string]any{"layercheck.rules.yml": &rules, "prometheusrule.yaml": &pr} {
		data, err := os.ReadFile(monitoring(f))
		require.NoError(t, err)
		require.NoError(t, yaml.Unmarshal(data, v), f)
	}
	assert.Equal(t, "monitoring.coreos.com/v1", pr["apiVersion"])
	assert.Equal(t, "PrometheusRule", pr["kind"])
	spec, ok := pr["spec"].(map[string]any)
	require.True(t, ok, "prometheusrule.yaml has no spec")
	assert.Equal(t, rules["groups"], spec["groups"], "prometheusrule.yaml spec.groups differs from layercheck.rules.yml groups")
}

// Acceptance: a node whose etcd member certificate is due in 20 days. The
// exposition `layercheck node --format prometheus` writes is parsed back
// and fed to `promtool test rules` as input series (with the instance and
// job labels a scrape adds); timestamps are shifted by the moment the node
// was checked (--now), which is time 0 in promtool's test. The etcd
// certificate alert fires for that certificate after its 15 minutes, and
// the kubeadm alert, whose certificates have a year left, does not.
func TestEtcdCertificateDueIn20DaysFires(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	made := now.Add(-24 * time.Hour)
	tr, err := harness.Build(t.TempDir(), harness.Config{Now: made, Hosts: []string{"node1"}, IPs: []string{"10.10.0.11"}})
	require.NoError(t, err)
	_, member, _ := tr.EtcdFiles()
	due := now.Add(20 * 24 * time.Hour)
	require.NoError(t, tr.ReissueLeaf(member, made, due, nil))

	var stdout, stderr bytes.Buffer
	err = app.Run(context.Background(), []string{"node", "--root", tr.Root, "--host", "node1", "--now", now.Format(time.RFC3339),
		"--group", "etcd", "--group", "kube_control_plane", "--group", "kube_node", "--etcd-member", "node1",
		"--skip", "etcd", "--skip", "dns", "--format", "prometheus"},
		app.Streams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr})
	require.Contains(t, []int{0, 1}, app.ExitCode(err), "%v: %s", err, stderr.String())
	exposition := stdout.String()
	require.Contains(t, exposition, fmt.Sprintf(`path=%q,renewer="make-ssl-etcd.sh"`, member))

	series, value := testutil.PromInputSeries(t, exposition, now)
	assert.Equal(t, float64(20*24*3600), value[member], "the member certificate's not_after, shifted")

	expLabels := map[string]string{
		"severity": "warning", "instance": "node1:9100", "job": "node", "family": "etcd", "path": member,
		"subject_cn": "etcd-member-node1", "issuer_cn": "etcd-ca", "renewer": "make-ssl-etcd.sh",
	}
	expAnnotations := map[string]string{
		"summary": "etcd certificate " + member + " on node1:9100 expires in 19d 23h 30m 0s",
		"description": "The etcd certificate " + member + " (CN etcd-member-node1, issued by etcd-ca) on node1:9100 expires in 30 days or less. " +
			"Its renewer is make-ssl-etcd.sh: kubespray makes it, not kubeadm, so `kubeadm certs renew` and `kubeadm certs check-expiration` never see it.",
		"runbook": ruleAnnotation(t, "LayercheckEtcdCertificateExpiring", "runbook"),
	}
	test := map[string]any{
		"rule_files":          []string{monitoring("layercheck.rules.yml")},
		"evaluation_interval": "1m",
		"tests": []any{map[string]any{
			"name":         "layercheck node output, etcd certificate due in 20 days",
			"interval":     "1m",
			"input_series": series,
			"alert_rule_test": []any{
				map[string]any{"eval_time": "10m", "alertname": "LayercheckEtcdCertificateExpiring", "exp_alerts": []any{}},
				map[string]any{"eval_time": "30m", "alertname": "LayercheckEtcdCertificateExpiring", "exp_alerts": []any{
					map[string]any{"exp_labels": expLabels, "exp_annotations": expAnnotations},
				}},
				map[string]any{"eval_time": "30m", "alertname": "LayercheckKubeadmCertificateExpiring", "exp_alerts": []any{}},
				map[string]any{"eval_time": "30m", "alertname": "LayercheckNoRecentRun", "exp_alerts": []any{}},
			},
		}},
	}
	data, err := yaml.Marshal(test)
	require.NoError(t, err)
	f := filepath.Join(t.TempDir(), "node_test.yml")
	require.NoError(t, os.WriteFile(f, data, 0o644))
	out, code := runPromtool(t, "test", "rules", f)
	require.Equal(t, 0, code, "%s\n%s", out, data)
	assert.Contains(t, out, "SUCCESS")
}

// ruleAnnotation is an annotation of an alert in the rules file (one that
// holds no template).
func ruleAnnotation(t *testing.T, alert, key string) string {
	t.Helper()
	data, err := os.ReadFile(monitoring("layercheck.rules.yml"))
	require.NoError(t, err)
	var rf struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	require.NoError(t, yaml.Unmarshal(data, &rf))
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == alert {
				require.NotContains(t, r.Annotations[key], "{{")
				return r.Annotations[key]
			}
		}
	}
	t.Fatalf("no alert %s in layercheck.rules.yml", alert)
	return ""
}
