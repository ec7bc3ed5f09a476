package output

import (
	"fmt"
	"io"
	"strings"

	"github.com/layercheck/layercheck/internal/fleet"
	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/lint/report"
	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/node"
)

// Text for an operator, of every report: the lint's findings, a node's
// and the cluster's layers, a fleet run's hosts x layers table, the verify
// play's report.

// lintText is the lint report's text, which lint/report draws: the
// inventory_lint module returns it too (its result's text), and the
// module binary links neither this package nor what it imports.
func lintText(w io.Writer, rep *lint.Report, o report.TextOptions) {
	report.WriteText(w, rep, o)
}

// nodeText prints a node's report: one line per layer (and what its
// facts add under it, verify.TextDetailer), then each result that is not
// ok or skipped with its remedy, then the counts.
func nodeText(w io.Writer, rep *node.Report) {
	host := rep.Host
	if host == "" {
		host = "this node"
	}
	fmt.Fprintf(w, "layercheck node: %s (root %s): %s\n", host, rep.Root, strings.ToUpper(string(rep.Status)))
	for _, n := range rep.OrderedLayers() {
		lr := rep.Layers[n]
		fmt.Fprintf(w, "  %-13s %-7s %s, %d ms\n", n, lr.Status, verify.Plural(len(lr.Results), "check"), lr.DurationMS)
		if d, ok := lr.Facts.(verify.TextDetailer); ok {
			d.TextDetail(w)
		}
	}
	for _, n := range rep.OrderedLayers() {
		for _, r := range rep.Layers[n].Results {
			if r.Status == verify.StatusOK || r.Status == verify.StatusSkipped {
				continue
			}
			fmt.Fprintf(w, "\n[%s] %s %s: %s\n", strings.ToUpper(string(r.Status)), n, r.Check, r.Msg)
			if r.Remediation != "" {
				fmt.Fprintf(w, "    fix: %s\n", r.Remediation)
			}
		}
	}
	s := rep.Summary
	fmt.Fprintf(w, "\n%d checks: %d ok, %d warn, %d failed, %d skipped, %d errors\n", s.Total, s.OK, s.Warn, s.Failed, s.Skipped, s.Errored)
}

// clusterText prints the cluster's report: one line per layer, then each
// result that is not ok with its remedy, then the counts and the API
// requests made.
func clusterText(w io.Writer, rep *cluster.Report) {
	if rep.ServerVersion != "" {
		fmt.Fprintf(w, "layercheck cluster: %s (%s): %s\n", rep.Server, rep.ServerVersion, strings.ToUpper(string(rep.Status)))
	} else {
		fmt.Fprintf(w, "layercheck cluster: %s: %s\n", rep.Server, strings.ToUpper(string(rep.Status)))
	}
	for _, n := range rep.OrderedLayers() {
		lr := rep.Layers[n]
		fmt.Fprintf(w, "  %-12s %-7s %s, %d ms\n", n, lr.Status, verify.Plural(len(lr.Results), "check"), lr.DurationMS)
	}
	for _, n := range rep.OrderedLayers() {
		for _, r := range rep.Layers[n].Results {
			if r.Status == verify.StatusOK {
				continue
			}
			fmt.Fprintf(w, "\n[%s] %s %s: %s\n", strings.ToUpper(string(r.Status)), n, r.Check, r.Msg)
			if r.Remediation != "" {
				fmt.Fprintf(w, "    fix: %s\n", r.Remediation)
			}
		}
	}
	s := rep.Summary
	fmt.Fprintf(w, "\n%d checks: %d ok, %d warn, %d failed, %d skipped, %d errors; %d API requests\n", s.Total, s.OK, s.Warn, s.Failed, s.Skipped, s.Errored, rep.Requests)
}

// fleetText prints the hosts x layers table, then every unreachable host
// (as Ansible prints UNREACHABLE) and every result that is not ok, with
// host, layer, message and remedy, then the summary line.
func fleetText(w io.Writer, r *fleet.Report) {
	cols := fleetColumns(r)
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
			fmt.Fprintf(w, "%-14s", fleetCell(h, c))
		}
		fmt.Fprintln(w, strings.ToUpper(string(h.Status)))
	}
	for _, h := range r.Hosts {
		switch {
		case h.Status == fleet.StatusUnreachable:
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

// The verify play's report (Play, scope play), as the verify role prints
// it once for the play:
//
//	HOST   certificates  install  kubelet  etcd  dns  cni  addons  NODE
//	node1  ok            fail     fail     ok    ok   ok   skip    FAIL
//
//	CLUSTER                  nodes  kube_system  cni  addons  probe  STATUS
//	https://10.10.0.11:6443  ok     ok           ok   ok      ok     OK
//
//	[FAIL] node1 install drift:kube_pods_subnet: kube_pods_subnet is ...
//	    fix: ...
//
//	layercheck verify: 1 host: 0 ok, 0 warn, 1 failed; cluster: OK
//
// A cell is the layer's status (skipped as skip, - when the layer did not
// run); a host without facts is a NO FACTS row. Each problem (status,
// layer, check, message, fix) is said once with its hosts: a message that
// names its own host is compared with the name as <host>, so a failure
// several hosts share is one line (naming the first playAbridge hosts).
// Failures (fail, error) come first, then warnings; Verbose adds what was
// expected and found.
const (
	// playAbridge is how many hosts a problem names before it counts the rest.
	playAbridge = 10
	// hostMark stands for each host's own name in a problem several
	// hosts share.
	hostMark = "<host>"
	// detailChars is the longest expected or found value shown.
	detailChars = 300
)

// cellOf is a layer status as a table cell.
func cellOf(status string) string {
	if status == "skipped" {
		return "skip"
	}
	return status
}

// textTable is rows as left-aligned columns two spaces apart.
func textTable(rows [][]string) []string {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], runes(c))
		}
	}
	out := make([]string, len(rows))
	for k, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = ljust(c, widths[i])
		}
		out[k] = rstrip(strings.Join(cells, "  "))
	}
	return out
}

func abridgeHosts(hosts []string) string {
	if len(hosts) <= playAbridge {
		return strings.Join(hosts, ", ")
	}
	return fmt.Sprintf("%s and %d more (%d in all)", strings.Join(hosts[:playAbridge], ", "), len(hosts)-playAbridge, len(hosts))
}

// generic is text with host's own name, where it stands as a whole name
// (no ASCII letter or digit beside it), as hostMark.
func generic(text, host string) string {
	if host == "" || !strings.Contains(text, host) {
		return text
	}
	var b strings.Builder
	i := 0
	for {
		k := strings.Index(text[i:], host)
		if k < 0 {
			break
		}
		k += i
		end := k + len(host)
		if (k > 0 && isAlnum(text[k-1])) || (end < len(text) && isAlnum(text[end])) {
			b.WriteString(text[i : k+1])
			i = k + 1
			continue
		}
		b.WriteString(text[i:k])
		b.WriteString(hostMark)
		i = end
	}
	b.WriteString(text[i:])
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// detail is an expected or found value as shown.
func detail(v any) string {
	s, ok := v.(string)
	if !ok {
		s = pyJSON(v)
	}
	return truncate(s, detailChars)
}

// problemKey is what makes two problems one.
type problemKey struct {
	status, layer, check, msg, fix string
}

type problem struct {
	hosts    []string
	result   *pyDict
	msg, fix string // as the first host said them
}

// problems collects the results that are not ok, each distinct one once
// with its hosts, in the order met.
type problems struct {
	keys  []problemKey
	byKey map[problemKey]*problem
}

func (ps *problems) add(k problemKey, r *pyDict, msg, fix string) *problem {
	p := ps.byKey[k]
	if p == nil {
		p = &problem{result: r, msg: msg, fix: fix}
		ps.byKey[k] = p
		ps.keys = append(ps.keys, k)
	}
	return p
}

// problemStatus is the status of a result the report lists ("" for the
// others).
func problemStatus(r *pyDict) string {
	if r == nil {
		return ""
	}
	switch s := r.get("status"); s {
	case "fail", "error", "warn":
		return s.(string)
	}
	return ""
}

// resultsOf is a layer's results when it has a list of them.
func resultsOf(layer any) []any {
	l, _ := asDict(layer).get("results").([]any)
	return l
}

// text is the report's lines, joined, and its one-line summary.
func (p *Play) text() (string, string, error) {
	hosts := p.rows()
	table := p.Table == nil || *p.Table
	var lines []string
	var cols []string
	seen := map[string]bool{}
	for _, h := range hosts {
		for _, n := range ordered(layersOf(p.nodes[h]).keys, p.Order) {
			if !seen[n] {
				seen[n] = true
				cols = append(cols, n)
			}
		}
	}
	cols = ordered(cols, p.Order)
	var ok, warn, failed, noFacts int
	rows := [][]string{append(append([]string{"HOST"}, cols...), "NODE")}
	for _, h := range hosts {
		rep := p.nodes[h]
		layers := layersOf(rep)
		var status string
		if rep == nil {
			noFacts++
			status = "NO FACTS"
		} else {
			st := pyOr(rep.get("status"), "error")
			switch {
			case len(p.failedLayers(rep)) > 0:
				status = "FAIL"
				failed++
			case st == "warn":
				status = strings.ToUpper(st)
				warn++
			default:
				status = strings.ToUpper(st)
				ok++
			}
		}
		row := []string{h}
		for _, c := range cols {
			cell := "-"
			if l := asDict(layers.vals[c]); l != nil {
				cell = cellOf(pyStr(l.get("status")))
			}
			row = append(row, cell)
		}
		rows = append(rows, append(row, status))
	}
	var clayers *pyDict
	var ccols []string
	if p.cluster != nil {
		clayers = layersOf(p.cluster)
		ccols = ordered(clayers.keys, cluster.LayerOrder)
	}
	if table {
		lines = append(lines, textTable(rows)...)
		if p.cluster != nil {
			for _, c := range ccols {
				if asDict(clayers.vals[c]) == nil {
					return "", "", fmt.Errorf("layercheck_cluster facts of %s: layer %s is no object", p.ClusterHost, c)
				}
			}
			cst := strings.ToUpper(pyOr(p.cluster.get("status"), "error"))
			if len(p.failedLayers(p.cluster)) > 0 {
				cst = "FAIL"
			}
			crow := []string{pyOr(p.cluster.get("server"), "cluster")}
			for _, c := range ccols {
				crow = append(crow, cellOf(pyStr(asDict(clayers.vals[c]).get("status"))))
			}
			lines = append(lines, "")
			lines = append(lines, textTable([][]string{
				append(append([]string{"CLUSTER"}, ccols...), "STATUS"),
				append(crow, cst),
			})...)
		}
	}
	if p.cluster == nil && p.ClusterSkipped != "" {
		lines = append(lines, "", "cluster layers skipped: "+p.ClusterSkipped)
	}

	ps := &problems{byKey: map[problemKey]*problem{}}
	var missing []string
	for _, h := range hosts {
		if p.nodes[h] == nil {
			missing = append(missing, h)
		}
	}
	for _, h := range hosts {
		layers := layersOf(p.nodes[h])
		for _, n := range ordered(layers.keys, p.Order) {
			for _, e := range resultsOf(layers.vals[n]) {
				r := asDict(e)
				st := problemStatus(r)
				if st == "" {
					continue
				}
				msg, fix := pyOr(r.get("msg"), ""), pyOr(r.get("remediation"), "")
				k := problemKey{st, n, pyOr(r.get("check"), ""), generic(msg, h), generic(fix, h)}
				pr := ps.add(k, r, msg, fix)
				pr.hosts = append(pr.hosts, h)
			}
		}
	}
	if p.cluster != nil {
		for _, n := range ccols {
			for _, e := range resultsOf(clayers.vals[n]) {
				r := asDict(e)
				st := problemStatus(r)
				if st == "" {
					continue
				}
				msg, fix := pyOr(r.get("msg"), ""), pyOr(r.get("remediation"), "")
				k := problemKey{st, n, pyOr(r.get("check"), ""), msg, fix}
				if ps.byKey[k] == nil {
					ps.add(k, r, msg, fix).hosts = []string{"cluster"}
				}
			}
		}
	}

	say := func(k problemKey, pr *problem) {
		msg, fix := k.msg, k.fix
		if len(pr.hosts) == 1 {
			msg, fix = pr.msg, pr.fix
		}
		lines = append(lines, "", fmt.Sprintf("[%s] %s %s %s: %s", strings.ToUpper(k.status), abridgeHosts(pr.hosts), k.layer, k.check, msg))
		if fix != "" {
			lines = append(lines, "    fix: "+fix)
		}
		if p.Verbose {
			for _, f := range [][2]string{{"expected", "expected"}, {"found", "actual"}} {
				if v := pr.result.get(f[1]); !pyEmpty(v) {
					lines = append(lines, fmt.Sprintf("    %s: %s", f[0], detail(v)))
				}
			}
		}
	}
	if len(missing) > 0 {
		lines = append(lines, "", fmt.Sprintf("[FAIL] %s: no layercheck_node facts (the host was unreachable or node_facts failed: see its error above)", abridgeHosts(missing)))
	}
	for _, rank := range [][]string{{"fail", "error"}, {"warn"}} {
		for _, k := range ps.keys {
			if k.status == rank[0] || (len(rank) > 1 && k.status == rank[1]) {
				say(k, ps.byKey[k])
			}
		}
	}

	word := "hosts"
	if len(hosts) == 1 {
		word = "host"
	}
	summary := fmt.Sprintf("layercheck verify: %d %s: %d ok, %d warn, %d failed", len(hosts), word, ok, warn, failed+noFacts)
	switch {
	case p.cluster != nil:
		if cfail := p.failedLayers(p.cluster); len(cfail) > 0 {
			summary += fmt.Sprintf("; cluster: FAIL (%s)", strings.Join(ordered(cfail, cluster.LayerOrder), ", "))
		} else {
			summary += "; cluster: " + strings.ToUpper(pyOr(p.cluster.get("status"), "error"))
		}
	case p.ClusterSkipped != "":
		summary += "; cluster: skipped"
	}
	lines = append(lines, "", summary)
	return strings.Join(lines, "\n"), summary, nil
}
