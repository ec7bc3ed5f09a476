package app

import (
	"context"
	"encoding/json"
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
	fs := newFlags("node", "[options]", `Verifies this node after cluster.yml, layer by layer, as the node_facts
module does, without Ansible. Exit 0 when no check failed, 1 when one did,
2 on bad usage.`)
	req := verify.Request{Options: verify.NewOptions()}
	format := "text"
	fs.str(&format, "", "format", "text|json", "text", "output format (default text)")
	fs.str(&req.Root, "", "root", "DIR", "/", "the node's filesystem root (default /)")
	fs.str(&req.Host, "", "host", "NAME", "", "this node's inventory_hostname (default: the hostname)")
	fs.str(&req.Now, "", "now", "TIME", "", "judge certificates at this RFC 3339 time (default: now)")
	var layers, skip, groups, etcdMembers, addrMap multiFlag
	fs.multi(&layers, "", "layer", "LAYER", "run only this layer (repeatable; default all: "+strings.Join(verify.LayerNames(), ", ")+")")
	fs.multi(&skip, "", "skip", "LAYER", "skip this layer (repeatable)")
	fs.multi(&groups, "", "group", "GROUP", "a group this host is in, e.g. etcd, kube_control_plane, kube_node (repeatable)")
	fs.multi(&etcdMembers, "", "etcd-member", "NAME", "inventory hostname of an etcd member, in inventory order (repeatable)")
	fs.multi(&addrMap, "", "addr-map", "FROM=TO", "host:port mapping for a contacted address (repeatable; for tests)")
	fs.hide("addr-map")
	var vars string
	fs.str(&vars, "", "vars", "JSON", "", "kubespray values as a JSON object with kubespray's names, e.g. '{\"kube_cert_dir\":\"/etc/kubernetes/ssl\"}'")
	var timeout, netTimeout time.Duration
	fs.duration(&timeout, "layer-timeout", 30*time.Second, "time limit per layer")
	fs.duration(&netTimeout, "net-timeout", 5*time.Second, "time limit per network call")
	if help, err := fs.parse(args, s); help || err != nil {
		return err
	}
	if fs.fs.NArg() > 0 {
		return fs.usageError(fmt.Sprintf("takes no arguments, got %q", fs.fs.Args()))
	}
	if format != "text" && format != "json" {
		return fs.usageError(fmt.Sprintf("--format %q: want text or json", format))
	}
	if vars != "" {
		dec := json.NewDecoder(strings.NewReader(vars))
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
	if err := writeReport(s.Out, format, rep, rep.WriteText); err != nil {
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
