package kubespray

import (
	"embed"
	"fmt"
	"iter"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/layercheck/layercheck/kubespray/internal/scan"
	"github.com/layercheck/layercheck/parser"
)

//go:generate go run ./internal/gen -data ../../shared/kubespray -src ../../shared/kubespray-src -full ../../shared/kubespray-full -dates commit_dates.txt -out .
//go:generate go run ./internal/genbin -dir .

// bundled holds the catalogues in their binary form (scan.BinaryFileName,
// transcoded from the JSON ones gen writes): a lint decodes one at its
// start, which JSON made most of a small lint's time.
//
//go:embed catalogue_*.bin.gz
var bundled embed.FS

// DefaultVersion is the bundled catalogue used when an inventory is not
// inside a kubespray checkout: master, because the kubespray release made
// for ansible-core 2.19 (v2.32) is cut from it and its defaults are already
// being migrated to 2.19's rules (ansible_facts['...'] instead of injected
// facts). Note that at the bundled commit playbooks/ansible_version.yml
// still accepts only ansible-core >= 2.18.0, < 2.19.0, as v2.31.0 does
// (see Facts.AnsibleMin/AnsibleMax); pick v2.31.0 with Bundled for a
// cluster managed by that release.
const DefaultVersion = "master"

// Def is one definition of a variable in kubespray: Type (Python type as
// Ansible loads it, or "templated"; "bool" with Inferred for a boolean
// Jinja expression), StringBool, Default, File (relative to the kubespray
// tree) and Line, and Scope ("role-defaults", "role-vars",
// "inventory-sample").
type Def = scan.Def

// Release is what the generator read from a release's tasks, playbooks
// and checksums (scan.Release).
type Release = scan.Release

// Component is one pinned component of a Release (scan.Component).
type Component = scan.Component

// UseSite is where kubespray's conditions read a boolean in one form
// (scan.UseSite).
type UseSite = scan.UseSite

// The forms of a boolean in kubespray's conditions and in the Jinja of its
// task arguments (Release.Uses).
const (
	FormBare     = scan.FormBare
	FormNot      = scan.FormNot
	FormBoolCast = scan.FormBoolCast
	FormCompared = scan.FormCompared
	FormExpr     = scan.FormExpr
	FormTemplate = scan.FormTemplate
)

// Var is one variable kubespray defines.
//
// A variable defined in several places (several roles, a role and the
// sample inventory) keeps every definition in Defs, ordered:
// roles/kubespray_defaults/defaults first, then other roles' defaults, then
// role vars, then inventory/sample/group_vars, each by file and line. The
// first is the primary one and gives Default, File, Line and Scope. Type is
// "bool" when any definition is a bool (literal or inferred from a boolean
// Jinja expression): a variable that is bool in one role and templated in
// another is still a boolean. Otherwise Type is the primary definition's.
type Var struct {
	Name string `json:"name"`
	// Type is the Python type of the default as Ansible loads it: bool, str,
	// int, float, list, dict, NoneType; "templated" for a Jinja default
	// whose type is unknown.
	Type string `json:"type"`
	// Inferred is true when Type is "bool" only because a templated default
	// is a boolean expression ("{{ x | bool }}", "{{ a == b }}", ...).
	Inferred bool `json:"inferred,omitempty"`
	// StringBool is true for a default that is a str spelling a boolean
	// ("false", "yes", ...), or a template always rendering one (Type
	// "templated"): kubespray means it as a string. Never set together
	// with Type "bool".
	StringBool bool `json:"string_bool,omitempty"`
	// Default is the primary definition's value: nil, bool, int64, float64,
	// string (also a too-big int, a non-finite float and the Jinja text of
	// a templated default), []any or map[string]any; nil with
	// Defs[0].DefaultOmitted for a list or dict over 1 KiB of JSON.
	Default any `json:"default"`
	// File and Line locate the default in kubespray (e.g.
	// "roles/kubespray_defaults/defaults/main/main.yml").
	File  string `json:"file"`
	Line  int    `json:"line,omitempty"`
	Scope string `json:"scope"`
	// Defs are all definitions, primary first.
	Defs []Def `json:"defs"`
	// Choices are the values kubespray asserts, with where it asserts them
	// (from Facts; the assert may apply only under conditions, see Asserts).
	Choices       []string `json:"choices,omitempty"`
	ChoicesSource string   `json:"choices_source,omitempty"`
}

// IsBool reports whether kubespray means the variable as a boolean
// (Type "bool"); false for nil.
func (v *Var) IsBool() bool { return v != nil && v.Type == scan.TypeBool }

// Catalogue is the set of variables of one kubespray version.
type Catalogue struct {
	// Name says which catalogue this is, e.g. "bundled kubespray master
	// 46dbdd3" or "kubespray checkout at /src/kubespray".
	Name string `json:"name"`
	// Version is the bundled version ("v2.31.0", "master"), "" for a checkout.
	Version string `json:"version,omitempty"`
	// StandsInFor is the patch release asked for when this bundled
	// catalogue of the same minor stands in for it (see BundledOrMinor).
	StandsInFor string `json:"stands_in_for,omitempty"`
	// Commit is the kubespray commit of a bundled catalogue, CommitDate
	// its date (ISO 8601) and Galaxy the version its galaxy.yml gives
	// ("2.32.0" for master when v2.32 was cut from it): what a branch
	// snapshot claims to become (see Claiming).
	Commit     string `json:"commit,omitempty"`
	CommitDate string `json:"commit_date,omitempty"`
	Galaxy     string `json:"galaxy_version,omitempty"`
	// Note, for a branch snapshot standing in for a release (StandsInFor),
	// says that the release itself was not read, and which snapshot was:
	// its date and commit (see SnapshotNote).
	Note string `json:"note,omitempty"`
	// Root is the checkout directory of a run-time catalogue, "" when bundled.
	Root string          `json:"root,omitempty"`
	Vars map[string]*Var `json:"vars"`
	// Removed maps variables kubespray no longer uses to what to do instead.
	Removed map[string]string `json:"removed,omitempty"`
	// Facts are the task-level facts (asserts, removed variables, known
	// booleans, dynamic groups) of the version, and where they were read.
	Facts *Facts `json:"-"`
	// Release holds the release's pinned component versions, ansible-core
	// range and asserts as generated (nil for a checkout without tasks).
	Release *Release `json:"-"`
	// Skipped names kubespray files not read, with why.
	Skipped []string `json:"skipped,omitempty"`
	// Deferred marks the bundled default not decoded yet: only Version,
	// Default and Why are set; Complete decodes it (see SelectDeferred).
	Deferred bool `json:"-"`
	// readBy is ReadBy's index (readByIndex).
	readBy map[string]string
	// Default is true for the bundled DefaultVersion taken because nothing
	// chose a release: no checkout holds the inventory, no version was
	// given, none was inferred (see ForInventory).
	Default bool `json:"-"`
	// Why says why this catalogue was chosen for a lint (set by
	// ForInventory and Select): the kubespray checkout the inventory lives
	// in, the version asked for and what it resolved to, or the bundled
	// default because no checkout holds the inventory.
	Why string `json:"why,omitempty"`
}

// Lookup returns the variable, or nil (also on a nil Catalogue).
func (c *Catalogue) Lookup(name string) *Var {
	if c == nil {
		return nil
	}
	return c.Vars[name]
}

// Asserts are the kubespray asserts the lint can check on inventory values,
// in kubespray's order (validate_inventory, then calico, cilium, OCI);
// nil for a catalogue without Facts.
func (c *Catalogue) Asserts() []Assert {
	if c == nil || c.Facts == nil {
		return nil
	}
	return c.Facts.Asserts
}

// Names returns the variable names, sorted.
func (c *Catalogue) Names() []string {
	out := make([]string, 0, len(c.Vars))
	for n := range c.Vars {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Versions lists the bundled kubespray versions, sorted ("master",
// "v2.31.0"), for a --kubespray-version flag.
func Versions() []string {
	ents, err := bundled.ReadDir(".")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if v, ok := strings.CutPrefix(n, "catalogue_"); ok {
			out = append(out, strings.TrimSuffix(v, ".bin.gz"))
		}
	}
	sort.Strings(out)
	return out
}

// Resolve maps what a user may write for a bundled version to its name:
// "" is DefaultVersion; "v2.31" or "2.31" is the newest bundled v2.31.x;
// "2.31.0" is "v2.31.0". Anything else is returned as given.
func Resolve(version string) string {
	if version == "" {
		return DefaultVersion
	}
	v := version
	if v != DefaultVersion && !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	newest := ""
	for _, b := range Versions() {
		if b == v {
			return b
		}
		if strings.HasPrefix(b, v+".") && strings.Count(v, ".") == 1 && (newest == "" || versionNewer(b, newest)) {
			newest = b
		}
	}
	if newest != "" {
		return newest
	}
	return version
}

// versionNewer compares "vX.Y.Z" release names numerically.
func versionNewer(a, b string) bool {
	pa := strings.Split(strings.TrimPrefix(a, "v"), ".")
	pb := strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x > y
		}
	}
	return len(pa) > len(pb)
}

// Bundled returns the catalogue of a bundled kubespray version (see
// Versions and Resolve: "v2.31" is the newest bundled v2.31.x); ""
// means DefaultVersion. Each call returns a fresh copy.
func Bundled(version string) (*Catalogue, error) {
	version = Resolve(version)
	b, err := bundled.ReadFile(scan.BinaryFileName(version))
	if err != nil {
		return nil, fmt.Errorf("no bundled kubespray catalogue for %q (have %s)", version, strings.Join(Versions(), ", "))
	}
	f, err := scan.DecodeBinaryGz(b) // numbers already as the loader gives them
	if err != nil {
		return nil, fmt.Errorf("bundled kubespray catalogue %s: %w", version, err)
	}
	fc := factsFor(version)
	if _, ok := facts[version]; !ok {
		fc = releaseFacts(f.Kubespray, f.Commit, f.Release)
	}
	c := build(fmt.Sprintf("bundled kubespray %s %.7s", f.Kubespray, f.Commit), f.Vars, fc)
	c.Version, c.Commit, c.Skipped, c.Release = f.Kubespray, f.Commit, f.Skipped, f.Release
	c.CommitDate, c.Galaxy = f.CommitDate, f.Galaxy
	return c, nil
}

// factsFor returns the facts of a bundled version, DefaultVersion's for
// anything else (a checkout of unknown version).
func factsFor(version string) *Facts {
	if f, ok := facts[version]; ok {
		return f()
	}
	return facts[DefaultVersion]()
}

// build makes the catalogue from definitions and applies the facts.
func build(name string, defs map[string][]Def, f *Facts) *Catalogue {
	c := &Catalogue{Name: name, Vars: make(map[string]*Var, len(defs)), Removed: map[string]string{}, Facts: f}
	for n, ds := range defs {
		if len(ds) == 0 {
			continue
		}
		p := ds[0]
		v := &Var{Name: n, Type: p.Type, Default: p.Default, File: p.File, Line: p.Line, Scope: p.Scope, Defs: ds}
		literal, inferred, sb := false, false, false
		for _, d := range ds {
			if d.Type == scan.TypeBool {
				if d.Inferred {
					inferred = true
				} else {
					literal = true
				}
			}
			sb = sb || d.StringBool
		}
		switch {
		case literal || inferred:
			v.Type, v.Inferred = scan.TypeBool, !literal
		case sb:
			v.StringBool = true
		}
		c.Vars[n] = v
	}
	for _, a := range f.Asserts {
		if a.Var == "" || len(a.Choices) == 0 {
			continue
		}
		if v := c.Vars[a.Var]; v != nil && v.Choices == nil {
			v.Choices, v.ChoicesSource = a.Choices, a.Source
		}
	}
	// A variable this kubespray still defines is not removed in it; one its
	// defaults still template in is deprecated but read.
	kept := f.Removed[:0]
	for _, r := range f.Removed {
		if c.Vars[r.Name] == nil {
			r.ReadBy = c.ReadBy(r.Name)
			kept = append(kept, r)
			c.Removed[r.Name] = r.Instead
		}
	}
	f.Removed = kept
	return c
}

// ReadBy names the first variable (by name) whose templated default
// mentions name as a whole word, with its file:line ("ipv6_stack
// (roles/kubespray_defaults/defaults/main/main.yml:260)"); "" when none
// does. Such a name is still read although the catalogue defines no
// default for it (enable_dual_stack_networks from v2.28.1).
func (c *Catalogue) ReadBy(name string) string {
	if wordOnly.MatchString(name) {
		return c.readByIndex()[name]
	}
	return c.readByScan(name)
}

// readByScan is ReadBy as a scan of every templated default with a regular
// expression: for names the index cannot hold, and what the index must
// give for the others.
func (c *Catalogue) readByScan(name string) string {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
	var hits []string
	for n, v := range c.Vars {
		for _, d := range v.Defs {
			if s, ok := d.Default.(string); ok && strings.Contains(s, "{{") && re.MatchString(s) {
				hits = append(hits, fmt.Sprintf("%s (%s:%d)", n, d.File, d.Line))
				break
			}
		}
	}
	if len(hits) == 0 {
		return ""
	}
	sort.Strings(hits)
	return hits[0]
}

// wordOnly matches a name of word characters only, which `\bname\b` finds
// exactly where it is a whole run of word characters.
var (
	wordOnly = regexp.MustCompile(`^\w+$`)
	readByMu sync.Mutex
)

// wordRuns yields the runs of word characters of s, as the regexp \w+
// finds them (ASCII letters, digits and _), without a regexp: the index
// scans every templated default of the release at the lint's start.
func wordRuns(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start := -1
		for i := 0; i <= len(s); i++ {
			if i < len(s) && isWordByte(s[i]) {
				if start < 0 {
					start = i
				}
				continue
			}
			if start >= 0 {
				if !yield(s[start:i]) {
					return
				}
				start = -1
			}
		}
	}
}

func isWordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// readByIndex is ReadBy for every name at once, built on first use: per
// run of word characters in a templated default, the smallest
// "variable (file:line)" of the first definition of each variable that
// mentions it.
func (c *Catalogue) readByIndex() map[string]string {
	readByMu.Lock()
	defer readByMu.Unlock()
	if c.readBy != nil {
		return c.readBy
	}
	idx := map[string]string{}
	for n, v := range c.Vars {
		seen := map[string]bool{}
		for _, d := range v.Defs {
			s, ok := d.Default.(string)
			if !ok || !strings.Contains(s, "{{") {
				continue
			}
			hit := ""
			for w := range wordRuns(s) {
				if seen[w] {
					continue
				}
				seen[w] = true
				if hit == "" {
					hit = fmt.Sprintf("%s (%s:%d)", n, d.File, d.Line)
				}
				if old, ok := idx[w]; !ok || hit < old {
					idx[w] = hit
				}
			}
		}
	}
	c.readBy = idx
	return idx
}

// ApplyDynamicGroups adds the groups kubespray's playbooks create at run
// time with group_by (legacy names, k8s_cluster), so resolved host
// variables see group_vars/k8s_cluster as a kubespray run does.
//
// It mirrors roles/dynamic_groups/tasks/main.yml (the same in v2.31.0 and
// master; see DynamicGroups): for every host, each mapping whose source
// groups intersect the host's group_names as they were before the task
// (direct groups and their ancestors) adds the host to the mapping's
// group, created as a child of "all" when missing. As in Ansible, a host
// only in the legacy "kube-node" group lands in kube_node but not in
// k8s_cluster: the loop sees group_names from before the task. A nil
// inventory is a no-op.
func ApplyDynamicGroups(inv *parser.Inventory) {
	if inv == nil {
		return
	}
	type add struct {
		group string
		host  *parser.Host
	}
	var adds []add
	// the groups a host lands in depend on its direct groups only: hosts
	// in a row with the same ones (a host range) share them
	var lastDirect []*parser.Group
	var lastTo []string
	for i, h := range inv.Hosts {
		if i == 0 || !slices.Equal(h.Groups, lastDirect) {
			names := groupNames(h)
			lastDirect, lastTo = h.Groups, nil
			for _, m := range dynamicGroups {
				for _, from := range m.From {
					if names[from] {
						lastTo = append(lastTo, m.Group)
						break
					}
				}
			}
		}
		for _, g := range lastTo {
			adds = append(adds, add{g, h})
		}
	}
	for _, a := range adds {
		g := inv.AddGroup(a.group)
		if g != nil {
			inv.AddHostToGroup(g, a.host)
		}
	}
}

// DynamicGroups returns the mappings of kubespray's dynamic_groups role,
// in order (the same for every bundled version).
func DynamicGroups() []GroupMapping {
	out := make([]GroupMapping, len(dynamicGroups))
	for i, m := range dynamicGroups {
		out[i] = GroupMapping{Group: m.Group, From: append([]string(nil), m.From...)}
	}
	return out
}

// groupNames is Ansible's group_names magic variable as a set: the host's
// groups and all their ancestors, without "all" and "ungrouped".
func groupNames(h *parser.Host) map[string]bool {
	seen := map[string]bool{}
	var walk func(g *parser.Group)
	walk = func(g *parser.Group) {
		if g == nil || seen[g.Name] {
			return
		}
		seen[g.Name] = true
		for _, p := range g.Parents {
			walk(p)
		}
	}
	for _, g := range h.Groups {
		walk(g)
	}
	delete(seen, "all")
	delete(seen, "ungrouped")
	return seen
}

// Defining lists the bundled releases whose catalogue defines name, oldest
// first ("master" last), for a variable the catalogue in use lacks: was it
// removed, or is it newer? It reads the release index (Index), no
// catalogue; DefinedIn says where a release defines it.
func Defining(name string) []string {
	x, err := Index()
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(x.Vars[name]))
	for _, i := range x.Vars[name] {
		out = append(out, x.Releases[i])
	}
	return out
}

var (
	definedInMu sync.Mutex
	definedIn   = map[string]map[string]string{}
)

// DefinedIn is the kubespray file of name's primary default in the bundled
// release version, "" when it does not define it. The first call for a
// release reads its catalogue (variable names and files only); later
// calls reuse it.
func DefinedIn(version, name string) string {
	definedInMu.Lock()
	defer definedInMu.Unlock()
	files, ok := definedIn[version]
	if !ok {
		if b, err := bundled.ReadFile(scan.BinaryFileName(version)); err == nil {
			if f, err := scan.DecodeBinaryGz(b); err == nil {
				files = make(map[string]string, len(f.Vars))
				for n, ds := range f.Vars {
					if len(ds) > 0 {
						files[n] = ds[0].File
					}
				}
			}
		}
		definedIn[version] = files
	}
	return files[name]
}

// ReleaseOrder is Versions oldest first, "master" (the newest) last.
func ReleaseOrder() []string {
	vs := Versions()
	sort.SliceStable(vs, func(i, j int) bool {
		if vs[i] == DefaultVersion || vs[j] == DefaultVersion {
			return vs[j] == DefaultVersion && vs[i] != DefaultVersion
		}
		return versionNewer(vs[j], vs[i])
	})
	return vs
}
