package lint

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/testutil"
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
	assert.Contains(t, f.Message, "works under ansible-core 2.18 only because \"true\" is True in Python; ansible-core 2.19 and later fail kubespray's `metrics_server_enabled` at roles/kubernetes-apps/meta/main.yml:24")

	f = one(t, lintSeries(t, "2.17", "kube_proxy_strict_arp=false"), "string-as-bool", "kube_proxy_strict_arp")
	assert.Equal(t, SeverityError, f.Severity)
	assert.Contains(t, f.Message, "roles/kubernetes-apps/metallb/tasks/main.yml:6")

	f = one(t, lintSeries(t, "2.16", "flush_iptables=false"), "string-as-bool", "flush_iptables")
	assert.Equal(t, SeverityInfo, f.Severity)
	assert.Contains(t, f.Message, "ansible-core 2.16 and 2.19 and later all read it as false here")

	// "y" is true to boolean() but false to `| bool`, in every series
	f = one(t, lintSeries(t, "2.16", "flush_iptables=y"), "string-as-bool", "flush_iptables")
	assert.Equal(t, SeverityError, f.Severity)
	assert.Contains(t, f.Message, `under ansible-core 2.16 and 2.19 and later it is FALSE although you wrote "y": kubespray reads it only with `+"`| bool`")
	f = one(t, lintSeries(t, "2.16", "flush_iptables=n"), "string-as-bool", "flush_iptables")
	assert.Equal(t, SeverityInfo, f.Severity)

	// helm_enabled: validate_inventory's type check stops the run first.
	f = one(t, lintSeries(t, "2.18", "helm_enabled=false"), "string-as-bool", "helm_enabled")
	assert.Equal(t, SeverityError, f.Severity)
	assert.Contains(t, f.Message, `it is TRUE although you wrote "false"`)
	assert.Contains(t, f.Message, "validate_inventory stops the run on it first (roles/validate_inventory/tasks/main.yml:48)")

	// No series given: the one the chosen release pins (v2.31.0: 2.18).
	r := lintSeries(t, "", "metrics_server_enabled=false")
	assert.Equal(t, "2.18", r.AnsibleCore)
	assert.Equal(t, "the series kubespray v2.31.0 pins (playbooks/ansible_version.yml:8 accepts 2.18.0 ≤ x < 2.19.0)", r.AnsibleCoreWhy)
	f = one(t, r, "string-as-bool", "metrics_server_enabled")
	assert.Contains(t, f.Message, `under ansible-core 2.18 it is TRUE although you wrote "false"`)

	// 2.19 and later: the condition fails, at kubespray's line.
	for _, s := range []string{"2.19", "2.20.1"} {
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

// A boolean kubespray v2.31.0 reads only inside Jinja in a task (an inline
// if at roles/network_facts/tasks/main.yaml:40): the verdict names that
// site; Jinja takes "false" as true under every series and fails nothing
// (checked with ansible-core 2.16, 2.19 and 2.20: an inline if and a
// {% if v %} on -e v=false both took the true branch).
func TestStringAsBoolVerdictsTemplateSite(t *testing.T) {
	const site = "roles/network_facts/tasks/main.yaml:40 (`{{ '' if no_proxy_exclude_workers else 'kube_node' }}`)"
	f := one(t, lintSeries(t, "2.18", "no_proxy_exclude_workers=false"), "string-as-bool", "no_proxy_exclude_workers")
	assert.Equal(t, SeverityError, f.Severity)
	assert.Contains(t, f.Message, `under ansible-core 2.18 it is TRUE although you wrote "false": kubespray renders it at `+site)

	f = one(t, lintSeries(t, "2.16", "no_proxy_exclude_workers=true"), "string-as-bool", "no_proxy_exclude_workers")
	assert.Equal(t, SeverityWarning, f.Severity)
	assert.Contains(t, f.Message, `it works under ansible-core 2.16 only because "true" is True in Python (kubespray renders it at roles/network_facts/tasks/main.yaml:40`)

	for _, s := range []string{"2.19", "2.20"} {
		f = one(t, lintSeries(t, s, "no_proxy_exclude_workers=false"), "string-as-bool", "no_proxy_exclude_workers")
		assert.Equal(t, SeverityError, f.Severity)
		assert.Contains(t, f.Why, "kubespray's own tasks read it only inside Jinja (`{{ '' if no_proxy_exclude_workers else 'kube_node' }}`, roles/network_facts/tasks/main.yaml:40), which takes the str's Python truth (True) under every ansible-core, 2.19 included")
	}
	// A variable read in a bare when: keeps that site, not a Jinja one.
	f = one(t, lintSeries(t, "2.18", "metrics_server_enabled=false"), "string-as-bool", "metrics_server_enabled")
	assert.NotContains(t, f.Message, "renders it")
}

// Each bundled release is judged under the ansible-core its requirements
// pin, the newest series its playbooks/ansible_version.yml accepts; the
// default catalogue (no release chosen) under 2.19; a given series wins.
func TestJudgedAnsibleCore(t *testing.T) {
	for v, want := range map[string]string{"v2.24.3": "2.16", "v2.25.1": "2.16", "v2.28.1": "2.16", "v2.29.1": "2.17", "v2.30.0": "2.17", "v2.31.0": "2.18"} {
		cat, err := kubespray.Bundled(v)
		require.NoError(t, err)
		got, why := JudgedAnsibleCore("", cat)
		assert.Equal(t, want, got, v)
		assert.Contains(t, why, "the series kubespray "+v+" pins (playbooks/ansible_version.yml", v)
		got, why = JudgedAnsibleCore("2.20", cat)
		assert.Equal(t, "2.20", got)
		assert.Equal(t, "as given", why)
	}
	def, err := kubespray.ForInventory([]string{t.TempDir()})
	require.NoError(t, err)
	require.True(t, def.Default)
	got, _ := JudgedAnsibleCore("", def)
	assert.Equal(t, "2.19", got)
}
