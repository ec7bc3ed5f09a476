package output

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/layercheck/layercheck/verify/cluster"
)

// Play is what the collection's verify_report action asks for: the verify
// play's report (Scope "play"), or one host's verdict (Scope "host"), from
// the facts node_facts and cluster_facts left on the play's hosts.
type Play struct {
	Scope string `json:"scope"`
	// Hosts are the table's rows (scope play), or the one host whose
	// verdict is asked for (scope host).
	Hosts []string `json:"hosts"`
	// Inventory is the inventory's order of the hosts (groups['all']):
	// the rows follow it, hosts it does not list last.
	Inventory []string `json:"inventory"`
	// Nodes holds each host's ansible_facts.layercheck_node; a host
	// missing here or null has none (unreachable, or node_facts failed).
	Nodes map[string]json.RawMessage `json:"nodes"`
	// ClusterHost is the host that ran the cluster layers; Cluster its
	// ansible_facts.layercheck_cluster (null: none), ClusterSkipped its
	// layercheck_cluster_skipped, why they did not run.
	ClusterHost    string          `json:"cluster_host"`
	Cluster        json.RawMessage `json:"cluster"`
	ClusterSkipped string          `json:"cluster_skipped"`
	// Order is the node layers first in the table, in this order; the
	// others follow by name.
	Order []string `json:"order"`
	// FailOnWarn makes a warning fail a host (and the cluster) too.
	FailOnWarn bool `json:"fail_on_warn"`
	// Table prints the tables (default true); Verbose (ansible-playbook
	// -v) adds each problem's expected and found values.
	Table   *bool `json:"table"`
	Verbose bool  `json:"verbose"`

	nodes   map[string]*pyDict
	cluster *pyDict
}

// PlayResult is the action's answer: Text to print (scope play), Msg
// (the summary, or the host's verdict), and whether the host failed.
type PlayResult struct {
	Text   string `json:"text,omitempty"`
	Msg    string `json:"msg"`
	Failed bool   `json:"failed"`
}

// ReadPlay reads a Play, as JSON, from r.
func ReadPlay(r io.Reader) (*Play, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var p Play
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("the request is no verify play report request: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("the request is no verify play report request: data after its JSON object")
	}
	switch p.Scope {
	case "play":
	case "host":
		if len(p.Hosts) != 1 {
			return nil, fmt.Errorf("scope host: hosts must name one host, got %d", len(p.Hosts))
		}
	default:
		return nil, fmt.Errorf("scope must be play or host, got %q", p.Scope)
	}
	p.nodes = map[string]*pyDict{}
	for h, raw := range p.Nodes {
		d, err := factsOf(raw)
		if err != nil {
			return nil, fmt.Errorf("layercheck_node facts of %s: %w", h, err)
		}
		p.nodes[h] = d
	}
	var err error
	if p.cluster, err = factsOf(p.Cluster); err != nil {
		return nil, fmt.Errorf("layercheck_cluster facts of %s: %w", p.ClusterHost, err)
	}
	return &p, nil
}

// factsOf decodes a host's facts: nil when there are none (absent, null,
// or not an object).
func factsOf(raw json.RawMessage) (*pyDict, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	v, err := decodePy(raw)
	if err != nil {
		return nil, err
	}
	return asDict(v), nil
}

// Result answers the request: the report, or the host's verdict.
func (p *Play) Result() (*PlayResult, error) {
	if p.Scope == "host" {
		return p.verdict(), nil
	}
	text, summary, err := p.text()
	if err != nil {
		return nil, err
	}
	return &PlayResult{Text: text, Msg: summary}, nil
}

// verdict is one host's: failed, with one line naming its failed layers
// (and, on the cluster host, the cluster's), when a layer failed.
func (p *Play) verdict() *PlayResult {
	host := p.Hosts[0]
	rep := p.nodes[host]
	if rep == nil {
		return &PlayResult{Failed: true, Msg: fmt.Sprintf("layercheck: %s has no layercheck_node facts", host)}
	}
	var what []string
	if failed := ordered(p.failedLayers(rep), p.Order); len(failed) > 0 {
		what = append(what, "node layer(s) "+strings.Join(failed, ", "))
	}
	if host == p.ClusterHost {
		if cfail := p.failedLayers(p.cluster); len(cfail) > 0 {
			what = append(what, "cluster layer(s) "+strings.Join(ordered(cfail, cluster.LayerOrder), ", "))
		}
	}
	if len(what) > 0 {
		return &PlayResult{Failed: true, Msg: fmt.Sprintf("layercheck: %s failed %s; the report above says what is wrong and how to fix it",
			host, strings.Join(what, " and "))}
	}
	return &PlayResult{Msg: fmt.Sprintf("layercheck: %s passed", host)}
}

// rows are the hosts in the inventory's order, those it does not list
// last, in the order given.
func (p *Play) rows() []string {
	index := map[string]int{}
	for i, h := range p.Inventory {
		if _, seen := index[h]; !seen {
			index[h] = i
		}
	}
	rank := func(h string) int {
		if i, ok := index[h]; ok {
			return i
		}
		return len(index)
	}
	hosts := append([]string(nil), p.Hosts...)
	sort.SliceStable(hosts, func(i, j int) bool { return rank(hosts[i]) < rank(hosts[j]) })
	return hosts
}

// layersOf is a node or cluster report's layers (none when they are not
// an object).
func layersOf(rep *pyDict) *pyDict {
	if d := asDict(rep.get("layers")); d != nil {
		return d
	}
	return &pyDict{vals: map[string]any{}}
}

// ordered lists names: those of order first, in order, then the others
// by name.
func ordered(names []string, order []string) []string {
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	var out []string
	for _, n := range order {
		if set[n] {
			out = append(out, n)
		}
	}
	inOrder := map[string]bool{}
	for _, n := range order {
		inOrder[n] = true
	}
	var rest []string
	for n := range set {
		if !inOrder[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// bad is whether a layer or result status fails a host.
func (p *Play) bad(status any) bool {
	switch status {
	case "fail", "error":
		return true
	case "warn":
		return p.FailOnWarn
	}
	return false
}

// failedLayers are the layers of a node or cluster report whose status
// fails the host.
func (p *Play) failedLayers(rep *pyDict) []string {
	layers := layersOf(rep)
	var out []string
	for _, n := range layers.keys {
		if l := asDict(layers.vals[n]); l != nil && p.bad(l.get("status")) {
			out = append(out, n)
		}
	}
	return out
}
