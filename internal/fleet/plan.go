// Package fleet verifies every node of a kubespray inventory from the
// controller: one SSH connection per host (package sshconn), the node
// layers of package verify run over it (files over SFTP, commands in SSH
// sessions, connections from the node through the SSH connection), with
// bounded concurrency (forks) and a time limit per host, as
// playbooks/verify.yml does with Ansible but without copying a module to
// the hosts.
package fleet

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/internal/sshconn"
	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/parser/ansiblebool"
	"github.com/layercheck/layercheck/verify/node"
)

// Host is one host to verify: how to reach it and what to check there.
type Host struct {
	Name   string
	Target *sshconn.Target
	// Settings are the verify role's variables for this host (root,
	// addr_map, now, systemd, timeouts, thresholds) and the kubespray
	// values, as the role hands them to node_facts.
	Request node.Request
	// Err is a problem with the host's variables: the host is reported
	// as an error without connecting.
	Err error
}

// Plan lists the hosts playbooks/verify.yml checks (groups k8s_cluster
// and etcd after kubespray's dynamic groups, in the order the inventory
// first names them), limited
// to limit (host or group names, comma-separated as --limit; empty: all),
// with each host's connection and node_facts request from its hostvars
// (extra vars on top). Warnings name values Ansible would template at run
// time, for which kubespray's default is assumed.
func Plan(inv *parser.Inventory, extra *parser.Map, limit string) ([]*Host, []string, error) {
	kubespray.ApplyDynamicGroups(inv)
	var hosts []*parser.Host
	seen := map[string]bool{}
	for _, g := range []string{"k8s_cluster", "etcd"} {
		for _, h := range inv.HostsUnder(g) {
			if !seen[h.Name] {
				seen[h.Name] = true
				hosts = append(hosts, h)
			}
		}
	}
	// Report hosts in the order the inventory first names them.
	order := map[string]int{}
	for i, h := range inv.Hosts {
		order[h.Name] = i
	}
	sort.SliceStable(hosts, func(i, j int) bool { return order[hosts[i].Name] < order[hosts[j].Name] })
	if limit != "" {
		keep := map[string]bool{}
		for _, pat := range strings.Split(limit, ",") {
			pat = strings.TrimSpace(pat)
			if pat == "" {
				continue
			}
			if inv.Host(pat) != nil {
				keep[pat] = true
				continue
			}
			if inv.Group(pat) != nil {
				for _, h := range inv.HostsUnder(pat) {
					keep[h.Name] = true
				}
				continue
			}
			return nil, nil, fmt.Errorf("--limit %q: no host or group %q in the inventory", limit, pat)
		}
		var out []*parser.Host
		for _, h := range hosts {
			if keep[h.Name] {
				out = append(out, h)
			}
		}
		hosts = out
	}
	if len(hosts) == 0 {
		return nil, nil, fmt.Errorf("no host to verify: groups k8s_cluster and etcd are empty%s", map[bool]string{true: " after --limit " + limit}[limit != ""])
	}
	// A jump host named as an inventory host is reached with its own
	// variables (kubespray's bastion group); any other name is an address.
	lookup := func(name string) *parser.Map {
		if h := inv.Host(name); h != nil {
			return inv.HostVars(h, extra)
		}
		return nil
	}
	var warnings []string
	etcdMembers := names(inv.HostsUnder("etcd"))
	cpAccessIPs, w := controlPlaneAccessIPs(inv, extra)
	warnings = append(warnings, w...)
	var out []*Host
	for _, h := range hosts {
		vars := inv.HostVars(h, extra)
		fh := &Host{Name: h.Name}
		fh.Target, fh.Err = sshconn.FromHostVars(h.Name, vars, lookup)
		if fh.Err == nil {
			fh.Err = roleBecome(fh.Target, vars)
		}
		var groups []string
		for _, g := range inv.GroupsOf(h) {
			groups = append(groups, g.Name)
		}
		sort.Strings(groups) // group_names is sorted
		req, w, err := request(h.Name, vars, groups, etcdMembers)
		req.KubeControlPlaneAccessIPs = cpAccessIPs
		warnings = append(warnings, w...)
		if err != nil && fh.Err == nil {
			fh.Err = err
		}
		fh.Request = req
		out = append(out, fh)
	}
	return out, dedupe(warnings), nil
}

// controlPlaneAccessIPs is what roles/verify/tasks/main.yml passes as
// kube_control_plane_access_ips: each kube_control_plane host's
// main_access_ip, else access_ip, else ip ("" when its variables set none
// of them; kubespray would then take the address of its default route,
// a fact).
func controlPlaneAccessIPs(inv *parser.Inventory, extra *parser.Map) (map[string]string, []string) {
	out := map[string]string{}
	var warnings []string
	for _, h := range inv.HostsUnder("kube_control_plane") {
		vars := inv.HostVars(h, extra)
		out[h.Name] = ""
		for _, name := range []string{"main_access_ip", "access_ip", "ip"} {
			v := vars.Get(name)
			if v == nil || v.Kind == parser.KindNull {
				continue
			}
			if v.Templated() || v.IsVault() {
				warnings = append(warnings, fmt.Sprintf("%s of %s at %s is %s, rendered by Ansible at run time: its address is not compared with the localhost load balancer's upstreams", name, h.Name, v.Pos, v.Display()))
				break
			}
			if str, ok := plain(v).(string); ok && str != "" {
				out[h.Name] = str
				break
			}
		}
	}
	return out, warnings
}

func names(hs []*parser.Host) []string {
	out := []string{}
	for _, h := range hs {
		out = append(out, h.Name)
	}
	return out
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// request builds what roles/verify/tasks/main.yml hands node_facts: the
// role's layercheck_verify_* variables (defaults from
// roles/verify/defaults/main.yml) and each kubespray value the hostvars
// set; booleans start from kubespray's defaults (node.NewOptions).
func request(host string, vars *parser.Map, groups, etcdMembers []string) (node.Request, []string, error) {
	req := node.Request{Options: node.NewOptions(), Root: "/", Host: host, LayerTimeout: 30, NetTimeout: 5}
	req.Groups = groups
	req.EtcdMembers = etcdMembers
	req.CertWarnDays, req.CertFailDays = 30, 7
	var warnings []string
	get := func(name string) *parser.Value {
		v := vars.Get(name)
		if v == nil || v.Kind == parser.KindNull {
			return nil
		}
		if v.Templated() || v.IsVault() {
			warnings = append(warnings, fmt.Sprintf("%s at %s is %s, rendered by Ansible at run time: kubespray's default assumed", name, v.Pos, v.Display()))
			return nil
		}
		return v
	}
	rv := reflect.ValueOf(&req.Options).Elem()
	rt := rv.Type()
	for i := 0; i < rt.NumField(); i++ {
		name := strings.Split(rt.Field(i).Tag.Get("json"), ",")[0]
		if name == "group_names" || name == "etcd_members" || name == "kube_control_plane_access_ips" || name == "cert_warn_days" || name == "cert_fail_days" || name == "kubespray_version" {
			continue
		}
		if v := get(name); v != nil {
			if err := setField(rv.Field(i), v); err != nil {
				return req, warnings, fmt.Errorf("host %s: %s at %s: %v", host, name, v.Pos, err)
			}
		}
	}
	role := []struct {
		name string
		dst  any
	}{
		{"layercheck_verify_root", &req.Root},
		{"layercheck_kubespray_version", &req.KubesprayVersion},
		{"layercheck_verify_now", &req.Now},
		{"layercheck_verify_layer_timeout", &req.LayerTimeout},
		{"layercheck_verify_net_timeout", &req.NetTimeout},
		{"layercheck_verify_cert_warn_days", &req.CertWarnDays},
		{"layercheck_verify_cert_fail_days", &req.CertFailDays},
		{"layercheck_verify_addr_map", &req.AddrMap},
		{"layercheck_verify_layers", &req.Layers},
		{"layercheck_verify_skip", &req.Skip},
	}
	for _, r := range role {
		v := get(r.name)
		if v == nil {
			continue
		}
		data, err := json.Marshal(plain(v))
		if err == nil {
			err = json.Unmarshal(data, r.dst)
		}
		if err != nil {
			// INI and -e k=v give numbers as strings; Ansible's | int / | float.
			if s, ok := plain(v).(string); ok {
				switch d := r.dst.(type) {
				case *float64:
					*d, err = strconv.ParseFloat(s, 64)
				case *int:
					*d, err = strconv.Atoi(s)
				}
			}
		}
		if err != nil {
			return req, warnings, fmt.Errorf("host %s: %s at %s: %s is not what the verify role takes", host, r.name, v.Pos, v.Display())
		}
	}
	if v := get("layercheck_verify_systemd"); v != nil {
		if s, ok := plain(v).(string); !ok || s != "" {
			b, err := asBool(v)
			if err != nil {
				return req, warnings, fmt.Errorf("host %s: layercheck_verify_systemd at %s: %v", host, v.Pos, err)
			}
			req.Systemd = &b
		}
	}
	return req, warnings, nil
}

// plain is a loaded value as a Go value for JSON.
func plain(v *parser.Value) any {
	switch v.Kind {
	case parser.KindBool:
		return v.Bool
	case parser.KindInt:
		if v.Int.IsInt64() {
			return v.Int.Int64()
		}
		return v.Int.String()
	case parser.KindFloat:
		return v.Float
	case parser.KindString:
		return v.Str
	case parser.KindList:
		out := make([]any, 0, len(v.List))
		for _, x := range v.List {
			out = append(out, plain(x))
		}
		return out
	case parser.KindMap:
		out := map[string]any{}
		if v.Map != nil {
			for _, k := range v.Map.Keys {
				out[k] = plain(v.Map.Values[k])
			}
		}
		return out
	}
	return nil
}

// asBool reads v as the verify role's `| bool` does
// (roles/verify/tasks/main.yml), refusing the values ansible-core 2.19 and
// later only coerce with a deprecation warning: the playbook's series is
// not known here, and the answer is the same in each.
func asBool(v *parser.Value) (bool, error) {
	b, err := ansiblebool.Documented(v.Scalar())
	if err != nil {
		return false, fmt.Errorf("%s is not a boolean: %v", v.Display(), err)
	}
	return b, nil
}

// setField sets an Options field as the role's Jinja would hand the value
// to the module (booleans through | bool, other values as loaded).
func setField(f reflect.Value, v *parser.Value) error {
	switch f.Kind() {
	case reflect.Bool:
		b, err := asBool(v)
		if err != nil {
			return err
		}
		f.SetBool(b)
		return nil
	case reflect.Pointer:
		if f.Type().Elem().Kind() == reflect.Bool {
			b, err := asBool(v)
			if err != nil {
				return err
			}
			f.Set(reflect.ValueOf(&b))
			return nil
		}
	case reflect.String:
		switch x := plain(v).(type) {
		case string:
			f.SetString(x)
		case int64:
			f.SetString(strconv.FormatInt(x, 10))
		case float64:
			f.SetString(strconv.FormatFloat(x, 'f', -1, 64))
		default:
			return fmt.Errorf("%s: want a string", v.Display())
		}
		return nil
	}
	data, err := json.Marshal(plain(v))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, f.Addr().Interface()); err != nil {
		return fmt.Errorf("%s: %v", v.Display(), err)
	}
	return nil
}

// roleBecome applies the verify role's become: roles/verify runs node_facts
// with become: layercheck_verify_become (default true), so unless the
// inventory sets ansible_become itself, the node is read as root.
func roleBecome(t *sshconn.Target, vars *parser.Map) error {
	if v := vars.Get("ansible_become"); v != nil && v.Kind != parser.KindNull {
		return nil
	}
	t.Become = true
	if v := vars.Get("layercheck_verify_become"); v != nil && v.Kind != parser.KindNull && !v.Templated() {
		b, err := asBool(v)
		if err != nil {
			return fmt.Errorf("host %s: layercheck_verify_become at %s: %v", t.Name, v.Pos, err)
		}
		t.Become = b
	}
	return nil
}
