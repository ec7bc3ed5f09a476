package lint

import (
	"fmt"
	"math/big"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/parser"
)

// The checks kubespray makes on inventory input alone (validate_inventory,
// preinstall's 0040-verify-settings.yml, calico's check.yml of master and
// v2.31.0), made before cluster.yml starts.
func init() {
	registerRule("network-plugin-none", SeverityWarning,
		"kube_network_plugin: none (kubespray skips the pod network: nodes stay NotReady until one is installed)", checkPluginNone)
	registerRule("pod-address-space", SeverityError,
		"kube_pods_subnet too small for the k8s_cluster hosts at kube_network_node_prefix (IPv4 and IPv6), or kubelet_max_pods above what one node's range holds", checkPodSpace)
	registerRule("hostname", SeverityError,
		"an inventory hostname kubespray's \"Stop if bad hostname\" rejects (lower-case RFC 1123)", checkHostnames)
	registerRule("cilium-kube-owner", SeverityError,
		"kube_network_plugin cilium with kube_owner other than root, which kubespray releases that assert it (master) stop on", checkCiliumOwner)
	registerRule("calico-settings", SeverityError,
		"calico_rr used without a valid IPv4 cluster_id, or a calico_pool_name kubespray rejects", checkCalicoSettings)
}

// intOf is a value's integer (an int, or a str of digits as `| int` reads it).
func intOf(v *parser.Value) (int64, bool) {
	if v == nil {
		return 0, false
	}
	switch v.Kind {
	case parser.KindInt:
		if v.Int.IsInt64() {
			return v.Int.Int64(), true
		}
	case parser.KindString:
		if v.Templated() {
			return 0, false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v.Str), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// plugin is the kube_network_plugin host h gets.
func (c *checkCtx) plugin(h string) string {
	v, _ := c.value(h, "kube_network_plugin")
	s, _ := strValue(v)
	return s
}

// boolOf is the value's truth as `| bool` reads it, def when unknown.
func boolOf(v *parser.Value, def bool) bool {
	if b, ok := truthy(v); ok {
		return b
	}
	return def
}

func checkPluginNone(c *checkCtx) []Finding {
	var out []Finding
	for _, u := range c.uses("kube_network_plugin") {
		if s, _ := strValue(u.judge); s != "none" {
			continue
		}
		f := c.finding("network-plugin-none", SeverityWarning, u)
		f.Message = "kube_network_plugin is none: kubespray installs no pod network"
		f.Why = "kubespray warns (roles/validate_inventory/tasks/main.yml, \"Warn if `kube_network_plugin` is `none`\") and skips the network configuration; nodes stay NotReady and pods get no address until you install a CNI yourself."
		f.Fix = "set kube_network_plugin to the CNI you want kubespray to install (calico, cilium, flannel, ...), or install one right after cluster.yml"
		out = append(out, f)
	}
	return out
}

// podSpace is one address family's check: pods subnet, node prefix.
type podSpace struct {
	family, subnet, prefix, stack string
	stackDefault                  bool
}

var podSpaces = []podSpace{
	{"IPv4", "kube_pods_subnet", "kube_network_node_prefix", "ipv4_stack", true},
	{"IPv6", "kube_pods_subnet_ipv6", "kube_network_node_prefix_ipv6", "ipv6_stack", false},
}

func checkPodSpace(c *checkCtx) []Finding {
	cluster, _ := c.groupHosts("k8s_cluster")
	if len(cluster) == 0 {
		return nil
	}
	first := cluster[0]
	var out []Finding
	for _, ps := range podSpaces {
		stack, _ := c.value(first, ps.stack)
		if !boolOf(stack, ps.stackDefault) || c.plugin(first) == "calico" {
			continue // kubespray: `when: <stack> | bool` and `kube_network_plugin != 'calico'`
		}
		sv, sset := c.value(first, ps.subnet)
		pv, pset := c.value(first, ps.prefix)
		if !sset && !pset {
			continue
		}
		pfx, _, ok := network(sv)
		node, ok2 := intOf(pv)
		if !ok || !ok2 || node < int64(pfx.Bits()) || node > int64(pfx.Addr().BitLen()) {
			continue // network-cidr and friends say what is wrong with the values
		}
		nodes := new(big.Int).Lsh(big.NewInt(1), uint(node-int64(pfx.Bits())))
		if nodes.Cmp(big.NewInt(int64(len(cluster)))) >= 0 {
			continue
		}
		u := use{name: ps.prefix, hosts: cluster}
		if pset {
			u.ours, u.judge = c.varsOf(first).Get(ps.prefix), pv
		} else {
			u.name, u.ours, u.judge = ps.subnet, c.varsOf(first).Get(ps.subnet), sv
		}
		f := c.finding("pod-address-space", SeverityError, u)
		f.Hosts = nil
		f.Message = fmt.Sprintf("%s %s split into /%d per node gives %s node ranges, but k8s_cluster has %d hosts", ps.subnet, pfx, node, nodes, len(cluster))
		f.Why = fmt.Sprintf("kubespray stops with \"Not enough %s IPs are available for the desired node count.\" (roles/validate_inventory/tasks/main.yml, \"Check that %s IP range is enough for the nodes\").", strings.ToLower(ps.family), strings.ToLower(ps.family))
		need := 0
		for (1 << need) < len(cluster) {
			need++
		}
		f.Fix = fmt.Sprintf("make %s at most /%d, or %s at least /%d", ps.subnet, int(node)-need, ps.prefix, pfx.Bits()+need)
		out = append(out, f)
	}
	// kubelet_max_pods against one node's IPv4 range (not for calico/none).
	if p := c.plugin(first); p != "calico" && p != "none" {
		stack, _ := c.value(first, "ipv4_stack")
		pv, pset := c.value(first, "kube_network_node_prefix")
		mv, mset := c.value(first, "kubelet_max_pods")
		node, ok := intOf(pv)
		maxPods := int64(110)
		if mset {
			maxPods, _ = intOf(mv)
		}
		if boolOf(stack, true) && (pset || mset) && ok && node >= 0 && node <= 32 && maxPods > (int64(1)<<(32-node))-2 {
			u := use{name: "kubelet_max_pods", ours: c.varsOf(first).Get("kubelet_max_pods"), judge: mv, hosts: cluster}
			if !mset {
				u = use{name: "kube_network_node_prefix", ours: c.varsOf(first).Get("kube_network_node_prefix"), judge: pv, hosts: cluster}
			}
			f := c.finding("pod-address-space", SeverityError, u)
			f.Hosts = nil
			f.Message = fmt.Sprintf("kubelet_max_pods %d does not fit a /%d node range (%d pod addresses)", maxPods, node, (int64(1)<<(32-node))-2)
			f.Why = "kubespray stops with \"Do not schedule more pods on a node than inet addresses are available.\" (roles/validate_inventory/tasks/main.yml, \"Guarantee that enough network address space is available for all pods\")."
			f.Fix = "lower kubelet_max_pods, or make kube_network_node_prefix smaller (a /24 holds 254 pods)"
			out = append(out, f)
		}
	}
	return out
}

// isRFC1123 is kubespray's "Stop if bad hostname"
// (roles/kubernetes/preinstall/tasks/0040-verify-settings.yml), whose
// pattern is ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$
// (Ansible's `match` anchors at the start only, the pattern ends with $),
// without a regexp, for every host of the cluster: labels of a-z, 0-9 and
// '-' joined by '.', each starting and ending with a letter or digit.
func isRFC1123(s string) bool {
	alnum := func(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			if c := s[i]; !alnum(c) && c != '-' {
				return false
			}
			continue
		}
		if i == start || !alnum(s[start]) || !alnum(s[i-1]) {
			return false // an empty label, or one starting or ending with '-'
		}
		start = i + 1
	}
	return true
}

func checkHostnames(c *checkCtx) []Finding {
	cluster, _ := c.groupHosts("k8s_cluster")
	var out []Finding
	for _, h := range cluster {
		if isRFC1123(h) {
			continue
		}
		if ig, _ := c.value(h, "ignore_assert_errors"); boolOf(ig, false) {
			continue
		}
		f := Finding{Rule: "hostname", Severity: SeverityError, Hosts: []string{h}}
		if inv := c.in.Inventory; inv != nil {
			if host := inv.Host(h); host != nil && host.Pos.File != "" {
				f.Where = c.where(host.Pos)
			}
		}
		f.Message = fmt.Sprintf("host name %q is not a lower-case RFC 1123 name", h)
		f.Why = "kubespray's \"Stop if bad hostname\" (roles/kubernetes/preinstall/tasks/0040-verify-settings.yml) stops: \"Hostname must consist of lower case alphanumeric characters, '.' or '-', and must start and end with an alphanumeric character\"; the name becomes the Kubernetes Node name."
		f.Fix = fmt.Sprintf("rename the host to %q in the inventory (keep ansible_host for the address)", strings.Trim(strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
				return r
			case r >= 'A' && r <= 'Z':
				return r + ('a' - 'A')
			}
			return '-'
		}, h), "-."))
		out = append(out, f)
	}
	return out
}

var calicoPoolNameRE = regexp.MustCompile(`^[a-zA-Z0-9-_\\.]{2,63}$`)

func checkCalicoSettings(c *checkCtx) []Finding {
	cluster, _ := c.groupHosts("k8s_cluster")
	cp, _ := c.groupHosts("kube_control_plane")
	if len(cluster) == 0 || len(cp) == 0 || c.plugin(cp[0]) != "calico" {
		return nil
	}
	var out []Finding
	first := cp[0]
	// peer_with_calico_rr defaults to "{{ 'calico_rr' in groups and
	// groups['calico_rr'] | length > 0 }}".
	rr, _ := c.groupHosts("calico_rr")
	if v, _ := c.value(first, "peer_with_calico_rr"); boolOf(v, len(rr) > 0) {
		id, set := c.value(first, "cluster_id")
		s, _ := strValue(id)
		if addr, err := netip.ParseAddr(s); !set || err != nil || !addr.Is4() {
			u := use{name: "cluster_id", ours: c.varsOf(first).Get("cluster_id"), judge: id, hosts: []string{first}}
			if !set {
				u = use{name: "peer_with_calico_rr", ours: c.varsOf(first).Get("peer_with_calico_rr"), judge: v, hosts: []string{first}}
			}
			f := c.finding("calico-settings", SeverityError, u)
			f.Message = "peer_with_calico_rr is on but cluster_id is not set"
			if set {
				f.Message = "peer_with_calico_rr is on but cluster_id is not a valid IPv4 address"
			} else if u.ours == nil {
				// peer_with_calico_rr is on by its default, because the
				// calico_rr group has hosts: that group is where it was set
				f.Where = c.groupWhere("calico_rr")
				f.Message = "peer_with_calico_rr is on (its default, since the calico_rr group has hosts) but cluster_id is not set"
			}
			f.Why = "calico's check.yml stops: \"A unique cluster_id is required if using calico_rr, and it must be a valid IPv4 address\" (roles/network_plugin/calico/tasks/check.yml, checked on the first kube_control_plane host)."
			f.Fix = "set cluster_id: \"244.0.0.1\" (any IPv4 address unique among your route reflector clusters) in group_vars/k8s_cluster"
			out = append(out, f)
		}
	}
	for _, u := range c.uses("calico_pool_name") {
		s, ok := strValue(u.judge)
		if !ok || calicoPoolNameRE.MatchString(s) {
			continue
		}
		f := c.finding("calico-settings", SeverityError, u)
		f.Message = fmt.Sprintf("calico_pool_name %s is not 2-63 letters, digits, '-', '_' or '.'", u.judge.Display())
		f.Why = "calico's check.yml stops: \"calico_pool_name contains invalid characters\" (roles/network_plugin/calico/tasks/check.yml, \"Check vars defined correctly\")."
		f.Fix = "use a name such as default-pool"
		out = append(out, f)
	}
	return out
}

// ciliumOwnerExpr is the assert of "Stop if kube_owner is not root when
// using cilium" (preinstall's 0040-verify-settings.yml, kubespray master).
const ciliumOwnerExpr = "kube_owner == 'root'"

func checkCiliumOwner(c *checkCtx) []Finding {
	if c.cat.Release == nil {
		return nil
	}
	src, ok := c.cat.Release.Exprs[ciliumOwnerExpr]
	if !ok {
		return nil // this release does not make the check
	}
	cluster, _ := c.groupHosts("k8s_cluster")
	var hosts []string
	var at use
	for _, h := range cluster {
		if c.plugin(h) != "cilium" {
			continue
		}
		if ig, _ := c.value(h, "ignore_assert_errors"); boolOf(ig, false) {
			continue
		}
		v, set := c.value(h, "kube_owner")
		if s, _ := strValue(v); s == "root" {
			continue
		}
		if len(hosts) == 0 {
			at = use{name: "kube_owner", ours: c.varsOf(h).Get("kube_owner"), judge: v}
			if !set {
				pv, _ := c.value(h, "kube_network_plugin")
				at = use{name: "kube_network_plugin", ours: c.varsOf(h).Get("kube_network_plugin"), judge: pv}
			}
		}
		hosts = append(hosts, h)
	}
	if len(hosts) == 0 {
		return nil
	}
	at.hosts = hosts
	f := c.finding("cilium-kube-owner", SeverityError, at)
	owner := "its default"
	if d := c.cat.Lookup("kube_owner"); d != nil {
		owner = fmt.Sprintf("its default %q", fmt.Sprint(d.Default))
	}
	if at.name == "kube_owner" && at.ours != nil {
		owner = at.judge.Display()
	}
	f.Message = fmt.Sprintf("kube_network_plugin is cilium but kube_owner is %s, not root", owner)
	f.Why = fmt.Sprintf("kubespray %s stops at %s (\"Stop if kube_owner is not root when using cilium\"): cilium's init containers run as UID 0 without CAP_DAC_OVERRIDE, so the host paths they write (/opt/cni/bin) must be owned by root (kubespray#13378).", releaseName(c.cat), src)
	f.Fix = "set kube_owner: root in group_vars/k8s_cluster"
	return []Finding{f}
}
