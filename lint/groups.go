package lint

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/layercheck/layercheck/parser"
)

func init() {
	registerRule("control-plane-empty", SeverityError,
		"the kube_control_plane group has no hosts",
		checkControlPlane)
	registerRule("etcd-empty", SeverityError,
		"the etcd group has no hosts while etcd_deployment_type is not kubeadm",
		checkEtcdEmpty)
	registerRule("etcd-even", SeverityError,
		"an even number of etcd members (kubespray stops on it unless ignore_assert_errors)",
		checkEtcdEven)
	registerRule("calico-rr", SeverityWarning,
		"calico_rr hosts outside k8s_cluster as written, or calico_rr hosts without kube_network_plugin calico",
		checkCalicoRR)
	registerStep("calico-rr", phaseAsWritten, func(c *checkCtx, _ *Report) {
		c.rrOutside = rrOutside(c.in.Inventory)
	})
}

// groupWhere is where a group is defined, relative like other locations.
func (c *checkCtx) groupWhere(name string) string {
	if inv := c.in.Inventory; inv != nil {
		if g := inv.Group(name); g != nil && g.Pos.File != "" {
			return c.where(g.Pos)
		}
		if len(inv.Sources) > 0 {
			// no such group: the inventory file as given, like every
			// location relative to the inventory directory; "" (the
			// inventory as a whole) for a directory
			if src := inv.Sources[0]; !isDir(src) {
				return c.relPath(src)
			}
		}
	}
	return ""
}

// ignoreAsserts reports whether kubespray skips its inventory asserts
// (ignore_assert_errors true on the first host, as run_once sees it).
func (c *checkCtx) ignoreAsserts() bool {
	if len(c.hosts) == 0 {
		return false
	}
	v, _ := c.value(c.hosts[0], "ignore_assert_errors")
	b, ok := truthy(v)
	return ok && b
}

func (c *checkCtx) assertSeverity() (Severity, string) {
	if c.ignoreAsserts() {
		return SeverityWarning, " (ignore_assert_errors is set, so kubespray will not stop, but the cluster is still affected)"
	}
	return SeverityError, ""
}

func checkControlPlane(c *checkCtx) []Finding {
	if c.in.Inventory == nil {
		return nil
	}
	if hosts, _ := c.groupHosts("kube_control_plane"); len(hosts) > 0 {
		return nil
	}
	sev, note := c.assertSeverity()
	return []Finding{{
		Rule: "control-plane-empty", Severity: sev, Where: c.groupWhere("kube_control_plane"),
		Message: "the kube_control_plane group has no hosts",
		Why:     "kubespray's validate_inventory stops (\"Stop if kube_control_plane group is empty\"): a cluster needs at least one control plane node" + note + ".",
		Fix:     "add the control plane hosts under [kube_control_plane] (the legacy name kube-master is mapped to it too)",
	}}
}

// etcdType is etcd_deployment_type on the first control plane host (or
// the first host), with the value kubespray defaults to.
func (c *checkCtx) etcdType() (string, *parser.Value) {
	hosts, _ := c.groupHosts("kube_control_plane")
	if len(hosts) == 0 {
		hosts = c.hosts
	}
	if len(hosts) == 0 {
		return "", nil
	}
	v, set := c.value(hosts[0], "etcd_deployment_type")
	s, _ := strValue(v)
	if !set {
		v = nil
	}
	return s, v
}

func checkEtcdEmpty(c *checkCtx) []Finding {
	if c.in.Inventory == nil {
		return nil
	}
	if hosts, _ := c.groupHosts("etcd"); len(hosts) > 0 {
		return nil
	}
	et, _ := c.etcdType()
	if et == "kubeadm" || et == "" {
		return nil
	}
	sev, note := c.assertSeverity()
	return []Finding{{
		Rule: "etcd-empty", Severity: sev, Variable: "etcd_deployment_type", Value: fmt.Sprintf("%q", et),
		Where:   c.groupWhere("etcd"),
		Message: "the etcd group has no hosts but etcd_deployment_type is " + fmt.Sprintf("%q", et),
		Why:     "kubespray's validate_inventory stops with \"Group 'etcd' cannot be empty in external etcd mode\"" + note + ".",
		Fix:     "put an odd number of hosts (usually the control plane nodes) under [etcd], or set etcd_deployment_type: kubeadm",
	}}
}

func checkEtcdEven(c *checkCtx) []Finding {
	inv := c.in.Inventory
	if inv == nil {
		return nil
	}
	// kubespray: groups.get('etcd', groups.kube_control_plane) | length is not divisibleby 2
	group := "etcd"
	hosts, ok := c.groupHosts("etcd")
	if !ok {
		group = "kube_control_plane"
		hosts, _ = c.groupHosts("kube_control_plane")
	}
	if len(hosts) == 0 || len(hosts)%2 != 0 {
		return nil
	}
	sev, note := c.assertSeverity()
	return []Finding{{
		Rule: "etcd-even", Severity: sev, Where: c.groupWhere(group), Hosts: hosts,
		Message: fmt.Sprintf("%d etcd members (group %s): etcd needs an odd number", len(hosts), group),
		Why: fmt.Sprintf("etcd keeps quorum with a majority: %d members tolerate no more failures than %d, and a network split can leave no side with a majority; kubespray's validate_inventory stops (\"Stop if even number of etcd hosts\")%s.",
			len(hosts), len(hosts)-1, note),
		Fix: fmt.Sprintf("use %d or %d hosts under [%s]", len(hosts)-1, len(hosts)+1, group),
	}}
}

// rrOutside lists calico_rr hosts that are not in k8s_cluster in the
// inventory as written (before kubespray's dynamic_groups adds them).
func rrOutside(inv *parser.Inventory) []string {
	if inv == nil {
		return nil
	}
	anyRR := false // no calico_rr host: nothing to list every host for
	for _, g := range inv.GroupsUnder("calico_rr") {
		anyRR = anyRR || len(g.Hosts) > 0
	}
	if !anyRR {
		return nil
	}
	c := &checkCtx{in: Input{Inventory: inv}, hosts: make([]string, 0, len(inv.Hosts))}
	for _, h := range inv.Hosts {
		c.hosts = append(c.hosts, h.Name)
	}
	rr, _ := c.groupHosts("calico_rr")
	if len(rr) == 0 {
		return nil
	}
	k8s, _ := c.groupHosts("k8s_cluster")
	in := map[string]bool{}
	for _, h := range k8s {
		in[h] = true
	}
	var out []string
	for _, h := range rr {
		if !in[h] {
			out = append(out, h)
		}
	}
	return out
}

func checkCalicoRR(c *checkCtx) []Finding {
	var out []Finding
	if len(c.rrOutside) > 0 {
		out = append(out, Finding{
			Rule: "calico-rr", Severity: SeverityWarning, Where: c.groupWhere("calico_rr"), Hosts: c.rrOutside,
			Message: "calico_rr hosts are outside k8s_cluster: " + strings.Join(abridge(c.rrOutside, 5), ", "),
			Why:     "kubespray's dynamic_groups role puts calico_rr hosts into k8s_cluster at run time, so they become Kubernetes nodes (kubelet, container runtime) and get group_vars/k8s_cluster, which the inventory as written does not show.",
			Fix:     "list calico_rr under [k8s_cluster:children] so the inventory says what kubespray does",
		})
	}
	rr, _ := c.groupHosts("calico_rr")
	if len(rr) == 0 {
		return out
	}
	var bad []string
	var plugin *parser.Value
	for _, h := range rr {
		v, set := c.value(h, "kube_network_plugin")
		if s, ok := strValue(v); ok && s != "calico" {
			bad = append(bad, h)
			if set && plugin == nil {
				plugin = v
			}
		}
	}
	if len(bad) > 0 {
		f := Finding{
			Rule: "calico-rr", Severity: SeverityError, Where: c.groupWhere("calico_rr"), Hosts: bad,
			Variable: "kube_network_plugin",
			Message:  "calico_rr has hosts but kube_network_plugin is not calico",
			Why:      "cluster.yml runs the network_plugin/calico/rr role on every calico_rr host whatever the network plugin; it calls calicoctl, which only a calico cluster has.",
			Fix:      "empty the calico_rr group, or use kube_network_plugin: calico",
		}
		if plugin != nil {
			f.Value = plugin.Display()
		}
		out = append(out, f)
	}
	return out
}

// abridge keeps the first n names and says how many more there are.
func abridge(names []string, n int) []string {
	if len(names) <= n {
		return names
	}
	out := append([]string{}, names[:n]...)
	return append(out, fmt.Sprintf("… %d more", len(names)-n))
}

// legacyGroups are group names older kubespray inventories use, with the
// name kubespray reads now.
var legacyGroups = map[string]string{
	"k8s-cluster": "k8s_cluster", "kube-master": "kube_control_plane", "kube_master": "kube_control_plane",
	"kube-node": "kube_node", "calico-rr": "calico_rr", "no-floating": "no_floating",
}

func init() {
	registerRule("group-vars-unused", SeverityWarning,
		"group_vars for a group that has no hosts (e.g. group_vars/k8s-cluster, the old name): its settings apply to nothing",
		checkGroupVarsUnused)
	registerRule("vars-dir-unread", SeverityWarning,
		"a group_vars or host_vars directory in a subdirectory of the inventory directory: Ansible reads these only next to an -i argument",
		checkVarsDirUnread)
}

func checkVarsDirUnread(c *checkCtx) []Finding {
	inv := c.in.Inventory
	if inv == nil {
		return nil
	}
	var out []Finding
	for _, d := range inv.UnreadVarsDirs {
		base := filepath.Base(d)
		out = append(out, Finding{Rule: "vars-dir-unread", Severity: SeverityWarning, Where: c.relPath(d),
			Message: fmt.Sprintf("Ansible never reads this %s: it is not next to an -i argument", base),
			Why:     fmt.Sprintf("Ansible parses the inventory files in a directory's subdirectories, but reads group_vars and host_vars only in the directory of each -i argument, so nothing set in this %s has any effect.", base),
			Fix:     "pass the directory holding it with -i, or move it next to the inventory given"})
	}
	return out
}

func checkGroupVarsUnused(c *checkCtx) []Finding {
	inv := c.in.Inventory
	if inv == nil || len(c.hosts) == 0 {
		return nil
	}
	// A file may be read for several names (group_vars/x.yml serves the
	// groups "x" and "x.yml"): it is unused when no such group has hosts.
	byPath := map[string][]string{}
	files := map[string]*parser.VarsFile{}
	var paths []string
	for name, vfs := range inv.GroupVarsFiles {
		for _, vf := range vfs {
			if _, ok := byPath[vf.Path]; !ok {
				paths = append(paths, vf.Path)
			}
			byPath[vf.Path] = append(byPath[vf.Path], name)
			files[vf.Path] = vf
		}
	}
	sort.Strings(paths)
	var out []Finding
	for _, path := range paths {
		names := byPath[path]
		sort.Slice(names, func(i, j int) bool {
			return len(names[i]) < len(names[j]) || (len(names[i]) == len(names[j]) && names[i] < names[j])
		})
		used := false
		for _, n := range names {
			if hosts, _ := c.groupHosts(n); len(hosts) > 0 || n == "all" {
				used = true
			}
		}
		vf := files[path]
		if used || (vf.Vars.Len() == 0 && !vf.Vault) {
			continue
		}
		name := names[0]
		f := Finding{Rule: "group-vars-unused", Severity: SeverityWarning, Where: c.relPath(vf.Path),
			Message: fmt.Sprintf("group_vars for group %q apply to no host: no host is in %s", name, name)}
		stem := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, ".yml"), ".yaml"), ".json")
		if hosts, _ := c.groupHosts(stem); stem != name && len(hosts) > 0 {
			f.Message = fmt.Sprintf("%s is never read for group %s", c.relPath(vf.Path), stem)
			f.Why = fmt.Sprintf("Ansible reads only the first of group_vars/%s, %s.yml, %s.yaml, %s.json that exists, and group_vars/%s (a directory) comes first, so nothing set in this file has any effect.", stem, stem, stem, stem, stem)
			f.Fix = fmt.Sprintf("move its settings into a file under group_vars/%s/", stem)
			out = append(out, f)
			continue
		}
		if now, ok := legacyGroups[name]; ok {
			f.Why = fmt.Sprintf("kubespray reads the group %s now; its dynamic_groups role does not make hosts members of %q, so nothing set here reaches a host.", now, name)
			f.Fix = fmt.Sprintf("rename group_vars/%s to group_vars/%s", name, now)
		} else {
			f.Why = fmt.Sprintf("Ansible applies group_vars/%s only to members of the group; with none, nothing set here has any effect.", name)
			f.Fix = fmt.Sprintf("add the hosts to [%s], or move the settings to a group that has them", name)
		}
		out = append(out, f)
	}
	return out
}
