package kubespray

import (
	"regexp"
	"sort"
	"strings"

	"github.com/layercheck/layercheck/kubespray/internal/jinja"
	"github.com/layercheck/layercheck/kubespray/internal/scan"
)

// Guard is one condition kubespray must find true before it reads a
// variable at a site (scan.Guard): the condition as written, its
// file:line, and its kind (GuardTemplate, GuardRole, GuardTask, GuardIf).
type Guard = scan.Guard

// GuardedRead is one site reading a variable with the guards that must
// all hold for the read to happen (scan.GuardedRead).
type GuardedRead = scan.GuardedRead

// Kinds of Guard.
const (
	GuardTemplate = scan.GuardTemplate
	GuardRole     = scan.GuardRole
	GuardTask     = scan.GuardTask
	GuardIf       = scan.GuardIf
)

// Guarded returns the sites reading name when kubespray reads it only
// under conditions (generated from the release's tasks, meta and
// templates: scan.ReadGuards); nil when some read is unconditional, not
// modelled, or the catalogue has no such table.
func (c *Catalogue) Guarded(name string) []GuardedRead {
	if c == nil || c.Release == nil {
		return nil
	}
	return c.Release.Guarded[name]
}

// GuardedNames lists the variables Guarded knows, sorted.
func (c *Catalogue) GuardedNames() []string {
	if c == nil || c.Release == nil {
		return nil
	}
	out := make([]string, 0, len(c.Release.Guarded))
	for n := range c.Release.Guarded {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// EvalGuard evaluates g's condition on host h as the play would, with
// the host's values, the role vars and defaults of kubespray_defaults and
// of the guard's role (playEnv), and the versions kubespray computes
// from its checksums ("{{ (containerd_archive_checksums['amd64'] |
// dict2items)[0].key }}"). known is false for anything only a run gives.
func (c *Catalogue) EvalGuard(g Guard, h PlayHost) (b, known bool) {
	env := &guardEnv{playEnv: &playEnv{c: c, h: h, role: roleDirOf(g.Source)}}
	b, known, failed := truth(g.Expr, env, nil)
	if failed != "" {
		return false, false
	}
	return b, known
}

// roleDirOf is the role directory of a file:line in a role
// ("roles/container-engine/containerd/"), "" outside roles.
func roleDirOf(source string) string {
	for _, d := range []string{"/tasks/", "/meta/", "/templates/", "/handlers/", "/defaults/", "/vars/"} {
		if i := strings.Index(source, d); i >= 0 && strings.HasPrefix(source, "roles/") {
			return source[:i+1]
		}
	}
	return ""
}

type guardEnv struct {
	*playEnv
}

// checksumsFirstRE is the default of a pinned component: the newest
// version its checksums list.
var checksumsFirstRE = regexp.MustCompile(`^\{\{\s*\(\s*(\w+)\['(\w+)'\]\s*\|\s*dict2items\s*\)\[0\]\.key\s*\}\}$`)

// Lookup implements jinja.Env: playEnv's, with the computed
// component versions.
func (e *guardEnv) Lookup(name string) any {
	set := false
	if e.h.Lookup != nil {
		_, set = e.h.Lookup(name)
	}
	if _, roleVar := e.def(name, scan.ScopeVars); !set && !roleVar {
		if d, ok := e.def(name, scan.ScopeDefaults); ok {
			if s, ok := d.(string); ok {
				if m := checksumsFirstRE.FindStringSubmatch(strings.TrimSpace(s)); m != nil && e.c.Release != nil {
					if vs := e.c.Release.Checksums[m[1]][m[2]]; len(vs) > 0 {
						return vs[0]
					}
					return jinja.Unknown{Why: "the checksums of " + m[1]}
				}
			}
		}
	}
	return e.playEnv.Lookup(name)
}

// EvalGuardValue is the value of expr (a variable's name) on host h as
// EvalGuard sees it for a guard at source: what a finding shows of the
// condition's inputs. ok is false for what only a run gives.
func (c *Catalogue) EvalGuardValue(expr, source string, h PlayHost) (any, bool) {
	env := &guardEnv{playEnv: &playEnv{c: c, h: h, role: roleDirOf(source)}}
	n, err := parse(expr)
	if err != nil {
		return nil, false
	}
	v := jinja.Eval(n, env, nil)
	switch v.(type) {
	case jinja.Unknown, jinja.Undefined, jinja.Failed:
		return nil, false
	}
	return v, true
}
