package lint

import (
	"fmt"
	"strings"
	"sync"

	"github.com/layercheck/layercheck/clusterstate"
	"github.com/layercheck/layercheck/kubespray"
)

func init() {
	registerRule("upgrade-from", SeverityInfo,
		"with the live cluster and no --upgrade-from: the kubespray release whose default Kubernetes the control plane runs is taken as the release upgraded from (or why that cannot be told)",
		func(c *checkCtx) []Finding {
			if c.upgradeNote == nil {
				return nil
			}
			return []Finding{*c.upgradeNote}
		})
	// the release the cluster runs, once the target release is known
	registerStep("upgrade-from", phasePrepare, func(c *checkCtx, _ *Report) {
		if c.in.UpgradeFrom == nil && c.in.Cluster != nil {
			c.in.UpgradeFrom, c.upgradeNote = inferUpgradeFrom(c.in.Cluster, c.in.Catalogue)
		}
	})
}

// releaseDefaults maps each bundled release to the Kubernetes version it
// installs by default (kube_version's literal default, or the newest
// kubelet checksum its template picks), read once per process.
var releaseDefaults = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	for _, v := range kubespray.ReleaseOrder() {
		cat, err := kubespray.Bundled(v)
		if err != nil || cat.Release == nil {
			continue
		}
		if kv := cat.Lookup("kube_version"); kv != nil {
			if s, ok := kv.Default.(string); ok && !strings.Contains(s, "{{") {
				out[v] = s
				continue
			}
		}
		if comp := cat.Release.Components["kube_version"]; comp != nil && len(comp.Versions) > 0 {
			out[v] = comp.Versions[0]
		}
	}
	return out
})

// inferUpgradeFrom names, for a cluster and no --upgrade-from, the bundled
// release that installs the Kubernetes minor the control plane runs by
// default; the note says what was inferred, or why nothing could be. The
// release is nil when it is the target itself (a re-run) or unknown.
func inferUpgradeFrom(st *clusterstate.State, target *kubespray.Catalogue) (*kubespray.Catalogue, *Finding) {
	note := &Finding{Rule: "upgrade-from", Severity: SeverityInfo,
		Fix: "pass --upgrade-from RELEASE (the lint role's layercheck_lint_upgrade_from) naming the kubespray release the cluster was installed or last upgraded with"}
	cp, what, ok := controlPlaneVersion(st)
	if !ok {
		note.Message = "cannot tell which kubespray release installed the cluster: no control-plane version could be read (kube-apiserver static pods, GET /version); the upgrade-* rules are not applied"
		return nil, note
	}
	var found []string
	defaults := releaseDefaults()
	for _, v := range kubespray.ReleaseOrder() {
		if dv, ok := parseKver(defaults[v]); ok && dv[0] == cp[0] && dv[1] == cp[1] {
			found = append(found, v)
		}
	}
	if len(found) == 0 {
		note.Message = fmt.Sprintf("cannot tell which kubespray release installed the cluster: its control plane runs Kubernetes %s (%s), the default of no bundled release; the upgrade-* rules are not applied", cp, what)
		return nil, note
	}
	from := found[len(found)-1]
	if target != nil && from == target.Version {
		return nil, nil // the target release's own Kubernetes: a re-run
	}
	cat, err := kubespray.Bundled(from)
	if err != nil {
		return nil, nil
	}
	note.Message = fmt.Sprintf("no --upgrade-from: the control plane runs Kubernetes %s (%s), kubespray %s's default (%s): the upgrade-* rules judge an upgrade from %s",
		cp, what, from, defaults[from], from)
	return cat, note
}
