// Package output is what layercheck prints, one file per format, each
// serving every report it applies to: text.go (the lint's findings, a
// node's and the cluster's layers, a fleet run's table, the verify play's
// report), json.go (every report), junit.go (the lint, and verify
// reports: a suite per host and for the cluster), sarif.go (the lint),
// markdown.go (verify reports), prometheus.go (a node's and the cluster's
// metrics). The reports are lint.Report (layercheck lint), a node's or the
// cluster's report (layercheck node, layercheck cluster: Check),
// fleet.Report (layercheck verify) and Play (the collection's
// verify_report action, play.go); each command picks a format by name
// (its --format) through WriteLint, WriteCheck or WriteFleet.
//
// Only the CLI links this package; the module binaries return JSON (and
// the inventory_lint module the lint's text, which lint/report draws).
package output

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/layercheck/layercheck/internal/fleet"
	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/lint/report"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/node"
)

// The formats of each report, in the order the commands' help lists them.
var (
	// LintFormats are `layercheck lint`'s.
	LintFormats = []string{"text", "json", "sarif", "junit"}
	// CheckFormats are `layercheck node`'s and `layercheck cluster`'s.
	CheckFormats = []string{"text", "json", "junit", "markdown", "prometheus"}
	// FleetFormats are `layercheck verify`'s.
	FleetFormats = []string{"text", "json", "junit", "markdown"}
)

func unknownFormat(format string, known []string) error {
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(known, ", "))
}

// Lint is a lint report and what its formats need beside it.
type Lint struct {
	Report *lint.Report
	// Sources are the inventory sources given (-i): junit names its
	// suite after them, sarif finds their directory (LintBaseDir).
	Sources []string
	// Text are the text format's options.
	Text report.TextOptions
}

// WriteLint prints a lint report in format (one of LintFormats).
func WriteLint(w io.Writer, format string, l Lint) error {
	switch format {
	case "text":
		lintText(w, l.Report, l.Text)
		return nil
	case "json":
		return writeJSON(w, l.Report)
	case "sarif":
		return WriteLintSARIF(w, l.Report, LintBaseDir(l.Report, l.Sources), "")
	case "junit":
		return lintJUnit(w, l.Report, "layercheck lint "+strings.Join(l.Sources, " "))
	}
	return unknownFormat(format, LintFormats)
}

// Check is a node's or the cluster's report: one of Node and Cluster.
type Check struct {
	Node    *node.Report
	Cluster *cluster.Report
	// Title names the command in the junit and markdown formats.
	Title string
	// Run is when the run started and how long it took (prometheus).
	Run Run
}

// WriteCheck prints a node's or the cluster's report in format (one of
// CheckFormats): junit and markdown as for a fleet run of one host (or of
// the cluster alone).
func WriteCheck(w io.Writer, format string, c Check) error {
	switch format {
	case "text":
		if c.Node != nil {
			nodeText(w, c.Node)
		} else {
			clusterText(w, c.Cluster)
		}
		return nil
	case "json":
		if c.Node != nil {
			return writeJSON(w, c.Node)
		}
		return writeJSON(w, c.Cluster)
	case "junit", "markdown":
		var fr *fleet.Report
		if c.Node != nil {
			host := c.Node.Host
			if host == "" {
				host = "this node"
			}
			fr = fleet.NewReport(&fleet.HostReport{Host: host, Status: c.Node.Status, Report: c.Node})
		} else {
			fr = fleet.NewReport()
			fr.AddCluster(c.Cluster)
		}
		fr.Title = c.Title
		return WriteFleet(w, format, fr)
	case "prometheus":
		reg, err := c.registry()
		if err != nil {
			return err
		}
		return writeMetrics(w, reg)
	}
	return unknownFormat(format, CheckFormats)
}

// WriteTextfile writes the report's metrics to dir/name for
// node_exporter's textfile collector (--textfile), atomically.
func (c Check) WriteTextfile(dir, name string) error {
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("--textfile %s: %w", dir, err)
	} else if !fi.IsDir() {
		return fmt.Errorf("--textfile %s: not a directory", dir)
	}
	reg, err := c.registry()
	if err != nil {
		return err
	}
	if err := writeTextfile(dir, name, reg); err != nil {
		return fmt.Errorf("--textfile %s: %w", dir, err)
	}
	return nil
}

// registry is the private registry of the report's metrics.
func (c Check) registry() (*prometheus.Registry, error) {
	if c.Node != nil {
		return newRegistry(&collector{Scope: scopeNode, Layers: c.Node.Layers, Run: c.Run})
	}
	return newRegistry(&collector{Scope: scopeCluster, Layers: c.Cluster.Layers, Run: c.Run})
}

// WriteFleet prints a fleet run's report in format (one of FleetFormats).
func WriteFleet(w io.Writer, format string, r *fleet.Report) error {
	switch format {
	case "text":
		fleetText(w, r)
		return nil
	case "json":
		return writeJSON(w, r)
	case "junit":
		return fleetJUnit(w, r)
	case "markdown":
		fleetMarkdown(w, r)
		return nil
	}
	return unknownFormat(format, FleetFormats)
}

// fleetTitle names the command in the markdown and junit reports.
func fleetTitle(r *fleet.Report) string {
	if r.Title != "" {
		return r.Title
	}
	return "layercheck verify"
}

// fleetColumns are the node layers of a fleet run's table: those of
// node.LayerOrder any host ran, then any others as the hosts list them.
func fleetColumns(r *fleet.Report) []string {
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

// fleetCell is a host's layer status in the table ("-": not run).
func fleetCell(h *fleet.HostReport, layer string) string {
	if h.Report == nil || h.Report.Layers[layer] == nil {
		return "-"
	}
	return string(h.Report.Layers[layer].Status)
}
