package app

import (
	"fmt"
	"io"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/layercheck/layercheck/internal/fleet"
	"github.com/layercheck/layercheck/internal/metrics"
	"github.com/layercheck/layercheck/internal/output"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/node"
)

// checkFormats are the --format values of `layercheck node` and
// `layercheck cluster`.
var checkFormats = []string{"text", "json", "junit", "markdown", "prometheus"}

const checkFormatsWant = "want text, json, junit, markdown or prometheus"

// writeCheckReport prints a node or a cluster report (one of them nil):
// text and json as writeReport, junit and markdown as `layercheck verify`
// writes them (a testsuite per host and for the cluster, a testcase per
// check), prometheus in the text exposition format (package metrics).
func writeCheckReport(w io.Writer, format, title string, node *node.Report, cl *cluster.Report, run metrics.Run, text func(io.Writer)) error {
	if format == "prometheus" {
		reg, err := checkRegistry(node, cl, run)
		if err != nil {
			return err
		}
		return metrics.Write(w, reg)
	}
	if format != "junit" && format != "markdown" {
		var rep any = node
		if node == nil {
			rep = cl
		}
		return writeReport(w, format, rep, text)
	}
	var fr *fleet.Report
	if node != nil {
		host := node.Host
		if host == "" {
			host = "this node"
		}
		fr = fleet.NewReport(&fleet.HostReport{Host: host, Status: node.Status, Report: node})
	} else {
		fr = fleet.NewReport()
		fr.AddCluster(cl)
	}
	fr.Title = title
	return output.WriteFleet(w, format, fr)
}

// checkRegistry is the private registry of a node or cluster report's
// metrics (one of them nil).
func checkRegistry(node *node.Report, cl *cluster.Report, run metrics.Run) (*prometheus.Registry, error) {
	if node != nil {
		return metrics.NewRegistry(&metrics.Collector{Scope: metrics.ScopeNode, Layers: node.Layers, Run: run})
	}
	return metrics.NewRegistry(&metrics.Collector{Scope: metrics.ScopeCluster, Layers: cl.Layers, Run: run})
}

// writeTextfile writes the report's metrics to dir/name for node_exporter's
// textfile collector (--textfile), atomically.
func writeTextfile(dir, name string, node *node.Report, cl *cluster.Report, run metrics.Run) error {
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("--textfile %s: %w", dir, err)
	} else if !fi.IsDir() {
		return fmt.Errorf("--textfile %s: not a directory", dir)
	}
	reg, err := checkRegistry(node, cl, run)
	if err != nil {
		return err
	}
	if err := metrics.WriteTextfile(dir, name, reg); err != nil {
		return fmt.Errorf("--textfile %s: %w", dir, err)
	}
	return nil
}
