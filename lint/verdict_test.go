package lint

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/internal/testutil"
	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
)

func lintSeries(t *testing.T, series string, extra ...string) *Report {
	t.Helper()
	dir := writeTree(t, map[string]string{"hosts.ini": testutil.ThreeNodeINI})
	inv, err := parser.Load(dir)
	require.NoError(t, err)
	ev, err := parser.ParseExtraVars(extra)
	require.NoError(t, err)
	cat, err := kubespray.Bundled("v2.31.0")
	require.NoError(t, err)
	s, err := AnsibleSeries(series)
	require.NoError(t, err)
	r := Run(Input{Inventory: inv, Extra: ev, Catalogue: cat, AnsibleCore: s})
	checkSeverities(t, r)
	return r
}

// What kubespray v2.31.0 really does with a string boolean under
// ansible-core 2.18 (its pin), from how its conditions read the variable
// (roles/kubernetes-apps/meta/main.yml:24 `when: metrics_server_enabled`,
// roles/kubernetes-apps/metallb/tasks/main.yml:6 `... and not
// kube_proxy_strict_arp`, roles/reset/... `flush_iptables | bool`).
func TestStringAsBoolVerdicts(t *testing.T) {
	f := one(t, lintSeries(t, "2.18.6", "metrics_server_enabled=false"), "string-as-bool", "metrics_server_enabled")
	assert.Equal(t, SeverityError, f.Severity)
	assert.Contains(t, f.Message, `under ansible-core 2.18 it is TRUE although you wrote "false": kubespray acts on it at roles/kubernetes-apps/meta/main.yml:24 (`+"`metrics_server_enabled`)")

	f = one(t, lintSeries(t, "2.18", "metrics_server_enabled=true"), "string-as-bool", "metrics_server_enabled")
	assert.Equal(t, SeverityWarning, f.Severity)
	assert.Contains(t, f.Message, "works under ansible-core 2.18 only because \"true\" is True in Python; ansible-core 2.19 fails kubespray's `metrics_server_enabled` at roles/kubernetes-apps/meta/main.yml:24")

	f = one(t, lintSeries(t, "2.17", "kube_proxy_strict_arp=false"), "string-as-bool", "kube_proxy_strict_arp")
	assert.Equal(t, SeverityError, f.Severity)
	assert.Contains(t, f.Message, "roles/kubernetes-apps/metallb/tasks/main.yml:6")

	f = one(t, lintSeries(t, "2.16", "flush_iptables=false"), "string-as-bool", "flush_iptables")
	assert.Equal(t, SeverityInfo, f.Severity)
	assert.Contains(t, f.Message, "ansible-core 2.16 and 2.19 both read it as false here")

	// helm_enabled: validate_inventory's type check stops the run first.
	f = one(t, lintSeries(t, "2.18", "helm_enabled=false"), "string-as-bool", "helm_enabled")
	assert.Equal(t, SeverityError, f.Severity)
	assert.Contains(t, f.Message, `it is TRUE although you wrote "false"`)
	assert.Contains(t, f.Message, "validate_inventory stops the run on it first (roles/validate_inventory/tasks/main.yml:48)")

	// 2.19 and later (and the default): the condition fails, at kubespray's line.
	for _, s := range []string{"", "2.19", "2.20.1"} {
		f = one(t, lintSeries(t, s, "metrics_server_enabled=false"), "string-as-bool", "metrics_server_enabled")
		assert.Equal(t, SeverityError, f.Severity)
		assert.Contains(t, f.Why, "ansible-core >= 2.19 fails kubespray's `metrics_server_enabled` (roles/kubernetes-apps/meta/main.yml:24)")
	}
	// A real boolean is fine on every series.
	none(t, lintSeries(t, "2.18", `{"metrics_server_enabled": false}`), "string-as-bool", "metrics_server_enabled")
}

func TestAnsibleSeries(t *testing.T) {
	for in, want := range map[string]string{"": "", "2.18": "2.18", "2.18.6": "2.18", "2.20.0rc1": "2.20", "2.16.14": "2.16"} {
		got, err := AnsibleSeries(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"2", "2.15", "2.21", "x.y"} {
		_, err := AnsibleSeries(bad)
		assert.Error(t, err, bad)
	}
}
