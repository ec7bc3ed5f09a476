package lint

import (
	"fmt"
	"strings"

	"github.com/layercheck/layercheck/parser"
)

// knownBooleans are the booleans kubespray's validate_inventory checks the
// type of itself ("Stop if known booleans are set as strings"), and where.
func (c *checkCtx) knownBooleans() ([]string, string) {
	if c.cat.Facts != nil && len(c.cat.Facts.KnownBooleans) > 0 {
		return c.cat.Facts.KnownBooleans, c.cat.Facts.KnownBooleansSource
	}
	return []string{"download_run_once", "download_always_pull", "helm_enabled", "openstack_lbaas_enabled"},
		"roles/validate_inventory/tasks/main.yml"
}

// conditionalGist is what ansible-core 2.19 says when `when:` meets a
// value that is not a bool (ansible/_internal/_templating/_engine.py).
const conditionalGist = "Conditional result (%s) was derived from value of type '%s' at '%s'. Conditionals must have a boolean result."

func init() {
	registerRule("string-as-bool", SeverityError,
		"a kubespray boolean set to a string spelling a boolean (\"true\", \"no\", INI x=true, -e x=true) or to the int 0/1",
		checkStringAsBool)
	registerRule("not-a-bool", SeverityError,
		"a kubespray boolean set to a value that is not a boolean at all (a word, a number, a list, null)",
		checkNotABool)
}

// boolVars lists the variables some host sets that the catalogue types
// as bool.
func boolVars(c *checkCtx) []string {
	var out []string
	for _, n := range c.names() {
		if d := c.cat.Lookup(n); d != nil && d.Type == "bool" {
			out = append(out, n)
		}
	}
	return out
}

// boolSpelling reports whether v is a str or int that spells a boolean,
// and which one.
func boolSpelling(v *parser.Value) (val, ok bool) {
	switch v.Kind {
	case parser.KindString, parser.KindInt:
		return truthy(v)
	}
	return false, false
}

// pyTruth is Python's bool() of a value, as the conditional computes it.
func pyTruth(v *parser.Value) bool {
	switch v.Kind {
	case parser.KindBool:
		return v.Bool
	case parser.KindString, parser.KindVault:
		return v.Str != ""
	case parser.KindInt:
		return v.Int != nil && v.Int.Sign() != 0
	case parser.KindFloat:
		return v.Float != 0
	case parser.KindList:
		return len(v.List) > 0
	case parser.KindMap:
		return v.Map.Len() > 0
	}
	return false
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func checkStringAsBool(c *checkCtx) []Finding {
	var out []Finding
	for _, name := range boolVars(c) {
		d := c.cat.Lookup(name)
		for _, u := range c.uses(name) {
			v := u.judge
			if !judged(v) {
				continue
			}
			meant, ok := boolSpelling(v)
			if !ok {
				continue
			}
			if d.StringBool && v.Kind == parser.KindString {
				// kubespray itself sets this one as a str and reads it
				// with `| bool`: the same spelling is what it expects.
				continue
			}
			f := c.finding("string-as-bool", SeverityError, u)
			f.Message = fmt.Sprintf("%s is the %s %s, not a boolean", name, v.Kind, v.Display())
			f.Why = boolWhy(c, name, v, u) + " " + howWritten(v)
			if !meant && pyTruth(v) {
				f.Why += " Where it is only rendered ({% if %} in a template, older ansible-core) the non-empty string " + v.Display() + " counts as true."
			}
			f.Why += " " + c.validateInventoryNote(name)
			f.Fix = fixText(name, fmt.Sprint(meant), originOf(u))
			out = append(out, f)
		}
	}
	return out
}

func checkNotABool(c *checkCtx) []Finding {
	var out []Finding
	for _, name := range boolVars(c) {
		d := c.cat.Lookup(name)
		for _, u := range c.uses(name) {
			v := u.judge
			if !judged(v) || v.Kind == parser.KindBool {
				continue
			}
			if _, ok := boolSpelling(v); ok {
				continue // string-as-bool's
			}
			if d.StringBool && v.Kind == parser.KindString {
				continue
			}
			f := c.finding("not-a-bool", SeverityError, u)
			f.Message = fmt.Sprintf("%s is the %s %s; kubespray expects true or false", name, v.Kind, v.Display())
			f.Why = boolWhy(c, name, v, u) + " " + c.validateInventoryNote(name)
			f.Fix = fixText(name, "true", originOf(u)) + " or " + fixText(name, "false", originOf(u))
			if b, ok := d.Default.(bool); ok {
				f.Fix += fmt.Sprintf(" (kubespray's default: %v)", b)
			}
			out = append(out, f)
		}
	}
	return out
}

// boolWhy quotes ansible-core 2.19's failure for `when: name`.
func boolWhy(c *checkCtx, name string, v *parser.Value, u use) string {
	at := "<file>:<line>"
	if u.ours != nil && u.ours.Pos.File != "" {
		at = c.where(u.ours.Pos)
	}
	return fmt.Sprintf("ansible-core >= 2.19 fails `when: %s`: \"%s\"", name,
		fmt.Sprintf(conditionalGist, pyBool(pyTruth(v)), v.Kind, at))
}

// howWritten explains why the value is not a bool, in the user's syntax.
func howWritten(v *parser.Value) string {
	switch v.Origin {
	case parser.OriginExtraKV:
		return "Extra vars given as -e key=value are always strings; pass JSON to get a boolean."
	case parser.OriginINIHost, parser.OriginINIGroup:
		if v.Kind == parser.KindInt {
			return "An INI value is read with Python's ast.literal_eval, which makes " + v.Raw + " an int."
		}
		if v.Quoted {
			return "A quoted INI value is a string."
		}
		return "An INI value is read with Python's ast.literal_eval: only True and False are booleans, " + quoteRaw(v) + " stays a string."
	case parser.OriginJSON:
		if v.Kind == parser.KindInt {
			return "In JSON a number is an int, not a boolean."
		}
		return "In JSON a quoted value is a string."
	case parser.OriginAnsible:
		return "Ansible resolved it to a " + v.Kind.String() + "."
	}
	if v.Kind == parser.KindInt {
		return "In YAML " + v.Raw + " is an int."
	}
	if v.Quoted {
		return "In YAML a quoted value is a string."
	}
	return "It loads as a " + v.Kind.String() + "."
}

func quoteRaw(v *parser.Value) string {
	if v.Raw != "" {
		return v.Raw
	}
	return strings.Trim(v.Display(), `"`)
}

// validateInventoryNote says whether kubespray's own validate_inventory
// role would stop on this variable before doing anything.
func (c *checkCtx) validateInventoryNote(name string) string {
	known, src := c.knownBooleans()
	for _, k := range known {
		if k == name {
			return "kubespray's validate_inventory stops on it too (" + src + ", \"Stop if known booleans are set as strings\"), once the run has started."
		}
	}
	return "kubespray's validate_inventory checks only " + strings.Join(known, ", ") + " (" + src + "), so nothing stops this one before the first task that tests it."
}
