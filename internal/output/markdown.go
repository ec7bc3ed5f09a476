package output

import (
	"fmt"
	"io"
	"strings"

	"github.com/layercheck/layercheck/internal/fleet"
	"github.com/layercheck/layercheck/verify"
)

// Markdown of a verify report (a fleet run, or one node's or the
// cluster's), a summary a person pastes into a ticket: the hosts x layers
// table and the problems with their remedies.

func fleetMarkdown(w io.Writer, r *fleet.Report) {
	s := r.Summary
	fmt.Fprintf(w, "## %s: %s\n\n", fleetTitle(r), strings.ToUpper(string(r.Status)))
	if len(r.Hosts) > 0 {
		fmt.Fprintf(w, "%s: %d ok, %d warn, %d failed, %d unreachable\n\n", verify.Plural(s.Hosts, "host"), s.OK, s.Warn, s.Failed, s.Unreachable)
	}
	cols := fleetColumns(r)
	if len(r.Hosts) > 0 {
		fmt.Fprintf(w, "| host | %s | node |\n|---|%s---|\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
	}
	for _, h := range r.Hosts {
		var cells []string
		for _, c := range cols {
			cells = append(cells, fleetCell(h, c))
		}
		fmt.Fprintf(w, "| %s | %s | **%s** |\n", mdEscape(h.Host), strings.Join(cells, " | "), strings.ToUpper(string(h.Status)))
	}
	var problems []string
	for _, h := range r.Hosts {
		if h.Report == nil && h.Msg != "" {
			problems = append(problems, fmt.Sprintf("- **%s** %s: %s", mdEscape(h.Host), strings.ToUpper(string(h.Status)), mdEscape(h.Msg)))
		}
	}
	for _, f := range r.Failures() {
		line := fmt.Sprintf("- **%s** `%s` %s (%s): %s", mdEscape(f.Host), f.Layer, mdEscape(f.Check), f.Status, mdEscape(f.Msg))
		if f.Remediation != "" {
			line += "\n  - fix: " + mdEscape(f.Remediation)
		}
		problems = append(problems, line)
	}
	if c := r.Cluster; c != nil {
		for _, n := range c.OrderedLayers() {
			for _, res := range c.Layers[n].Results {
				if res.Status == verify.StatusFail || res.Status == verify.StatusError || res.Status == verify.StatusWarn {
					line := fmt.Sprintf("- **cluster** `%s` %s (%s): %s", n, mdEscape(res.Check), res.Status, mdEscape(res.Msg))
					if res.Remediation != "" {
						line += "\n  - fix: " + mdEscape(res.Remediation)
					}
					problems = append(problems, line)
				}
			}
		}
		fmt.Fprintf(w, "\ncluster %s: **%s**\n", mdEscape(c.Server), strings.ToUpper(string(c.Status)))
	}
	if len(problems) > 0 {
		fmt.Fprintf(w, "\n### Problems\n\n%s\n", strings.Join(problems, "\n"))
	}
}

func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
