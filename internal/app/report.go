package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/layercheck/layercheck/internal/output"
)

func init() {
	register("report", "print the verify play's report from its hosts' facts (JSON on standard input; the collection's verify_report action runs it)", runReport)
}

const reportAbout = `Reads from standard input what the collection's verify_report action
sends, a JSON object: scope (play: the report of the play, the hosts x
layers table, the cluster's layers, each problem once with its hosts, the
summary; host: one host's verdict), hosts, inventory (the hosts in the
inventory's order), nodes (each host's ansible_facts.layercheck_node),
cluster_host, cluster (its ansible_facts.layercheck_cluster),
cluster_skipped, order (the node layers first), fail_on_warn, table,
verbose. Writes a JSON object: text (the report to print), msg (its
summary, or the host's verdict) and failed (the host failed). Exit 0 when
it answered, 2 on a request it cannot read.`

func runReport(_ context.Context, args []string, s Streams) error {
	fs := newFlags("report", "< REQUEST.json", reportAbout)
	if help, err := fs.parse(args, s); help || err != nil {
		return err
	}
	if fs.fs.NArg() > 0 {
		return fs.usageError(fmt.Sprintf("takes no arguments, got %q", fs.fs.Args()))
	}
	if s.In == nil {
		return &ExitError{Code: 2, Msg: "report: no standard input"}
	}
	p, err := output.ReadPlay(s.In)
	if err != nil {
		return &ExitError{Code: 2, Msg: "report: " + err.Error()}
	}
	res, err := p.Result()
	if err != nil {
		return &ExitError{Code: 2, Msg: "report: " + err.Error()}
	}
	enc := json.NewEncoder(s.Out)
	enc.SetEscapeHTML(false)
	return enc.Encode(res)
}
