package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/layercheck/layercheck/internal/fleet"
	"github.com/layercheck/layercheck/internal/output"
	"github.com/layercheck/layercheck/internal/sshconn"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/redact"
	"github.com/layercheck/layercheck/verify/cluster"
)

func init() {
	register("verify", "verify every node of the inventory over SSH + SFTP, and the cluster once (no Ansible, nothing copied)", runVerify)
}

const verifyAbout = `Connects to every host of k8s_cluster and etcd as ansible-playbook would
(ansible_host, ansible_port, ansible_user, ansible_ssh_private_key_file or
ssh-agent, known_hosts, ProxyJump / ProxyCommand "ssh -W %h:%p bastion",
ansible_become with sudo -n), runs every node layer there over SFTP and SSH
(the checks of playbooks/verify.yml; nothing is copied to the hosts), then
the cluster layers once with --kubeconfig, or with --cluster-from
first-control-plane (kubespray's admin.conf of the first kube_control_plane
host, the API server reached through that host's SSH connection).
Passwords are never used. Exit 0 when no check failed, 1 when one failed
or a host was unreachable, 2 on bad usage.`

func runVerify(ctx context.Context, args []string, s Streams) error {
	fs := newFlags("verify", "-i INVENTORY [-i ...] [-e EXTRA]... [--limit HOSTS] [--kubeconfig FILE | --cluster-from first-control-plane] [options]", verifyAbout)
	var inv, extra, layers, skip multiFlag
	fs.multi(&inv, "i", "inventory", "INVENTORY", "inventory source as for ansible-playbook (repeatable)")
	fs.multi(&extra, "e", "extra-vars", "EXTRA", "extra vars as for ansible-playbook -e (repeatable)")
	var limitV, kubeconfigV, outputV, nowV string
	limit, kubeconfig, now := &limitV, &kubeconfigV, &nowV
	fs.str(limit, "", "limit", "HOSTS", "", "only these hosts or groups, comma-separated")
	fs.str(kubeconfig, "", "kubeconfig", "FILE", "", "run the cluster layers once with this kubeconfig")
	clusterFrom, checkClusterFrom := clusterFromFlag(fs, kubeconfig, "run the cluster layers with admin.conf of the first kube_control_plane host (read over SFTP), the API server reached through that host's SSH connection")
	forksV := 50
	forks := &forksV
	fs.integer(forks, "forks", "N", 50, "hosts checked at once")
	formatV := "text"
	format := &formatV
	fs.str(format, "", "format", strings.Join(output.FleetFormats, "|"), "text", "output format (default text)")
	fs.str(&outputV, "", "output", "FILE", "", "write the report to this file (default: standard output)")
	var acceptNewV bool
	acceptNew := &acceptNewV
	fs.boolean(acceptNew, "", "accept-new-host-keys", "add unknown host keys to known_hosts (as StrictHostKeyChecking=accept-new); changed keys are still refused")
	var connectTimeoutV, hostTimeoutV time.Duration
	connectTimeout, hostTimeout := &connectTimeoutV, &hostTimeoutV
	fs.duration(connectTimeout, "connect-timeout", 10*time.Second, "time limit to connect and log in to a host")
	fs.duration(hostTimeout, "host-timeout", 0, "time limit for a host's layers (default: 2 layer timeouts + 30s)")
	fs.str(now, "", "now", "TIME", "", "judge certificates at this RFC 3339 time (default: now)")
	fs.multi(&layers, "", "layer", "LAYER", "run only this node layer (repeatable)")
	fs.multi(&skip, "", "skip", "LAYER", "skip this node layer (repeatable)")
	if help, err := fs.parse(args, s); help || err != nil {
		return err
	}
	outputFile := &outputV
	if fs.fs.NArg() > 0 {
		return fs.usageError(fmt.Sprintf("verify takes no arguments, got %q", fs.fs.Args()))
	}
	if len(inv) == 0 {
		return fs.usageError("no inventory given (-i)")
	}
	if !contains(output.FleetFormats, *format) {
		return &ExitError{Code: 2, Msg: fmt.Sprintf("verify: --format %q: want %s", *format, strings.Join(output.FleetFormats, ", "))}
	}
	if msg := checkClusterFrom(); msg != "" {
		return &ExitError{Code: 2, Msg: "verify: " + msg}
	}
	if *forks < 1 {
		return &ExitError{Code: 2, Msg: fmt.Sprintf("verify: --forks %d: want at least 1", *forks)}
	}
	opts := fleet.Options{Forks: *forks, HostTimeout: *hostTimeout, Layers: layers, Skip: skip,
		SSH: sshconn.Options{Timeout: *connectTimeout, AcceptNewHostKeys: *acceptNew}}
	if *now != "" {
		t, err := time.Parse(time.RFC3339, *now)
		if err != nil {
			return &ExitError{Code: 2, Msg: fmt.Sprintf("verify: --now %q is not an RFC 3339 time", *now)}
		}
		opts.Now = t
	}
	ig, err := parser.AnsibleInventoryIgnore(parser.OSAnsibleCfgEnv())
	if err != nil {
		return &ExitError{Code: 2, Msg: "verify: " + err.Error()}
	}
	loaded, err := parser.LoadWith(parser.LoadOptions{Ignore: ig}, inv...)
	if err != nil {
		return &ExitError{Code: 2, Msg: "verify: " + err.Error()}
	}
	var ev *parser.Map
	if len(extra) > 0 {
		if ev, err = parser.ParseExtraVars(extra); err != nil {
			return &ExitError{Code: 2, Msg: "verify: extra vars: " + err.Error()}
		}
	}
	hosts, warnings, err := fleet.Plan(loaded, ev, *limit)
	if err != nil {
		return &ExitError{Code: 2, Msg: "verify: " + err.Error()}
	}
	for _, w := range append(loaded.Warnings, warnings...) {
		fmt.Fprintln(s.ErrOut, "layercheck: warning:", w)
	}
	start := time.Now()
	opts.Progress = progressLine(s.errTTY, func() time.Duration { return time.Since(start) })
	// The cluster layers run beside the node layers, not after them: on a
	// settled cluster the probe and the add-ons' claims are most of the
	// wall time, and the hosts' checks fit inside it.
	var clusterDone chan clusterOutcome
	clusterSkipped := "no --kubeconfig or --cluster-from given"
	if *kubeconfig != "" || *clusterFrom != "" {
		clusterSkipped = ""
		req, err := clusterRequest(inv, extra, *kubeconfig, s)
		if err != nil {
			// the node layers still run: their report stands
			clusterSkipped = err.Error()
		} else {
			clusterDone = make(chan clusterOutcome, 1)
			fromFirst, sshOpts := *clusterFrom != "", opts
			go func() {
				clusterDone <- runClusterFrom(ctx, req, fromFirst, hosts, sshOpts)
			}()
		}
	}
	rep := fleet.Run(ctx, hosts, opts)
	rep.ClusterSkipped = clusterSkipped
	if clusterDone != nil {
		out := <-clusterDone
		switch {
		case out.err != nil:
			return &ExitError{Code: 2, Msg: "verify: cluster: " + out.err.Error()}
		case out.skipped != "":
			rep.ClusterSkipped = out.skipped
		default:
			rep.AddCluster(out.report)
		}
	}
	var w io.Writer = s.Out
	if *outputFile != "" {
		f, err := os.OpenFile(*outputFile, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
		if err != nil {
			return &ExitError{Code: 2, Msg: "verify: " + err.Error()}
		}
		defer f.Close()
		w = f
	}
	if err := output.WriteFleet(w, *format, rep); err != nil {
		return err
	}
	return verdict(rep.Status)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// clusterRequest is the cluster layers' request from the inventory and
// extra vars (the verify role's layercheck_cluster_* variables included),
// its warnings written to s.ErrOut. An error says why the cluster layers
// are skipped.
func clusterRequest(inv, extra []string, kubeconfig string, s Streams) (*cluster.Request, error) {
	copts, cvars, cw, err := clusterOptions(inv, extra)
	if err != nil {
		return nil, err
	}
	req := &cluster.Request{Options: *copts, Kubeconfig: kubeconfig}
	rw, err := clusterRoleVars(cvars, req)
	if err != nil {
		return nil, err
	}
	for _, w := range append(cw, rw...) {
		fmt.Fprintln(s.ErrOut, "layercheck: warning:", w)
	}
	return req, nil
}

// clusterOutcome is what the cluster layers came to: a report, a reason
// they were skipped, or an error that ends verify.
type clusterOutcome struct {
	report  *cluster.Report
	skipped string
	err     error
}

// runClusterFrom runs the cluster layers of req, with admin.conf of the
// first kube_control_plane host when fromFirst (--cluster-from).
func runClusterFrom(ctx context.Context, req *cluster.Request, fromFirst bool, hosts []*fleet.Host, opts fleet.Options) clusterOutcome {
	if fromFirst {
		src, err := firstControlPlane(ctx, hosts, req.Options.KubeControlPlane, opts)
		if err != nil {
			return clusterOutcome{skipped: err.Error()}
		}
		defer src.Close()
		req.Kubeconfig, req.KubeconfigData, req.Dial = src.Where, src.Kubeconfig, src.Dial
	}
	crep, err := cluster.RunRequest(ctx, req)
	if err != nil {
		return clusterOutcome{err: err}
	}
	return clusterOutcome{report: crep}
}

// firstControlPlane opens the first kube_control_plane host of the plan
// for --cluster-from.
func firstControlPlane(ctx context.Context, hosts []*fleet.Host, cps []string, opts fleet.Options) (*fleet.ClusterSource, error) {
	if len(cps) == 0 {
		return nil, fmt.Errorf("--cluster-from first-control-plane: group kube_control_plane has no host")
	}
	for _, h := range hosts {
		if h.Name == cps[0] {
			return fleet.FromFirstControlPlane(ctx, h, opts)
		}
	}
	return nil, fmt.Errorf("--cluster-from first-control-plane: %s is not among the hosts verified (--limit?)", cps[0])
}

// isTerminal says whether w is a terminal (a *os.File on a tty).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressLine is the progress of `layercheck verify` on a terminal: after
// each host, "\r<done>/<total> hosts, <failed> failed, <elapsed> " on one
// line rewritten in place, ended by a newline when the last host is done.
// Failed counts hosts that failed a check, could not be checked or were
// unreachable; elapsed is rounded to the second. tty is the terminal
// (Streams.errTTY); when standard error is no terminal (a pipe, a file, CI
// logs) it is nil and there is no progress line: progressLine returns nil.
func progressLine(tty io.Writer, elapsed func() time.Duration) func(done, total, failed int) {
	if tty == nil {
		return nil
	}
	return func(done, total, failed int) {
		line := fmt.Sprintf("\r%d/%d hosts, %d failed, %s ", done, total, failed, elapsed().Round(time.Second))
		if done == total {
			line += "\n"
		}
		_, _ = io.WriteString(tty, redact.String(line))
	}
}
