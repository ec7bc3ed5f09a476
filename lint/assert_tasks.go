package lint

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
)

// The rule checks kubespray's own inventory asserts. Its id keeps the
// older word: suppression comments, configurations and baselines name it.
func init() {
	registerRule("kubespray-preflight", SeverityError,
		"an inventory kubespray's own pre-flight stops on (validate_inventory, or 0040-verify-settings.yml before v2.28), evaluated from the release's task file; said once, by the rule that explains it best",
		checkAssertTasks, runsApart)
	registerStep("kubespray-preflight", phaseFold, func(_ *checkCtx, r *Report) {
		r.Findings = foldAssertTasks(r.Findings)
	})
}

// assertTaskRef is kubespray's inventory assert a kubespray-preflight
// finding stands for: the task's name and the file:line of the failing item.
type assertTaskRef struct {
	task, source string
	// msg is the assert's message up to its first Jinja.
	msg string
	// groups is true for an assert on the inventory's groups: a finding
	// on any hosts that names it says it.
	groups bool
}

// playGroups is the inventory's groups (all and ungrouped included)
// with their hosts in inventory order, as the play's groups variable.
func (c *checkCtx) playGroups() map[string][]string {
	out := map[string][]string{}
	inv := c.in.Inventory
	if inv == nil {
		return out
	}
	for _, g := range inv.Groups {
		hs, _ := c.groupHosts(g.Name)
		out[g.Name] = hs
	}
	if _, ok := out["all"]; !ok {
		out["all"] = c.hosts
	}
	return out
}

// memberships numbers the distinct group_names of the hosts: of is each
// host's number (by index in c.hosts), names the groups of each number, in
// inventory order (all and ungrouped left out).
type memberships struct {
	of    []int
	names [][]string
}

func (c *checkCtx) memberships() memberships {
	m := memberships{of: make([]int, len(c.hosts)), names: [][]string{nil}}
	// a host's number moves, group by group, from the groups it is in so
	// far to those plus this one: hosts that were together mostly stay so
	type step struct{ from, group int }
	next := map[step]int{}
	for gi, g := range c.in.Inventory.Groups {
		if g.Name == "all" || g.Name == "ungrouped" {
			continue
		}
		last, lastTo := step{-1, -1}, 0
		for _, i := range c.groupHostIdx[g.Name] {
			st := step{m.of[i], gi}
			if st != last {
				to, ok := next[st]
				if !ok {
					from := m.names[st.from]
					to = len(m.names)
					m.names = append(m.names, append(from[:len(from):len(from)], g.Name))
					next[st] = to
				}
				last, lastTo = st, to
			}
			m.of[i] = lastTo
		}
	}
	return m
}

func (c *checkCtx) playHost(h string, groups *kubespray.PlayGroups, names []string) kubespray.PlayHost {
	return kubespray.PlayHost{
		Name: h,
		Lookup: func(name string) (any, bool) {
			v, set := c.value(h, name)
			if !set {
				return nil, false
			}
			return v, true
		},
		VarNames: func() []string {
			return c.varsOf(h).Keys()
		},
		Groups: groups, GroupNames: names,
	}
}

func checkAssertTasks(c *checkCtx) []Finding {
	tasks := c.cat.AssertTasks()
	if len(tasks) == 0 || c.in.Inventory == nil {
		return nil
	}
	groups := kubespray.NewPlayGroups(c.playGroups())
	m := c.memberships()
	own := make([]bool, len(c.table.hostLayer)) // per task: see sigClasses
	ids := map[*parser.Value]int{}              // each value read, numbered for signatures
	type key struct {
		task, line int
		item       string
		at         *parser.Value
	}
	var out []Finding
	for ti, t := range tasks {
		if t.Status != kubespray.AssertEvaluated {
			continue
		}
		type group struct {
			u     use
			hosts hostList
		}
		var byKey byFirstSeen[key, group]
		results := map[key]kubespray.AssertResult{}
		// hosts that give the task the same values get the same result
		reads := c.cat.AssertReads(t)
		memo := map[string]kubespray.AssertResult{}
		clear(own)
		sigs := c.signatureClasses(reads, own)
		play := make([]bool, len(m.names)) // per membership: in the task's play
		for id, names := range m.names {
			play[id] = inPlay(t.PlayHosts, names)
		}
		var lastSig string
		var lastR kubespray.AssertResult
		haveLast := false
		for i, name := range c.hosts {
			id := m.of[i]
			if !play[id] {
				continue
			}
			sig := sigs.of(i, name, id, m.names[id], reads, ids)
			var r kubespray.AssertResult
			if haveLast && sig == lastSig {
				r = lastR
			} else {
				var ok bool
				r, ok = memo[sig]
				if !ok {
					r = c.cat.EvalAssertTask(t, c.playHost(name, groups, m.names[id]))
					memo[sig] = r
				}
				lastSig, lastR, haveLast = sig, r, true
			}
			if r.Outcome != kubespray.Fail {
				continue
			}
			expr := r.That.Expr
			if expr == "" && len(t.When) > 0 {
				expr = strings.Join(t.When, " and ")
			}
			var at *parser.Value
			atName := ""
			for _, n := range append(kubespray.ExprVars(expr), kubespray.ExprVars(strings.Join(t.When, " and "))...) {
				if v, set := c.value(name, n); set && v != nil {
					at, atName = v, n
					break
				}
			}
			k := key{ti, r.That.Line, fmt.Sprint(r.Item), at}
			g := byKey.get(k, func() *group { return &group{u: use{name: atName, ours: c.varsOf(name).Get(atName), judge: at}} })
			g.hosts.add(c.hosts, i)
			results[k] = r
		}
		for _, k := range byKey.order {
			u := byKey.m[k].u
			u.hosts = byKey.m[k].hosts.list(c.hosts)
			r := results[k]
			out = append(out, c.assertTaskFinding(t, r, u))
		}
	}
	return out
}

func (c *checkCtx) assertTaskFinding(t kubespray.AssertTask, r kubespray.AssertResult, u use) Finding {
	line := t.Line
	what := "its when: conditions hold (" + strings.Join(t.When, "; ") + ")"
	if r.That.Line > 0 {
		line = r.That.Line
		what = "`" + r.That.Expr + "` is false"
	}
	if r.Failed != "" {
		what = "Ansible cannot evaluate `" + r.That.Expr + "` (" + r.Failed + " in the values it reads), which fails the task"
	}
	src := fmt.Sprintf("%s:%d", t.File, line)
	f := c.finding("kubespray-preflight", SeverityError, u)
	if u.judge == nil {
		f.Variable, f.Value = "", ""
	}
	item := ""
	if r.Item != nil {
		item = fmt.Sprintf(" for item %v", r.Item)
	}
	f.Message = fmt.Sprintf("kubespray stops at \"%s\" (%s)%s: %s", t.Task, src, item, what)
	msg := t.Msg
	if msg == "" {
		msg = "Assertion failed"
	}
	f.Why = fmt.Sprintf("kubespray %s's pre-flight (%s, task \"%s\") fails the run before it changes a host, with \"%s\".", releaseName(c.cat), src, t.Task, strings.TrimSpace(msg))
	var vars []string
	for _, e := range append([]string{r.That.Expr}, t.When...) {
		for _, v := range kubespray.ExprVars(e) {
			if !containsStr(vars, v) && v != "item" {
				vars = append(vars, v)
			}
		}
	}
	switch {
	case containsStr(vars, "groups") || containsStr(vars, "group_names"):
		g := assertGroup(r.That.Expr, r.Item)
		if g != "" && f.Where == "" {
			f.Where = c.groupWhere(g)
		}
		f.Fix = "change the inventory's groups so that `" + strings.TrimSpace(r.That.Expr) + "` holds"
		if g != "" {
			f.Fix += fmt.Sprintf(" (the %s group: put hosts under [%s], or fix its membership)", g, g)
		}
	case u.judge != nil:
		f.Fix = fmt.Sprintf("change %s (set at %s) so that kubespray's assert holds", u.name, f.Where)
	default:
		f.Fix = "set the variables it reads (" + strings.Join(vars, ", ") + ") so that kubespray's assert holds"
	}
	lead, _, _ := strings.Cut(strings.TrimSpace(t.Msg), "{{")
	f.assertTask = &assertTaskRef{task: t.Task, source: src, msg: strings.TrimSpace(lead),
		groups: containsStr(vars, "groups") || containsStr(vars, "group_names")}
	return f
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// foldAssertTasks says each failing inventory assert once: a
// kubespray-preflight finding is dropped when other findings on the same
// variable name its task (or its message), or are errors on the same
// variable at the same place, and together cover its hosts; each of them
// then also names the assert's task and file:line. An assert on the groups
// is folded into the findings naming it whatever their hosts.
func foldAssertTasks(fs []Finding) []Finding {
	out := fs[:0]
	for i := range fs {
		p := fs[i].assertTask
		if p == nil {
			out = append(out, fs[i])
			continue
		}
		// the findings that name the same assert, for the same variable
		var by []int
		var hosts []string
		whole := p.groups
		for j := range fs {
			o := &fs[j]
			if o.assertTask != nil || o.Severity == SeverityInfo {
				continue
			}
			names := strings.Contains(o.Why+o.Message, p.task) || len(p.msg) >= 15 && strings.Contains(o.Why, p.msg)
			sameValue := o.Variable != "" && o.Variable == fs[i].Variable && o.Where == fs[i].Where && o.Severity == SeverityError
			if !(names || sameValue) || !(p.groups || o.Variable == "" || o.Variable == fs[i].Variable || fs[i].Variable == "") {
				continue
			}
			by = append(by, j)
			hosts = append(hosts, o.Hosts...)
			whole = whole || len(o.Hosts) == 0
		}
		if len(by) == 0 || !whole && !hostsCover(hosts, fs[i].Hosts) {
			out = append(out, fs[i])
			continue
		}
		for _, j := range by {
			o := &fs[j]
			if !strings.Contains(o.Why, p.source) || !strings.Contains(o.Why+o.Message, p.task) {
				o.Why += fmt.Sprintf(" (kubespray's pre-flight: %s, task \"%s\")", p.source, p.task)
			}
		}
	}
	return out
}

// hostsCover reports whether a finding on hosts a covers one on b (no
// hosts: the inventory as a whole).
func hostsCover(a, b []string) bool {
	if len(a) == 0 {
		return true
	}
	in := map[string]bool{}
	for _, h := range a {
		in[h] = true
	}
	for _, h := range b {
		if !in[h] {
			return false
		}
	}
	return true
}

// groupRE finds the group an assert reads: groups.get('etcd'),
// groups['k8s_cluster'], groups.etcd.
var groupRE = regexp.MustCompile(`groups(?:\.get\(\s*['"]([\w-]+)['"]|\[\s*['"]([\w-]+)['"]\s*\]|\.(\w+)\b)`)

// assertGroup is the group an assert reads (the loop item for
// `groups.get(item)`), "" when none is named.
func assertGroup(expr string, item any) string {
	if s, ok := item.(string); ok && strings.Contains(expr, "item") {
		return s
	}
	m := groupRE.FindStringSubmatch(expr)
	if m == nil {
		return ""
	}
	if g := m[1] + m[2] + m[3]; g != "get" {
		return g
	}
	return ""
}

// inPlay reports whether the play of an assert task targets the host.
func inPlay(groups []string, groupNames []string) bool {
	if len(groups) == 0 {
		return true
	}
	for _, g := range groups {
		if containsStr(groupNames, g) {
			return true
		}
	}
	return false
}

// sigClasses shares readSignature between the hosts that must get the
// same one: a host whose own layer sets none of the variables a task
// reads (and without resolved values) reads what its group layer and the
// extra vars give, so with the same group layer, and the same groups and
// name when the task reads those, it reads the same values.
type sigClasses struct {
	c             *checkCtx
	groups, names bool   // the task reads the host's groups, its name
	own           []bool // per host: its own layer sets a variable read
	sigs          map[sigClass]string
	last          sigClass // the class of the host before, and its signature
	lastSig       string
	haveLast      bool
}

type sigClass struct {
	gid, groups int // groups: the host's memberships number
	name        string
}

// own is cleared, of the length of the variable table's hosts.
func (c *checkCtx) signatureClasses(reads kubespray.AssertReadSet, own []bool) *sigClasses {
	t := c.table
	s := &sigClasses{c: c, sigs: map[sigClass]string{}, own: own}
	for _, n := range reads.Names {
		switch n {
		case "groups", "group_names":
			s.groups = true
		case "inventory_hostname", "inventory_hostname_short":
			s.names = true
		default:
			for _, i := range t.byHostKey[n] {
				s.own[i] = true
			}
		}
	}
	if reads.AllNames { // the host's variable names: its own layer's too
		for i, l := range t.hostLayer {
			if l != nil {
				s.own[i] = true
			}
		}
	}
	return s
}

// of is the readSignature of the host at index i (named name, of
// memberships number member, in groups groupNames).
func (s *sigClasses) of(i int, name string, member int, groupNames []string, reads kubespray.AssertReadSet, ids map[*parser.Value]int) string {
	t := s.c.table
	sig := func() string { return s.c.readSignature(i, name, groupNames, reads, ids) }
	if s.c.in.Resolved != nil || i >= len(s.own) || s.own[i] {
		return sig()
	}
	k := sigClass{gid: t.gid[i]}
	if s.groups {
		k.groups = member
	}
	if s.names {
		k.name = name
	}
	if s.haveLast && k == s.last {
		return s.lastSig
	}
	v, ok := s.sigs[k]
	if !ok {
		v = sig()
		s.sigs[k] = v
	}
	s.last, s.lastSig, s.haveLast = k, v, true
	return v
}

// readSignature identifies what an assert task reads on a host: the
// values of the variables it reads (each value is one *parser.Value, so
// its address says it), the host's groups or name when it reads them, the
// host's variable names when it lists variables by name. h is the host at
// index i of c.hosts: its values are read from the columns.
func (c *checkCtx) readSignature(i int, name string, groupNames []string, reads kubespray.AssertReadSet, ids map[*parser.Value]int) string {
	var b strings.Builder
	for _, n := range reads.Names {
		switch n {
		case "groups", "group_names":
			b.WriteString(strings.Join(groupNames, ","))
		case "inventory_hostname", "inventory_hostname_short":
			b.WriteString(name)
		default:
			v, _ := c.valueAt(i, n)
			id, ok := ids[v]
			if !ok {
				id = len(ids)
				ids[v] = id
			}
			b.WriteString(strconv.Itoa(id))
		}
		b.WriteByte('|')
	}
	if reads.AllNames {
		b.WriteString(strings.Join(c.varsOf(name).Keys(), ","))
	}
	return b.String()
}
