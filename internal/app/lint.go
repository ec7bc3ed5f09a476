package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/parser"
)

func init() {
	register("lint", "check a kubespray inventory (and -e extra vars) before cluster.yml", runLint)
}

const lintUsage = `usage: layercheck lint -i INVENTORY [-i ...] [-e EXTRA]... [--format text|json|sarif|junit] [--kubespray-version X] [--upgrade-from Y] [--ansible-core X.Y]

Checks a kubespray inventory as ansible-core 2.19 and kubespray would read
it: booleans written as strings, kubespray's choices and asserts, networks,
groups, misspelt and removed variables, and trade-offs.

  -i INVENTORY          inventory source as for ansible-playbook (file or directory), repeatable
  -e EXTRA              extra vars as for ansible-playbook: k=v, @file, or JSON/YAML; repeatable
  --format F            output format: text (default), json (the lint report),
                        sarif (SARIF 2.1.0 for code scanning), junit (JUnit XML)
  --kubespray-version X use the bundled kubespray catalogue X (%s) instead of
                        the kubespray checkout the inventory lives in (or %s)
  --upgrade-from Y      the bundled kubespray release the cluster runs today: also
                        say what moving to the target release changes (removed
                        variables, changed defaults, ansible-core, skipped releases)
  --ansible-core X.Y    the ansible-core series cluster.yml will run under (default
                        2.19): before 2.19 a string boolean does not fail but is
                        read by its Python truth, so "false" can silently be true
  --rules               list the rules and exit

Locations are relative to the inventory's directory; "-e" means extra vars.
Directory sources skip what ansible-core skips (ANSIBLE_INVENTORY_IGNORE,
ANSIBLE_INVENTORY_IGNORE_REGEX, or ansible.cfg [inventory] ignore_extensions
and ignore_patterns) and always kubespray's artifacts/ and credentials/.
Exit status: 0 no errors (warnings allowed), 1 errors found,
2 could not run (usage error, unreadable inventory or extra vars).
`

func runLint(ctx context.Context, args []string, s Streams) error {
	fs := flag.NewFlagSet("lint", flag.ContinueOnError)
	fs.SetOutput(s.ErrOut)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), lintUsage, strings.Join(kubespray.Versions(), ", "), kubespray.DefaultVersion)
	}
	var inv, extra multiFlag
	fs.Var(&inv, "i", "inventory source (repeatable)")
	fs.Var(&inv, "inventory", "inventory source (repeatable)")
	fs.Var(&extra, "e", "extra vars (repeatable)")
	fs.Var(&extra, "extra-vars", "extra vars (repeatable)")
	format := fs.String("format", "text", "text or json")
	version := fs.String("kubespray-version", "", "bundled kubespray catalogue to use")
	upgradeFrom := fs.String("upgrade-from", "", "bundled kubespray release the cluster runs today")
	ansibleCore := fs.String("ansible-core", "", "ansible-core series cluster.yml runs under (default 2.19)")
	listRules := fs.Bool("rules", false, "list the rules")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &ExitError{Code: 2, Msg: err.Error()}
	}
	if *listRules {
		for _, r := range lint.Rules() {
			sevs := make([]string, len(r.Severities))
			for i, v := range r.Severities {
				sevs[i] = string(v)
			}
			fmt.Fprintf(s.Out, "%-24s %-13s %s\n", r.ID, strings.Join(sevs, "|"), r.Summary)
		}
		return nil
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return &ExitError{Code: 2, Msg: fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if len(inv) == 0 {
		fs.Usage()
		return &ExitError{Code: 2, Msg: "lint: no inventory given (-i)"}
	}
	if *format != "text" && *format != "json" && *format != "sarif" && *format != "junit" {
		return &ExitError{Code: 2, Msg: fmt.Sprintf("lint: --format must be text, json, sarif or junit, not %q", *format)}
	}

	var cat *kubespray.Catalogue
	var err error
	if *version != "" {
		cat, err = kubespray.Bundled(*version)
	} else {
		cat, err = kubespray.ForInventory(inv)
	}
	if err != nil {
		return &ExitError{Code: 2, Msg: "lint: kubespray catalogue: " + err.Error()}
	}
	ig, err := lintIgnore(parser.OSAnsibleCfgEnv())
	if err != nil {
		return &ExitError{Code: 2, Msg: "lint: " + err.Error()}
	}
	loaded, err := parser.LoadWith(parser.LoadOptions{Ignore: ig}, inv...)
	if err != nil {
		return &ExitError{Code: 2, Msg: "lint: " + err.Error()}
	}
	var ev *parser.Map
	if len(extra) > 0 {
		if ev, err = parser.ParseExtraVars(extra); err != nil {
			return &ExitError{Code: 2, Msg: "lint: extra vars: " + err.Error()}
		}
	}
	for _, w := range loaded.Warnings {
		fmt.Fprintln(s.ErrOut, "layercheck: warning:", w)
	}
	series, err := lint.AnsibleSeries(*ansibleCore)
	if err != nil {
		return &ExitError{Code: 2, Msg: "lint: --ansible-core: " + err.Error()}
	}
	in := lint.Input{Inventory: loaded, Extra: ev, Catalogue: cat, AnsibleCore: series}
	if *upgradeFrom != "" {
		if in.UpgradeFrom, err = kubespray.Bundled(*upgradeFrom); err != nil {
			return &ExitError{Code: 2, Msg: "lint: --upgrade-from: " + err.Error()}
		}
	}
	rep := lint.Run(in)

	if err := writeLintReport(s.Out, *format, rep, inv); err != nil {
		return err
	}
	if rep.Errors > 0 {
		return &ExitError{Code: 1}
	}
	return nil
}

// lintIgnore is what a directory source skips for lint: Ansible's
// settings (parser.AnsibleInventoryIgnore) plus kubespray's own
// ignore_patterns (parser.KubesprayInventoryIgnorePatterns, from kubespray's
// ansible.cfg), so the secrets kubespray writes into credentials/ and
// artifacts/ are never read, even when lint runs outside the kubespray
// checkout whose ansible.cfg would skip them.
func lintIgnore(env parser.AnsibleCfgEnv) (parser.InventoryIgnore, error) {
	ig, err := parser.AnsibleInventoryIgnore(env)
	if err != nil {
		return ig, err
	}
	ig.Patterns = append(append([]string(nil), ig.Patterns...), parser.KubesprayInventoryIgnorePatterns...)
	return ig, nil
}

// writeText renders the report for an operator: a header, one block per
// finding, a summary line.
func writeText(w io.Writer, r *lint.Report, sources []string) {
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
