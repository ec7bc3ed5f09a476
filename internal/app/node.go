package app

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/layercheck/layercheck/verify"
)

func init() {
	register("node", "verify this node after cluster.yml, layer by layer (no Ansible needed)", runNode)
}

// runNode is `layercheck node [--root DIR] [--format text|json] ...`: the
// node_facts module's checks for an operator on the node. Exit 0 when no
// check failed, 1 when one did, 2 on bad usage.
func runNode(ctx context.Context, args []string, s Streams) error {
	fs := flag.NewFlagSet("node", flag.ContinueOnError)
	fs.SetOutput(s.ErrOut)
	req := verify.Request{Options: verify.NewOptions()}
	format := fs.String("format", "text", "output format: text, json, junit or markdown")
	fs.StringVar(&req.Root, "root", "/", "the node's filesystem root")
	fs.StringVar(&req.Host, "host", "", "this node's inventory_hostname (default: the hostname)")
	fs.StringVar(&req.Now, "now", "", "judge certificates at this RFC 3339 time (default: now)")
	var layers, skip, groups, etcdMembers, addrMap multiFlag
	fs.Var(&layers, "layer", "run only this layer (repeatable; default all: "+strings.Join(verify.LayerNames(), ", ")+")")
	fs.Var(&skip, "skip", "skip this layer (repeatable)")
	fs.Var(&groups, "group", "a group this host is in, e.g. etcd, kube_control_plane, kube_node (repeatable)")
	fs.Var(&etcdMembers, "etcd-member", "inventory hostname of an etcd member, in inventory order (repeatable)")
	fs.Var(&addrMap, "addr-map", "FROM=TO host:port mapping for a contacted address (repeatable; for tests)")
	vars := fs.String("vars", "", "kubespray values as a JSON object with kubespray's names, e.g. '{\"kube_cert_dir\":\"/etc/kubernetes/ssl\"}'")
	timeout := fs.Duration("layer-timeout", 30*time.Second, "time limit per layer")
	netTimeout := fs.Duration("net-timeout", 5*time.Second, "time limit per network call")
	if err := fs.Parse(args); err != nil {
		return &ExitError{Code: 2, Msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return &ExitError{Code: 2, Msg: fmt.Sprintf("node takes no arguments, got %q", fs.Args())}
	}
	if !contains(checkFormats, *format) {
		return &ExitError{Code: 2, Msg: fmt.Sprintf("--format %q: want text, json, junit or markdown", *format)}
	}
	if *vars != "" {
		dec := json.NewDecoder(strings.NewReader(*vars))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req.Options); err != nil {
			return &ExitError{Code: 2, Msg: "--vars: " + err.Error()}
		}
	}
	if len(groups) > 0 {
		req.Groups = groups
	}
	if len(etcdMembers) > 0 {
		req.EtcdMembers = etcdMembers
	}
	for _, m := range addrMap {
		from, to, ok := strings.Cut(m, "=")
		if !ok {
			return &ExitError{Code: 2, Msg: fmt.Sprintf("--addr-map %q: want FROM=TO", m)}
		}
		if req.AddrMap == nil {
			req.AddrMap = map[string]string{}
		}
		req.AddrMap[from] = to
	}
	if req.Host == "" {
		req.Host = hostname()
	}
	req.Layers, req.Skip = layers, skip
	req.LayerTimeout, req.NetTimeout = timeout.Seconds(), netTimeout.Seconds()
	rep, err := verify.RunRequest(ctx, &req)
	if err != nil {
		return &ExitError{Code: 2, Msg: err.Error()}
	}
	if err := writeCheckReport(s.Out, *format, "layercheck node", rep, nil, rep.WriteText); err != nil {
		return err
	}
	return verdict(rep.Status)
}

func hostname() string {
	h, err := osHostname()
	if err != nil {
		return ""
	}
	if i := strings.IndexByte(h, '.'); i > 0 {
		h = h[:i]
	}
	return h
}

var osHostname = os.Hostname
