package output_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	// The module that holds the official schema (officialSchema reads it
	// from the module's source). Its own Report.Validate is not used: it
	// validates the log after a round trip through its Go types, which
	// add fields of their own ("language": "", empty lists) that the
	// schema rejects.
	_ "github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/internal/app"
	"github.com/layercheck/layercheck/internal/output"
	lintpkg "github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/test/testutil"
)

func lint(t *testing.T, format string) (string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	sample := filepath.Join(testutil.RepoRoot(), "inventory-samples", "broken")
	err := app.Run(context.Background(), []string{"lint", "-i", sample, "--format", format}, app.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return out.String(), app.ExitCode(err)
}

func compile(t *testing.T, url string, doc any) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	require.NoError(t, c.AddResource(url, doc))
	s, err := c.Compile(url)
	require.NoError(t, err)
	return s
}

// sarifModule is the Go module whose package v210/sarif embeds the OASIS
// SARIF 2.1.0 JSON schema (errata 01, draft-04) as the constant schema in
// pkg/report/v210/sarif/schema.go; the test reads it from the module
// rather than keeping a copy here.
const sarifModule = "github.com/owenrumney/go-sarif/v3"

// officialSchema reads the schema text out of the go-sarif module source:
// its directory from `go list -m`, the constant from the parsed Go file.
func officialSchema(t *testing.T) any {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", sarifModule)
	cmd.Dir = testutil.RepoRoot()
	out, err := cmd.Output()
	require.NoError(t, err, "go list -m %s", sarifModule)
	dir := strings.TrimSpace(string(out))
	require.NotEmpty(t, dir, "%s is not in the module cache (go mod download)", sarifModule)
	file := filepath.Join(dir, "pkg", "report", "v210", "sarif", "schema.go")
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	require.NoError(t, err)
	var text string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && n.Name == "schema" && lit.Kind == token.STRING {
					text, err = strconv.Unquote(lit.Value)
					require.NoError(t, err)
				}
			}
		}
	}
	require.NotEmpty(t, text, "no const schema in %s", file)
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	require.NoError(t, err)
	m, _ := doc.(map[string]any)
	require.Equal(t, output.SARIFSchema, m["id"], "the module's schema is not the one the log names")
	return doc
}

func TestLintSARIF(t *testing.T) {
	out, code := lint(t, "sarif")
	require.Equal(t, 1, code, "the broken sample has errors")
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	require.NoError(t, err)

	official := compile(t, output.SARIFSchema, officialSchema(t))
	require.NoError(t, official.Validate(inst))

	// The schema is a real check: a result without a message fails it.
	var broken map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &broken))
	res := broken["runs"].([]any)[0].(map[string]any)["results"].([]any)[0].(map[string]any)
	delete(res, "message")
	data, _ := json.Marshal(broken)
	bad, _ := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.Error(t, official.Validate(bad))

	// Regions point at the variable in the file; rules carry metadata.
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID               string                `json:"id"`
						ShortDescription struct{ Text string } `json:"shortDescription"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			OriginalURIBaseIDs map[string]struct{ URI string } `json:"originalUriBaseIds"`
			Results            []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   struct{ Text string }
				Locations []struct {
					PhysicalLocation *struct {
						ArtifactLocation struct {
							URI       string `json:"uri"`
							URIBaseID string `json:"uriBaseId"`
						} `json:"artifactLocation"`
						Region struct{ StartLine, StartColumn int } `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				Properties map[string]any `json:"properties"`
			} `json:"results"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &log))
	run := log.Runs[0]
	base := run.OriginalURIBaseIDs[output.SARIFBaseID].URI
	require.True(t, strings.HasPrefix(base, "file:///") && strings.HasSuffix(base, "inventory-samples/broken/"), base)
	sawBool := false
	for _, r := range run.Results {
		require.Equal(t, r.RuleID, run.Tool.Driver.Rules[r.RuleIndex].ID)
		require.NotEmpty(t, run.Tool.Driver.Rules[r.RuleIndex].ShortDescription.Text)
		if r.RuleID != "string-as-bool" || len(r.Locations) == 0 || r.Locations[0].PhysicalLocation == nil {
			continue
		}
		pl := r.Locations[0].PhysicalLocation
		data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "inventory-samples", "broken", filepath.FromSlash(pl.ArtifactLocation.URI)))
		require.NoError(t, err)
		lines := strings.Split(string(data), "\n")
		require.GreaterOrEqual(t, len(lines), pl.Region.StartLine)
		line := lines[pl.Region.StartLine-1]
		variable, _ := r.Properties["variable"].(string)
		assert.Contains(t, line, variable, "%s:%d", pl.ArtifactLocation.URI, pl.Region.StartLine)
		assert.Greater(t, pl.Region.StartColumn, 0)
		// an error, or under the ansible-core the sample's release pins
		// (2.18) a warning where the value works as meant there
		assert.Contains(t, []string{"error", "warning"}, r.Level)
		sawBool = true
	}
	require.True(t, sawBool, "no string-as-bool result with a region")
	require.NotContains(t, out, "$ANSIBLE_VAULT")
}

func TestLintJUnit(t *testing.T) {
	out, code := lint(t, "junit")
	require.Equal(t, 1, code)
	var suites struct {
		XMLName  xml.Name `xml:"testsuites"`
		Failures int      `xml:"failures,attr"`
		Suites   []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				File    string `xml:"file,attr"`
				Failure *struct {
					Type string `xml:"type,attr"`
					Text string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal([]byte(out), &suites), out)
	js, _ := lint(t, "json")
	var rep struct{ Errors int }
	require.NoError(t, json.Unmarshal([]byte(js), &rep))
	require.Len(t, suites.Suites, 1)
	s := suites.Suites[0]
	require.Equal(t, rep.Errors, s.Failures)
	require.Equal(t, rep.Errors, suites.Failures)
	require.Equal(t, len(s.Cases), s.Tests)
	n := 0
	for _, c := range s.Cases {
		if c.Failure != nil {
			n++
			assert.Contains(t, c.Failure.Text, "fix: ", c.Name)
		}
	}
	require.Equal(t, rep.Errors, n)
}

func TestSplitWhere(t *testing.T) {
	for _, tc := range []struct {
		in        string
		file      string
		line, col int
	}{
		{"group_vars/all/all.yml:12:15", "group_vars/all/all.yml", 12, 15},
		{"hosts.ini:7", "hosts.ini", 7, 0},
		{"-e", "-e", 0, 0},
		{"group_vars/k8s_cluster", "group_vars/k8s_cluster", 0, 0},
	} {
		f, l, c := output.SplitWhere(tc.in)
		assert.Equal(t, []any{tc.file, tc.line, tc.col}, []any{f, l, c}, tc.in)
	}
}

// A finding in a file outside the inventory directory (an -e @file
// elsewhere) has an absolute Where: its SARIF location is a file URI of
// its own, not one under INVENTORYROOT.
func TestLintSARIFFileOutsideInventory(t *testing.T) {
	rep := &lintpkg.Report{Findings: []lintpkg.Finding{
		{Rule: "string-as-bool", Severity: lintpkg.SeverityError, Where: "/srv/vars/extra.yml:1:15", Message: "m"},
		{Rule: "string-as-bool", Severity: lintpkg.SeverityError, Where: "group_vars/all.yml:2:3", Message: "m"},
	}}
	var b bytes.Buffer
	require.NoError(t, output.WriteLintSARIF(&b, rep, "/srv/inventory", ""))
	var log struct {
		Runs []struct {
			Results []struct {
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI       string `json:"uri"`
							URIBaseID string `json:"uriBaseId"`
						} `json:"artifactLocation"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &log))
	res := log.Runs[0].Results
	require.Len(t, res, 2)
	assert.Equal(t, "file:///srv/vars/extra.yml", res[0].Locations[0].PhysicalLocation.ArtifactLocation.URI)
	assert.Empty(t, res[0].Locations[0].PhysicalLocation.ArtifactLocation.URIBaseID)
	assert.Equal(t, "group_vars/all.yml", res[1].Locations[0].PhysicalLocation.ArtifactLocation.URI)
	assert.Equal(t, output.SARIFBaseID, res[1].Locations[0].PhysicalLocation.ArtifactLocation.URIBaseID)
}

// TestLintSARIFEveryResultOnAFile lints inventories that make every kind
// of finding, including those no one value causes (a default the
// inventory relies on, an empty group, the upgrade itself), and requires a
// physicalLocation on each result but those of inline -e values, which
// have no file and carry the extra vars as a logical location.
func TestLintSARIFEveryResultOnAFile(t *testing.T) {
	broken := filepath.Join(testutil.RepoRoot(), "inventory-samples", "broken")
	empty := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(empty, "hosts.yaml"), []byte(`all:
  hosts:
    node1: {ansible_host: 192.0.2.1}
    node2: {ansible_host: 192.0.2.2}
  children:
    kube_control_plane:
    etcd:
      hosts: {node1: {}, node2: {}}
    kube_node:
      hosts: {node1: {}, node2: {}}
    calico_rr:
      hosts: {node2: {}}
    k8s_cluster:
      children: {kube_control_plane: {}, kube_node: {}, calico_rr: {}}
`), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(empty, "group_vars", "kube-master"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(empty, "group_vars", "kube-master", "x.yml"), []byte("helm_enabled: \"true\"\n"), 0o644))
	extra := filepath.Join(t.TempDir(), "extra.yml")
	require.NoError(t, os.WriteFile(extra, []byte("dns_mode: corednsx\n"), 0o644))
	for _, args := range [][]string{
		{"-i", broken},
		{"-i", broken, "--upgrade-from", "v2.26", "--kubespray-version", "v2.31"},
		{"-i", empty},
		{"-i", empty, "--upgrade-from", "v2.28", "--kubespray-version", "v2.30", "-e", "@" + extra},
		{"-i", filepath.Join(empty, "hosts.yaml"), "-e", "helm_enabled=true", "--kubespray-version", "v2.24"},
	} {
		t.Run(strings.Join(args[2:], " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := app.Run(context.Background(), append(append([]string{"lint"}, args...), "--format", "sarif"),
				app.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			require.Equal(t, 1, app.ExitCode(err), "%v\n%s", err, errOut.String())
			var log struct {
				Runs []struct {
					Results []struct {
						RuleID    string `json:"ruleId"`
						Message   struct{ Text string }
						Locations []struct {
							PhysicalLocation *struct {
								ArtifactLocation struct{ URI string } `json:"artifactLocation"`
							} `json:"physicalLocation"`
							LogicalLocations []struct{ Name string } `json:"logicalLocations"`
						} `json:"locations"`
					} `json:"results"`
				} `json:"runs"`
			}
			require.NoError(t, json.Unmarshal(out.Bytes(), &log))
			results := log.Runs[0].Results
			require.NotEmpty(t, results)
			for _, r := range results {
				require.Len(t, r.Locations, 1, "%s: %s", r.RuleID, r.Message.Text)
				loc := r.Locations[0]
				if loc.PhysicalLocation == nil {
					require.NotEmpty(t, loc.LogicalLocations, "%s: %s", r.RuleID, r.Message.Text)
					assert.Equal(t, "extra vars (-e)", loc.LogicalLocations[0].Name, "%s: %s has no file", r.RuleID, r.Message.Text)
					continue
				}
				assert.NotEmpty(t, loc.PhysicalLocation.ArtifactLocation.URI, "%s: %s", r.RuleID, r.Message.Text)
			}
		})
	}
}
