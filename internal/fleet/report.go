package fleet

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/layercheck/layercheck/internal/junit"
	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/node"
)

// Formats are the report formats Write takes.
var Formats = []string{"text", "json", "junit", "markdown"}

// Write prints the report in format (one of Formats).
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case "text":
		r.WriteText(w)
		return nil
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "junit":
		return r.WriteJUnit(w)
	case "markdown":
		r.WriteMarkdown(w)
		return nil
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats, ", "))
}

func layerColumns(r *Report) []string {
	seen := map[string]bool{}
	var cols []string
	for _, n := range node.LayerOrder {
		for _, h := range r.Hosts {
			if h.Report != nil && h.Report.Layers[n] != nil && !seen[n] {
				seen[n] = true
				cols = append(cols, n)
			}
		}
	}
	for _, h := range r.Hosts {
		if h.Report == nil {
			continue
		}
		for _, n := range h.Report.OrderedLayers() {
			if !seen[n] {
				seen[n] = true
				cols = append(cols, n)
			}
		}
	}
	return cols
}

func cell(h *HostReport, layer string) string {
	if h.Report == nil || h.Report.Layers[layer] == nil {
		return "-"
	}
	return string(h.Report.Layers[layer].Status)
}

// WriteText prints the hosts × layers table, then every unreachable host
// (as Ansible prints UNREACHABLE) and every result that is not ok, with
// host, layer, message and remedy, then the summary line.
func (r *Report) WriteText(w io.Writer) {
	cols := layerColumns(r)
	width := 20
	for _, h := range r.Hosts {
		if len(h.Host)+2 > width {
			width = len(h.Host) + 2
		}
	}
	fmt.Fprintf(w, "%-*s", width, "HOST")
	for _, c := range cols {
		fmt.Fprintf(w, "%-14s", c)
	}
	fmt.Fprintln(w, "NODE")
	for _, h := range r.Hosts {
		fmt.Fprintf(w, "%-*s", width, h.Host)
		for _, c := range cols {
			fmt.Fprintf(w, "%-14s", cell(h, c))
		}
		fmt.Fprintln(w, strings.ToUpper(string(h.Status)))
	}
	for _, h := range r.Hosts {
		switch {
		case h.Status == StatusUnreachable:
			fmt.Fprintf(w, "\nfatal: [%s]: UNREACHABLE! => %s\n", h.Host, h.Msg)
		case h.Report == nil && h.Msg != "":
			fmt.Fprintf(w, "\nfatal: [%s]: ERROR! => %s\n", h.Host, h.Msg)
		}
	}
	for _, f := range r.Failures() {
		fmt.Fprintf(w, "\n[%s] %s %s %s: %s\n", strings.ToUpper(string(f.Status)), f.Host, f.Layer, f.Check, f.Msg)
		if f.Remediation != "" {
			fmt.Fprintf(w, "    fix: %s\n", f.Remediation)
		}
	}
	if c := r.Cluster; c != nil {
		fmt.Fprintf(w, "\ncluster %s: %s\n", c.Server, strings.ToUpper(string(c.Status)))
		for _, n := range c.OrderedLayers() {
			fmt.Fprintf(w, "  %-13s %s\n", n, c.Layers[n].Status)
		}
		for _, n := range c.OrderedLayers() {
			for _, res := range c.Layers[n].Results {
				if res.Status == verify.StatusFail || res.Status == verify.StatusError || res.Status == verify.StatusWarn {
					fmt.Fprintf(w, "\n[%s] cluster %s %s: %s\n", strings.ToUpper(string(res.Status)), n, res.Check, res.Msg)
					if res.Remediation != "" {
						fmt.Fprintf(w, "    fix: %s\n", res.Remediation)
					}
				}
			}
		}
	} else if r.ClusterSkipped != "" {
		fmt.Fprintf(w, "\ncluster layers skipped: %s\n", r.ClusterSkipped)
	}
	s := r.Summary
	fmt.Fprintf(w, "\n%s: %d ok, %d warn, %d failed, %d unreachable: %s\n", verify.Plural(s.Hosts, "host"), s.OK, s.Warn, s.Failed, s.Unreachable, strings.ToUpper(string(r.Status)))
}

// WriteMarkdown prints a summary a person pastes into a ticket: the table
// and the problems with their remedies.
func (r *Report) WriteMarkdown(w io.Writer) {
	s := r.Summary
	fmt.Fprintf(w, "## %s: %s\n\n", r.title(), strings.ToUpper(string(r.Status)))
	if len(r.Hosts) > 0 {
		fmt.Fprintf(w, "%s: %d ok, %d warn, %d failed, %d unreachable\n\n", verify.Plural(s.Hosts, "host"), s.OK, s.Warn, s.Failed, s.Unreachable)
	}
	cols := layerColumns(r)
	if len(r.Hosts) > 0 {
		fmt.Fprintf(w, "| host | %s | node |\n|---|%s---|\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
	}
	for _, h := range r.Hosts {
		var cells []string
		for _, c := range cols {
			cells = append(cells, cell(h, c))
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

// junitCaseOf is one check as a JUnit testcase: failed checks are
// failures, checks that could not run errors, skipped ones skipped;
// the text holds the message and the remedy.
func junitCaseOf(classname string, r verify.Result) junit.Case {
	c := junit.Case{Name: r.Layer + ": " + r.Check, Classname: classname}
	text := r.Msg
	if r.Remediation != "" {
		text += "\nfix: " + r.Remediation
	}
	switch r.Status {
	case verify.StatusFail:
		c.Failure = &junit.Problem{Message: r.Msg, Type: string(r.Status), Text: text}
	case verify.StatusWarn:
		// A warning does not fail the host (as layercheck_verify_fail_on_warn
		// defaults to false): it passes, with the warning in its output.
		c.SystemOut = "WARN: " + text
	case verify.StatusError:
		c.Error = &junit.Problem{Message: r.Msg, Type: "error", Text: text}
	case verify.StatusSkipped:
		c.Skipped = &junit.Problem{Message: r.Msg}
	default:
		c.SystemOut = r.Msg
	}
	return c
}

// WriteJUnit prints one testsuite per host and a testcase per check; an
// unreachable host is one testcase "connect" in error.
func (r *Report) WriteJUnit(w io.Writer) error {
	all := junit.Suites{Name: r.title()}
	for _, h := range r.Hosts {
		s := junit.Suite{Name: h.Host, Time: fmt.Sprintf("%.3f", float64(h.DurationMS)/1000)}
		if h.Report == nil {
			s.Add(junit.Case{Name: "connect", Classname: h.Host,
				Error: &junit.Problem{Message: h.Msg, Type: string(h.Status), Text: h.Msg}})
		} else {
			for _, l := range h.Report.OrderedLayers() {
				for _, res := range h.Report.Layers[l].Results {
					s.Add(junitCaseOf(h.Host+"."+l, res))
				}
			}
		}
		all.Add(s)
	}
	if c := r.Cluster; c != nil {
		s := junit.Suite{Name: "cluster"}
		for _, l := range c.OrderedLayers() {
			for _, res := range c.Layers[l].Results {
				s.Add(junitCaseOf("cluster."+l, res))
			}
		}
		all.Add(s)
	}
	return junit.Write(w, all)
}
