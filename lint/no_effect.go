package lint

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
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
	ready := func() {
		if groups == nil {
			groups = kubespray.NewPlayGroups(c.playGroups())
			m = c.memberships()
		}
	}
	hostOf := func(h string) kubespray.PlayHost {
		ready()
		i, _ := c.indexOfName(h)
		return c.playHost(h, groups, m.names[m.of[i]])
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
			if c.in.Resolved == nil {
				ready()
				var ok bool
				if first, ok = c.falseOnEveryHost(u.hosts, reads, groups, m); !ok {
					continue use
				}
				if len(first) > 0 {
					out = append(out, c.noEffectFinding(u, reads, first, hostOf(u.hosts[0])))
				}
				continue
			}
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

// guardTrace is what evaluating a use's guards on one host asked of the
// host, and the outcome: the variables looked up and what the host gave
// for each (nil: unset), whether it read the host's name or groups or
// listed its variables. The evaluation reads nothing else of a host, and
// does the same with the same answers: a host that gives them gets the
// same outcome.
type guardTrace struct {
	cols     []*column // the variables looked up
	vals     []*parser.Value
	byName   bool // inventory_hostname or the variable list read: this host only
	host     int
	byGroups bool // group_names read
	member   int
	guards   []*kubespray.Guard // each read's false guard, when ok
	ok       bool               // every read has one
}

// falseOnEveryHost reports whether every read has a guard that is false
// on every one of hosts, and the false guards of the first host: the
// guards evaluated once per distinct set of answers (guardTrace) instead
// of once per host. Without Ansible's resolution only.
func (c *checkCtx) falseOnEveryHost(hosts []string, reads []kubespray.GuardedRead, groups *kubespray.PlayGroups, m memberships) ([]*kubespray.Guard, bool) {
	var traces []*guardTrace
	var last *guardTrace
	var first []*kubespray.Guard
	for hi, h := range hosts {
		i, ok := c.indexOfName(h)
		if !ok {
			return nil, false
		}
		tr := last
		if tr == nil || !c.sameAnswers(tr, i, m) {
			tr = nil
			for _, t := range traces {
				if c.sameAnswers(t, i, m) {
					tr = t
					break
				}
			}
			if tr == nil {
				tr = c.traceGuards(i, reads, groups, m)
				traces = append(traces, tr)
			}
			last = tr
		}
		if !tr.ok {
			return nil, false
		}
		if hi == 0 {
			first = tr.guards
		}
	}
	return first, true
}

// traceGuards evaluates the guards of reads on the host at index i, as
// the loop of checkNoEffect does host by host, and records what it asked.
func (c *checkCtx) traceGuards(i int, reads []kubespray.GuardedRead, groups *kubespray.PlayGroups, m memberships) *guardTrace {
	h := c.hosts[i]
	tr := &guardTrace{host: i, member: m.of[i]}
	seen := map[string]bool{}
	host := kubespray.PlayHost{
		Name: h,
		Lookup: func(name string) (any, bool) {
			v, set := c.valueAt(i, name)
			if !seen[name] {
				seen[name] = true
				col := c.table.column(name)
				tr.cols, tr.vals = append(tr.cols, col), append(tr.vals, c.table.at(col, i))
			}
			switch name {
			case "inventory_hostname", "inventory_hostname_short":
				tr.byName = true
			case "group_names":
				tr.byGroups = true
			}
			if !set {
				return nil, false
			}
			return v, true
		},
		VarNames: func() []string {
			tr.byName = true
			return c.varsOf(h).Keys()
		},
		Groups: groups, GroupNames: m.names[m.of[i]],
	}
	tr.ok = true
	for _, r := range reads {
		g := c.falseGuard(r, host)
		if g == nil {
			tr.ok, tr.guards = false, nil
			break
		}
		tr.guards = append(tr.guards, g)
	}
	return tr
}

// sameAnswers reports whether the host at index i gives what tr recorded.
func (c *checkCtx) sameAnswers(tr *guardTrace, i int, m memberships) bool {
	if tr.byName && tr.host != i || tr.byGroups && tr.member != m.of[i] {
		return false
	}
	for k, col := range tr.cols {
		if c.table.at(col, i) != tr.vals[k] {
			return false
		}
	}
	return true
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
