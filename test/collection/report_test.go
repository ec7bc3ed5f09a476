package collection

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/internal/app"
	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/lint/report"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/testutil"
)

// cliReport is `layercheck lint --format json` on the sources, run in process.
func cliReport(t *testing.T, args ...string) *lint.Report {
	t.Helper()
	var out, errOut bytes.Buffer
	err := app.Run(context.Background(), append([]string{"lint", "--format", "json"}, args...),
		app.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if code := app.ExitCode(err); code > 1 {
		t.Fatalf("layercheck lint %v: exit %d: %v\n%s", args, code, err, errOut.String())
	}
	var rep lint.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	return &rep
}

var summaryRE = regexp.MustCompile(`(?m)^layercheck lint: (\d+) errors?, (\d+) warnings? \(`)

// The README's command on the bundled broken sample: one readable report
// (each finding once, under 60 KB, no Ansible error block with the role's
// source or comments) with the same counts as `layercheck lint`, the
// calico-rr warning included; the clean sample prints one summary line.
func TestPlaybookReportOnBundledSamples(t *testing.T) {
	requireBinaries(t)
	root := testutil.RepoRoot()
	r := run(t, root, env(t), "ansible-playbook", "-i", "inventory-samples/broken", "playbooks/lint.yml")
	require.NotZero(t, r.code, "the broken sample passed:\n%s", r.out)
	assert.Less(t, len(r.out), 60*1024, "output size")

	// the play judges string booleans under the ansible-core it runs on
	// (.venv's 2.19); the CLI, without --ansible-core, under the release's
	cli := cliReport(t, "-i", filepath.Join(root, "inventory-samples", "broken"), "--ansible-core", "2.19")
	require.NotZero(t, cli.Errors)
	m := summaryRE.FindAllStringSubmatch(r.out, -1)
	require.Len(t, m, 1, "one summary line at the start of a line:\n%s", r.out)
	errs, _ := strconv.Atoi(m[0][1])
	warns, _ := strconv.Atoi(m[0][2])
	assert.Equal(t, cli.Errors, errs, "errors: playbook vs layercheck lint")
	assert.Equal(t, cli.Warnings, warns, "warnings: playbook vs layercheck lint")

	inv, err := parser.Load(filepath.Join(root, "inventory-samples", "broken"))
	require.NoError(t, err)
	all := len(inv.Hosts)
	same := map[string]int{}
	for _, f := range cli.Findings {
		same[report.FindingLine(f, 10, all)]++
	}
	sawRR := false
	for _, f := range cli.Findings {
		line := report.FindingLine(f, 10, all)
		assert.Equal(t, same[line], strings.Count(r.out, "\n  "+line+"\n"), "finding %q", line)
		sawRR = sawRR || f.Rule == "calico-rr"
	}
	assert.True(t, sawRR, "the CLI reports no calico-rr finding on the broken sample; the test lost its point")
	assert.Equal(t, 1, strings.Count(r.out, "\ncalico-rr (1): "), "calico-rr in the playbook report")
	for _, bad := range []string{"Origin:", "[ERROR]", "\n#", "\n  #", "\n    #"} {
		assert.NotContains(t, r.out, bad)
	}
	assert.Equal(t, 1, strings.Count(r.out, "fatal: "), "one failure")

	r = run(t, root, env(t), "ansible-playbook", "-i", "inventory-samples/kubespray-3node", "playbooks/lint.yml")
	require.Zero(t, r.code, "the clean sample failed:\n%s", r.out)
	assert.Equal(t, 1, strings.Count(r.out, "layercheck lint:"), "one summary line:\n%s", r.out)
	// the sample sets upstream_dns_servers, which v2.31.0 is the newest
	// release to define: the release it was written for is inferred
	assert.Regexp(t, `(?m)^layercheck lint: 0 errors, 0 warnings \(bundled kubespray v2\.31\.0 \w+, inferred from what the inventory pins, as it lives in no kubespray checkout and no release was given: .*; v2\.31\.0 is the newest bundled release that fits\)$`, r.out)

	// -e helm_enabled=true on the clean sample: the one error once.
	r = run(t, root, env(t), "ansible-playbook", "-i", "inventory-samples/kubespray-3node", "playbooks/lint.yml", "-e", "helm_enabled=true")
	require.NotZero(t, r.code)
	assert.Equal(t, 1, strings.Count(r.out, `helm_enabled = "true"`), "the one error once:\n%s", r.out)
}
