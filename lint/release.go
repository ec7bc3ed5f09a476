package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/layercheck/layercheck/kubespray"
)

// The release an inventory was written for. An inventory kept outside any
// kubespray checkout, linted without --kubespray-version, gets the bundled
// default (master): then a kube_version its own release supports is an
// error. inferRelease reads what the inventory pins instead: kube_version
// (every value some host gets) or, when it pins none, the variables it
// sets that only some releases define; the newest bundled release that
// fits is used, and the catalogue's why says so.

func init() {
	registerStep("release", phaseRelease, chooseRelease)
}

// chooseRelease puts, in place of the bundled default, the release the
// inventory pins (inferRelease), or the default decoded in full when it
// was deferred and nothing is inferred; a note on a kube_version no
// bundled release has goes after the catalogue's why.
func chooseRelease(c *checkCtx, _ *Report) {
	given := c.in.Catalogue
	if given == nil || !given.Default {
		return
	}
	cat, note := c.inferRelease()
	c.catalogueNote = note
	if cat == nil && given.Deferred {
		cat, _ = given.Complete() // embedded: it decodes
	}
	if cat != nil {
		c.in.Catalogue, c.cat = cat, cat
	}
}

// pinnedKube is a kube_version value some hosts get: as written, without
// the leading v, and where.
type pinnedKube struct {
	text, bare, where string
}

// kubePins are the distinct kube_version values the hosts get, judged
// ones only (not Jinja, not vault), in inventory order.
func (c *checkCtx) kubePins() []pinnedKube {
	var out []pinnedKube
	seen := map[string]bool{}
	for _, u := range c.uses("kube_version") {
		if !judged(u.judge) {
			continue
		}
		s, ok := versionText(u.judge)
		if !ok || seen[s] {
			continue
		}
		seen[s] = true
		p := pinnedKube{text: s, bare: strings.TrimPrefix(s, "v")}
		if u.ours != nil {
			p.where = c.where(u.ours.Pos)
		}
		out = append(out, p)
	}
	return out
}

// How closely a release's checksums must match a kube_version.
const (
	matchAsWritten = iota // the same text, leading v or not
	matchVersion          // the same version, the leading v aside
	matchMinor            // the same minor only
)

// releasesWithKube are the indexes (in x.Releases) of the releases whose
// checksums have kube_version text, as closely as match asks.
func releasesWithKube(x *kubespray.ReleaseIndex, text string, match int) []int {
	bare := strings.TrimPrefix(text, "v")
	var out []int
	for i, r := range x.Releases {
		for _, v := range x.KubeVersions[r] {
			b := strings.TrimPrefix(v, "v")
			if v == text || (match >= matchVersion && b == bare) ||
				(match == matchMinor && minorOf(b) == minorOf(bare) && minorOf(bare) != bare) {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// KubeReleases names the bundled releases whose checksums have
// kube_version v ("v2.24.x–v2.25.x"), "" when none has it.
func KubeReleases(v string) string {
	x, err := kubespray.Index()
	if err != nil {
		return ""
	}
	return releaseRanges(x, releasesWithKube(x, v, matchVersion))
}

// releaseRanges words a set of release indexes as runs of consecutive
// bundled minors: "v2.24.x–v2.25.x, master".
func releaseRanges(x *kubespray.ReleaseIndex, idx []int) string {
	sort.Ints(idx)
	name := func(i int) string {
		r := x.Releases[i]
		if r == kubespray.DefaultVersion {
			return r
		}
		return kubespray.Minor(r) + ".x"
	}
	var parts []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 && x.Releases[idx[j+1]] != kubespray.DefaultVersion {
			j++
		}
		if i == j {
			parts = append(parts, name(idx[i]))
		} else {
			parts = append(parts, name(idx[i])+"–"+name(idx[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// kubeSpan is what the bundled releases support: "Kubernetes 1.26 to 1.36".
func kubeSpan(x *kubespray.ReleaseIndex) string {
	lo, hi := "", ""
	for _, vs := range x.KubeVersions {
		for _, v := range vs {
			m := minorOf(strings.TrimPrefix(v, "v"))
			if lo == "" || versionLess(m, lo) {
				lo = m
			}
			if hi == "" || versionLess(hi, m) {
				hi = m
			}
		}
	}
	return "Kubernetes " + lo + " to " + hi
}

func intersect(a, b []int) []int {
	in := map[int]bool{}
	for _, i := range b {
		in[i] = true
	}
	var out []int
	for _, i := range a {
		if in[i] {
			out = append(out, i)
		}
	}
	return out
}

// inferRelease returns the catalogue of the newest bundled release that
// fits what the inventory pins, with the why to report; nil to keep the
// default, with a note for its why when the inventory pins a kube_version
// no bundled release has.
func (c *checkCtx) inferRelease() (cat *kubespray.Catalogue, note string) {
	x, err := kubespray.Index()
	if err != nil || len(x.Releases) == 0 {
		return nil, ""
	}
	all := make([]int, len(x.Releases))
	for i := range all {
		all[i] = i
	}
	cands := all
	var said []string
	for _, p := range c.kubePins() {
		// as written first: "v1.31.1" is a release that writes the v
		fit, how := releasesWithKube(x, p.text, matchAsWritten), "fits"
		if len(fit) == 0 {
			fit = releasesWithKube(x, p.text, matchVersion)
		}
		if len(fit) == 0 {
			fit = releasesWithKube(x, p.text, matchMinor)
			how = "has no checksums in any bundled release; its minor " + minorOf(p.bare) + " fits"
		}
		at := ""
		if p.where != "" {
			at = " (" + p.where + ")"
		}
		if len(fit) == 0 {
			return nil, fmt.Sprintf("kube_version %s%s fits no bundled kubespray release (they support %s): the release it was written for is not bundled", p.text, at, kubeSpan(x))
		}
		said = append(said, fmt.Sprintf("kube_version %s%s %s kubespray %s", p.text, at, how, releaseRanges(x, fit)))
		if cands = intersect(cands, fit); len(cands) == 0 {
			return nil, strings.Join(said, ", ") + ": no bundled release fits them all"
		}
	}
	// Without a kube_version, the variables the inventory sets that some
	// bundled releases define and others do not: prefer the releases that
	// define the most of them. (A pinned kube_version decides alone: a
	// variable may be left over from an older release.)
	var telling []string
	if len(said) == 0 {
		for _, n := range c.names() {
			if rs := x.Vars[n]; len(rs) > 0 && len(rs) < len(x.Releases) {
				telling = append(telling, n)
			}
		}
	}
	if len(said) == 0 && len(telling) == 0 {
		return nil, ""
	}
	if n := len(cands); n > 1 && x.Releases[cands[n-1]] == kubespray.DefaultVersion {
		// a release that fits is what the inventory was written for:
		// master only when no release does
		cands = cands[:n-1]
	}
	best, bestScore := -1, -1
	for _, i := range cands {
		score := 0
		for _, n := range telling {
			for _, r := range x.Vars[n] {
				if r == i {
					score++
					break
				}
			}
		}
		if score >= bestScore {
			best, bestScore = i, score
		}
	}
	chosen := x.Releases[best]
	if len(said) == 0 && chosen == kubespray.DefaultVersion {
		return nil, ""
	}
	cat, err = kubespray.Bundled(chosen)
	if err != nil {
		return nil, ""
	}
	why := "inferred from what the inventory pins, as it lives in no kubespray checkout and no release was given: "
	if len(said) > 0 {
		why += strings.Join(said, ", ") + "; "
	}
	if len(telling) > 0 {
		why += fmt.Sprintf("of %d variable(s) it sets that only some releases define (%s), kubespray %s defines %d; ",
			len(telling), sampleNames(telling, 3), chosen, bestScore)
	}
	why += chosen + " is the newest bundled release that fits"
	if !kubespray.IsRelease(chosen) && len(said) > 0 && cat.Galaxy != "" && kubespray.Claiming(cat.Galaxy) == chosen {
		// a kube_version only a branch snapshot has is one of the release
		// cut from it, which its galaxy.yml names (master's 1.36 is v2.32's)
		asked := kubespray.Minor("v"+cat.Galaxy) + ".x"
		why += fmt.Sprintf("; its galaxy.yml says %s: it stands in for kubespray %s", cat.Galaxy, asked)
		cat.StandsInFor, cat.Note = asked, kubespray.SnapshotNote(cat, asked)
	}
	cat.Why = why
	return cat, ""
}

// sampleNames lists up to n names, saying how many more.
func sampleNames(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
}
