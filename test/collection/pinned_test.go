package collection

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/testutil"
)

// pinnedAnsible is kubespray v2.31.0's pin (requirements.txt: ansible==11.13.0,
// ansible-core 2.18), installed by scripts/venv-pinned.sh (make venv).
const pinnedAnsible = "11.13.0"

// pinnedEnv runs ansible commands from .venv-ansible-<pinnedAnsible>.
func pinnedEnv(t *testing.T, extra ...string) (ansiblePlaybook string, envv []string) {
	t.Helper()
	bin := filepath.Join(testutil.RepoRoot(), ".venv-ansible-"+pinnedAnsible, "bin")
	p := filepath.Join(bin, "ansible-playbook")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s missing: run `make venv` (or `make test`, which makes it): %v", p, err)
	}
	return p, env(t, append([]string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, extra...)...)
}

// Under ansible 11.13 (ansible-core 2.18, what kubespray v2.31.0 runs on)
// the collection runs, and -e helm_enabled=false — a string nothing in
// ansible-core 2.18 rejects — fails the lint saying it is TRUE there and
// where kubespray acts on it; the JSON boolean passes.
func TestPinnedAnsibleStringBooleans(t *testing.T) {
	requireBinaries(t)
	playbook, envv := pinnedEnv(t)
	// ansible-core <= 2.18 skips *.ini files inside a directory source
	// (INVENTORY_IGNORE_EXTS), so the file itself is the source.
	inv := filepath.Join(inventory(t, false), "inventory.ini")
	extra := `{"layercheck_lint_kubespray_version": "v2.31.0"}`

	r := runCmd(t, t.TempDir(), envv, playbook, "-i", inv, "-e", extra, "-e", "helm_enabled=false", lintPlaybook())
	require.NotEqual(t, 0, r.code, "helm_enabled=false passed under ansible-core 2.18:\n%s", r.out)
	assert.Contains(t, r.out, `helm_enabled is the str "false", not a boolean: under ansible-core 2.18 it is TRUE although you wrote "false": kubespray acts on it at roles/kubernetes-apps/meta/main.yml:11`)
	assert.Equal(t, 1, strings.Count(r.out, `-e: helm_enabled = "false"`), "the report once:\n%s", r.out)
	assert.Equal(t, 1, strings.Count(r.out, "fatal: "), "one failure:\n%s", r.out)

	r = runCmd(t, t.TempDir(), envv, playbook, "-i", inv, "-e", extra, "-e", `{"helm_enabled": false}`, lintPlaybook())
	require.Equal(t, 0, r.code, "a JSON boolean failed under ansible-core 2.18:\n%s", r.out)
	for _, h := range nodes {
		recap(t, r.out, h, "unreachable=0    failed=0")
	}
}

// The same under ansible-core 2.19 (.venv, the ansible-core of ansible 12)
// and 2.20 (.venv-core-2.20, scripts/venv-series.sh): the string fails
// kubespray's condition, said with 2.19's wording, and the module, the
// action plugin and the lint role run under each.
func TestStringBooleansUnder219(t *testing.T) {
	requireBinaries(t)
	inv := inventory(t, false)
	extra := `{"layercheck_lint_kubespray_version": "v2.31.0"}`
	for _, s := range []struct{ series, venv string }{{"2.19", ".venv"}, {"2.20", ".venv-core-2.20"}} {
		t.Run(s.series, func(t *testing.T) {
			bin := filepath.Join(testutil.RepoRoot(), s.venv, "bin")
			playbook := filepath.Join(bin, "ansible-playbook")
			_, err := os.Stat(playbook)
			require.NoError(t, err, "%s missing: run `make venv` (or `make test`, which makes it)", s.venv)
			envv := env(t, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			v := runCmd(t, t.TempDir(), envv, filepath.Join(bin, "ansible"), "--version")
			require.Contains(t, v.out, "ansible [core "+s.series+".", "%s runs another ansible-core", s.venv)

			r := runCmd(t, t.TempDir(), envv, playbook, "-i", inv, "-e", extra, "-e", "helm_enabled=false", lintPlaybook())
			require.NotEqual(t, 0, r.code, "helm_enabled=false passed under ansible-core %s:\n%s", s.series, r.out)
			assert.Contains(t, r.out, `-e: helm_enabled = "false" (all 3 hosts): helm_enabled is the str "false", not a boolean`)
			assert.NotContains(t, r.out, "it is TRUE although")
			assert.Equal(t, 1, strings.Count(r.out, `-e: helm_enabled = "false"`), "the report once:\n%s", r.out)
			r = runCmd(t, t.TempDir(), envv, playbook, "-i", inv, "-e", extra, "-e", `{"helm_enabled": false}`, lintPlaybook())
			require.Equal(t, 0, r.code, "a JSON boolean failed under ansible-core %s:\n%s", s.series, r.out)
			for _, h := range nodes {
				recap(t, r.out, h, "unreachable=0    failed=0")
			}
		})
	}
}
