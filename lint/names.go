package lint

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
)

func init() {
	registerRule("unknown-variable", SeverityWarning,
		"a variable kubespray does not know whose name is close to one it does (helm_enable: did you mean helm_enabled?)",
		checkUnknownNames)
	registerRule("variable-not-in-release", SeverityWarning,
		"a variable an older kubespray release defines and this one no longer does: most likely left over, with no effect",
		checkOtherReleases)
	registerRule("removed-variable", SeverityError,
		"a variable kubespray removed: its validate_inventory stops on it, or, while still mapped to its replacement, warns",
		checkRemoved)
}

// notKubespray are names an inventory sets for Ansible itself or for its
// hosts, never misspellings of kubespray's: connection and magic variables
// and the per-host settings kubespray's docs ask for but never default.
var notKubespray = map[string]bool{
	"ip": true, "access_ip": true, "ip6": true, "access_ip6": true, "main_ip": true, "main_access_ip": true,
	"etcd_member_name": true, "node_labels": true, "node_taints": true, "cluster_id": true,
	"calico_rr_id": true, "calico_group_id": true, "local_as": true, "peers": true,
	"hostvars": true, "groups": true, "group_names": true, "inventory_hostname": true,
	"inventory_hostname_short": true, "inventory_dir": true, "inventory_file": true,
	"playbook_dir": true, "role_path": true, "omit": true, "environment": true,
}

// ignoredName reports names the unknown-variable rule never judges.
func ignoredName(n string) bool {
	return notKubespray[n] || strings.HasPrefix(n, "ansible_") || strings.HasPrefix(n, "_")
}

// maxDistance is how far a name may be from a catalogue name to be taken
// as a misspelling of it: one edit, two for long names (which must then
// share their first word, so krew_enabled is not taken for crun_enabled).
func maxDistance(n string) int {
	switch {
	case len(n) < 6:
		return 0
	case len(n) < 12:
		return 1
	}
	return 2
}

func firstWord(n string) string {
	if i := strings.IndexByte(n, '_'); i > 0 {
		return n[:i]
	}
	return n
}

// nearest returns the catalogue names closest to n within maxDistance.
func (c *checkCtx) nearest(n string) []string {
	limit := maxDistance(n)
	if limit == 0 {
		return nil
	}
	best := limit + 1
	var out []string
	for name := range c.cat.Vars {
		if d := len(name) - len(n); d > limit || -d > limit {
			continue
		}
		d := editDistance(n, name)
		if d > limit || (d > 1 && firstWord(n) != firstWord(name)) {
			continue
		}
		switch {
		case d < best:
			best, out = d, []string{name}
		case d == best:
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func checkUnknownNames(c *checkCtx) []Finding {
	if len(c.cat.Vars) == 0 {
		return nil
	}
	var out []Finding
	referenced := c.templateNames()
	for _, name := range c.names() {
		if c.cat.Lookup(name) != nil || ignoredName(name) {
			continue
		}
		if _, removed := c.cat.Removed[name]; removed {
			continue
		}
		if referenced[name] {
			continue // a helper the inventory's own templates use
		}
		near := c.nearest(name)
		if len(near) == 0 {
			continue
		}
		for _, u := range c.uses(name) {
			f := c.finding("unknown-variable", SeverityWarning, u)
			f.Message = fmt.Sprintf("kubespray has no variable %s: did you mean %s?", name, strings.Join(near, " or "))
			f.Why = "kubespray ignores variables it does not know, so this setting has no effect and " + near[0] + " keeps its default" + defaultNote(c, near[0]) + "."
			f.Fix = "rename it: " + fixText(near[0], literal(u.ours), originOf(u))
			out = append(out, f)
		}
	}
	return out
}

// checkOtherReleases judges the names unknown-variable leaves alone (no
// catalogue name is close) that an older bundled kubespray release
// defines and this bundled release no longer does: left over from an
// earlier release. Only names with an underscore (kubespray's all have
// one; "namespace" is more likely the operator's own), and only removals:
// a variable that first gets a default in a later release may well be
// read without one before (additional_no_proxy before v2.31.0), and a
// checkout's place among the releases is unknown.
func checkOtherReleases(c *checkCtx) []Finding {
	if len(c.cat.Vars) == 0 || c.cat.Version == "" {
		return nil
	}
	var out []Finding
	referenced := c.templateNames()
	for _, name := range c.names() {
		if !strings.Contains(name, "_") || c.cat.Lookup(name) != nil || ignoredName(name) || referenced[name] {
			continue
		}
		if _, removed := c.cat.Removed[name]; removed {
			continue // removed-variable says it
		}
		if c.in.UpgradeFrom != nil && c.in.UpgradeFrom.Lookup(name) != nil {
			continue // upgrade-removed says it, for the release upgraded from
		}
		defs := kubespray.Defining(name)
		if len(defs) == 0 || !releaseBefore(defs[len(defs)-1], c.cat.Version) || len(c.nearest(name)) > 0 {
			continue
		}
		if c.cat.ReadBy(name) != "" {
			continue // still read, through another variable's default
		}
		first, last := defs[0], defs[len(defs)-1]
		span := first
		if last != first {
			span += " … " + last
		}
		lastFile := kubespray.DefinedIn(last, name)
		for _, u := range c.uses(name) {
			f := c.finding("variable-not-in-release", SeverityWarning, u)
			f.Message = fmt.Sprintf("kubespray %s no longer defines %s: the last bundled release that does is %s (%s)", c.cat.Version, name, last, lastFile)
			f.Why = fmt.Sprintf("kubespray ignores variables it does not define, so this setting most likely has no effect with %s. Bundled releases defining %s: %s.", c.cat.Name, name, span)
			f.Fix = fmt.Sprintf("delete %s (kubespray's release notes after %s say what replaced it), unless your own templates read it", name, last)
			out = append(out, f)
		}
	}
	return out
}

// releaseBefore reports whether bundled release a is older than b
// ("master" is the newest).
func releaseBefore(a, b string) bool {
	for _, v := range kubespray.ReleaseOrder() {
		switch v {
		case a:
			return a != b
		case b:
			return false
		}
	}
	return false
}

func defaultNote(c *checkCtx, name string) string {
	d := c.cat.Lookup(name)
	if d == nil || d.Default == nil {
		return ""
	}
	return fmt.Sprintf(" (%v, %s)", d.Default, d.File)
}

// literal renders a value as it would be written in YAML.
func literal(v *parser.Value) string {
	if v == nil {
		return "..."
	}
	if v.Kind == parser.KindString || v.Kind == parser.KindList || v.Kind == parser.KindMap || v.Kind == parser.KindVault {
		if v.Kind == parser.KindString && !v.Quoted && v.Raw != "" && v.Origin == parser.OriginYAML {
			return v.Raw
		}
		return v.Display()
	}
	return v.Display()
}

// removedFacts returns what the catalogue says of a removed variable:
// whether kubespray stops on it, its message and source.
func (c *checkCtx) removedFacts(name string) (stops bool, msg, source, readBy string) {
	if c.cat.Facts != nil {
		for _, r := range c.cat.Facts.Removed {
			if r.Name == name {
				return r.Stops, r.Msg, r.Source, r.ReadBy
			}
		}
	}
	return true, "Removed variables present: " + name, "roles/validate_inventory/tasks/main.yml", ""
}

func checkRemoved(c *checkCtx) []Finding {
	var out []Finding
	for _, name := range c.names() {
		advice, removed := c.cat.Removed[name]
		if !removed {
			continue
		}
		stops, msg, source, readBy := c.removedFacts(name)
		for _, u := range c.uses(name) {
			sev := SeverityError
			if !stops {
				sev = SeverityWarning
			}
			f := c.finding("removed-variable", sev, u)
			if u.judge != nil && u.judge.IsVault() {
				f.Value = "<vault>"
			}
			f.Message = fmt.Sprintf("kubespray no longer reads %s", name)
			switch {
			case stops:
				f.Why = fmt.Sprintf("kubespray stops with %q (%s).", msg, source)
			case readBy != "":
				f.Message = fmt.Sprintf("%s is deprecated: kubespray still reads it, through the default of %s, and warns (%s)", name, readBy, source)
				f.Why = fmt.Sprintf("kubespray warns %q; a later release may drop the mapping.", msg)
			default:
				f.Why = fmt.Sprintf("kubespray ignores it or only warns (%s): the setting has no effect.", source)
			}
			if advice != "" {
				f.Why += " Instead: " + advice + "."
			}
			f.Fix = "delete " + name + " from " + strings.SplitN(f.Where, ":", 2)[0]
			out = append(out, f)
		}
	}
	return out
}

var identRe = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// templateNames are the identifiers the inventory's Jinja values mention:
// variables an operator defines for their own templates are not typos.
func (c *checkCtx) templateNames() map[string]bool {
	if c.templateNamesMemo != nil {
		return c.templateNamesMemo
	}
	out := map[string]bool{}
	seen := map[*parser.Value]bool{}
	var walk func(v *parser.Value)
	walk = func(v *parser.Value) {
		if v == nil {
			return
		}
		if v.Kind == parser.KindString { // read again, it adds the same names: no need to remember it
			if v.Templated() {
				for _, id := range identRe.FindAllString(v.Str, -1) {
					out[id] = true
				}
			}
			return
		}
		if seen[v] {
			return
		}
		seen[v] = true
		switch v.Kind {
		case parser.KindList:
			for _, x := range v.List {
				walk(x)
			}
		case parser.KindMap:
			if v.Map != nil {
				for _, k := range v.Map.Keys {
					walk(v.Map.Values[k])
				}
			}
		}
	}
	c.table.winning(walk)
	c.templateNamesMemo = out
	return out
}
