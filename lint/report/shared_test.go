//go:build shared

package report

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/testutil"
)

// corpusSources are the inventory directories under root: those holding
// group_vars/, an *.ini, hosts* or inventory*.y(a)ml (as test/lintcorpus).
func corpusSources(t *testing.T, root string) []string {
	t.Helper()
	set := map[string]bool{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if (d.IsDir() && name == "group_vars") || (!d.IsDir() && (strings.HasSuffix(name, ".ini") || strings.HasPrefix(name, "hosts") ||
			(strings.HasPrefix(name, "inventory") && (strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".yaml"))))) {
			set[filepath.Dir(p)] = true
		}
		return nil
	}))
	var out []string
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// The module (with resolved values as the playbook sends them) and
// `layercheck lint` report the same findings on every inventory of the
// shared corpus that loads.
func TestModuleAndCLIAgreeOnCorpus(t *testing.T) {
	corpus := testutil.Shared(t, "fixtures", "inventories")
	ents, err := os.ReadDir(corpus)
	require.NoError(t, err)
	cat, err := kubespray.Bundled("")
	require.NoError(t, err)
	compared := 0
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		for _, src := range corpusSources(t, filepath.Join(corpus, e.Name())) {
			rel, _ := filepath.Rel(corpus, src)
			t.Run(rel, func(t *testing.T) {
				inv, err := parser.Load(src)
				if err != nil || len(inv.Hosts) == 0 {
					t.Skipf("not a loadable inventory with hosts: %v", err)
				}
				cli := lint.Run(lint.Input{Inventory: inv, Catalogue: cat})
				inv, err = parser.Load(src)
				require.NoError(t, err)
				var hosts []string
				for _, h := range inv.Hosts {
					hosts = append(hosts, h.Name)
				}
				res, err := Run(context.Background(), &Options{Inventory: []string{src}, Hosts: hosts,
					Resolved: resolvedLikeAnsible(t, inv), KubesprayVersion: kubespray.DefaultVersion}, 0)
				require.NoError(t, err)
				mod := res.Extra["report"].(*lint.Report)
				require.Equal(t, cli.Errors, mod.Errors, "errors")
				require.Equal(t, cli.Warnings, mod.Warnings, "warnings")
				require.Equal(t, cli.Findings, mod.Findings)
				compared++
			})
		}
	}
	require.Greater(t, compared, 30, "inventories compared")
}
