package app

import (
	"io"

	"github.com/layercheck/layercheck/internal/fleet"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/node"
)

// checkFormats are the --format values of `layercheck node` and
// `layercheck cluster`.
var checkFormats = []string{"text", "json", "junit", "markdown"}

// writeCheckReport prints a node or a cluster report (one of them nil):
// text and json as writeReport, junit and markdown as `layercheck verify`
// writes them (a testsuite per host and for the cluster, a testcase per
// check).
func writeCheckReport(w io.Writer, format, title string, node *node.Report, cl *cluster.Report, text func(io.Writer)) error {
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
	return fr.Write(w, format)
}
