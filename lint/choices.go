package lint

import (
	"fmt"
	"strings"

	"github.com/go-playground/validator/v10"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
)

var validate = validator.New()

func init() {
	registerRule("choice", SeverityError,
		"a variable kubespray asserts to be one of a list (kube_network_plugin, dns_mode, kube_proxy_mode, cert_management, resolvconf_mode, etcd_deployment_type, container_manager, calico_network_backend, calico_ipip_mode, calico_vxlan_mode, ...) set to another value",
		checkChoices)
	registerRule("kubespray-assert", SeverityError,
		"a combination of values a kubespray assert rejects (etcd_deployment_type docker without container_manager docker, calico ipip and vxlan both enabled, ...)",
		checkCrossAsserts)
}

// asserts are the catalogue's asserts the lint evaluates: all but the
// known-boolean type checks, which string-as-bool reports with more to say.
func (c *checkCtx) asserts(choice bool) []kubespray.Assert {
	if c.cat.Facts == nil {
		return nil
	}
	var out []kubespray.Assert
	for _, a := range c.cat.Asserts() {
		if strings.HasPrefix(a.ID, "known-boolean:") {
			continue
		}
		if (a.Var != "" && len(a.Choices) > 0) == choice {
			out = append(out, a)
		}
	}
	return out
}

// lookup gives Eval a host's values: the judged one for variables the
// inventory sets; kubespray's defaults otherwise (Eval's fallback).
func (c *checkCtx) lookup(host string) kubespray.Lookup {
	return func(name string) (any, bool) {
		v, set := c.value(host, name)
		if !set {
			return nil, false
		}
		return v, true
	}
}

// assertVars are the variables an assert reads, That first.
func assertVars(a kubespray.Assert) []string {
	var out []string
	seen := map[string]bool{}
	for _, cs := range [][]kubespray.Cond{a.That, a.When} {
		for _, cd := range cs {
			if !seen[cd.Var] {
				seen[cd.Var] = true
				out = append(out, cd.Var)
			}
		}
	}
	return out
}

// failing groups the hosts on which a fails by the values they see, with
// the first value the inventory sets (That variables first) as location.
func (c *checkCtx) failing(a kubespray.Assert) []use {
	vars := assertVars(a)
	if c.in.Resolved == nil {
		return c.failingByTuple(a, vars)
	}
	var groups byFirstSeen[string, use]
	for _, h := range c.hosts {
		if c.cat.Eval(a, c.lookup(h)) != kubespray.Fail {
			continue
		}
		var key strings.Builder
		var at *parser.Value
		atName := ""
		for _, n := range vars {
			v, set := c.value(h, n)
			fmt.Fprintf(&key, "%p|", v)
			if set && at == nil {
				at, atName = v, n
			}
		}
		if at == nil {
			continue // kubespray's own defaults fail: not the inventory's doing
		}
		u := groups.get(key.String(), func() *use { return &use{name: atName, ours: c.varsOf(h).Get(atName), judge: at} })
		u.hosts = append(u.hosts, h)
	}
	return groups.list()
}

// failingByTuple is failing evaluated once per distinct tuple of the
// values the assert reads (a variable the inventory leaves unset is nil:
// kubespray's default, the same for every host), the outcome fanned out
// to the hosts that share the tuple, in inventory order.
func (c *checkCtx) failingByTuple(a kubespray.Assert, vars []string) []use {
	type verdict struct {
		fails bool
		u     *use
		hosts hostList
	}
	var out []*verdict
	tupleMemo(c, vars, nil, func(_ int, t []*parser.Value) *verdict {
		v := &verdict{}
		get := func(name string) (any, bool) {
			for j, n := range vars {
				if n == name && t[j] != nil {
					return t[j], true
				}
			}
			return nil, false
		}
		if c.cat.Eval(a, get) == kubespray.Fail {
			for j, n := range vars {
				if t[j] != nil {
					v.fails = true
					v.u = &use{name: n, ours: t[j], judge: t[j]}
					break
				}
			}
		}
		return v
	}, func(i int, v *verdict) {
		if !v.fails {
			return
		}
		if v.hosts.list(c.hosts) == nil {
			out = append(out, v)
		}
		v.hosts.add(c.hosts, i)
	})
	list := make([]use, len(out))
	for i, v := range out {
		list[i] = *v.u
		list[i].hosts = v.hosts.list(c.hosts)
	}
	return list
}

// isChoice checks s against choices with validator's oneof (choices
// holding a space or quote cannot be said in a oneof tag and are
// compared as is).
func isChoice(s string, choices []string) bool {
	simple := make([]string, 0, len(choices))
	for _, ch := range choices {
		if ch == s {
			return true
		}
		if ch != "" && !strings.ContainsAny(ch, " '\",") {
			simple = append(simple, ch)
		}
	}
	if len(simple) == 0 || s == "" {
		return false
	}
	return validate.Var(s, "oneof="+strings.Join(simple, " ")) == nil
}

func checkChoices(c *checkCtx) []Finding {
	var out []Finding
	for _, a := range c.asserts(true) {
		for _, u := range c.failing(a) {
			if u.name != a.Var {
				// a.Var keeps kubespray's default, which a setting of the
				// inventory (a When variable) makes kubespray reject.
				def, _ := c.value(u.hosts[0], a.Var)
				f := c.finding("choice", SeverityError, u)
				f.Message = fmt.Sprintf("with %s = %s, kubespray needs %s set to one of: %s (its default %s is not)", u.name, u.judge.Display(), a.Var, strings.Join(quoteAll(a.Choices), ", "), def.Display())
				f.Why = fmt.Sprintf("kubespray asserts `%s` (%s, task %q) and stops with %q.", a.Expr, a.Source, a.Task, a.Msg)
				f.Fix = "set " + a.Var + " to one of: " + strings.Join(quoteAll(a.Choices), ", ")
				out = append(out, f)
				continue
			}
			v := u.judge
			s, isStr := strValue(v)
			if isStr && isChoice(s, a.Choices) {
				continue // Eval and validator disagree: trust the value is fine
			}
			f := c.finding("choice", SeverityError, u)
			f.Message = fmt.Sprintf("%s = %s is not one of kubespray's choices: %s", a.Var, v.Display(), strings.Join(quoteAll(a.Choices), ", "))
			f.Why = fmt.Sprintf("kubespray asserts `%s` (%s, task %q) and stops with %q.", a.Expr, a.Source, a.Task, a.Msg)
			if near := closestChoice(s, a.Choices); isStr && near != "" {
				f.Fix = fixText(a.Var, fmt.Sprintf("%q", near), originOf(u))
			} else {
				f.Fix = "set " + a.Var + " to one of: " + strings.Join(quoteAll(a.Choices), ", ")
			}
			out = append(out, f)
		}
	}
	return out
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

func checkCrossAsserts(c *checkCtx) []Finding {
	var out []Finding
	// One mistake, one finding: kubespray's twin asserts (ipip excludes
	// vxlan, vxlan excludes ipip: the same task) failing on the same hosts
	// are said once, naming both settings.
	type key struct{ task, hosts string }
	merged := map[key]int{}
	for _, a := range c.asserts(false) {
		for _, u := range c.failing(a) {
			k := key{a.Task, strings.Join(u.hosts, ",")}
			if i, ok := merged[k]; ok {
				f := &out[i]
				other := u.name
				if u.ours != nil {
					other += " (" + c.where(u.ours.Pos) + ")"
				}
				f.Message += fmt.Sprintf(", and the one that requires %s (%s)", a.Expr, a.ID)
				f.Why += fmt.Sprintf(" The same task also rejects %s = %s, set at %s (%s).", u.name, u.judge.Display(), other, a.Source)
				continue
			}
			f := c.finding("kubespray-assert", SeverityError, u)
			f.Message = fmt.Sprintf("fails kubespray's assert that requires %s (%s)", a.Expr, a.ID)
			f.Why = fmt.Sprintf("kubespray's task %q (%s) stops with %q.", a.Task, a.Source, a.Msg)
			f.Fix = crossFix(a, u)
			merged[k] = len(out)
			out = append(out, f)
		}
	}
	return out
}

// crossFix words the usual way out of a cross-variable assert.
func crossFix(a kubespray.Assert, u use) string {
	o := originOf(u)
	switch a.ID {
	case "etcd-docker-needs-docker":
		return fixText("etcd_deployment_type", `"host"`, o) + " (etcd in docker needs container_manager: docker)"
	case "calico-ipip-excludes-vxlan", "calico-vxlan-excludes-ipip":
		return `set one of calico_ipip_mode and calico_vxlan_mode to "Never" (kubespray's default is VXLAN: calico_vxlan_mode "Always", calico_ipip_mode "Never")`
	}
	var parts []string
	for _, cd := range a.That {
		switch cd.Op {
		case kubespray.OpIn:
			parts = append(parts, fmt.Sprintf("%s in %v", cd.Var, cd.Values))
		case kubespray.OpNotIn:
			parts = append(parts, fmt.Sprintf("%s not in %v", cd.Var, cd.Values))
		case kubespray.OpTrue:
			parts = append(parts, cd.Var+": true")
		case kubespray.OpFalse:
			parts = append(parts, cd.Var+": false")
		}
	}
	return "make one of these hold: " + strings.Join(parts, ", or ")
}

// closestChoice returns the choice s was probably meant to be: the same
// word in another case, or one within edit distance 2.
func closestChoice(s string, choices []string) string {
	if s == "" {
		return ""
	}
	best, bestD := "", 3
	for _, ch := range choices {
		if strings.EqualFold(ch, s) {
			return ch
		}
		if d := editDistance(strings.ToLower(s), strings.ToLower(ch)); d < bestD && ch != "" {
			best, bestD = ch, d
		}
	}
	return best
}

// combo is the pair of values two variables have on a set of hosts
// (kubespray's defaults included).
type combo struct {
	a, b       *parser.Value
	aSet, bSet bool
	hosts      []string
}

func combos(c *checkCtx, na, nb string) []combo {
	type key struct{ a, b *parser.Value }
	type group struct {
		cb    combo
		hosts hostList
	}
	var m byFirstSeen[key, group]
	var lastK key
	var last *group
	for i := range c.hosts {
		a, aSet := c.valueAt(i, na)
		b, bSet := c.valueAt(i, nb)
		k := key{a, b}
		if !aSet {
			k.a = nil
		}
		if !bSet {
			k.b = nil
		}
		if last == nil || k != lastK {
			lastK = k
			last = m.get(k, func() *group { return &group{cb: combo{a: a, b: b, aSet: aSet, bSet: bSet}} })
		}
		last.hosts.add(c.hosts, i)
	}
	out := make([]combo, 0, len(m.order))
	for _, g := range m.list() {
		g.cb.hosts = g.hosts.list(c.hosts)
		out = append(out, g.cb)
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
