package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/lint"
)

func TestGroupedBySeverityAndRule(t *testing.T) {
	rep := &lint.Report{Catalogue: "bundled kubespray master", Errors: 3, Warnings: 1, Findings: []lint.Finding{
		{Rule: "string-as-bool", Severity: lint.SeverityError, Variable: "helm_enabled", Value: `"true"`, Where: "group_vars/all.yml:2:15",
			Hosts: []string{"a", "b", "c"}, Message: "helm_enabled is the str \"true\", not a boolean", Why: "WHY1", Fix: "helm_enabled: true"},
		{Rule: "choice", Severity: lint.SeverityError, Variable: "dns_mode", Value: `"x"`, Where: "-e", Message: "not a choice", Why: "WHY2", Fix: "set it"},
		{Rule: "string-as-bool", Severity: lint.SeverityError, Variable: "epel_enabled", Value: `"no"`, Where: "group_vars/all.yml:3:15", Hosts: []string{"a"}, Message: "m", Fix: "epel_enabled: false"},
		{Rule: "calico-rr", Severity: lint.SeverityWarning, Where: "inventory.ini:17:2", Hosts: []string{"rr1"}, Message: "calico_rr hosts are outside k8s_cluster: rr1"},
	}}
	got := Grouped(rep, 2, 0, false)
	want := `layercheck lint: 3 errors, 1 warning (bundled kubespray master)

ERRORS
string-as-bool (2): ` + ruleSummary("string-as-bool") + `
  group_vars/all.yml:2:15: helm_enabled = "true" (hosts: a, b and 1 more): helm_enabled is the str "true", not a boolean
    fix: helm_enabled: true
  group_vars/all.yml:3:15: epel_enabled = "no" (host: a): m
    fix: epel_enabled: false
choice (1): ` + ruleSummary("choice") + `
  -e: dns_mode = "x": not a choice
    fix: set it

WARNINGS
calico-rr (1): ` + ruleSummary("calico-rr") + `
  inventory.ini:17:2 (host: rr1): calico_rr hosts are outside k8s_cluster: rr1`
	assert.Equal(t, want, got)
	assert.NotContains(t, got, "WHY")
	verbose := Grouped(rep, 2, 0, true)
	assert.Equal(t, 1, strings.Count(verbose, "    why: WHY1"))
	assert.Equal(t, 1, strings.Count(verbose, "    why: WHY2"))
	assert.Contains(t, Grouped(rep, 2, 3, false), `helm_enabled = "true" (all 3 hosts): `)
	assert.Contains(t, Grouped(rep, 2, 3, false), `epel_enabled = "no" (host: a): `)

	clean := &lint.Report{Catalogue: "bundled kubespray v2.31.0", Findings: []lint.Finding{}}
	require.Equal(t, "layercheck lint: 0 errors, 0 warnings (bundled kubespray v2.31.0)", Grouped(clean, 10, 5, true))
}

func ruleSummary(id string) string {
	for _, r := range lint.Rules() {
		if r.ID == id {
			return r.Summary
		}
	}
	return ""
}
