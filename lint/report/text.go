package report

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/layercheck/layercheck/lint"
)

// TextOptions are the choices of `layercheck lint`'s text output.
type TextOptions struct {
	// Sources are the -i arguments, named in the header.
	Sources []string
	// Color adds ANSI colours (severity words, locations).
	Color bool
	// Quiet prints the summary only: the counts, per rule.
	Quiet bool
	// Verbose adds each finding's why.
	Verbose bool
	// RelativeTo names the directory locations are relative to, for the
	// header ("" is the inventory directory or LocationsRelativeTo).
	RelativeTo string
	// AllHosts is the number of hosts in the inventory: a finding
	// affecting them all says "all N hosts".
	AllHosts int
	// Suppressed counts findings left out by suppressions, per rule.
	Suppressed map[string]int
}

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	ansiDim    = "\x1b[2m"
)

func paint(on bool, code, s string) string {
	if !on || s == "" {
		return s
	}
	return code + s + ansiReset
}

func sevColor(s lint.Severity) string {
	switch s {
	case lint.SeverityError:
		return ansiRed + ansiBold
	case lint.SeverityWarning:
		return ansiYellow
	}
	return ansiCyan
}

// WriteText renders the report for `layercheck lint`: a header; the
// findings grouped by file, then by line (extra vars last, findings without
// a location first), each on one line with severity, rule, variable =
// value, hosts and what is wrong, then the fix (and with Verbose the why);
// then each rule that reported once with its explanation; then a summary
// with the counts per rule. Quiet keeps the summary only.
func WriteText(w io.Writer, r *lint.Report, o TextOptions) {
	if !o.Quiet {
		rel := o.RelativeTo
		switch {
		case rel != "":
		case r.LocationsRelativeTo != "":
			rel = r.LocationsRelativeTo + " (the sources are in different directories)"
		default:
			rel = "the inventory directory"
		}
		used := r.CatalogueUsed()
		if r.CatalogueNote != "" {
			used += "; " + r.CatalogueNote
		}
		core := ""
		if r.AnsibleCore != "" {
			core = "; string booleans judged under ansible-core " + r.AnsibleCore + ", " + r.AnsibleCoreWhy
		}
		fmt.Fprintf(w, "layercheck lint %s (catalogue: %s%s; locations relative to %s)\n",
			strings.Join(o.Sources, " "), used, core, rel)
		writeFindings(w, r, o)
	}
	writeSummary(w, r, o)
}

func writeFindings(w io.Writer, r *lint.Report, o TextOptions) {
	type group struct {
		file string
		fs   []lint.Finding
	}
	var groups []*group
	byFile := map[string]*group{}
	for _, f := range r.Findings {
		file := ""
		if f.Location != nil {
			file = f.Location.File
		}
		g := byFile[file]
		if g == nil {
			g = &group{file: file}
			byFile[file] = g
			groups = append(groups, g)
		}
		g.fs = append(g.fs, f)
	}
	rank := func(file string) int {
		switch file {
		case "":
			return 0
		case "-e":
			return 2
		}
		return 1
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i].file, groups[j].file
		if rank(a) != rank(b) {
			return rank(a) < rank(b)
		}
		return a < b
	})
	for _, g := range groups {
		sort.SliceStable(g.fs, func(i, j int) bool {
			a, b := g.fs[i].Location, g.fs[j].Location
			if a == nil || b == nil {
				return a == nil && b != nil
			}
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.Column < b.Column
		})
		title := g.file
		switch title {
		case "":
			title = "(the inventory as a whole)"
		case "-e":
			title = "-e (extra vars)"
		}
		fmt.Fprintf(w, "\n%s\n", paint(o.Color, ansiBold, title))
		for _, f := range g.fs {
			pos := ""
			if f.Location != nil && f.Location.Line > 0 {
				pos = fmt.Sprint(f.Location.Line)
				if f.Location.Column > 0 {
					pos += fmt.Sprintf(":%d", f.Location.Column)
				}
			}
			line := FindingLine(lint.Finding{Variable: f.Variable, Value: f.Value, Hosts: f.Hosts, Message: f.Message}, 6, o.AllHosts)
			fmt.Fprintf(w, "  %s %s %s %s\n", paint(o.Color, ansiDim, fmt.Sprintf("%-6s", pos)),
				paint(o.Color, sevColor(f.Severity), fmt.Sprintf("%-7s", f.Severity)), paint(o.Color, ansiBold, f.Rule), line)
			if f.Fix != "" {
				fmt.Fprintf(w, "         fix: %s\n", f.Fix)
			}
			if o.Verbose && f.Why != "" {
				fmt.Fprintf(w, "         why: %s\n", f.Why)
			}
		}
	}
}

// ruleCount is one rule's findings at one severity.
type ruleCount struct {
	rule string
	sev  lint.Severity
	n    int
}

func ruleCounts(r *lint.Report) []ruleCount {
	idx := map[string]int{}
	var out []ruleCount
	for _, f := range r.Findings {
		k := string(f.Severity) + " " + f.Rule
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, ruleCount{rule: f.Rule, sev: f.Severity})
		}
		out[i].n++
	}
	rank := map[lint.Severity]int{lint.SeverityError: 0, lint.SeverityWarning: 1, lint.SeverityInfo: 2}
	sort.SliceStable(out, func(i, j int) bool {
		if rank[out[i].sev] != rank[out[j].sev] {
			return rank[out[i].sev] < rank[out[j].sev]
		}
		if out[i].n != out[j].n {
			return out[i].n > out[j].n
		}
		return out[i].rule < out[j].rule
	})
	return out
}

func writeSummary(w io.Writer, r *lint.Report, o TextOptions) {
	counts := ruleCounts(r)
	summaries := map[string]string{}
	for _, ri := range lint.Rules() {
		summaries[ri.ID] = ri.Summary
	}
	if !o.Quiet && len(counts) > 0 {
		fmt.Fprintf(w, "\n%s\n", paint(o.Color, ansiBold, "Rules"))
		seen := map[string]bool{}
		for _, c := range counts {
			if seen[c.rule] {
				continue
			}
			seen[c.rule] = true
			fmt.Fprintf(w, "  %s: %s\n", paint(o.Color, ansiBold, c.rule), summaries[c.rule])
		}
	}
	info := len(r.Findings) - r.Errors - r.Warnings
	verdict := paint(o.Color, ansiBold, "OK")
	if r.Errors > 0 {
		verdict = paint(o.Color, ansiRed+ansiBold, "FAILED")
	}
	fmt.Fprintf(w, "\n%s: %d error(s), %d warning(s), %d info", verdict, r.Errors, r.Warnings, info)
	if n := total(o.Suppressed); n > 0 {
		fmt.Fprintf(w, ", %d suppressed", n)
	}
	fmt.Fprintf(w, " (%s)\n", r.CatalogueUsed())
	for _, c := range counts {
		fmt.Fprintf(w, "  %s %-24s %d\n", paint(o.Color, sevColor(c.sev), fmt.Sprintf("%-7s", c.sev)), c.rule, c.n)
	}
	rules := make([]string, 0, len(o.Suppressed))
	for k := range o.Suppressed {
		rules = append(rules, k)
	}
	sort.Strings(rules)
	for _, k := range rules {
		fmt.Fprintf(w, "  %-7s %-24s %d\n", "ignored", k, o.Suppressed[k])
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// Relocate rewrites the locations of r to be relative to cwd when the
// inventory base directory (LocationsRelativeTo, else dir) is cwd or below
// it, and says so: it returns the description of what locations are
// relative to now ("" when nothing changed); LocationsRelativeTo becomes cwd. Absolute file locations
// (an -e @file) under cwd become relative too. dir and cwd are absolute.
// It sets each finding's Location (see Locate).
func Relocate(r *lint.Report, dir, cwd string) string {
	base := dir
	if r.LocationsRelativeTo != "" {
		base = r.LocationsRelativeTo
	}
	prefix, err := filepath.Rel(cwd, base)
	if err != nil || prefix == ".." || strings.HasPrefix(prefix, "../") || filepath.IsAbs(prefix) {
		return ""
	}
	for _, list := range [][]lint.Finding{r.Findings, r.Suppressed} {
		relocate(list, prefix, cwd)
	}
	r.LocationsRelativeTo = cwd
	return "the current directory"
}

// Locate sets every finding's Location from its Where (reported and
// suppressed ones).
func Locate(r *lint.Report) {
	for _, list := range [][]lint.Finding{r.Findings, r.Suppressed} {
		for i := range list {
			list[i].Location = lint.ParseWhere(list[i].Where)
		}
	}
}

func relocate(list []lint.Finding, prefix, cwd string) {
	for i := range list {
		f := &list[i]
		f.Location = lint.ParseWhere(f.Where)
		if f.Location == nil || f.Location.File == "-e" {
			continue
		}
		file := f.Location.File
		if filepath.IsAbs(file) {
			rel, err := filepath.Rel(cwd, file)
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				continue
			}
			file = rel
		} else {
			file = filepath.Join(prefix, file)
		}
		f.Where = file + strings.TrimPrefix(f.Where, f.Location.File)
		f.Location.File = file
	}
}
