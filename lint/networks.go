package lint

import (
	"fmt"
	"net/netip"

	"github.com/layercheck/layercheck/parser"
)

func init() {
	registerRule("network-cidr", SeverityError,
		"kube_service_addresses and kube_pods_subnet (and their _ipv6 forms) must be network ranges in CIDR form with no host bits set",
		checkNetworkCIDR)
	registerRule("network-overlap", SeverityError,
		"kube_pods_subnet must not overlap kube_service_addresses",
		checkNetworkOverlap)
	registerRule("nodelocaldns-ip", SeverityError,
		"nodelocaldns_ip must be an IP address outside kube_service_addresses and kube_pods_subnet",
		checkNodelocalDNS)
}

var networkVars = []struct{ name, tag string }{
	{"kube_service_addresses", "cidrv4"},
	{"kube_pods_subnet", "cidrv4"},
	{"kube_service_addresses_ipv6", "cidrv6"},
	{"kube_pods_subnet_ipv6", "cidrv6"},
}

// network parses a CIDR network; hostBits is true for "10.0.0.1/24".
func network(v *parser.Value) (p netip.Prefix, hostBits, ok bool) {
	s, isStr := strValue(v)
	if !isStr {
		return p, false, false
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return p, false, false
	}
	return p.Masked(), p.Masked() != p, true
}

func checkNetworkCIDR(c *checkCtx) []Finding {
	var out []Finding
	for _, nv := range networkVars {
		for _, u := range c.uses(nv.name) {
			v := u.judge
			if !judged(v) {
				continue
			}
			s, isStr := strValue(v)
			if p, hostBits, ok := network(v); ok && hostBits && validate.Var(p.String(), nv.tag) == nil {
				f := c.finding("network-cidr", SeverityError, u)
				f.Message = fmt.Sprintf("%s = %s has host bits set; the network is %s", nv.name, v.Display(), p)
				f.Why = "kubespray's validate_inventory asserts `" + nv.name + " | ansible.utils.ipaddr('net')`, which is false for an address inside a range."
				f.Fix = fixText(nv.name, fmt.Sprintf("%q", p.String()), originOf(u))
				out = append(out, f)
				continue
			}
			if isStr && validate.Var(s, nv.tag) == nil {
				continue
			}
			f := c.finding("network-cidr", SeverityError, u)
			kind := "an IPv4"
			if nv.tag == "cidrv6" {
				kind = "an IPv6"
			}
			f.Message = fmt.Sprintf("%s = %s is not %s network in CIDR form", nv.name, v.Display(), kind)
			f.Why = "kubespray's validate_inventory stops with \"" + nv.name + " = '...' is not a valid network range\"; kubeadm needs a CIDR here."
			if nv.tag == "cidrv4" {
				f.Fix = "e.g. " + fixText(nv.name, map[string]string{"kube_service_addresses": `"10.233.0.0/18"`, "kube_pods_subnet": `"10.233.64.0/18"`}[nv.name], originOf(u)) + " (kubespray's default)"
			} else {
				f.Fix = "write it as address/prefix, e.g. \"fd85:ee78:d8a6:8607::1000/116\""
			}
			out = append(out, f)
		}
	}
	return out
}

func checkNetworkOverlap(c *checkCtx) []Finding {
	var out []Finding
	for _, pair := range [][2]string{{"kube_pods_subnet", "kube_service_addresses"}, {"kube_pods_subnet_ipv6", "kube_service_addresses_ipv6"}} {
		for _, cb := range combos(c, pair[0], pair[1]) {
			if !cb.aSet && !cb.bSet {
				continue
			}
			pa, _, ok1 := network(cb.a)
			pb, _, ok2 := network(cb.b)
			if !ok1 || !ok2 || !pa.Overlaps(pb) {
				continue
			}
			f := comboFinding(c, "network-overlap", SeverityError, pair[0], pair[1], cb)
			f.Message = fmt.Sprintf("%s %s overlaps %s %s", pair[0], pa, pair[1], pb)
			f.Why = "pod and service addresses would collide; kubespray's validate_inventory stops with \"" + pair[0] + " cannot be the same network segment as " + pair[1] + "\"."
			f.Fix = "choose non-overlapping ranges, e.g. kube_service_addresses 10.233.0.0/18 and kube_pods_subnet 10.233.64.0/18 (kubespray's defaults)"
			out = append(out, f)
		}
	}
	return out
}

func checkNodelocalDNS(c *checkCtx) []Finding {
	var out []Finding
	type key struct{ ip, svc, pod *parser.Value }
	groups := map[key]*hostList{}
	var order []key
	for i := range c.hosts {
		ip, set := c.valueAt(i, "nodelocaldns_ip")
		if !set || !judged(ip) {
			continue
		}
		if en, _ := c.valueAt(i, "enable_nodelocaldns"); en != nil {
			if b, ok := truthy(en); ok && !b {
				continue
			}
		}
		svc, _ := c.valueAt(i, "kube_service_addresses")
		pod, _ := c.valueAt(i, "kube_pods_subnet")
		k := key{ip, svc, pod}
		if groups[k] == nil {
			order = append(order, k)
			groups[k] = &hostList{}
		}
		groups[k].add(c.hosts, i)
	}
	for _, k := range order {
		u := use{name: "nodelocaldns_ip", ours: k.ip, judge: k.ip, hosts: groups[k].list(c.hosts)}
		s, isStr := strValue(k.ip)
		if !isStr || validate.Var(s, "ip") != nil {
			f := c.finding("nodelocaldns-ip", SeverityError, u)
			f.Message = fmt.Sprintf("nodelocaldns_ip = %s is not an IP address", k.ip.Display())
			f.Why = "nodelocaldns binds this address on every node and kubelet hands it to pods as their DNS server."
			f.Fix = fixText("nodelocaldns_ip", `"169.254.25.10"`, originOf(u)) + " (kubespray's default, link-local)"
			out = append(out, f)
			continue
		}
		addr, err := netip.ParseAddr(s)
		if err != nil {
			continue
		}
		for _, n := range []struct {
			name string
			v    *parser.Value
		}{{"kube_service_addresses", k.svc}, {"kube_pods_subnet", k.pod}} {
			p, _, ok := network(n.v)
			if !ok || !p.Contains(addr) {
				continue
			}
			sev := SeverityError
			why := "nodelocaldns binds this address on every node; inside kube_pods_subnet it is handed to a pod sooner or later, and DNS breaks for that pod and the node's pods."
			if n.name == "kube_service_addresses" {
				sev = SeverityWarning
				why = "nodelocaldns binds this address on every node; inside kube_service_addresses a Service that gets it as ClusterIP (set statically, or allocated once the range fills) collides with DNS on every node."
			}
			f := c.finding("nodelocaldns-ip", sev, u)
			f.Message = fmt.Sprintf("nodelocaldns_ip %s is inside %s %s", s, n.name, p)
			f.Why = why
			f.Fix = fixText("nodelocaldns_ip", `"169.254.25.10"`, originOf(u)) + " (kubespray's default, link-local)"
			out = append(out, f)
		}
	}
	return out
}
