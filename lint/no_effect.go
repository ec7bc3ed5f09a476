package lint

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/layercheck/layercheck/kubespray"
)

func init() {
	registerRule("no-effect", SeverityWarning,
		"a variable set where kubespray never reads it: every template, role or {% if %} reading it is behind a condition the inventory makes false (containerd_registry_auth with containerd 2, calico_* without calico); generated from the release's tasks, meta and templates",
		checkNoEffect)
}

// roleChoosers are the variables whose value chooses which roles run
// (the container runtime, the network plugin, DNS, etcd's deployment): a
// role guard on another variable (metallb_enabled, deploy_container_engine)
// is an add-on switched off on purpose, whose settings are not judged.
var roleChoosers = map[string]bool{"container_manager": true, "kube_network_plugin": true, "dns_mode": true, "etcd_deployment_type": true}

// simpleIfRE is an {% if %} condition the rule judges: a variable, its
// negation or | bool, or its comparison with a string literal; the
// other branch of one ("not (...)").
var simpleIfRE = regexp.MustCompile(`^(not \()?(not\s+)?[A-Za-z_]\w*(\s*\|\s*bool|\s*(==|!=)\s*('[^']*'|"[^"]*"))?\)?$`)

// judgedGuard reports whether the rule may call a read off on g: a
// template chosen by a condition, a role chosen by roleChoosers, or a
// simple {% if %}; a task's own when: is not judged.
func judgedGuard(g kubespray.Guard) bool {
	switch g.Kind {
	case kubespray.GuardTemplate:
		return true
	case kubespray.GuardRole:
		vars := kubespray.ExprVars(g.Expr)
		for _, v := range vars {
			if !roleChoosers[v] {
				return false
			}
		}
		return len(vars) > 0
	case kubespray.GuardIf:
		return simpleIfRE.MatchString(g.Expr)
	}
	return false
}

// falseGuard is the first judged guard of read that is false on host h,
// or nil when none is known to be false (the read may happen).
func (c *checkCtx) falseGuard(read kubespray.GuardedRead, host kubespray.PlayHost) *kubespray.Guard {
	for i := range read.Guards {
		if !judgedGuard(read.Guards[i]) {
			continue
		}
		if b, known := c.cat.EvalGuard(read.Guards[i], host); known && !b {
			return &read.Guards[i]
		}
	}
	return nil
}

func checkNoEffect(c *checkCtx) []Finding {
	if c.in.Inventory == nil {
		return nil
	}
	var out []Finding
	var groups *kubespray.PlayGroups
	var m memberships
	index := map[string]int{}
	hostOf := func(h string) kubespray.PlayHost {
		if groups == nil {
			groups = kubespray.NewPlayGroups(c.playGroups())
			m = c.memberships()
			for i, n := range c.hosts {
				index[n] = i
			}
		}
		return c.playHost(h, groups, m.names[m.of[index[h]]])
	}
	for _, name := range c.cat.GuardedNames() {
		uses := c.uses(name)
		if len(uses) == 0 {
			continue
		}
		reads := c.cat.Guarded(name)
	use:
		for _, u := range uses {
			// A value that only restates kubespray's default changes
			// nothing wherever it is read: kubespray's sample inventories
			// keep each network plugin's defaults in a file of its own
			// (k8s-net-kube-ovn.yml) whatever plugin runs.
			if d := c.defaultOf(name); d != nil && u.ours != nil && d.Kind == u.ours.Kind && d.Display() == u.ours.Display() {
				continue
			}
			// the guards false on the first host; every host must have
			// one false guard per read
			var first []*kubespray.Guard
			for hi, h := range u.hosts {
				host := hostOf(h)
				for _, r := range reads {
					g := c.falseGuard(r, host)
					if g == nil {
						continue use
					}
					if hi == 0 {
						first = append(first, g)
					}
				}
			}
			if len(first) == 0 {
				continue
			}
			out = append(out, c.noEffectFinding(u, reads, first, hostOf(u.hosts[0])))
		}
	}
	return out
}

func (c *checkCtx) noEffectFinding(u use, reads []kubespray.GuardedRead, guards []*kubespray.Guard, host kubespray.PlayHost) Finding {
	f := c.finding("no-effect", SeverityWarning, u)
	var why, exprs []string
	sources := map[string][]string{}
	for i, g := range guards {
		if sources[g.Expr] == nil {
			exprs = append(exprs, g.Expr)
		}
		sources[g.Expr] = append(sources[g.Expr], g.Source)
		why = append(why, fmt.Sprintf("%s %s", reads[i].Source, guardRole(g)))
	}
	var conds []string
	for _, e := range exprs {
		conds = append(conds, fmt.Sprintf("%s (%s)", e, strings.Join(dedupe(sources[e]), ", ")))
	}
	var inputs []string
	seenVar := map[string]bool{}
	for _, g := range guards {
		for _, n := range kubespray.ExprVars(g.Expr) {
			if seenVar[n] {
				continue
			}
			seenVar[n] = true
			inputs = append(inputs, c.guardInput(n, g.Source, host))
		}
	}
	rel := c.cat.Version
	if rel == "" {
		rel = "checkout"
	}
	f.Message = fmt.Sprintf("%s has no effect: kubespray %s reads it only when %s, which this inventory makes false", u.name, rel, strings.Join(conds, ", or when "))
	f.Why = fmt.Sprintf("kubespray reads %s only at %s; here %s. The run succeeds and the setting is silently ignored.",
		u.name, strings.Join(dedupe(why), "; "), strings.Join(inputs, ", "))
	f.Fix = fmt.Sprintf("remove %s, or, if you need it, change what makes %s false", u.name, quoteConds(guards))
	for _, g := range guards {
		if g.Kind == kubespray.GuardTemplate && g.Else != "" {
			f.Fix += fmt.Sprintf("; with these values kubespray renders %s instead, which does not read %s", g.Else, u.name)
			break
		}
	}
	return f
}

// guardRole says how a guard guards a read, for the finding's why.
func guardRole(g *kubespray.Guard) string {
	switch g.Kind {
	case kubespray.GuardTemplate:
		return fmt.Sprintf("(the task at %s renders this template only when %s)", g.Source, g.Expr)
	case kubespray.GuardRole:
		return fmt.Sprintf("(the role, as %s includes it, runs only when %s)", g.Source, g.Expr)
	case kubespray.GuardTask:
		return fmt.Sprintf("(the task at %s renders this template only when %s)", g.Source, g.Expr)
	}
	return fmt.Sprintf("(inside {%% if %s %%} at %s)", g.Expr, g.Source)
}

// guardInput says what a condition's variable is on host: as set (with
// where) or kubespray's default.
func (c *checkCtx) guardInput(name, source string, host kubespray.PlayHost) string {
	if v, set := c.value(host.Name, name); set && v != nil {
		return fmt.Sprintf("%s is %s (%s)", name, v.Display(), c.where(v.Pos))
	}
	val := "unset"
	if v, ok := c.cat.EvalGuardValue(name, source, host); ok {
		val = fmt.Sprintf("%q", fmt.Sprint(v))
		if b, isBool := v.(bool); isBool {
			val = fmt.Sprint(b)
		}
	}
	if d := c.cat.Lookup(name); d != nil {
		return fmt.Sprintf("%s is %s (kubespray's default, %s:%d)", name, val, d.File, d.Line)
	}
	return fmt.Sprintf("%s is %s", name, val)
}

func quoteConds(gs []*kubespray.Guard) string {
	var out []string
	seen := map[string]bool{}
	for _, g := range gs {
		if !seen[g.Expr] {
			seen[g.Expr] = true
			out = append(out, "`"+g.Expr+"`")
		}
	}
	return strings.Join(out, " and ")
}

func dedupe(ss []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
