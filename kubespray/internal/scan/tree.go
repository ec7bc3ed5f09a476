// Package scan reads kubespray's own variable data (role defaults, role
// vars and the sample inventory's group_vars) into per-variable
// definitions. The generator of the bundled catalogues and the run-time
// loader of a user's kubespray checkout both use it, so the types agree.
package scan

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Scopes of a definition, in the order Catalogue picks the primary one.
const (
	// ScopeDefaults is a role's defaults/ (lowest precedence: inventory overrides it).
	ScopeDefaults = "role-defaults"
	// ScopeVars is a role's vars/ (main, or an OS file loaded by include_vars):
	// it beats inventory group_vars/host_vars, only extra vars override it.
	ScopeVars = "role-vars"
	// ScopeSample is kubespray's inventory/sample/group_vars: what an
	// inventory copied from the sample sets.
	ScopeSample = "inventory-sample"
)

// MaxDefaultBytes caps the JSON size of a list or dict default kept in a
// definition (the checksum tables are hundreds of kilobytes); larger ones
// keep their type and location, and DefaultOmitted says so.
const MaxDefaultBytes = 1024

// Def is one definition of a variable in a kubespray tree.
type Def struct {
	// Type is the Python type of the value as Ansible loads it (bool, str,
	// int, float, list, dict, NoneType, date, datetime, vault), or
	// "templated" for a string holding Jinja; "bool" for a templated value
	// whose expression is boolean (Inferred is then true).
	Type string `json:"type"`
	// Inferred is true when Type "bool", or StringBool on a templated
	// value, was inferred from the Jinja expression.
	Inferred bool `json:"inferred,omitempty"`
	// StringBool is true for a str value spelling a boolean (true/false,
	// yes/no, on/off in any case), and for a templated value that always
	// renders to one ("{{ 'true' if c else 'false' }}", "{{ (a == b) | lower }}").
	StringBool bool `json:"string_bool,omitempty"`
	// Default is the value, JSON-compatible; nil with DefaultOmitted for a
	// list or dict larger than MaxDefaultBytes.
	Default        any  `json:"default"`
	DefaultOmitted bool `json:"default_omitted,omitempty"`
	// File is relative to the kubespray tree, slash-separated, e.g.
	// "roles/kubespray_defaults/defaults/main/main.yml"; Line is 1-based.
	File  string `json:"file"`
	Line  int    `json:"line"`
	Scope string `json:"scope"`
}

// Tree is what a kubespray tree defines.
type Tree struct {
	// Defs maps a variable name to its definitions, ordered by scope
	// (role-defaults, role-vars, inventory-sample), then file, then line.
	Defs map[string][]Def
	// Files are the vars files read, relative and sorted.
	Files []string
	// Skipped names files not read as vars files, with why (e.g. a
	// symlink stored as a plain text file holding the link target).
	Skipped []string
}

// IsVarsFile reports whether rel (slash-separated, relative to a kubespray
// tree) is a file Ansible reads variables from: YAML or JSON under a
// role's defaults/ or vars/ directory (roles nest, e.g.
// roles/kubernetes/node/defaults/main.yml), or under
// inventory/sample/group_vars/. It returns the scope.
func IsVarsFile(rel string) (string, bool) {
	ext := path.Ext(rel)
	if ext != ".yml" && ext != ".yaml" && ext != ".json" {
		return "", false
	}
	if strings.HasPrefix(rel, "inventory/sample/group_vars/") {
		return ScopeSample, true
	}
	parts := strings.Split(rel, "/")
	if len(parts) < 4 || parts[0] != "roles" {
		return "", false
	}
	for i := 2; i < len(parts)-1; i++ {
		switch parts[i] {
		case "defaults":
			return ScopeDefaults, true
		case "vars":
			return ScopeVars, true
		case "tasks", "templates", "files", "handlers", "meta", "molecule", "library", "filter_plugins", "test", "tests":
			return "", false
		}
	}
	return "", false
}

// Load reads the vars files of the kubespray tree at root (a checkout, or a
// copy holding only roles/*/defaults, roles/*/vars and inventory/sample)
// and infers boolean templated defaults. Errors name file:line.
func Load(root string) (*Tree, error) {
	t := &Tree{Defs: map[string][]Def{}}
	type fileEntries struct {
		rel, scope string
		entries    []Entry
	}
	var files []fileEntries
	for _, top := range []string{"roles", filepath.Join("inventory", "sample", "group_vars")} {
		dir := filepath.Join(root, top)
		if _, err := os.Stat(dir); err != nil {
			if top == "roles" {
				return nil, fmt.Errorf("kubespray tree %s: %w", root, err)
			}
			continue
		}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); p != dir && (strings.HasPrefix(n, ".") || n == "molecule") {
					return filepath.SkipDir
				}
				return nil
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			scope, ok := IsVarsFile(rel)
			if !ok {
				return nil
			}
			data, err := os.ReadFile(p) // follows symlinks, as Ansible does
			if err != nil {
				return err
			}
			if target, ok := symlinkStandIn(p, data); ok {
				t.Skipped = append(t.Skipped, rel+": symlink stand-in for "+target)
				return nil
			}
			entries, err := LoadVarsYAML(rel, data)
			if err != nil {
				return err
			}
			files = append(files, fileEntries{rel, scope, entries})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		t.Files = append(t.Files, f.rel)
		for _, e := range f.entries {
			d := Def{Type: e.Value.Type, Default: e.Value.Data, File: f.rel, Line: e.Line, Scope: f.scope}
			if s, ok := e.Value.Data.(string); ok && d.Type == TypeStr {
				if IsTemplated(s) && !e.Value.Unsafe {
					d.Type = TypeTemplated
				} else {
					d.StringBool = SpellsBool(s)
				}
			}
			if d.Type == TypeList || d.Type == TypeDict {
				if b, err := json.Marshal(d.Default); err != nil || len(b) > MaxDefaultBytes {
					d.Default, d.DefaultOmitted = nil, true
				}
			}
			t.Defs[e.Name] = append(t.Defs[e.Name], d)
		}
	}
	sort.Strings(t.Files)
	sort.Strings(t.Skipped)
	for _, defs := range t.Defs {
		sort.SliceStable(defs, func(i, j int) bool { return defLess(defs[i], defs[j]) })
	}
	t.inferBools()
	return t, nil
}

// SpellsBool reports whether s spells a YAML 1.1 boolean (true/false,
// yes/no, on/off, any case): a str default written like this is a
// boolean kubespray deliberately keeps as a string.
func SpellsBool(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "false", "yes", "no", "on", "off":
		return true
	}
	return false
}

func scopeRank(d Def) int {
	switch {
	case d.Scope == ScopeDefaults && IsDefaultsRole(d.File):
		return 0
	case d.Scope == ScopeDefaults:
		return 1
	case d.Scope == ScopeVars:
		return 2
	}
	return 3
}

func defLess(a, b Def) bool {
	if ra, rb := scopeRank(a), scopeRank(b); ra != rb {
		return ra < rb
	}
	if a.File != b.File {
		return a.File < b.File
	}
	return a.Line < b.Line
}

// inferBools turns templated definitions whose expression is boolean into
// bool (Inferred), repeating until nothing changes so that
// "{{ other_var }}" follows other_var once that is known to be a bool; then
// marks templated definitions that render a str spelling a boolean
// (StringBool, Inferred).
func (t *Tree) inferBools() {
	kindOf := func(self string) KindOf {
		return func(name string) VarKind {
			if name == self {
				return KindOther // a self-reference proves nothing
			}
			defs, ok := t.Defs[name]
			if !ok {
				return KindUndefined
			}
			for _, d := range defs {
				if d.Type == TypeBool {
					return KindBool
				}
			}
			return KindOther
		}
	}
	names := make([]string, 0, len(t.Defs))
	for n := range t.Defs {
		names = append(names, n)
	}
	sort.Strings(names)
	for changed := true; changed; {
		changed = false
		for _, n := range names {
			defs := t.Defs[n]
			for i := range defs {
				s, ok := defs[i].Default.(string)
				if defs[i].Type != TypeTemplated || !ok {
					continue
				}
				if InferBool(s, kindOf(n)) {
					defs[i].Type, defs[i].Inferred = TypeBool, true
					changed = true
				}
			}
		}
	}
	for _, n := range names {
		defs := t.Defs[n]
		for i := range defs {
			if s, ok := defs[i].Default.(string); ok && defs[i].Type == TypeTemplated && InferStringBool(s, kindOf(n)) {
				defs[i].StringBool, defs[i].Inferred = true, true
			}
		}
	}
}

// symlinkStandIn recognises a git symlink checked out as a plain file (a
// copy made without symlink support): the whole content is the relative
// name of a sibling vars file that exists.
func symlinkStandIn(p string, data []byte) (string, bool) {
	s := strings.TrimSpace(string(data))
	if s == "" || strings.ContainsAny(s, "\n:{}[] ") || path.Ext(s) != path.Ext(filepath.Base(p)) {
		return "", false
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(p), filepath.FromSlash(s))); err != nil {
		return "", false
	}
	return s, true
}

// DefaultsRoles are the names of kubespray's defaults role: kubespray_defaults
// since v2.28, kubespray-defaults before.
var DefaultsRoles = []string{"kubespray_defaults", "kubespray-defaults"}

// IsDefaultsRole reports whether rel (relative to the checkout) lies in
// kubespray's defaults role.
func IsDefaultsRole(rel string) bool {
	for _, r := range DefaultsRoles {
		if strings.HasPrefix(rel, "roles/"+r+"/") {
			return true
		}
	}
	return false
}
