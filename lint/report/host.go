package report

import (
	"fmt"
	"strings"

	"github.com/layercheck/layercheck/lint"
)

// DefaultHostsListed is how many host names a finding keeps in a per-host
// report; a setting in group_vars/all affects every host, and 5,000 names
// in each of 5,000 host facts would not be workable.
const DefaultHostsListed = 10

// HostFinding is a finding in a per-host report: Hosts abridged to
// hosts_listed names, HostsTotal saying how many there are.
type HostFinding struct {
	lint.Finding
	HostsTotal int `json:"hosts_total,omitempty"`
	// Text is the finding on one line, for assert and debug messages.
	Text string `json:"text"`
}

// Host is ansible_facts.layercheck_lint: the findings affecting one
// host plus the global ones.
type Host struct {
	Catalogue string `json:"catalogue"`
	// CatalogueWhy: see lint.Report.
	CatalogueWhy string `json:"catalogue_why,omitempty"`
	// CatalogueNote: see lint.Report.
	CatalogueNote string `json:"catalogue_note,omitempty"`
	// LocationsRelativeTo: see lint.Report.
	LocationsRelativeTo string        `json:"locations_relative_to,omitempty"`
	Errors              int           `json:"errors"`
	Warnings            int           `json:"warnings"`
	Findings            []HostFinding `json:"findings"`
}

// ForHost is rep.ForHost(host) with each finding's host list abridged.
func ForHost(rep *lint.Report, host string, listed int) *Host {
	r := rep.ForHost(host)
	out := &Host{Catalogue: r.Catalogue, CatalogueWhy: r.CatalogueWhy, CatalogueNote: r.CatalogueNote, LocationsRelativeTo: r.LocationsRelativeTo, Errors: r.Errors, Warnings: r.Warnings, Findings: make([]HostFinding, 0, len(r.Findings))}
	for _, f := range r.Findings {
		hf := HostFinding{Finding: f, Text: Line(f, listed)}
		if len(f.Hosts) > listed {
			hf.HostsTotal = len(f.Hosts)
			hf.Hosts = f.Hosts[:listed:listed]
		}
		out.Findings = append(out.Findings, hf)
	}
	return out
}

// Line renders a finding on one line: severity, rule, variable = value,
// where, the hosts (abridged to listed names), what is wrong, why, and the fix.
//
//	error string-as-bool: helm_enabled = "true" at group_vars/all/all.yml:3:15 (hosts: node1, node2): ... Why: ... Fix: helm_enabled: true
func Line(f lint.Finding, listed int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s:", f.Severity, f.Rule)
	if f.Variable != "" {
		b.WriteString(" " + f.Variable)
		if f.Value != "" {
			b.WriteString(" = " + f.Value)
		}
	}
	if f.Where != "" {
		b.WriteString(" at " + f.Where)
	}
	if len(f.Hosts) > 0 {
		b.WriteString(hostsNote(f.Hosts, listed))
	}
	if f.Message != "" {
		b.WriteString(": " + f.Message)
	}
	if f.Why != "" {
		b.WriteString(" Why: " + f.Why)
	}
	if f.Fix != "" {
		b.WriteString(" Fix: " + f.Fix)
	}
	return b.String()
}
