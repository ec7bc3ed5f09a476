package lint

import (
	"fmt"
	"strings"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/parser/ansiblebool"
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
	// the series string booleans are judged under, once the release is known
	registerStep("string-as-bool", phasePrepare, func(c *checkCtx, r *Report) {
		c.in.AnsibleCore, r.AnsibleCoreWhy = JudgedAnsibleCore(c.in.AnsibleCore, c.in.Catalogue)
		r.AnsibleCore = c.in.AnsibleCore
	})
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
			if sev, msg, why, older := c.ansibleVerdict(name, meant, v); older {
				f.Severity, f.Message, f.Why = sev, f.Message+": "+msg, why+" "+howWritten(v)
				f.Why += " " + c.validateInventoryNote(name)
				f.Fix = fixText(name, fmt.Sprint(meant), originOf(u))
				out = append(out, f)
				continue
			}
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

// boolWhy quotes ansible-core 2.19's failure for `when: name`, at the
// first condition kubespray tests it in (when the catalogue knows it).
func boolWhy(c *checkCtx, name string, v *parser.Value, u use) string {
	at := "<file>:<line>"
	if u.ours != nil && u.ours.Pos.File != "" {
		at = c.where(u.ours.Pos)
	}
	cond := "`when: " + name + "`"
	s, _ := c.useSite(name, kubespray.FormBare, kubespray.FormNot, kubespray.FormExpr)
	if s != nil {
		cond = fmt.Sprintf("kubespray's `%s` (%s)", s.Expr, s.Source)
	}
	why := fmt.Sprintf("ansible-core >= 2.19 fails %s: \"%s\"", cond,
		fmt.Sprintf(conditionalGist, pyBool(pyTruth(v)), v.Kind, at))
	if s == nil {
		if t, _ := c.useSite(name, kubespray.FormTemplate); t != nil {
			why += fmt.Sprintf(" kubespray's own tasks read it only inside Jinja (`%s`, %s), which takes the %s's Python truth (%s) under every ansible-core, 2.19 included, and fails nothing.",
				t.Expr, t.Source, v.Kind, pyBool(pyTruth(v)))
		}
	}
	return why
}

// useSite is the first of forms in which kubespray's conditions read
// name, and the form; nil when the catalogue has no such use.
func (c *checkCtx) useSite(name string, forms ...string) (*kubespray.UseSite, string) {
	if c.cat.Release == nil {
		return nil, ""
	}
	uses := c.cat.Release.Uses[name]
	for _, f := range forms {
		if s := uses[f]; s != nil {
			return s, f
		}
	}
	return nil, ""
}

// AnsibleSeries reads an ansible-core version ("2.18", "2.18.6",
// "2.20.0rc1") as its series "X.Y"; "" stays "" (2.19). Series before
// 2.16 or after 2.20 are refused: no kubespray release runs on them.
func AnsibleSeries(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	parts := strings.SplitN(strings.TrimSpace(v), ".", 3)
	if len(parts) < 2 {
		return "", fmt.Errorf("%q is not an ansible-core version (X.Y)", v)
	}
	minor := strings.TrimLeftFunc(parts[1], func(r rune) bool { return r >= '0' && r <= '9' })
	minor = parts[1][:len(parts[1])-len(minor)]
	s := parts[0] + "." + minor
	if versionLess(s, "2.16") || versionLess("2.20", s) {
		return "", fmt.Errorf("ansible-core %s: kubespray releases run on 2.16 to 2.20", v)
	}
	return s, nil
}

// JudgedAnsibleCore is the ansible-core series string booleans are judged
// under, and why: series when given (--ansible-core, or the play's own);
// else the series the chosen release pins: the newest its
// playbooks/ansible_version.yml accepts (v2.24–v2.28 2.16, v2.29–v2.30
// 2.17, v2.31 2.18), which its requirements.txt installs; else, for the
// default catalogue or a release whose range is not known, 2.19, the first
// series that fails a `when:` on a string.
func JudgedAnsibleCore(series string, cat *kubespray.Catalogue) (string, string) {
	if series != "" {
		return series, "as given"
	}
	if cat != nil && !cat.Default && cat.Facts != nil {
		if s, ok := pinnedSeries(cat.Facts.AnsibleMax); ok {
			rel := "kubespray " + cat.Version
			if cat.StandsInFor != "" && !kubespray.IsRelease(cat.Version) {
				rel += " (standing in for " + cat.StandsInFor + ")"
			}
			if cat.Version == "" {
				rel = "the kubespray checkout"
			}
			return s, fmt.Sprintf("the series %s pins (%s accepts %s ≤ x < %s)", rel, cat.Facts.AnsibleSource, cat.Facts.AnsibleMin, cat.Facts.AnsibleMax)
		}
	}
	return "2.19", "the default: 2.19 and later fail a `when:` on a string"
}

// pinnedSeries is the series just below an exclusive upper bound
// ("2.19.0" gives "2.18"), within the series AnsibleSeries accepts.
func pinnedSeries(max string) (string, bool) {
	parts := strings.Split(max, ".")
	if len(parts) < 2 {
		return "", false
	}
	var maj, minor int
	if _, err := fmt.Sscanf(parts[0]+" "+parts[1], "%d %d", &maj, &minor); err != nil || minor == 0 {
		return "", false
	}
	s, err := AnsibleSeries(fmt.Sprintf("%d.%d", maj, minor-1))
	return s, err == nil && s != ""
}

// ansibleSeries is the series the lint judges for (JudgedAnsibleCore).
func (c *checkCtx) ansibleSeries() string {
	if c.in.AnsibleCore == "" {
		return "2.19"
	}
	return c.in.AnsibleCore
}

// ansibleVerdict says what an ansible-core before 2.19 does with a
// boolean written as a str or int, from how kubespray reads it: a bare,
// negated or combined condition takes Python's truth of the value (so
// "false" is TRUE, an inverted setting: error); a value whose truth is
// what was meant works today and fails under 2.19 (warning); a variable
// kubespray reads only with `| bool` behaves as meant under every series
// (info). older is false under 2.19 and later, where the caller's
// failure text stands.
func (c *checkCtx) ansibleVerdict(name string, meant bool, v *parser.Value) (sev Severity, msg, why string, older bool) {
	series := c.ansibleSeries()
	if !versionLess(series, "2.19") {
		return "", "", "", false
	}
	sev, msg, why = c.olderVerdict(series, name, meant, v)
	known, src := c.knownBooleans()
	for _, k := range known {
		if k == name {
			// kubespray's own type check stops the run first, on any series.
			sev = SeverityError
			msg += fmt.Sprintf("; kubespray's validate_inventory stops the run on it first (%s) unless ignore_assert_errors is true", src)
		}
	}
	return sev, msg, why, true
}

func (c *checkCtx) olderVerdict(series, name string, meant bool, v *parser.Value) (sev Severity, msg, why string) {
	truth := pyTruth(v)
	site, form := c.useSite(name, kubespray.FormBare, kubespray.FormNot, kubespray.FormExpr)
	switch {
	case site == nil:
		if tmpl, _ := c.useSite(name, kubespray.FormTemplate); tmpl != nil {
			if truth != meant {
				return SeverityError,
					fmt.Sprintf("under ansible-core %s it is %s although you wrote %s: kubespray renders it at %s (`%s`)", series, strings.ToUpper(fmt.Sprint(truth)), v.Display(), tmpl.Source, tmpl.Expr),
					fmt.Sprintf("Jinja takes the non-empty string %s as true in `%s`, under ansible-core %s and 2.19 and later alike: a silently inverted setting.", v.Display(), tmpl.Expr, series)
			}
			return SeverityWarning,
				fmt.Sprintf("it works under ansible-core %s only because %s is %s in Python (kubespray renders it at %s, `%s`), and fails any `when: %s` under 2.19 and later", series, v.Display(), pyBool(truth), tmpl.Source, tmpl.Expr, name),
				fmt.Sprintf("Jinja takes the value's Python truth in `%s`; the same value written as \"false\" would be true there.", tmpl.Expr)
		}
		if cast, _ := c.useSite(name, kubespray.FormBoolCast); cast != nil {
			if got := ansiblebool.Filter(series, v.Scalar()).Value; got != meant {
				// "y", "t": boolean() spellings `| bool` does not know
				return SeverityError,
					fmt.Sprintf("under ansible-core %s and 2.19 and later it is %s although you wrote %s: kubespray reads it only with `| bool` (%s, `%s`)", series, strings.ToUpper(fmt.Sprint(got)), v.Display(), cast.Source, cast.Expr),
					fmt.Sprintf("Ansible's `| bool` takes yes, on, true and 1 (any case) as true and every other string as false; 2.19 and later add a deprecation warning for %s.", v.Display())
			}
			return SeverityInfo,
				fmt.Sprintf("ansible-core %s and 2.19 and later all read it as %v here", series, meant),
				fmt.Sprintf("kubespray's conditions read it only with `| bool` (`%s`, %s), which takes %s as %v.", cast.Expr, cast.Source, v.Display(), meant)
		}
		if truth != meant {
			return SeverityError, fmt.Sprintf("under ansible-core %s it is %s although you wrote %s", series, strings.ToUpper(fmt.Sprint(truth)), v.Display()),
				fmt.Sprintf("ansible-core %s takes a non-empty string as true wherever it is tested or rendered ({%% if %%} in kubespray's templates); 2.19 and later fail instead.", series)
		}
		return SeverityWarning, fmt.Sprintf("it works under ansible-core %s only because %s is %s in Python, and fails under 2.19 and later", series, v.Display(), pyBool(truth)),
			fmt.Sprintf("ansible-core %s takes the value's Python truth; 2.19 and later reject a %s in a condition.", series, v.Kind)
	case truth != meant:
		acts := "acts on it"
		if form == kubespray.FormNot {
			acts = "skips what it guards"
		}
		return SeverityError,
			fmt.Sprintf("under ansible-core %s it is %s although you wrote %s: kubespray %s at %s (`%s`)", series, strings.ToUpper(fmt.Sprint(truth)), v.Display(), acts, site.Source, site.Expr),
			fmt.Sprintf("ansible-core %s evaluates `%s` with Python's truth, and the non-empty string %s is true: a silently inverted setting. ansible-core 2.19 and later fail the same condition instead.", series, site.Expr, v.Display())
	default:
		return SeverityWarning,
			fmt.Sprintf("it works under ansible-core %s only because %s is %s in Python; ansible-core 2.19 and later fail kubespray's `%s` at %s", series, v.Display(), pyBool(truth), site.Expr, site.Source),
			fmt.Sprintf("ansible-core %s evaluates `%s` with Python's truth; 2.19 and later reject a %s in a condition.", series, site.Expr, v.Kind)
	}
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
