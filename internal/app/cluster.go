package app

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/layercheck/layercheck/internal/output"
	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/parser/ansiblebool"
	"github.com/layercheck/layercheck/verify/cluster"
)

func init() {
	register("cluster", "verify the cluster through its API server after cluster.yml (no Ansible needed)", runCluster)
}

// runCluster is `layercheck cluster`.
func runCluster(ctx context.Context, args []string, s Streams) error {
	fs := newFlags("cluster", "--kubeconfig FILE -i INVENTORY [-i ...] [-e EXTRA]... [options]", `Checks the cluster the inventory describes through its API server, layer by
layer (nodes, kube_system, cni, addons, probe), as the cluster_facts module
does. Exit 0 when no check failed, 1 when one did, 2 on bad usage.`)
	var req cluster.Request
	var inv, extra, layers, skip multiFlag
	fs.multi(&inv, "i", "inventory", "INVENTORY", "inventory source as for ansible-playbook (repeatable)")
	fs.multi(&extra, "e", "extra-vars", "EXTRA", "extra vars as for ansible-playbook -e (repeatable)")
	fs.str(&req.Kubeconfig, "", "kubeconfig", "FILE", "", "kubeconfig file (default: $K8S_AUTH_KUBECONFIG, $KUBECONFIG, ~/.kube/config)")
	fs.str(&req.Context, "", "context", "NAME", "", "kubeconfig context (default: its current-context)")
	format := "text"
	fs.str(&format, "", "format", strings.Join(output.CheckFormats, "|"), "text", "output format (default text)")
	var textfile string
	fs.str(&textfile, "", "textfile", "DIR", "", "also write the metrics to DIR/layercheck_cluster.prom, atomically, for node_exporter's textfile collector")
	fs.multi(&layers, "", "layer", "LAYER", "run only this layer (repeatable; default all: "+strings.Join(cluster.LayerNames(), ", ")+")")
	fs.multi(&skip, "", "skip", "LAYER", "skip this layer (repeatable)")
	var check, noProbe bool
	fs.boolean(&check, "", "check", "check mode: skip the probes that create objects")
	fs.boolean(&noProbe, "", "no-probe", "do not run the workload and PVC probes")
	fs.str(&req.Probe.Image, "", "probe-image", "IMAGE", "", "probe image answering /hostname with its pod name (default agnhost netexec)")
	fs.str(&req.Probe.Path, "", "probe-path", "auto|cluster_ip|service_proxy", "auto", "how the probe is reached (default auto)")
	fs.integer(&req.Probe.Port, "probe-port", "PORT", 8080, "container port the probe image listens on")
	var timeout, probeTimeout, cleanupTimeout time.Duration
	fs.duration(&timeout, "timeout", 10*time.Second, "time limit per API request")
	fs.duration(&probeTimeout, "probe-timeout", 120*time.Second, "time limit for each probe")
	fs.duration(&cleanupTimeout, "probe-cleanup-timeout", 60*time.Second, "time limit for a probe's namespace to be gone after the probe")
	if help, err := fs.parse(args, s); help || err != nil {
		return err
	}
	if fs.fs.NArg() > 0 {
		return fs.usageError(fmt.Sprintf("takes no arguments, got %q", fs.fs.Args()))
	}
	if len(inv) == 0 {
		return fs.usageError("no inventory given (-i)")
	}
	if !contains(output.CheckFormats, format) {
		return fs.usageError(fmt.Sprintf("--format %q: %s", format, checkFormatsWant))
	}
	opts, warnings, err := ClusterOptions(inv, extra)
	if err != nil {
		return &ExitError{Code: 2, Msg: "cluster: " + err.Error()}
	}
	for _, w := range warnings {
		fmt.Fprintln(s.ErrOut, "layercheck: warning:", w)
	}
	req.Options = *opts
	req.Layers, req.Skip = layers, skip
	req.CheckMode = check
	if noProbe {
		f := false
		req.Probe.Enabled = &f
	}
	req.Timeout, req.Probe.Timeout, req.Probe.CleanupTimeout = timeout.Seconds(), probeTimeout.Seconds(), cleanupTimeout.Seconds()
	run := output.Run{Start: timeNow()}
	rep, err := cluster.RunRequest(ctx, &req)
	if err != nil {
		return &ExitError{Code: 2, Msg: "cluster: " + err.Error()}
	}
	run.Duration = timeNow().Sub(run.Start)
	c := output.Check{Cluster: rep, Title: "layercheck cluster", Run: run}
	if textfile != "" {
		if err := c.WriteTextfile(textfile, "layercheck_cluster.prom"); err != nil {
			return &ExitError{Code: 2, Msg: "cluster: " + err.Error()}
		}
	}
	if err := output.WriteCheck(s.Out, format, c); err != nil {
		return err
	}
	return verdict(rep.Status)
}

// ClusterOptions reads the inventory's groups (after kubespray's dynamic
// groups) and the kubespray values of the first kube_control_plane host
// (its hostvars with -e on top) into cluster.Options. Values Ansible would
// template at run time are left to kubespray's default, with a warning.
func ClusterOptions(sources, extra []string) (*cluster.Options, []string, error) {
	o, _, warnings, err := clusterOptions(sources, extra)
	return o, warnings, err
}

// clusterOptions is ClusterOptions, also returning the hostvars of the
// first kube_control_plane host, where verify.yml runs the cluster checks.
func clusterOptions(sources, extra []string) (*cluster.Options, *parser.Map, []string, error) {
	inv, err := parser.Load(sources...)
	if err != nil {
		return nil, nil, nil, err
	}
	var ev *parser.Map
	if len(extra) > 0 {
		if ev, err = parser.ParseExtraVars(extra); err != nil {
			return nil, nil, nil, err
		}
	}
	kubespray.ApplyDynamicGroups(inv)
	o := &cluster.Options{}
	names := func(g string) []string {
		var out []string
		grp := inv.Group(g)
		if grp == nil {
			return nil
		}
		seen := map[string]bool{}
		var walk func(g *parser.Group)
		walk = func(g *parser.Group) {
			for _, h := range g.Hosts {
				if !seen[h.Name] {
					seen[h.Name] = true
					out = append(out, h.Name)
				}
			}
			for _, c := range g.Children {
				walk(c)
			}
		}
		walk(grp)
		return out
	}
	o.KubeControlPlane, o.KubeNode, o.Etcd, o.CalicoRR = names("kube_control_plane"), names("kube_node"), names("etcd"), names("calico_rr")
	if len(o.KubeControlPlane) == 0 {
		return nil, nil, nil, fmt.Errorf("inventory %s: group kube_control_plane has no host", strings.Join(sources, ", "))
	}
	vars := inv.HostVars(inv.Host(o.KubeControlPlane[0]), ev)
	cat, err := kubespray.ForInventory(sources)
	if err != nil {
		return nil, nil, nil, err
	}
	var warnings []string
	rv := reflect.ValueOf(o).Elem()
	rt := rv.Type()
	for i := 0; i < rt.NumField(); i++ {
		name := strings.Split(rt.Field(i).Tag.Get("json"), ",")[0]
		if name == "kubespray_version" {
			// the role's layercheck_kubespray_version, below
			name = "layercheck_kubespray_version"
		}
		v := literalVar(vars, name, "kubespray's default assumed (use the cluster_facts module to get the rendered value)", &warnings)
		if v == nil {
			continue
		}
		f := rv.Field(i)
		if err := setOption(f, v); err != nil {
			return nil, nil, warnings, fmt.Errorf("%s at %s: %v", name, v.Pos, err)
		}
		if w := stringBoolWarning(cat, name, f, v); w != "" {
			warnings = append(warnings, w)
		}
	}
	// kube_override_hostname: the Node name of hosts that set one.
	for _, h := range o.K8sCluster() {
		v := inv.HostVars(inv.Host(h), ev).Get("kube_override_hostname")
		if v == nil || v.Kind != parser.KindString || v.Str == "" || v.Str == h {
			continue
		}
		if v.Templated() {
			if v.Str != "{{ inventory_hostname }}" {
				warnings = append(warnings, fmt.Sprintf("kube_override_hostname of %s at %s is %s, rendered by Ansible at run time: the Node is looked for as %s (use the cluster_facts module to get the rendered value)", h, v.Pos, v.Display(), h))
			}
			continue
		}
		if o.NodeNames == nil {
			o.NodeNames = map[string]string{}
		}
		o.NodeNames[h] = v.Str
	}
	return o, vars, warnings, nil
}

// literalVar is variable name of vars when it is set and its value is
// known before the run; a value Ansible renders at run time (Jinja, vault)
// is a warning ending in assumed, and nil, as is an unset one.
func literalVar(vars *parser.Map, name, assumed string, warnings *[]string) *parser.Value {
	v := vars.Get(name)
	if v == nil || v.Kind == parser.KindNull {
		return nil
	}
	if v.Templated() || v.IsVault() {
		*warnings = append(*warnings, fmt.Sprintf("%s at %s is %s, rendered by Ansible at run time: %s", name, v.Pos, v.Display(), assumed))
		return nil
	}
	return v
}

// stringBoolWarning is the lint's string-as-bool finding for a boolean
// option given as a string or an int (-e x=true, INI x=true, "true"), which
// setOption has read as Ansible's `| bool` would; empty when v is a real
// boolean or kubespray itself keeps the variable as a string (StringBool,
// e.g. local_path_provisioner_is_default_storageclass: "true").
func stringBoolWarning(cat *kubespray.Catalogue, name string, f reflect.Value, v *parser.Value) string {
	if f.Kind() == reflect.Pointer {
		f = f.Elem()
	}
	if v.Kind == parser.KindBool || f.Kind() != reflect.Bool {
		return ""
	}
	if d := cat.Lookup(name); d != nil && d.StringBool && v.Kind == parser.KindString {
		return ""
	}
	fix := fmt.Sprintf("write %s: %t unquoted at %s", name, f.Bool(), v.Pos)
	switch v.Origin {
	case parser.OriginExtraKV:
		fix = fmt.Sprintf(`pass -e '{"%s": %t}' (-e key=value always gives a string)`, name, f.Bool())
	case parser.OriginINIHost, parser.OriginINIGroup:
		fix = fmt.Sprintf("write %s=%s at %s (an INI value is a boolean only as True or False)", name, pyBool(f.Bool()), v.Pos)
	}
	return fmt.Sprintf("%s at %s is the %s %s, not a boolean: read here as %t, as `| bool` reads it, but the lint reports it as an error (string-as-bool): ansible-core >= 2.19 fails `when: %s` in cluster.yml; fix: %s",
		name, v.Pos, v.Kind, v.Display(), f.Bool(), name, fix)
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func setOption(f reflect.Value, v *parser.Value) error {
	scalar := func() string {
		switch v.Kind {
		case parser.KindString:
			return v.Str
		case parser.KindInt:
			return v.Int.String()
		case parser.KindBool:
			return strconv.FormatBool(v.Bool)
		case parser.KindFloat:
			return strconv.FormatFloat(v.Float, 'f', -1, 64)
		}
		return ""
	}
	asBool := func() (bool, error) {
		// The verify role hands every boolean option to cluster_facts
		// through `| bool` (roles/verify/tasks/cluster.yml), on whichever
		// ansible-core runs the playbook: its answer is the same in every
		// series, and the values 2.19 and later only coerce with a
		// deprecation warning ("y", "1.0", "") are refused here, as the
		// newest series is headed to refuse them.
		b, err := ansiblebool.Documented(v.Scalar())
		if err != nil {
			return false, fmt.Errorf("%s is not a boolean: %v", v.Display(), err)
		}
		return b, nil
	}
	switch f.Kind() {
	case reflect.String:
		if v.Kind == parser.KindList || v.Kind == parser.KindMap {
			return fmt.Errorf("%s: want a string", v.Display())
		}
		f.SetString(scalar())
	case reflect.Int:
		n, err := strconv.Atoi(scalar())
		if err != nil {
			return fmt.Errorf("%s: want an integer", v.Display())
		}
		f.SetInt(int64(n))
	case reflect.Float64:
		x, err := strconv.ParseFloat(scalar(), 64)
		if err != nil || v.Kind == parser.KindBool {
			return fmt.Errorf("%s: want a number", v.Display())
		}
		f.SetFloat(x)
	case reflect.Bool:
		b, err := asBool()
		if err != nil {
			return err
		}
		f.SetBool(b)
	case reflect.Pointer:
		// *bool and *int: options whose zero value is not kubespray's default
		p := reflect.New(f.Type().Elem())
		if err := setOption(p.Elem(), v); err != nil {
			return err
		}
		f.Set(p)
	case reflect.Slice:
		// groups: taken from the inventory itself
	}
	return nil
}

// clusterRoleVars sets what roles/verify/tasks/cluster.yml hands
// cluster_facts from the role's layercheck_cluster_* variables, read from
// vars (the first kube_control_plane host's, where verify.yml runs the
// cluster checks), so that `layercheck verify` judges the cluster as
// verify.yml does: an inventory that points layercheck_cluster_probe_image
// at its own registry is obeyed by both. Unset variables keep the role's
// defaults (roles/verify/defaults/main.yml), which are cluster.Request's.
func clusterRoleVars(vars *parser.Map, req *cluster.Request) ([]string, error) {
	var warnings []string
	scalars := []struct {
		name string
		dst  any
	}{
		{"layercheck_cluster_context", &req.Context},
		{"layercheck_cluster_timeout", &req.Timeout},
		{"layercheck_cluster_layer_timeout", &req.LayerTimeout},
		{"layercheck_cluster_probe", &req.Probe.Enabled},
		{"layercheck_cluster_probe_image", &req.Probe.Image},
		{"layercheck_cluster_probe_port", &req.Probe.Port},
		{"layercheck_cluster_probe_timeout", &req.Probe.Timeout},
		{"layercheck_cluster_probe_cleanup_timeout", &req.Probe.CleanupTimeout},
		{"layercheck_cluster_probe_path", &req.Probe.Path},
		{"layercheck_cluster_layers", &req.Layers},
		{"layercheck_cluster_skip", &req.Skip},
	}
	for _, sc := range scalars {
		v := literalVar(vars, sc.name, "the role's default assumed", &warnings)
		if v == nil {
			continue
		}
		f := reflect.ValueOf(sc.dst).Elem()
		if f.Kind() == reflect.Slice {
			if v.Kind != parser.KindList {
				return warnings, fmt.Errorf("%s at %s: %s: want a list of layer names", sc.name, v.Pos, v.Display())
			}
			var names []string
			for _, it := range v.List {
				if it.Kind != parser.KindString {
					return warnings, fmt.Errorf("%s at %s: %s: want a layer name", sc.name, it.Pos, it.Display())
				}
				names = append(names, it.Str)
			}
			f.Set(reflect.ValueOf(names))
			continue
		}
		if err := setOption(f, v); err != nil {
			return warnings, fmt.Errorf("%s at %s: %v", sc.name, v.Pos, err)
		}
	}
	return warnings, nil
}
