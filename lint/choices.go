package lint

import (
	"fmt"
	"strings"

	"github.com/go-playground/validator/v10"

	"github.com/layercheck/layercheck/parser"
)

var validate = validator.New()

// choiceVars are the variables whose values kubespray asserts, with the
// choices of kubespray v2.31.0 used when the catalogue carries none:
// roles/validate_inventory/tasks/main.yml ("Stop if unsupported options
// selected") and roles/network_plugin/calico/tasks/check.yml.
var choiceVars = []struct {
	name, source string
	choices      []string
	calicoOnly   bool
}{
	{"kube_network_plugin", "roles/validate_inventory/tasks/main.yml", []string{"calico", "flannel", "cloud", "cilium", "cni", "kube-ovn", "kube-router", "macvlan", "custom_cni", "none"}, false},
	{"dns_mode", "roles/validate_inventory/tasks/main.yml", []string{"coredns", "coredns_dual", "manual", "none"}, false},
	{"kube_proxy_mode", "roles/validate_inventory/tasks/main.yml", []string{"iptables", "ipvs", "nftables"}, false},
	{"cert_management", "roles/validate_inventory/tasks/main.yml", []string{"script", "none"}, false},
	{"resolvconf_mode", "roles/validate_inventory/tasks/main.yml", []string{"docker_dns", "host_resolvconf", "none"}, false},
	{"etcd_deployment_type", "roles/validate_inventory/tasks/main.yml", []string{"host", "docker", "kubeadm"}, false},
	{"container_manager", "roles/validate_inventory/tasks/main.yml", []string{"docker", "crio", "containerd"}, false},
	{"calico_network_backend", "roles/network_plugin/calico/tasks/check.yml", []string{"bird", "vxlan", "none"}, true},
	{"calico_ipip_mode", "roles/network_plugin/calico/tasks/check.yml", []string{"Always", "CrossSubnet", "Never"}, true},
	{"calico_vxlan_mode", "roles/network_plugin/calico/tasks/check.yml", []string{"Always", "CrossSubnet", "Never"}, true},
}

func init() {
	registerRule("choice", SeverityError,
		"kube_network_plugin, dns_mode, kube_proxy_mode, cert_management, resolvconf_mode, etcd_deployment_type, container_manager and calico_network_backend/ipip/vxlan modes must be one of kubespray's choices",
		checkChoices)
	registerRule("etcd-docker-needs-docker", SeverityError,
		"etcd_deployment_type docker needs container_manager docker",
		checkEtcdDocker)
	registerRule("calico-encapsulation", SeverityError,
		"calico_ipip_mode and calico_vxlan_mode cannot both be enabled (Always/CrossSubnet)",
		checkCalicoEncap)
}

// isChoice checks s against choices with validator's oneof (choices
// holding a space cannot be said in a oneof tag and are compared as is).
func isChoice(s string, choices []string) bool {
	simple := make([]string, 0, len(choices))
	for _, ch := range choices {
		if ch == s {
			return true
		}
		if ch != "" && !strings.ContainsAny(ch, " '") {
			simple = append(simple, ch)
		}
	}
	if len(simple) == 0 || s == "" {
		return false
	}
	return validate.Var(s, "oneof="+strings.Join(simple, " ")) == nil
}

// onCalico keeps the hosts whose kube_network_plugin is calico.
func onCalico(c *checkCtx, hosts []string) []string {
	var out []string
	for _, h := range hosts {
		v, _ := c.value(h, "kube_network_plugin")
		if s, ok := strValue(v); ok && s == "calico" {
			out = append(out, h)
		}
		if v == nil || v.Templated() {
			out = append(out, h) // unknown: assume kubespray's default, calico
		}
	}
	return out
}

func checkChoices(c *checkCtx) []Finding {
	var out []Finding
	for _, cv := range choiceVars {
		choices, source := cv.choices, "kubespray v2.31.0 "+cv.source
		if d := c.cat.Lookup(cv.name); d != nil && len(d.Choices) > 0 {
			choices = d.Choices
			if d.ChoicesSource != "" {
				source = d.ChoicesSource
			}
		}
		for _, u := range c.uses(cv.name) {
			v := u.judge
			if !judged(v) {
				continue
			}
			if cv.calicoOnly {
				u.hosts = onCalico(c, u.hosts)
				if len(u.hosts) == 0 {
					continue
				}
			}
			s, isStr := strValue(v)
			if isStr && isChoice(s, choices) {
				continue
			}
			f := c.finding("choice", SeverityError, u)
			f.Message = fmt.Sprintf("%s = %s is not one of kubespray's choices: %s", cv.name, v.Display(), strings.Join(choices, ", "))
			f.Why = "kubespray asserts the value (" + source + ") and stops the run with \"The selected choice is not supported\" or the like."
			if near := closestChoice(s, choices); isStr && near != "" {
				f.Fix = fixText(cv.name, fmt.Sprintf("%q", near), originOf(u))
			} else {
				f.Fix = "set " + cv.name + " to one of: " + strings.Join(choices, ", ")
			}
			out = append(out, f)
		}
	}
	return out
}

// closestChoice returns the choice s was probably meant to be: the same
// word in another case, or one within edit distance 2.
func closestChoice(s string, choices []string) string {
	best, bestD := "", 3
	for _, ch := range choices {
		if strings.EqualFold(ch, s) {
			return ch
		}
		if d := editDistance(strings.ToLower(s), strings.ToLower(ch)); d < bestD {
			best, bestD = ch, d
		}
	}
	return best
}

// comboUses groups hosts by the pair of values two variables have on them
// (defaults included), keeping only hosts where keep says so.
type combo struct {
	a, b       *parser.Value
	aSet, bSet bool
	hosts      []string
}

func combos(c *checkCtx, na, nb string) []combo {
	type key struct{ a, b *parser.Value }
	var order []key
	m := map[key]*combo{}
	for _, h := range c.hosts {
		a, aSet := c.value(h, na)
		b, bSet := c.value(h, nb)
		k := key{a, b}
		if !aSet {
			k.a = nil
		}
		if !bSet {
			k.b = nil
		}
		cb := m[k]
		if cb == nil {
			cb = &combo{a: a, b: b, aSet: aSet, bSet: bSet}
			m[k] = cb
			order = append(order, k)
		}
		cb.hosts = append(cb.hosts, h)
	}
	out := make([]combo, 0, len(order))
	for _, k := range order {
		out = append(out, *m[k])
	}
	return out
}

// comboFinding places a finding on the value the user set (a first).
func comboFinding(c *checkCtx, id string, sev Severity, na, nb string, cb combo) Finding {
	u := use{name: na, ours: cb.a, judge: cb.a, hosts: cb.hosts}
	if !cb.aSet {
		u = use{name: nb, ours: cb.b, judge: cb.b, hosts: cb.hosts}
	}
	return c.finding(id, sev, u)
}

func checkEtcdDocker(c *checkCtx) []Finding {
	var out []Finding
	for _, cb := range combos(c, "etcd_deployment_type", "container_manager") {
		if !cb.aSet && !cb.bSet {
			continue
		}
		et, ok1 := strValue(cb.a)
		cm, ok2 := strValue(cb.b)
		if !ok1 || !ok2 || et != "docker" || cm == "docker" {
			continue
		}
		f := comboFinding(c, "etcd-docker-needs-docker", SeverityError, "etcd_deployment_type", "container_manager", cb)
		f.Message = fmt.Sprintf("etcd_deployment_type is \"docker\" but container_manager is %q", cm)
		f.Why = "kubespray runs etcd in docker only with container_manager docker; validate_inventory asserts `etcd_deployment_type in ['host', 'kubeadm'] or container_manager == 'docker'`."
		f.Fix = fixText("etcd_deployment_type", `"host"`, originOf(use{ours: cb.a}))
		out = append(out, f)
	}
	return out
}

func checkCalicoEncap(c *checkCtx) []Finding {
	var out []Finding
	on := func(v *parser.Value) bool {
		s, ok := strValue(v)
		return ok && (s == "Always" || s == "CrossSubnet")
	}
	for _, cb := range combos(c, "calico_ipip_mode", "calico_vxlan_mode") {
		if !cb.aSet && !cb.bSet {
			continue
		}
		hosts := onCalico(c, cb.hosts)
		if len(hosts) == 0 || !on(cb.a) || !on(cb.b) {
			continue
		}
		cb.hosts = hosts
		// Report on the one the user set; when both are set, on ipip.
		f := comboFinding(c, "calico-encapsulation", SeverityError, "calico_ipip_mode", "calico_vxlan_mode", cb)
		f.Message = fmt.Sprintf("calico_ipip_mode %s and calico_vxlan_mode %s are both enabled", cb.a.Display(), cb.b.Display())
		f.Why = "IP-in-IP and VXLAN are mutually exclusive; kubespray's calico check.yml stops with \"IP in IP and VXLAN mode is mutualy exclusive modes\" (kubespray's default is vxlan: calico_vxlan_mode Always, calico_ipip_mode Never)."
		if f.Variable == "calico_ipip_mode" {
			f.Fix = fixText("calico_ipip_mode", `"Never"`, originOf(use{ours: cb.a}))
		} else {
			f.Fix = fixText("calico_vxlan_mode", `"Never"`, originOf(use{ours: cb.b}))
		}
		out = append(out, f)
	}
	return out
}
