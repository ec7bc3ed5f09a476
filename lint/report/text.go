package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/layercheck/layercheck/lint"
)

// WriteText renders the report for an operator: a header, one block per
// finding, a summary line.
func WriteText(w io.Writer, r *lint.Report, sources []string) {
	rel := "the inventory directory"
	if r.LocationsRelativeTo != "" {
		rel = r.LocationsRelativeTo + " (the sources are in different directories)"
	}
	fmt.Fprintf(w, "layercheck lint %s (catalogue: %s; locations relative to %s)\n",
		strings.Join(sources, " "), r.Catalogue, rel)
	info := 0
	for _, f := range r.Findings {
		if f.Severity == lint.SeverityInfo {
			info++
		}
		fmt.Fprintln(w)
		head := strings.ToUpper(string(f.Severity)) + " [" + f.Rule + "]"
		switch {
		case f.Variable != "" && f.Value != "":
			head += " " + f.Variable + " = " + f.Value
		case f.Variable != "":
			head += " " + f.Variable
		}
		fmt.Fprintln(w, head)
		fmt.Fprintln(w, "  "+f.Message)
		if f.Where != "" {
			fmt.Fprintln(w, "  where: "+f.Where)
		}
		if len(f.Hosts) > 0 {
			fmt.Fprintln(w, "  hosts: "+abridgeHosts(f.Hosts, 6))
		}
		if f.Why != "" {
			fmt.Fprintln(w, "  why:   "+f.Why)
		}
		if f.Fix != "" {
			fmt.Fprintln(w, "  fix:   "+f.Fix)
		}
	}
	fmt.Fprintln(w)
	verdict := "OK"
	if r.Errors > 0 {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "%s: %d error(s), %d warning(s), %d info\n", verdict, r.Errors, r.Warnings, info)
}

func abridgeHosts(hosts []string, n int) string {
	if len(hosts) <= n {
		return strings.Join(hosts, ", ")
	}
	return fmt.Sprintf("%s, … (%d hosts)", strings.Join(hosts[:n], ", "), len(hosts))
}
