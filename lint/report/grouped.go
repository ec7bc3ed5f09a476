package report

import (
	"fmt"
	"strings"

	"github.com/layercheck/layercheck/lint"
)

// Summary is the report on one line: the counts and the catalogue with why
// it was chosen, e.g.
//
//	layercheck lint: 43 errors, 7 warnings (bundled kubespray master 46dbdd3, the default, as the inventory lives in no kubespray checkout)
func Summary(r *lint.Report) string {
	s := fmt.Sprintf("layercheck lint: %s, %s", plural(r.Errors, "error"), plural(r.Warnings, "warning"))
	if info := len(r.Findings) - r.Errors - r.Warnings; info > 0 {
		s += fmt.Sprintf(", %d info", info)
	}
	if n := len(r.Suppressed); n > 0 {
		s += fmt.Sprintf(", %d suppressed", n)
	}
	return s + " (" + r.CatalogueUsed() + ")"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Grouped renders the report for the lint playbook's one message: the
// Summary, then the findings grouped by severity and rule, each rule's
// summary said once, each finding on one or two lines (where: variable =
// value (hosts): message, then the fix). why adds each finding's
// explanation (ansible-playbook -v). listed caps the host names a finding
// names; a finding affecting all the inventory's hosts (all, when more
// than one) says so instead. With no findings it is the Summary alone.
//
//	layercheck lint: 1 error, 0 warnings (bundled kubespray master 46dbdd3)
//
//	ERRORS
//	string-as-bool (1): a kubespray boolean written as "true"/"no"/INI x=true/-e x=true, or 0/1
//	  group_vars/all/all.yml:3:15: helm_enabled = "true" (hosts: node1, node2): helm_enabled is the str "true", not a boolean
//	    fix: helm_enabled: true
func Grouped(r *lint.Report, listed, all int, why bool) string {
	var b strings.Builder
	b.WriteString(Summary(r))
	if len(r.Findings) == 0 {
		return b.String()
	}
	if r.LocationsRelativeTo != "" {
		b.WriteString("\nlocations are relative to " + r.LocationsRelativeTo)
	}
	summaries := map[string]string{}
	for _, ri := range lint.Rules() {
		summaries[ri.ID] = ri.Summary
	}
	for _, sev := range []lint.Severity{lint.SeverityError, lint.SeverityWarning, lint.SeverityInfo} {
		var order []string
		byRule := map[string][]lint.Finding{}
		for _, f := range r.Findings {
			if f.Severity != sev {
				continue
			}
			if _, ok := byRule[f.Rule]; !ok {
				order = append(order, f.Rule)
			}
			byRule[f.Rule] = append(byRule[f.Rule], f)
		}
		if len(order) == 0 {
			continue
		}
		head := map[lint.Severity]string{lint.SeverityError: "ERRORS", lint.SeverityWarning: "WARNINGS", lint.SeverityInfo: "INFO"}[sev]
		b.WriteString("\n\n" + head)
		for _, rule := range order {
			fs := byRule[rule]
			fmt.Fprintf(&b, "\n%s (%d)", rule, len(fs))
			if s := summaries[rule]; s != "" {
				b.WriteString(": " + s)
			}
			for _, f := range fs {
				b.WriteString("\n  " + FindingLine(f, listed, all))
				if f.Fix != "" {
					b.WriteString("\n    fix: " + f.Fix)
				}
				if why && f.Why != "" {
					b.WriteString("\n    why: " + f.Why)
				}
			}
		}
	}
	return b.String()
}

// hostsNote is " (host: a)", " (hosts: a, b)", " (hosts: a, b and 3
// more)" past listed names, or " (5 hosts)" when listed is 0 or less.
func hostsNote(hosts []string, listed int) string {
	switch n := len(hosts); {
	case listed <= 0:
		return fmt.Sprintf(" (%d hosts)", n)
	case n > listed:
		return fmt.Sprintf(" (hosts: %s and %d more)", strings.Join(hosts[:listed], ", "), n-listed)
	case n == 1:
		return " (host: " + hosts[0] + ")"
	default:
		return " (hosts: " + strings.Join(hosts, ", ") + ")"
	}
}

// FindingLine is the first line of a finding in Grouped: where, variable =
// value, the hosts (abridged to listed names; "all N hosts" when they are
// all the inventory's all hosts, all > 1) and what is wrong.
//
//	group_vars/all/all.yml:3:15: helm_enabled = "true" (hosts: node1, node2): helm_enabled is the str "true", not a boolean
func FindingLine(f lint.Finding, listed, all int) string {
	s := f.Where
	if f.Variable != "" {
		if s != "" {
			s += ": "
		}
		s += f.Variable
		if f.Value != "" {
			s += " = " + f.Value
		}
	}
	if n := len(f.Hosts); n > 0 {
		switch {
		case n == 2 && all == 2:
			s += " (both hosts)"
		case all > 1 && n == all:
			s += fmt.Sprintf(" (all %d hosts)", n)
		default:
			s += hostsNote(f.Hosts, listed)
		}
		s = strings.TrimPrefix(s, " ")
	}
	if f.Message != "" {
		if s != "" {
			s += ": "
		}
		s += f.Message
	}
	return s
}
