package lint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
)

func init() {
	registerRule("version", SeverityError,
		"kube_version, etcd_version, containerd_version or calico_version set to a version the kubespray release has no checksums for (or below kube_version_min_required, or written with/without the leading v the release expects)",
		checkVersions)
}

// pinned are the version variables the rule checks, in report order.
var pinned = []string{"kube_version", "etcd_version", "containerd_version", "calico_version"}

func checkVersions(c *checkCtx) []Finding {
	if c.cat.Release == nil {
		return nil
	}
	var out []Finding
	for _, name := range pinned {
		comp := c.cat.Release.Components[name]
		if comp == nil || len(comp.Versions) == 0 {
			continue
		}
		for _, u := range c.uses(name) {
			if !judged(u.judge) {
				continue
			}
			if f, bad := c.versionFinding(name, comp, u); bad {
				out = append(out, f)
			}
		}
	}
	return out
}

// versionText is the value as kubespray templates it into a download URL
// and a checksums lookup: a str as written, a YAML number as Python's
// str() would print it (1.32 stays "1.32").
func versionText(v *parser.Value) (string, bool) {
	switch v.Kind {
	case parser.KindString:
		return strings.TrimSpace(v.Str), true
	case parser.KindFloat:
		return strconv.FormatFloat(v.Float, 'f', -1, 64), true
	case parser.KindInt:
		return v.Int.String(), true
	}
	return "", false
}

func (c *checkCtx) versionFinding(name string, comp *kubespray.Component, u use) (Finding, bool) {
	f := c.finding("version", SeverityError, u)
	rel := releaseName(c.cat)
	s, ok := versionText(u.judge)
	if !ok {
		f.Message = fmt.Sprintf("%s = %s is not a version", name, u.judge.Display())
		f.Why = fmt.Sprintf("kubespray %s looks %s up in its checksums (%s) to download it.", rel, name, comp.Source)
		f.Fix = fixText(name, fmt.Sprintf("%q", comp.Versions[0]), originOf(u))
		return f, true
	}
	for _, v := range comp.Versions {
		if v == s {
			return f, false
		}
	}
	withV := strings.HasPrefix(comp.Versions[0], "v")
	bare := strings.TrimPrefix(s, "v")
	want := bare
	if withV {
		want = "v" + bare
	}
	known := false
	for _, v := range comp.Versions {
		if v == want {
			known = true
		}
	}
	f.Why = fmt.Sprintf("kubespray %s downloads only the versions it has checksums for (%s, the amd64 keys of %s), and stops when a lookup fails.", rel, comp.Source, comp.Checksums)
	switch {
	case known:
		if withV {
			f.Message = fmt.Sprintf("%s = %q: kubespray %s writes versions with a leading v (%q)", name, s, rel, want)
		} else {
			f.Message = fmt.Sprintf("%s = %q: kubespray %s writes versions without the leading v (%q)", name, s, rel, want)
		}
		f.Fix = fixText(name, fmt.Sprintf("%q", want), originOf(u))
		return f, true
	case name == "kube_version" && comp.MinRequired != "" && versionLess(bare, strings.TrimPrefix(comp.MinRequired, "v")):
		f.Message = fmt.Sprintf("kube_version = %q is older than kubespray %s supports (kube_version_min_required %s)", s, rel, comp.MinRequired) + prefixToo(s, withV, rel)
		if comp.MinSource != "" {
			f.Why = fmt.Sprintf("kubespray %s stops at %s (\"Stop if unsupported version of Kubernetes\"): it supports %s.", rel, comp.MinSource, supportedMinors(comp.Versions))
		}
		f.Fix = fmt.Sprintf("use a release of kubespray made for Kubernetes %s%s, or set %s to one of %s", minorOf(bare), kubeReleasesNote(s), name, supportedMinors(comp.Versions))
		return f, true
	}
	patches := sameMinor(comp.Versions, bare)
	if len(patches) > 0 {
		f.Message = fmt.Sprintf("%s = %q: kubespray %s has no checksums for this patch; it knows %s: %s", name, s, rel, minorOf(bare), strings.Join(patches, ", ")) + prefixToo(s, withV, rel)
		f.Fix = fixText(name, fmt.Sprintf("%q", patches[0]), originOf(u))
		if name == "kube_version" {
			f.Fix += ", or use a release of kubespray with it" + kubeReleasesNote(s)
		}
		return f, true
	}
	f.Message = fmt.Sprintf("%s = %q is not a version kubespray %s knows: it supports %s", name, s, rel, supportedMinors(comp.Versions)) + prefixToo(s, withV, rel)
	f.Fix = fixText(name, fmt.Sprintf("%q", comp.Versions[0]), originOf(u)) + " (the newest it knows), or leave it unset for kubespray's default"
	if name == "kube_version" {
		f.Fix += ", or use a release of kubespray made for it" + kubeReleasesNote(s)
	}
	return f, true
}

// prefixToo says that a version kubespray does not know is also written
// with (or without) the leading v against the release's convention, so
// that both are said at once.
func prefixToo(s string, withV bool, rel string) string {
	switch {
	case withV && !strings.HasPrefix(s, "v"):
		return fmt.Sprintf("; also, kubespray %s writes versions with a leading v", rel)
	case !withV && strings.HasPrefix(s, "v"):
		return fmt.Sprintf("; also, kubespray %s writes versions without the leading v", rel)
	}
	return ""
}

// kubeReleasesNote names the bundled releases that have kube_version v
// (" (kube_version 1.28.6: kubespray v2.24.x–v2.26.x)"), or says that
// none is bundled.
func kubeReleasesNote(v string) string {
	if rs := KubeReleases(v); rs != "" {
		return fmt.Sprintf(" (kube_version %s: kubespray %s)", v, rs)
	}
	return fmt.Sprintf(" (no bundled kubespray release has kube_version %s)", v)
}

// releaseName names the catalogue's kubespray for a message.
func releaseName(cat *kubespray.Catalogue) string {
	if cat.Version != "" {
		return cat.Version
	}
	return "(" + cat.Name + ")"
}

// minorOf is "1.32" of "1.32.2" (the text itself when it has no two dots).
func minorOf(v string) string {
	parts := strings.Split(v, ".")
	if len(parts) < 3 {
		return v
	}
	return strings.Join(parts[:2], ".")
}

// sameMinor lists the known versions of v's minor, as kubespray lists them.
func sameMinor(versions []string, v string) []string {
	m := minorOf(v)
	if m == v {
		return nil
	}
	var out []string
	for _, k := range versions {
		if minorOf(strings.TrimPrefix(k, "v")) == m {
			out = append(out, k)
		}
	}
	return out
}

// supportedMinors says the minors of versions with their patch ranges,
// newest first: "1.36 (1.36.0–1.36.4), 1.35 (1.35.0–1.35.9)".
func supportedMinors(versions []string) string {
	var order []string
	byMinor := map[string][]string{}
	for _, k := range versions {
		m := minorOf(strings.TrimPrefix(k, "v"))
		if _, ok := byMinor[m]; !ok {
			order = append(order, m)
		}
		byMinor[m] = append(byMinor[m], k)
	}
	parts := make([]string, 0, len(order))
	for _, m := range order {
		vs := byMinor[m]
		if len(vs) == 1 {
			parts = append(parts, vs[0])
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%s–%s)", m, vs[len(vs)-1], vs[0]))
	}
	return strings.Join(parts, ", ")
}

// versionLess compares dotted numeric versions; a part that is not a
// number compares as 0.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}
