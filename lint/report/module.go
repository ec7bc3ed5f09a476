// Package report turns a lint.Report into what operators and Ansible read:
// the per-host reports (ansible_facts.layercheck_lint), one-line findings
// for assert messages, the text the CLI prints, and the whole
// inventory_lint module run (Run), so the module and `layercheck lint`
// share one rendering.
package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/layercheck/layercheck/clusterstate"
	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/module"
	"github.com/layercheck/layercheck/parser"
)

// Options are the module's options (plugins/modules/inventory_lint.yml
// documents them). extra_vars, extra_vars_args and resolved are filled in
// by the action plugin; they are no_log because they may hold secrets.
type Options struct {
	// Inventory are the inventory sources (-i arguments), absolute or
	// relative to the directory ansible-playbook was started in; the action
	// plugin defaults them to ansible_inventory_sources.
	Inventory []string `json:"inventory"`
	// Host, when set, returns ansible_facts.layercheck_lint for that host.
	Host string `json:"host"`
	// Hosts, when set, returns host_reports: one report per named host.
	Hosts []string `json:"hosts"`
	// ExtraVars are the play's extra vars as Ansible loaded them (JSON of
	// the Python values; a vault value is {"__ansible_vault": ""}).
	ExtraVars map[string]json.RawMessage `json:"extra_vars" ansible:"no_log"`
	// ExtraVarsArgs are the -e arguments as given on the command line
	// ("k=v", inline JSON/YAML, "@file" with an absolute path): they give
	// each extra var its location and syntax.
	ExtraVarsArgs []string `json:"extra_vars_args" ansible:"no_log"`
	// Resolved holds per host the plain values Ansible resolved.
	Resolved *resolvedOption `json:"resolved" ansible:"no_log"`
	// KubesprayVersion selects a bundled catalogue instead of the one
	// found for the inventory (kubespray.ForInventory).
	KubesprayVersion string `json:"kubespray_version"`
	// KubesprayDir reads the kubespray checkout there (on the controller)
	// instead (kubespray.SelectDir); not with KubesprayVersion.
	KubesprayDir string `json:"kubespray_dir"`
	// UpgradeFrom names the bundled kubespray release the cluster runs
	// today: the report then also says what the upgrade changes.
	UpgradeFrom string `json:"upgrade_from"`
	// ClusterState is the running cluster as cluster_facts with preflight:
	// true read it (ansible_facts.layercheck_cluster_state): the cluster-*
	// rules then compare the inventory with it.
	ClusterState *clusterstate.State `json:"cluster_state"`
	// AnsibleCore is the ansible-core running the play ("2.18.6"; the
	// action plugin sends ansible_version.full): below 2.19 string
	// booleans are judged by what that ansible-core does with them.
	AnsibleCore string `json:"ansible_core"`
	// HostsListed caps the host names kept per finding in per-host reports.
	HostsListed *int `json:"hosts_listed"`
	// IgnoreExtensions and IgnorePatterns are Ansible's effective
	// INVENTORY_IGNORE_EXTS and INVENTORY_IGNORE_PATTERNS (the action plugin
	// sends them): what a directory source skips. Absent, Ansible's defaults
	// apply. kubespray's own ignore_patterns (artifacts, credentials) are
	// always added.
	IgnoreExtensions []string `json:"ignore_extensions"`
	IgnorePatterns   []string `json:"ignore_patterns"`
}

// resolvedOption is the compact form the action plugin sends resolved
// values in: each distinct (variable, value) pair once in Values as
// [name, value] or [name, value, "file:line:col"], and per host the indexes
// of its pairs. 5,000 hosts sharing their group_vars share their pairs.
type resolvedOption struct {
	Values [][]json.RawMessage `json:"values"`
	Hosts  map[string][]int    `json:"hosts"`
}

// Run is the module inventory_lint: it loads the inventory sources, the
// extra vars and the catalogue the options name, lints them and returns
// the module's answer: msg, warnings, report (the lint.Report), lines (one
// Line per finding), summary (Summary), text (Grouped, each finding's why
// from verbosity 1, ansible-playbook -v), ansible_facts.layercheck_lint
// for Host and host_reports for Hosts. Errors name the option or file at fault.
func Run(ctx context.Context, o *Options, verbosity int) (*module.Result, error) {
	if len(o.Inventory) == 0 {
		return nil, errors.New("option inventory is empty: give the inventory sources (the action plugin defaults it to ansible_inventory_sources)")
	}
	listed := DefaultHostsListed
	if o.HostsListed != nil {
		if *o.HostsListed < 0 {
			return nil, fmt.Errorf("option hosts_listed must be 0 or more, got %d", *o.HostsListed)
		}
		listed = *o.HostsListed
	}
	ig := parser.InventoryIgnore{
		Exts:     o.IgnoreExtensions,
		Patterns: append(append([]string(nil), o.IgnorePatterns...), parser.KubesprayInventoryIgnorePatterns...),
		Source:   "options ignore_extensions, ignore_patterns",
	}
	inv, err := parser.LoadWith(parser.LoadOptions{Ignore: ig}, o.Inventory...)
	if err != nil {
		return nil, fmt.Errorf("cannot read the inventory: %w", err)
	}
	extra, extraWarnings, err := extraVars(o.ExtraVars, o.ExtraVarsArgs)
	if err != nil {
		return nil, err
	}
	var cat *kubespray.Catalogue
	switch {
	case o.KubesprayDir != "" && o.KubesprayVersion != "":
		return nil, errors.New("give kubespray_version or kubespray_dir, not both")
	case o.KubesprayDir != "":
		cat, err = kubespray.SelectDir(o.KubesprayDir, "kubespray_dir")
	default:
		cat, err = kubespray.SelectDeferred(o.KubesprayVersion, "kubespray_version", o.Inventory)
	}
	if err != nil {
		return nil, fmt.Errorf("kubespray catalogue: %w", err)
	}
	resolved, err := resolvedValues(o.Resolved)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	series, err := lint.AnsibleSeries(o.AnsibleCore)
	if err != nil {
		return nil, fmt.Errorf("ansible_core: %w", err)
	}
	in := lint.Input{Inventory: inv, Extra: extra, Catalogue: cat, Resolved: resolved, AnsibleCore: series, Cluster: o.ClusterState}
	if o.UpgradeFrom != "" {
		if in.UpgradeFrom, err = kubespray.BundledOrMinor(o.UpgradeFrom); err != nil {
			return nil, fmt.Errorf("upgrade_from: %w", err)
		}
	}
	rep := lint.Run(in)
	// The suppressions layercheck lint applies too (comments and the
	// inventory's .layercheck.yml), so the playbook and the CLI agree.
	if dir := InventoryDir(o.Inventory[0]); dir != "" {
		sup := Suppressions{Base: dir, Comments: true}
		if rep.LocationsRelativeTo != "" {
			sup.Base = rep.LocationsRelativeTo
		}
		if sup.Config, err = LoadConfig("", dir); err != nil {
			return nil, err
		}
		sup.Apply(rep)
	}

	lines := make([]string, 0, len(rep.Findings))
	for _, f := range rep.Findings {
		lines = append(lines, Line(f, listed))
	}
	res := &module.Result{
		Msg:      fmt.Sprintf("inventory lint: %d errors, %d warnings (%s)", rep.Errors, rep.Warnings, rep.CatalogueUsed()),
		Warnings: append(append([]string(nil), inv.Warnings...), extraWarnings...),
		Extra: map[string]any{"report": rep, "lines": lines,
			"summary": Summary(rep), "text": Grouped(rep, listed, len(inv.Hosts), verbosity > 0)},
	}
	if o.Host != "" {
		res.AnsibleFacts = map[string]any{"layercheck_lint": ForHost(rep, o.Host, listed)}
	}
	if o.Hosts != nil {
		hr := make(map[string]*Host, len(o.Hosts))
		for _, h := range o.Hosts {
			if _, done := hr[h]; !done {
				hr[h] = ForHost(rep, h, listed)
			}
		}
		res.Extra["host_reports"] = hr
	}
	return res, nil
}

// extraVars builds the -e values: types from Ansible's loaded values
// (ansible), locations and syntax from our own parse of the -e arguments
// (args), each argument on its own so one we cannot read (a vault-encrypted
// @file) costs only its own locations, with a warning. Without Ansible's
// values (the module run by hand), our parse is all there is.
func extraVars(ansible map[string]json.RawMessage, args []string) (*parser.Map, []string, error) {
	var ours *parser.Map
	var warnings []string
	if ansible == nil {
		if len(args) == 0 {
			return nil, nil, nil
		}
		m, err := parser.ParseExtraVars(args)
		if err != nil {
			return nil, nil, fmt.Errorf("extra vars: %w", err)
		}
		return m, nil, nil
	}
	for _, a := range args {
		m, err := parser.ParseExtraVars([]string{a})
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("extra vars: %v; of the values Ansible loaded from it, strings count as vault values (never judged or shown), the others are judged and located as -e", err))
			continue
		}
		if ours == nil {
			ours = parser.NewMap()
		}
		for _, k := range m.Keys {
			ours.Set(k, m.Get(k)) // a later -e replaces a top-level key, as in Ansible
		}
	}
	out := parser.NewMap()
	names := make([]string, 0, len(ansible))
	for k := range ansible {
		names = append(names, k)
	}
	// Ansible's order where our parse knows it, the rest sorted.
	order := map[string]int{}
	if ours != nil {
		for i, k := range ours.Keys {
			order[k] = i
		}
	}
	sort.Slice(names, func(i, j int) bool {
		oi, iok := order[names[i]]
		oj, jok := order[names[j]]
		if iok != jok {
			return iok
		}
		if iok && oi != oj {
			return oi < oj
		}
		return names[i] < names[j]
	})
	for _, k := range names {
		v, err := decodeValue(ansible[k])
		if err != nil {
			return nil, nil, fmt.Errorf("extra var %s from the action plugin: %w", k, err)
		}
		out.Set(k, adopt(v, ours.Get(k)))
	}
	return out, warnings, nil
}

// adopt gives Ansible's value the location and syntax our parse found for
// the same variable. When both agree on the type all the way down, our
// value (with a position for every nested item) is used as is; otherwise
// Ansible's types win and only the top-level location is kept.
func adopt(ansible, ours *parser.Value) *parser.Value {
	if ours == nil {
		setPos(ansible, parser.Pos{File: parser.ExtraVarsFile}, parser.OriginAnsible)
		return ansible
	}
	if lint.SameValue(ansible, ours) {
		return ours
	}
	setPos(ansible, ours.Pos, ours.Origin)
	return ansible
}

func setPos(v *parser.Value, p parser.Pos, o parser.Origin) {
	v.Pos, v.Origin = p, o
	for _, e := range v.List {
		setPos(e, p, o)
	}
	if v.Map != nil {
		for _, k := range v.Map.Keys {
			setPos(v.Map.Values[k], p, o)
		}
	}
}

// resolvedValues expands the compact resolved option into one map per host.
func resolvedValues(r *resolvedOption) (map[string]*parser.Map, error) {
	if r == nil {
		return nil, nil
	}
	type pair struct {
		name string
		v    *parser.Value
	}
	pairs := make([]pair, len(r.Values))
	for i, e := range r.Values {
		if len(e) != 2 && len(e) != 3 {
			return nil, fmt.Errorf("resolved.values[%d]: want [name, value] or [name, value, origin], got %d items", i, len(e))
		}
		var name string
		if err := json.Unmarshal(e[0], &name); err != nil || name == "" {
			return nil, fmt.Errorf("resolved.values[%d]: the name is not a non-empty string", i)
		}
		v, err := decodeValue(e[1])
		if err != nil {
			return nil, fmt.Errorf("resolved.values[%d] (%s): %w", i, name, err)
		}
		pos := parser.Pos{}
		if len(e) == 3 {
			var origin string
			if err := json.Unmarshal(e[2], &origin); err != nil {
				return nil, fmt.Errorf("resolved.values[%d] (%s): the origin is not a string", i, name)
			}
			pos = parsePos(origin)
		}
		setPos(v, pos, parser.OriginAnsible)
		pairs[i] = pair{name, v}
	}
	out := make(map[string]*parser.Map, len(r.Hosts))
	for h, idx := range r.Hosts {
		m := parser.NewMap()
		for _, i := range idx {
			if i < 0 || i >= len(pairs) {
				return nil, fmt.Errorf("resolved.hosts[%s]: index %d outside values (%d)", h, i, len(pairs))
			}
			m.Set(pairs[i].name, pairs[i].v)
		}
		out[h] = m
	}
	return out, nil
}
