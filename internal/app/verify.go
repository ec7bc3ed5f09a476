package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/layercheck/layercheck/internal/fleet"
	"github.com/layercheck/layercheck/internal/sshconn"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/verify/cluster"
)

func init() {
	register("verify", "verify every node of the inventory over SSH + SFTP, and the cluster once (no Ansible, nothing copied)", runVerify)
}

const verifyUsage = `usage: layercheck verify -i INVENTORY [-i ...] [-e EXTRA]... [--limit HOSTS] [--kubeconfig FILE | --cluster-from first-control-plane]
       [--forks 50] [--format text|json|junit|markdown] [--output FILE] [--accept-new-host-keys]

Connects to every host of k8s_cluster and etcd as ansible-playbook would
(ansible_host, ansible_port, ansible_user, ansible_ssh_private_key_file or
ssh-agent, known_hosts, ProxyJump / ProxyCommand "ssh -W %h:%p bastion",
ansible_become with sudo -n), runs every node layer there over SFTP and SSH
(the checks of playbooks/verify.yml; nothing is copied to the hosts), then
the cluster layers once with --kubeconfig, or with --cluster-from
first-control-plane (kubespray's admin.conf of the first kube_control_plane
host, the API server reached through that host's SSH connection). Passwords are never
used. Exit 0 when no check failed, 1 when one failed or a host was
unreachable, 2 on bad usage.
`

func runVerify(ctx context.Context, args []string, s Streams) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(s.ErrOut)
	fs.Usage = func() { _, _ = io.WriteString(s.ErrOut, verifyUsage); fs.PrintDefaults() }
	var inv, extra, layers, skip multiFlag
	fs.Var(&inv, "i", "inventory source as for ansible-playbook (repeatable)")
	fs.Var(&inv, "inventory", "same as -i")
	fs.Var(&extra, "e", "extra vars as for ansible-playbook -e (repeatable)")
	fs.Var(&extra, "extra-vars", "same as -e")
	limit := fs.String("limit", "", "only these hosts or groups, comma-separated")
	kubeconfig := fs.String("kubeconfig", "", "run the cluster layers once with this kubeconfig")
	clusterFrom := fs.String("cluster-from", "", "first-control-plane: run the cluster layers with admin.conf of the first kube_control_plane host (read over SFTP), the API server reached through that host's SSH connection")
	forks := fs.Int("forks", 50, "hosts checked at once")
	format := fs.String("format", "text", "output format: "+strings.Join(fleet.Formats, ", "))
	output := fs.String("output", "", "write the report to this file (default: standard output)")
	acceptNew := fs.Bool("accept-new-host-keys", false, "add unknown host keys to known_hosts (as StrictHostKeyChecking=accept-new); changed keys are still refused")
	connectTimeout := fs.Duration("connect-timeout", 10*time.Second, "time limit to connect and log in to a host")
	hostTimeout := fs.Duration("host-timeout", 0, "time limit for a host's layers (default: 2 layer timeouts + 30s)")
	now := fs.String("now", "", "judge certificates at this RFC 3339 time (default: now)")
	fs.Var(&layers, "layer", "run only this node layer (repeatable)")
	fs.Var(&skip, "skip", "skip this node layer (repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &ExitError{Code: 2, Msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return &ExitError{Code: 2, Msg: fmt.Sprintf("verify takes no arguments, got %q", fs.Args())}
	}
	if len(inv) == 0 {
		return &ExitError{Code: 2, Msg: "verify: no inventory given (-i)"}
	}
	if !contains(fleet.Formats, *format) {
		return &ExitError{Code: 2, Msg: fmt.Sprintf("verify: --format %q: want %s", *format, strings.Join(fleet.Formats, ", "))}
	}
	if *clusterFrom != "" && *clusterFrom != "first-control-plane" {
		return &ExitError{Code: 2, Msg: fmt.Sprintf("verify: --cluster-from %q: want first-control-plane", *clusterFrom)}
	}
	if *clusterFrom != "" && *kubeconfig != "" {
		return &ExitError{Code: 2, Msg: "verify: give --kubeconfig or --cluster-from, not both"}
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
	if f, ok := s.ErrOut.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		opts.Progress = func(done, total, failed int) {
			fmt.Fprintf(f, "\r%d/%d hosts, %d failed, %s ", done, total, failed, time.Since(start).Round(time.Second))
			if done == total {
				fmt.Fprintln(f)
			}
		}
	}
	rep := fleet.Run(ctx, hosts, opts)
	switch {
	case *kubeconfig != "" || *clusterFrom != "":
		copts, cw, err := ClusterOptions(inv, extra)
		if err != nil {
			rep.ClusterSkipped = err.Error()
			break
		}
		for _, w := range cw {
			fmt.Fprintln(s.ErrOut, "layercheck: warning:", w)
		}
		req := cluster.Request{Options: *copts, Kubeconfig: *kubeconfig}
		if *clusterFrom != "" {
			src, err := firstControlPlane(ctx, hosts, copts.KubeControlPlane, opts)
			if err != nil {
				rep.ClusterSkipped = err.Error()
				break
			}
			defer src.Close()
			req.Kubeconfig, req.KubeconfigData, req.Dial = src.Where, src.Kubeconfig, src.Dial
		}
		crep, err := cluster.RunRequest(ctx, &req)
		if err != nil {
			return &ExitError{Code: 2, Msg: "verify: cluster: " + err.Error()}
		}
		rep.AddCluster(crep)
	default:
		rep.ClusterSkipped = "no --kubeconfig or --cluster-from given"
	}
	var w io.Writer = s.Out
	if *output != "" {
		f, err := os.OpenFile(*output, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
		if err != nil {
			return &ExitError{Code: 2, Msg: "verify: " + err.Error()}
		}
		defer f.Close()
		w = f
	}
	if err := rep.Write(w, *format); err != nil {
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
