package report

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/testutil"
)

// resolvedLikeAnsible is the resolved option the action plugin sends for
// inv: every host's plain scalar values (here our own resolution, which is
// what Ansible resolves for these samples).
func resolvedLikeAnsible(t *testing.T, inv *parser.Inventory) *resolvedOption {
	t.Helper()
	r := &resolvedOption{Hosts: map[string][]int{}}
	for _, h := range inv.Hosts {
		vars := inv.HostVars(h, nil)
		idx := []int{}
		for _, k := range vars.Keys {
			v := vars.Get(k)
			var val any
			switch v.Kind {
			case parser.KindString:
				if v.Templated() {
					continue
				}
				val = v.Str
			case parser.KindBool:
				val = v.Bool
			case parser.KindInt:
				val = json.Number(v.Int.String())
			default:
				continue
			}
			name, _ := json.Marshal(k)
			data, err := json.Marshal(val)
			require.NoError(t, err)
			r.Values = append(r.Values, []json.RawMessage{name, data})
			idx = append(idx, len(r.Values)-1)
		}
		r.Hosts[h.Name] = idx
	}
	return r
}

// The module (with the values Ansible resolved, as the playbook runs it)
// and `layercheck lint` report the same findings on every bundled sample:
// Ansible's resolved values must not hide a finding (the calico-rr warning
// on the broken sample once went missing so).
func TestModuleAndCLIAgreeOnSamples(t *testing.T) {
	samples, err := filepath.Glob(filepath.Join(testutil.RepoRoot(), "inventory-samples", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, samples)
	for _, dir := range samples {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			inv, err := parser.Load(dir)
			require.NoError(t, err)
			cat, err := kubespray.ForInventory([]string{dir})
			require.NoError(t, err)
			cli := lint.Run(lint.Input{Inventory: inv, Catalogue: cat})

			inv, err = parser.Load(dir)
			require.NoError(t, err)
			var hosts []string
			for _, h := range inv.Hosts {
				hosts = append(hosts, h.Name)
			}
			res, err := Run(context.Background(), &Options{Inventory: []string{dir}, Hosts: hosts, Resolved: resolvedLikeAnsible(t, inv)}, 0)
			require.NoError(t, err)
			mod := res.Extra["report"].(*lint.Report)
			require.Equal(t, cli.Errors, mod.Errors, "errors")
			require.Equal(t, cli.Warnings, mod.Warnings, "warnings")
			require.Equal(t, cli.Findings, mod.Findings)
		})
	}
}

// The module applies the suppressions layercheck lint applies from the
// inventory (comments, .layercheck.yml), so the playbook agrees with it.
func TestModuleAppliesInventorySuppressions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "broken")
	testutil.CopyTree(t, filepath.Join(testutil.RepoRoot(), "inventory-samples", "broken"), dir)
	testutil.WriteTree(t, dir, map[string]string{
		".layercheck.yml":                   "skip_rules: [string-as-bool]\n",
		"group_vars/k8s_cluster/addons.yml": "---\nmetrics_server_enabled: true  # layercheck: ignore[metrics-server-tls]\n",
	})
	res, err := Run(context.Background(), &Options{Inventory: []string{dir}}, 0)
	require.NoError(t, err)
	rep := res.Extra["report"].(*lint.Report)
	for _, f := range rep.Findings {
		require.NotEqual(t, "string-as-bool", f.Rule)
		require.False(t, f.Rule == "metrics-server-tls" && f.Variable == "metrics_server_enabled", "%+v", f)
	}
	require.NotEmpty(t, rep.Suppressed)
	require.Contains(t, res.Extra["summary"], " suppressed (")
	testutil.WriteTree(t, dir, map[string]string{".layercheck.yml": "skip_rules: [nope]\n"})
	_, err = Run(context.Background(), &Options{Inventory: []string{dir}}, 0)
	require.ErrorContains(t, err, "nope")
}
