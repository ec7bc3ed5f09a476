package kubespray

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/layercheck/layercheck/kubespray/internal/scan"
)

// FindCheckout walks up from an inventory source (a file or directory, as
// given to -i) looking for a kubespray checkout: a directory holding
// roles/kubespray_defaults/defaults (roles/kubespray-defaults/defaults
// before v2.28). It tries the path as given, then with
// symlinks resolved (an inventory linked into a checkout). It returns the
// checkout's absolute path, or "" when the source is not inside one.
func FindCheckout(source string) (string, error) {
	abs, err := filepath.Abs(source)
	if err != nil {
		return "", err
	}
	if dir := walkUp(abs); dir != "" {
		return dir, nil
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		return walkUp(real), nil
	}
	return "", nil
}

func walkUp(abs string) string {
	dir := abs
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		dir = filepath.Dir(abs)
	}
	for {
		for _, r := range scan.DefaultsRoles {
			st, err := os.Stat(filepath.Join(dir, "roles", r, "defaults"))
			if err == nil && st.IsDir() {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Checkout loads the catalogue of the kubespray checkout at dir with the
// code that generates the bundled catalogues, so the types are those of
// the kubespray version the user runs. The task-level facts start from
// DefaultVersion's; the allowed values of choice asserts and the removed
// variables are then taken from the checkout's own task files
// (roles/validate_inventory/tasks/main.yml and the calico and cilium
// check.yml) where present. Errors name file:line.
func Checkout(dir string) (*Catalogue, error) {
	t, err := scan.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("kubespray checkout at %s: %w", dir, err)
	}
	f := factsFor("")
	a, err := scan.ReadAsserts(dir)
	if err != nil {
		return nil, fmt.Errorf("kubespray checkout at %s: %w", dir, err)
	}
	mergeCheckoutAsserts(f, a, dir)
	rel, err := scan.ReadRelease(dir, dir, t.Defs)
	if err != nil {
		return nil, fmt.Errorf("kubespray checkout at %s: %w", dir, err)
	}
	if rel.Guarded, err = scan.ReadGuards(dir, t.Defs); err != nil {
		return nil, fmt.Errorf("kubespray checkout at %s: %w", dir, err)
	}
	if rel.AnsibleMin != "" {
		f.AnsibleMin, f.AnsibleMax, f.AnsibleSource = rel.AnsibleMin, rel.AnsibleMax, rel.AnsibleSource
	}
	c := build("kubespray checkout at "+dir, t.Defs, f)
	c.Root, c.Skipped, c.Release = dir, t.Skipped, rel
	// the release the checkout is (what the known-bug rule matches); a
	// tree without galaxy.yml leaves it unknown
	if g, err := scan.GalaxyVersion(dir); err == nil {
		c.Galaxy = g
	}
	return c, nil
}

// mergeCheckoutAsserts makes the facts say what the checkout's own task
// files say: the allowed values (and their lines) of the choice asserts
// found there, new choices of validate_inventory's "Stop if unsupported
// options selected", and its removed_vars list.
func mergeCheckoutAsserts(f *Facts, a *scan.Asserts, dir string) {
	for _, ch := range a.Choices {
		matched := false
		for i := range f.Asserts {
			as := &f.Asserts[i]
			if as.ID != "choice:"+ch.Var || as.Task != ch.Task {
				continue
			}
			as.Choices = ch.Values
			as.That = []Cond{{Var: ch.Var, Op: OpIn, Values: anys(ch.Values...)}}
			as.Expr, as.Source = ch.Expr, ch.Source
			matched = true
		}
		if !matched && ch.Task == unsupportedTask {
			f.Asserts = append(f.Asserts, choice(ch.Var, ch.Values, nil, ch.Expr, unsupportedMsg, unsupportedTask, ch.Source))
		}
	}
	if !a.RemovedFound {
		return
	}
	listed := map[string]scan.RemovedItem{}
	for _, r := range a.Removed {
		listed[r.Name] = r
	}
	var out []Removed
	for _, r := range f.Removed {
		fromList := strings.HasPrefix(r.Msg, removedMsgPrefix)
		item, ok := listed[r.Name]
		switch {
		case fromList && !ok:
			continue // this kubespray does not stop on it
		case ok:
			r.Source = item.Source
			delete(listed, r.Name)
		}
		out = append(out, r)
	}
	for _, item := range a.Removed {
		if _, ok := listed[item.Name]; !ok {
			continue
		}
		out = append(out, Removed{Name: item.Name, Stops: true,
			Instead: "delete it: the kubespray checkout at " + dir + " no longer reads it",
			Msg:     removedMsgPrefix + item.Name, Source: item.Source})
	}
	f.Removed = out
}

// ForInventory returns the catalogue for inventory sources (-i
// arguments): the kubespray checkout the first source inside one lives in
// (see FindCheckout and Checkout), else the checkout kept beside the
// first source's repository (a git submodule or directory named kubespray
// in it, or a sibling directory kubespray: FindBeside), else the bundled
// DefaultVersion. Why says which and, for a checkout, why it was taken.
func ForInventory(sources []string) (*Catalogue, error) {
	c, err := forInventory(sources, false)
	if err != nil || !c.Deferred {
		return c, err
	}
	return c.Complete()
}

// forInventory is ForInventory; with deferred, the bundled default is not
// decoded (see Deferred).
func forInventory(sources []string, deferred bool) (*Catalogue, error) {
	for _, s := range sources {
		dir, err := FindCheckout(s)
		if err != nil {
			return nil, err
		}
		if dir != "" {
			c, err := Checkout(dir)
			if err != nil {
				return nil, err
			}
			c.Why = fmt.Sprintf("chosen because the inventory %s lives in this checkout", s)
			return c, nil
		}
	}
	note := ""
	for _, s := range sources {
		dir, why, n := FindBeside(s)
		if dir != "" {
			c, err := Checkout(dir)
			if err != nil {
				return nil, err
			}
			c.Why = why
			return c, nil
		}
		if note == "" {
			note = n
		}
	}
	why := "the default, as the inventory lives in no kubespray checkout"
	if note != "" {
		why += " and " + note
	}
	if deferred {
		// the lint infers the release from the release index: decode it
		// while the inventory is read
		go func() { _, _ = Index() }()
		return &Catalogue{Version: DefaultVersion, Default: true, Deferred: true, Why: why}, nil
	}
	c, err := Bundled(DefaultVersion)
	if err != nil {
		return nil, err
	}
	c.Why = why
	c.Default = true
	return c, nil
}

// Complete returns the catalogue itself, or for a Deferred one the bundled
// catalogue it stands for, with its Why.
func (c *Catalogue) Complete() (*Catalogue, error) {
	if !c.Deferred {
		return c, nil
	}
	full, err := Bundled(c.Version)
	if err != nil {
		return nil, err
	}
	full.Why, full.Default = c.Why, c.Default
	return full, nil
}

// Select returns the catalogue a lint uses: with version set, the bundled
// one it names (see Resolve), Why naming the option (option, e.g.
// "--kubespray-version") and the release it resolved to; else
// ForInventory(sources).
func Select(version, option string, sources []string) (*Catalogue, error) {
	return selectCatalogue(version, option, sources, false)
}

// SelectDeferred is Select, except that the bundled default is returned
// Deferred, undecoded: a lint that infers the inventory's release from
// what it pins never decodes it (lint.Run completes it otherwise).
func SelectDeferred(version, option string, sources []string) (*Catalogue, error) {
	return selectCatalogue(version, option, sources, true)
}

func selectCatalogue(version, option string, sources []string, deferred bool) (*Catalogue, error) {
	if version == "" {
		if deferred {
			return forInventory(sources, true)
		}
		return ForInventory(sources)
	}
	c, err := BundledOrMinor(version)
	if err != nil {
		return nil, err
	}
	c.Why = "chosen with " + option + " " + version
	switch r := Resolve(version); {
	case c.StandsInFor != "" && !IsRelease(c.Version):
		c.Why += ", which is not bundled: the newest bundled catalogue whose galaxy.yml claims " + askedMinor(version)
	case c.StandsInFor != "":
		c.Why += fmt.Sprintf(", which is not bundled: %s, the bundled %s.x, stands in (patch releases keep the variables; pinned component versions may differ)",
			c.Version, c.Version[:strings.LastIndexByte(c.Version, '.')])
	case r != version && r != "v"+version:
		c.Why += ", the newest bundled v" + strings.TrimPrefix(version, "v") + ".x"
	}
	return c, nil
}

// BundledOrMinor is Bundled, except that a patch release that is not
// bundled (v2.29.0) gets the newest bundled release of its minor
// (v2.29.1), with StandsInFor set to the version asked for; and a release
// of a minor no bundled release has (v2.32.0, v2.32) gets the bundled
// branch snapshot whose galaxy.yml claims that minor (Claiming), with
// StandsInFor and a Note saying that the release itself was not read.
func BundledOrMinor(version string) (*Catalogue, error) {
	c, err := Bundled(version)
	if err == nil {
		return c, nil
	}
	v := "v" + strings.TrimPrefix(version, "v")
	if strings.Count(v, ".") == 2 {
		if sub, err2 := Bundled(v[:strings.LastIndexByte(v, '.')]); err2 == nil {
			sub.StandsInFor = version
			return sub, nil
		}
	}
	if snap := Claiming(version); snap != "" {
		c, err2 := Bundled(snap)
		if err2 != nil {
			return nil, err2
		}
		c.StandsInFor, c.Note = version, SnapshotNote(c, version)
		return c, nil
	}
	return nil, err
}
