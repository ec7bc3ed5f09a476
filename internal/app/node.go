package app

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/layercheck/layercheck/internal/output"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/parser/ansiblebool"
	"github.com/layercheck/layercheck/verify/node"
)

func init() {
	register("node", "verify this node after cluster.yml, layer by layer (no Ansible needed)", runNode)
}

// checkFormatsWant says which --format values node and cluster take.
const checkFormatsWant = "want text, json, junit, markdown or prometheus"

// runNode is `layercheck node [--root DIR] [--format text|json] ...`: the
// node_facts module's checks for an operator on the node. Exit 0 when no
// check failed, 1 when one did, 2 on bad usage.
func runNode(ctx context.Context, args []string, s Streams) error {
	fs := newFlags("node", "[options]", `Verifies this node after cluster.yml, layer by layer, as the node_facts
module does, without Ansible. Exit 0 when no check failed, 1 when one did,
2 on bad usage.`)
	req := node.Request{Options: node.NewOptions()}
	format := "text"
	fs.str(&format, "", "format", strings.Join(output.CheckFormats, "|"), "text", "output format (default text)")
	var textfile string
	fs.str(&textfile, "", "textfile", "DIR", "", "also write the metrics to DIR/layercheck.prom, atomically, for node_exporter's textfile collector")
	fs.str(&req.Root, "", "root", "DIR", "/", "the node's filesystem root (default /)")
	fs.str(&req.Host, "", "host", "NAME", "", "this node's inventory_hostname (default: the hostname)")
	fs.str(&req.Now, "", "now", "TIME", "", "judge certificates at this RFC 3339 time (default: now)")
	var layers, skip, groups, etcdMembers, addrMap multiFlag
	fs.multi(&layers, "", "layer", "LAYER", "run only this layer (repeatable; default all: "+strings.Join(node.LayerNames(), ", ")+")")
	fs.multi(&skip, "", "skip", "LAYER", "skip this layer (repeatable)")
	fs.multi(&groups, "", "group", "GROUP", "a group this host is in, e.g. etcd, kube_control_plane, kube_node (repeatable)")
	fs.multi(&etcdMembers, "", "etcd-member", "NAME", "inventory hostname of an etcd member, in inventory order (repeatable)")
	fs.multi(&addrMap, "", "addr-map", "FROM=TO", "host:port mapping for a contacted address (repeatable; for tests)")
	fs.hide("addr-map")
	var vars string
	fs.str(&vars, "", "vars", "JSON|@FILE", "", "kubespray values as a JSON object with kubespray's names, e.g. '{\"kube_cert_dir\":\"/etc/kubernetes/ssl\"}', or @FILE to read it from FILE")
	var timeout, netTimeout time.Duration
	fs.duration(&timeout, "layer-timeout", 30*time.Second, "time limit per layer")
	fs.duration(&netTimeout, "net-timeout", 5*time.Second, "time limit per network call")
	if help, err := fs.parse(args, s); help || err != nil {
		return err
	}
	if fs.fs.NArg() > 0 {
		return fs.usageError(fmt.Sprintf("takes no arguments, got %q", fs.fs.Args()))
	}
	if !contains(output.CheckFormats, format) {
		return fs.usageError(fmt.Sprintf("--format %q: %s", format, checkFormatsWant))
	}
	if file, ok := strings.CutPrefix(vars, "@"); ok {
		data, err := parser.ReadFile(file, 0)
		if err != nil {
			return &ExitError{Code: 2, Msg: "node: --vars: " + err.Error()}
		}
		vars = string(data)
	}
	if vars != "" {
		fixed, warnings, err := jsonStringBools(vars, reflect.TypeOf(req.Options))
		if err != nil {
			return &ExitError{Code: 2, Msg: "node: --vars: " + err.Error()}
		}
		for _, w := range warnings {
			fmt.Fprintln(s.ErrOut, "warning:", w)
		}
		dec := json.NewDecoder(strings.NewReader(fixed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req.Options); err != nil {
			return &ExitError{Code: 2, Msg: "node: --vars: " + err.Error()}
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
			return &ExitError{Code: 2, Msg: fmt.Sprintf("node: --addr-map %q: want FROM=TO", m)}
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
	run := output.Run{Start: timeNow()}
	rep, err := node.RunRequest(ctx, &req)
	if err != nil {
		return &ExitError{Code: 2, Msg: "node: " + err.Error()}
	}
	run.Duration = timeNow().Sub(run.Start)
	c := output.Check{Node: rep, Title: "layercheck node", Run: run}
	if textfile != "" {
		if err := c.WriteTextfile(textfile, "layercheck.prom"); err != nil {
			return &ExitError{Code: 2, Msg: "node: " + err.Error()}
		}
	}
	if err := output.WriteCheck(s.Out, format, c); err != nil {
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

// timeNow is the clock of the run's start and duration (the metrics'
// layercheck_last_run_*).
var timeNow = time.Now

// jsonStringBools reads the booleans of a --vars JSON object as the verify
// role's `| bool` does: a string or 0/1 spelling a boolean ("true", "no",
// 1) given for a bool field of t is read as that boolean, with a warning that the lint
// reports it as an error (ansible-core >= 2.19 fails `when:` on it). It
// returns the object with those values made booleans.
func jsonStringBools(raw string, t reflect.Type) (string, []string, error) {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return "", nil, err
	}
	bools := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Type.Kind() == reflect.Bool {
			bools[strings.Split(t.Field(i).Tag.Get("json"), ",")[0]] = true
		}
	}
	var names []string
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	var warnings []string
	for _, k := range names {
		if !bools[k] {
			continue
		}
		var spelled string
		switch v := m[k].(type) {
		case string:
			spelled = v
		case json.Number:
			spelled = v.String()
		default:
			continue
		}
		// The verify role hands these to node_facts through `| bool`
		// (roles/verify/tasks/main.yml); what ansible-core 2.19 and later
		// only coerce with a deprecation warning ("y", "1.0") is left
		// for the decoder to refuse, naming the field and the type.
		b, err := ansiblebool.Documented(jsonScalar(m[k]))
		if err != nil {
			continue
		}
		m[k] = b
		warnings = append(warnings, fmt.Sprintf("--vars %s is %s, not a boolean: read here as %t, as `| bool` reads it, but the lint reports it as an error (string-as-bool): ansible-core >= 2.19 fails `when: %s` in cluster.yml; fix: give %q: %t in the inventory and here",
			k, jsonText(spelled), b, k, k, b))
	}
	out, err := json.Marshal(m)
	return string(out), warnings, err
}

func jsonText(spelled string) string {
	if _, err := strconv.Atoi(spelled); err == nil {
		return "the int " + spelled
	}
	return "the string " + strconv.Quote(spelled)
}

// jsonScalar is a --vars JSON string or number as Python's json.loads
// gives it: a str, an int, or a float when written with a fraction or an
// exponent.
func jsonScalar(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	if i, ok := new(big.Int).SetString(n.String(), 10); ok {
		return i
	}
	f, _ := n.Float64()
	return f
}
