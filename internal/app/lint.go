package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/layercheck/layercheck/clusterstate"
	"github.com/layercheck/layercheck/internal/fleet"
	"github.com/layercheck/layercheck/internal/output"
	"github.com/layercheck/layercheck/internal/sshconn"
	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/lint/report"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/verify/cluster"
)

func init() {
	register("lint", "check a kubespray inventory (and -e extra vars) before cluster.yml", runLint)
}

const lintAbout = `Checks a kubespray inventory as ansible-core 2.19 and kubespray would read
it: booleans written as strings, kubespray's choices and asserts, networks,
groups, misspelt and removed variables, and trade-offs. With --kubeconfig
or --cluster-from first-control-plane it also compares the inventory and
the target release with the running cluster (before upgrade-cluster.yml,
scale.yml or a re-run of cluster.yml): versions, networks, membership.

The catalogue: the checkout --kubespray-dir names or the bundled one
--kubespray-version names; else the kubespray checkout the inventory lives
in; else a kubespray checkout kept as a git submodule or directory named
kubespray in the inventory's git repository, or beside that repository;
else the bundled release the inventory's kube_version fits, else the bundled default.
The header says which and why.

Findings are grouped by file, then line; each rule's explanation is given
once (each finding's why with -v). Locations are relative to the current
directory when the inventory is under it, else to the inventory's
directory; "-e" means extra vars. The bundled catalogues are %s
(default %s). Directory sources skip what ansible-core skips
(ANSIBLE_INVENTORY_IGNORE, ANSIBLE_INVENTORY_IGNORE_REGEX, or ansible.cfg
[inventory] ignore_extensions and ignore_patterns) and always kubespray's
artifacts/ and credentials/. Colour: on a terminal unless NO_COLOR is set.

Suppressions: a comment "# layercheck: ignore[RULE]" (or "ignore[A, B]",
or "ignore" for every rule) on the finding's line, or on a comment line
right above it, in YAML or INI; the configuration .layercheck.yml in the
inventory directory (or --config) with skip_rules: [RULE...] and
skip_variables: [NAME...]; a baseline (--baseline). Suppressed findings do
not count for the exit status; the summary counts them and the JSON report
lists them under "suppressed" with what suppressed them.

Exit status: 0 no errors (warnings allowed), 1 errors found, 2 could not
run (usage error, unreadable inventory or extra vars).`

func runLint(ctx context.Context, args []string, s Streams) error {
	fs := newFlags("lint", "-i INVENTORY [-i ...] [-e EXTRA]... [options]",
		fmt.Sprintf(lintAbout, strings.Join(kubespray.Versions(), ", "), kubespray.DefaultVersion))
	var inv, extra multiFlag
	fs.multi(&inv, "i", "inventory", "INVENTORY", "inventory source as for ansible-playbook (file or directory), repeatable")
	fs.multi(&extra, "e", "extra-vars", "EXTRA", "extra vars as for ansible-playbook: k=v, @file, or JSON/YAML; repeatable")
	format, version, color := "text", "", "auto"
	var listRules, quiet, verbose bool
	fs.str(&format, "", "format", strings.Join(output.LintFormats, "|"), "text", "output format (default text); json is the lint report, sarif SARIF 2.1.0 for code scanning, junit JUnit XML")
	fs.str(&version, "", "kubespray-version", "VERSION", "", "use this bundled kubespray catalogue instead of the kubespray checkout the inventory lives in")
	var kubesprayDir string
	fs.str(&kubesprayDir, "", "kubespray-dir", "PATH", "", "read the kubespray checkout at PATH (a submodule, a sibling directory, a fork) at run time; default: the checkout the inventory lives in, else a submodule or directory named kubespray in the inventory's git repository or beside it")
	fs.str(&color, "", "color", "auto|always|never", "auto", "colour the text output (default auto: on a terminal, unless NO_COLOR is set)")
	fs.boolean(&quiet, "q", "quiet", "print the counts only (per rule)")
	fs.boolean(&verbose, "v", "verbose", "add each finding's why")
	var upgradeFrom, ansibleCore string
	fs.str(&upgradeFrom, "", "upgrade-from", "VERSION", "", "the bundled kubespray release the cluster runs today: also say what moving to the target release changes (removed variables, changed defaults, ansible-core, skipped releases)")
	fs.str(&ansibleCore, "", "ansible-core", "X.Y", "", "the ansible-core series cluster.yml will run under (default: the one the chosen kubespray release pins, else 2.19): before 2.19 a string boolean does not fail but is read by its Python truth, so \"false\" can silently be true")
	fs.boolean(&listRules, "", "rules", "list the rules and exit")
	var configFile, baselineFile, writeBaseline string
	fs.str(&configFile, "", "config", "FILE", "", "lint configuration (default: .layercheck.yml in the inventory directory, if there)")
	fs.str(&baselineFile, "", "baseline", "FILE", "", "suppress the findings listed in this baseline: only new findings count")
	fs.str(&writeBaseline, "", "write-baseline", "FILE", "", "write every finding to this baseline file (then exit 0 unless the lint could not run)")
	var kubeconfig string
	fs.str(&kubeconfig, "", "kubeconfig", "FILE", "", "also compare the inventory with the running cluster, read with this kubeconfig (the cluster-* rules)")
	clusterFrom, checkClusterFrom := clusterFromFlag(fs, &kubeconfig, "also compare with the running cluster, read with admin.conf of the first kube_control_plane host (over SSH, as layercheck verify)")
	var etcd cluster.EtcdAccess
	var etcdEndpoints multiFlag
	fs.multi(&etcdEndpoints, "", "etcd-endpoint", "URL", "with --kubeconfig: also read etcd's members and their versions through this client URL (repeatable; the first that answers)")
	fs.str(&etcd.CACert, "", "etcd-cacert", "FILE", "", "CA of etcd's client URLs (kubespray: /etc/ssl/etcd/ssl/ca.pem)")
	fs.str(&etcd.Cert, "", "etcd-cert", "FILE", "", "etcd client certificate (kubespray: /etc/ssl/etcd/ssl/admin-<host>.pem)")
	fs.str(&etcd.Key, "", "etcd-key", "FILE", "", "its key (kubespray: /etc/ssl/etcd/ssl/admin-<host>-key.pem)")
	if help, err := fs.parse(args, s); help || err != nil {
		return err
	}
	etcd.Endpoints = etcdEndpoints
	if len(etcd.Endpoints) > 0 && kubeconfig == "" {
		return fs.usageError("--etcd-endpoint needs --kubeconfig")
	}
	if msg := checkClusterFrom(); msg != "" {
		return fs.usageError(msg)
	}
	if listRules {
		for _, r := range lint.Rules() {
			sevs := make([]string, len(r.Severities))
			for i, v := range r.Severities {
				sevs[i] = string(v)
			}
			fmt.Fprintf(s.Out, "%-24s %-13s %s\n", r.ID, strings.Join(sevs, "|"), r.Summary)
		}
		return nil
	}
	if fs.fs.NArg() > 0 {
		return fs.usageError(fmt.Sprintf("unexpected argument %q", fs.fs.Arg(0)))
	}
	if len(inv) == 0 {
		return fs.usageError("no inventory given (-i)")
	}
	if !contains(output.LintFormats, format) {
		return fs.usageError(fmt.Sprintf("--format must be text, json, sarif or junit, not %q", format))
	}
	useColor, err := colorWanted(color, s.Out)
	if err != nil {
		return fs.usageError(err.Error())
	}

	if version != "" && kubesprayDir != "" {
		return fs.usageError("give --kubespray-version or --kubespray-dir, not both")
	}
	var cat *kubespray.Catalogue
	if kubesprayDir != "" {
		cat, err = kubespray.SelectDir(kubesprayDir, "--kubespray-dir")
	} else {
		cat, err = kubespray.SelectDeferred(version, "--kubespray-version", inv)
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
	series, err := lint.AnsibleSeries(ansibleCore)
	if err != nil {
		return &ExitError{Code: 2, Msg: "lint: --ansible-core: " + err.Error()}
	}
	in := lint.Input{Inventory: loaded, Extra: ev, Catalogue: cat, AnsibleCore: series}
	if upgradeFrom != "" {
		if in.UpgradeFrom, err = kubespray.BundledOrMinor(upgradeFrom); err != nil {
			return &ExitError{Code: 2, Msg: "lint: --upgrade-from: " + err.Error()}
		}
		if f := in.UpgradeFrom; f.StandsInFor != "" && f.Note != "" {
			fmt.Fprintf(s.ErrOut, "layercheck: warning: --upgrade-from %s is not bundled: %s\n", f.StandsInFor, f.Note)
		} else if f.StandsInFor != "" {
			fmt.Fprintf(s.ErrOut, "layercheck: warning: --upgrade-from %s is not bundled: %s, the bundled release of its minor, stands in\n", f.StandsInFor, f.Version)
		}
	}
	if kubeconfig != "" || *clusterFrom != "" {
		if in.Cluster, err = readClusterState(ctx, inv, extra, loaded, ev, kubeconfig, *clusterFrom != "", etcd); err != nil {
			return &ExitError{Code: 2, Msg: "lint: cluster: " + err.Error()}
		}
		for _, u := range in.Cluster.Unread {
			fmt.Fprintln(s.ErrOut, "layercheck: warning: cluster: could not read", u)
		}
	}
	rep := lint.Run(in)

	dir := report.InventoryDir(inv[0])
	sup := report.Suppressions{Base: dir, Comments: true}
	if rep.LocationsRelativeTo != "" {
		sup.Base = rep.LocationsRelativeTo
	}
	if configFile != "" || dir != "" {
		if sup.Config, err = report.LoadConfig(configFile, dir); err != nil {
			return &ExitError{Code: 2, Msg: "lint: " + err.Error()}
		}
	}
	if baselineFile != "" {
		if sup.Baseline, err = report.ReadBaseline(baselineFile); err != nil {
			return &ExitError{Code: 2, Msg: "lint: " + err.Error()}
		}
	}
	sup.Apply(rep)
	if writeBaseline != "" {
		if err := report.WriteBaseline(writeBaseline, rep); err != nil {
			return &ExitError{Code: 2, Msg: "lint: " + err.Error()}
		}
		fmt.Fprintf(s.ErrOut, "layercheck: wrote %d finding(s) to the baseline %s\n", len(rep.Findings)+len(rep.Suppressed), writeBaseline)
	}

	report.Locate(rep)
	relTo := ""
	if cwd, err := os.Getwd(); err == nil && dir != "" {
		relTo = report.Relocate(rep, dir, cwd)
	}
	opts := report.TextOptions{Sources: inv, Color: useColor, Quiet: quiet, Verbose: verbose, RelativeTo: relTo, AllHosts: len(loaded.Hosts),
		Suppressed: report.SuppressedCounts(rep)}
	if format == "json" && rep.LocationsRelativeTo == "" {
		// JSON names the directory its locations are relative to always
		rep.LocationsRelativeTo = output.LintBaseDir(rep, inv)
		if abs, err := filepath.Abs(rep.LocationsRelativeTo); err == nil {
			rep.LocationsRelativeTo = abs
		}
	}
	if err := output.WriteLint(s.Out, format, output.Lint{Report: rep, Sources: inv, Text: opts}); err != nil {
		return err
	}
	if rep.Errors > 0 && writeBaseline == "" {
		return &ExitError{Code: 1}
	}
	return nil
}

// colorWanted decides --color: always, never, or auto (out is a terminal,
// NO_COLOR unset or empty, TERM not "dumb"; https://no-color.org).
func colorWanted(mode string, out io.Writer) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto":
	default:
		return false, fmt.Errorf("--color must be auto, always or never, not %q", mode)
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false, nil
	}
	f, ok := out.(*os.File)
	if !ok {
		return false, nil
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0, nil
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

// readClusterState reads the running cluster for the cluster-* rules, with
// kubeconfig or, with fromFirstCP, kubespray's admin.conf of the first
// kube_control_plane host reached over SSH as layercheck verify does; etcd
// when etcd names its endpoints, or through that host when it is an etcd
// host (etcdFromHost).
func readClusterState(ctx context.Context, sources, extra []string, loaded *parser.Inventory, ev *parser.Map, kubeconfig string, fromFirstCP bool, etcd cluster.EtcdAccess) (*clusterstate.State, error) {
	copts, _, err := ClusterOptions(sources, extra)
	if err != nil {
		return nil, err
	}
	req := cluster.Request{Options: *copts, Kubeconfig: kubeconfig, EtcdAccess: etcd}
	unread := ""
	if fromFirstCP {
		hosts, _, err := fleet.Plan(loaded, ev, "")
		if err != nil {
			return nil, err
		}
		opts := fleet.Options{SSH: sshconn.Options{Timeout: 10 * time.Second}}
		src, err := firstControlPlane(ctx, hosts, copts.KubeControlPlane, opts)
		if err != nil {
			return nil, err
		}
		defer src.Close()
		req.Kubeconfig, req.KubeconfigData, req.Dial = src.Where, src.Kubeconfig, src.Dial
		unread = etcdFromHost(&req.EtcdAccess, src, copts)
	}
	st, err := cluster.ReadStateRequest(ctx, &req)
	if err != nil {
		return nil, err
	}
	if unread != "" {
		st.Unread = append(st.Unread, unread)
	}
	return st, nil
}

// etcdFromHost sets a to read etcd through the first kube_control_plane
// host when it is an etcd host of a host-service etcd (kubespray's
// default): its loopback client URL, reached through the SSH connection,
// with its admin certificate from etcd_cert_dir, read over SFTP. It says
// why etcd cannot be read ("" when it can, or when the host is no etcd
// host).
func etcdFromHost(a *cluster.EtcdAccess, src *fleet.ClusterSource, o *cluster.Options) string {
	if (o.EtcdDeploymentType != "" && o.EtcdDeploymentType != "host") || !contains(o.Etcd, src.Host) {
		return ""
	}
	dir := "/etc/ssl/etcd/ssl"
	a.CACert, a.Cert, a.Key = dir+"/ca.pem", dir+"/admin-"+src.Host+".pem", dir+"/admin-"+src.Host+"-key.pem"
	var err error
	for _, f := range []struct {
		p   string
		out *[]byte
	}{{a.CACert, &a.CAData}, {a.Cert, &a.CertData}, {a.Key, &a.KeyData}} {
		if *f.out, err = src.ReadFile(f.p); err != nil {
			a.CAData, a.CertData, a.KeyData = nil, nil, nil
			return "etcd members: " + err.Error()
		}
	}
	a.Endpoints = []string{"https://127.0.0.1:2379"}
	a.Dial = src.Dial
	return ""
}
