package lint

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/kubespray"
)

// Upgrade mode (Input.UpgradeFrom): what changes for this inventory when
// the cluster moves from the release of UpgradeFrom to the release of
// Catalogue. The normal rules already judge every value against the
// target; these say what the move itself changes.
//
//	upgrade-path            error    a skip of more than one kubespray minor (kubespray upgrades one minor at a time)
//	upgrade-removed         warning  a variable the inventory sets that the target no longer defines (with kubespray's own advice when it has one)
//	upgrade-default-changed warning  a setting the inventory leaves to kubespray whose default changes (info for component versions)
//	upgrade-ansible         info     the ansible-core range to move to
func init() {
	registerRule("upgrade-path", SeverityError,
		"--upgrade-from: a skip of more than one kubespray minor release (kubespray's upgrade path goes one minor at a time)", checkUpgradePath)
	registerRule("upgrade-removed", SeverityWarning,
		"--upgrade-from: a variable the inventory sets that the target release no longer defines", checkUpgradeRemoved)
	registerRule("upgrade-default-changed", SeverityWarning,
		"--upgrade-from: a setting the inventory leaves to kubespray whose default changes in the target release (info for component versions)", checkUpgradeDefaults)
	registerRule("upgrade-ansible", SeverityInfo,
		"--upgrade-from: the ansible-core range the target release requires, when it differs", checkUpgradeAnsible)
}

// minorOfRelease gives a release's minor, e.g. 31 for v2.31.0; master is
// taken as the minor after the newest bundled release (kubespray cuts the
// next release from it). ok is false for an unknown name.
func minorOfRelease(version string) (int, bool) {
	if version == kubespray.DefaultVersion {
		newest := 0
		for _, v := range kubespray.Versions() {
			if v == kubespray.DefaultVersion {
				continue
			}
			if m, ok := minorOfRelease(v); ok && m > newest {
				newest = m
			}
		}
		return newest + 1, newest > 0
	}
	parts := strings.Split(strings.TrimPrefix(version, "v"), ".")
	if len(parts) < 2 {
		return 0, false
	}
	m, err := strconv.Atoi(parts[1])
	return m, err == nil
}

func checkUpgradePath(c *checkCtx) []Finding {
	from := c.in.UpgradeFrom
	if from == nil {
		return nil
	}
	fm, ok1 := minorOfRelease(from.Version)
	tm, ok2 := minorOfRelease(c.cat.Version)
	if !ok1 || !ok2 {
		return nil
	}
	f := Finding{Rule: "upgrade-path", Severity: SeverityError}
	switch {
	case tm < fm:
		f.Message = fmt.Sprintf("kubespray %s is older than %s: this is a downgrade", c.cat.Version, from.Version)
		f.Why = "kubespray's upgrade-cluster.yml does not downgrade a cluster."
		f.Fix = "pick a target release newer than the one the cluster runs"
	case tm-fm > 1:
		var steps []string
		for m := fm + 1; m <= tm; m++ {
			steps = append(steps, releaseOfMinor(m))
		}
		f.Message = fmt.Sprintf("upgrading from kubespray %s to %s skips %d minor release(s)", from.Version, c.cat.Version, tm-fm-1)
		f.Why = "kubespray's upgrade guide: \"Attempting to upgrade from an older release straight to the latest release is unsupported and likely to break something\" (its Multiple Upgrades section goes one release at a time); each release's supported Kubernetes versions start where the previous release's end."
		f.Fix = "upgrade through " + strings.Join(steps, " → ") + ", running upgrade-cluster.yml with each"
	default:
		return nil
	}
	return []Finding{f}
}

// releaseOfMinor names the bundled release of minor m ("v2.27.1"), or
// "v2.<m>" when none is bundled.
func releaseOfMinor(m int) string {
	best := ""
	for _, v := range kubespray.Versions() {
		if v == kubespray.DefaultVersion {
			continue
		}
		if vm, ok := minorOfRelease(v); ok && vm == m {
			best = v
		}
	}
	if best == "" {
		if mm, _ := minorOfRelease(kubespray.DefaultVersion); mm == m {
			return kubespray.DefaultVersion
		}
		return fmt.Sprintf("v2.%d", m)
	}
	return best
}

func checkUpgradeRemoved(c *checkCtx) []Finding {
	from := c.in.UpgradeFrom
	if from == nil {
		return nil
	}
	var out []Finding
	for _, name := range c.names() {
		old := from.Lookup(name)
		if old == nil || c.cat.Lookup(name) != nil || c.cat.ReadBy(name) != "" {
			continue // defined, or still read through another default
		}
		if _, ok := c.cat.Removed[name]; ok {
			continue // removed-variable says it, with kubespray's own advice
		}
		for _, u := range c.uses(name) {
			if u.ours == nil || u.ours.Pos.File == "" {
				continue
			}
			f := c.finding("upgrade-removed", SeverityWarning, u)
			f.Message = fmt.Sprintf("%s is not defined by kubespray %s any more (%s had it at %s:%d)", name, c.cat.Version, from.Version, old.File, old.Line)
			f.Why = fmt.Sprintf("kubespray %s has no default for it any more (%s had one); a variable kubespray stops defining is usually no longer read, but some are still mapped by its tasks.", c.cat.Version, from.Version)
			f.Fix = fmt.Sprintf("check kubespray %s's release notes for %s, then delete it or set its replacement", c.cat.Version, name)
			out = append(out, f)
		}
	}
	return out
}

// scalarDefault renders a literal scalar default for comparison; ok is
// false for templates, lists, maps and omitted defaults.
func scalarDefault(v *kubespray.Var) (string, bool) {
	if v == nil || len(v.Defs) == 0 || v.Defs[0].DefaultOmitted {
		return "", false
	}
	switch d := v.Default.(type) {
	case bool:
		return strconv.FormatBool(d), true
	case int64:
		return strconv.FormatInt(d, 10), true
	case float64:
		return strconv.FormatFloat(d, 'g', -1, 64), true
	case string:
		if strings.Contains(d, "{{") || strings.Contains(d, "{%") {
			return "", false
		}
		return strconv.Quote(d), true
	}
	return "", false
}

// checksumsKeyRE is kubespray's computed default of a pinned component
// (v2.28 and later): the newest version its checksums list,
// "{{ (kubelet_checksums['amd64'] | dict2items)[0].key }}".
var checksumsKeyRE = regexp.MustCompile(`^\{\{\s*\(\s*(\w+)\['amd64'\]\s*\|\s*dict2items\s*\)\[0\]\.key\s*\}\}$`)

// computedDefault is scalarDefault, plus the value of a default kubespray
// computes from its checksums: the newest version the release has
// checksums for, first in its checksums file.
func computedDefault(cat *kubespray.Catalogue, name string) (string, bool) {
	v := cat.Lookup(name)
	if s, ok := scalarDefault(v); ok {
		return s, true
	}
	if v == nil || cat.Release == nil {
		return "", false
	}
	d, _ := v.Default.(string)
	m := checksumsKeyRE.FindStringSubmatch(strings.TrimSpace(d))
	comp := cat.Release.Components[name]
	if m == nil || comp == nil || len(comp.Versions) == 0 || comp.Checksums != m[1] {
		return "", false
	}
	return strconv.Quote(comp.Versions[0]), true
}

// kubeDefaultChange says how the default kube_version moves, for an
// inventory that leaves it to kubespray: the upgrade then upgrades
// Kubernetes too, and kubeadm goes one minor at a time.
func (c *checkCtx) kubeDefaultChange(from *kubespray.Catalogue) []Finding {
	a, ok1 := computedDefault(from, "kube_version")
	b, ok2 := computedDefault(c.cat, "kube_version")
	if !ok1 || !ok2 {
		return nil
	}
	av, _ := strconv.Unquote(a)
	bv, _ := strconv.Unquote(b)
	av, bv = strings.TrimPrefix(av, "v"), strings.TrimPrefix(bv, "v")
	if av == bv {
		return nil
	}
	nv, ov := c.cat.Lookup("kube_version"), from.Lookup("kube_version")
	f := Finding{Rule: "upgrade-default-changed", Severity: SeverityWarning, Variable: "kube_version", Value: b,
		Why: fmt.Sprintf("kube_version is left to kubespray, whose default is the newest version its checksums list (%s:%d in kubespray %s; %s:%d in %s): upgrade-cluster.yml upgrades the cluster to it.",
			nv.File, nv.Line, c.cat.Version, ov.File, ov.Line, from.Version)}
	am, bm := minorNumber(av), minorNumber(bv)
	steps := bm - am
	head := fmt.Sprintf("the default kube_version changes from %s (%s) to %s (%s), and this inventory does not set it", a, from.Version, b, c.cat.Version)
	switch {
	case am < 0 || bm < 0:
		f.Message = head
		f.Fix = fmt.Sprintf("set kube_version in group_vars/k8s_cluster to the version you mean to run (today's default: %s)", a)
	case steps == 0:
		f.Severity = SeverityInfo
		f.Message = head + fmt.Sprintf(": a patch upgrade within Kubernetes %s", minorOf(bv))
		f.Fix = "nothing to do: kubeadm upgrades within a minor in one step"
	case steps == 1:
		f.Message = head + fmt.Sprintf(": one minor, Kubernetes %s to %s", minorOf(av), minorOf(bv))
		f.Fix = fmt.Sprintf("plan the Kubernetes %s upgrade with this kubespray upgrade (its deprecations and removed APIs)", minorOf(bv))
		if keep := c.keepKube(av); keep != "" {
			f.Fix += fmt.Sprintf(", or set kube_version: %q (kubespray %s has it) to upgrade Kubernetes later", keep, c.cat.Version)
		}
	case steps > 1:
		f.Message = head + fmt.Sprintf(": %d minors, Kubernetes %s to %s, which kubeadm cannot skip", steps, minorOf(av), minorOf(bv))
		f.Why += " kubeadm upgrades a control plane one minor at a time, so a jump of more than one minor fails."
		f.Fix = "upgrade through each kubespray release in between (each upgrades Kubernetes one minor), or set kube_version to a version one minor above the running one for this step"
	default:
		f.Message = head + fmt.Sprintf(": a downgrade, Kubernetes %s to %s", minorOf(av), minorOf(bv))
		f.Fix = fmt.Sprintf("set kube_version: %s (Kubernetes does not downgrade)", a)
	}
	return []Finding{f}
}

// keepKube is the version of the target release closest to today's
// default av: av itself when the target has checksums for it, else the
// newest patch of its minor the target has; "" when it has none.
func (c *checkCtx) keepKube(av string) string {
	comp := c.cat.Release.Components["kube_version"]
	if comp == nil {
		return ""
	}
	for _, v := range comp.Versions {
		if strings.TrimPrefix(v, "v") == av {
			return v
		}
	}
	if p := sameMinor(comp.Versions, av); len(p) > 0 {
		return p[0]
	}
	return ""
}

// minorNumber is 33 of "1.33.7"; -1 when it is not a version.
func minorNumber(v string) int {
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return -1
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		return -1
	}
	return n
}

// upgradeSettings are the defaults whose change an inventory that leaves
// them alone must hear about one by one: the network and proxy choices
// kubespray users set most, and any boolean switch. Other changed literal
// defaults are said in one info finding per kind.
func upgradeSetting(name string, v *kubespray.Var) bool {
	if v.IsBool() {
		return true
	}
	for _, p := range []string{"kube_network_plugin", "kube_proxy_mode", "calico_", "cilium_", "flannel_", "kube_ovn_", "dns_mode", "resolvconf_mode", "container_manager", "etcd_deployment_type", "kube_pods_subnet", "kube_service_addresses", "kube_network_node_prefix", "cluster_name", "nodelocaldns_ip"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func checkUpgradeDefaults(c *checkCtx) []Finding {
	from := c.in.UpgradeFrom
	if from == nil {
		return nil
	}
	set := map[string]bool{}
	for _, n := range c.names() {
		set[n] = true
	}
	names := make([]string, 0, len(c.cat.Vars))
	for n := range c.cat.Vars {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Finding
	if !set["kube_version"] {
		out = append(out, c.kubeDefaultChange(from)...)
	}
	var versions []string
	for _, n := range names {
		if set[n] || n == "kube_version" {
			continue
		}
		nv, ov := c.cat.Lookup(n), from.Lookup(n)
		if ov == nil || !strings.HasPrefix(nv.Scope, "role-") || !strings.HasPrefix(ov.Scope, "role-") {
			continue
		}
		a, ok1 := computedDefault(from, n)
		b, ok2 := computedDefault(c.cat, n)
		if !ok1 || !ok2 || a == b {
			continue
		}
		if !c.pluginInUse(n) {
			continue
		}
		if versionLike(n) {
			versions = append(versions, fmt.Sprintf("%s %s → %s", n, a, b))
			continue
		}
		if !upgradeSetting(n, nv) {
			continue
		}
		out = append(out, Finding{Rule: "upgrade-default-changed", Severity: SeverityWarning, Variable: n, Value: b,
			Message: fmt.Sprintf("the default of %s changes from %s (%s) to %s (%s), and this inventory does not set it", n, a, from.Version, b, c.cat.Version),
			Why:     fmt.Sprintf("%s:%d in kubespray %s; %s:%d in %s. A running cluster keeps what it has until upgrade-cluster.yml applies the new default.", nv.File, nv.Line, c.cat.Version, ov.File, ov.Line, from.Version),
			Fix:     fmt.Sprintf("to keep today's behaviour set %s: %s in group_vars; otherwise plan for the change", n, a)})
	}
	if len(versions) > 0 {
		out = append(out, Finding{Rule: "upgrade-default-changed", Severity: SeverityInfo,
			Message: fmt.Sprintf("%d component version default(s) change from %s to %s: %s", len(versions), from.Version, c.cat.Version, strings.Join(versions, ", ")),
			Why:     "the inventory leaves these to kubespray, so the upgrade installs the new versions."})
	}
	return out
}

// versionLike names a version pin or an image tag.
func versionLike(n string) bool {
	for _, s := range []string{"_version", "_image_tag", "_version_required"} {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// pluginInUse is false for a variable of a network plugin other than the
// one the inventory's first host gets (kube_network_plugin, or kubespray's
// default): calico_* matters only with calico, cilium_* only with cilium.
func (c *checkCtx) pluginInUse(n string) bool {
	if len(c.hosts) == 0 {
		return true
	}
	v, _ := c.value(c.hosts[0], "kube_network_plugin")
	plugin, _ := strValue(v)
	for _, p := range []string{"calico", "cilium", "flannel", "kube_ovn", "kube_router", "macvlan"} {
		if strings.HasPrefix(n, p+"_") {
			return strings.ReplaceAll(plugin, "-", "_") == p
		}
	}
	return true
}

func checkUpgradeAnsible(c *checkCtx) []Finding {
	from := c.in.UpgradeFrom
	if from == nil || from.Facts == nil || c.cat.Facts == nil {
		return nil
	}
	ff, tf := from.Facts, c.cat.Facts
	if tf.AnsibleMin == "" || (ff.AnsibleMin == tf.AnsibleMin && ff.AnsibleMax == tf.AnsibleMax) {
		return nil
	}
	return []Finding{{Rule: "upgrade-ansible", Severity: SeverityInfo,
		Message: fmt.Sprintf("kubespray %s needs ansible-core %s ≤ x < %s (%s needed %s ≤ x < %s)", c.cat.Version, tf.AnsibleMin, tf.AnsibleMax, from.Version, ff.AnsibleMin, ff.AnsibleMax),
		Why:     fmt.Sprintf("playbooks/ansible_version.yml of kubespray %s (%s) stops on any other ansible-core.", c.cat.Version, tf.AnsibleSource),
		Fix:     fmt.Sprintf("pip install -r requirements.txt of kubespray %s in the virtualenv you run it from", c.cat.Version)}}
}
