package kubespray

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The release index is derived from the bundled catalogues (after them:
// go generate runs this file's directive after catalogue.go's) so that
// the release an inventory was written for is found without decoding
// every catalogue.
//go:generate go run ./internal/genindex -out releases_index.json.gz

//go:embed releases_index.json.gz
var releaseIndexGz []byte

// ReleaseIndex says, for every bundled catalogue, the kube_version values
// it has checksums for and the variables it defines: what a lint needs to
// tell which release an inventory was written for (see lint's inference).
type ReleaseIndex struct {
	// Releases are the bundled catalogues, oldest first, master last.
	Releases []string `json:"releases"`
	// KubeVersions are, per release, the kube_version values it has
	// checksums for, as kubespray writes them (with or without the v).
	KubeVersions map[string][]string `json:"kube_versions"`
	// Vars maps a variable to the indexes (in Releases) of the releases
	// whose defaults define it.
	Vars map[string][]int `json:"vars"`
	// Galaxy, Commits and CommitDates are, per release, the version its
	// galaxy.yml gives, its kubespray commit and that commit's date (ISO
	// 8601), as the generator recorded them: what tells which release a
	// branch snapshot claims to become (Claiming).
	Galaxy      map[string]string `json:"galaxy_versions,omitempty"`
	Commits     map[string]string `json:"commits,omitempty"`
	CommitDates map[string]string `json:"commit_dates,omitempty"`
}

var (
	indexOnce sync.Once
	index     *ReleaseIndex
	indexErr  error
)

// Index returns the release index of the bundled catalogues.
func Index() (*ReleaseIndex, error) {
	indexOnce.Do(func() {
		zr, err := gzip.NewReader(bytes.NewReader(releaseIndexGz))
		if err != nil {
			indexErr = err
			return
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			indexErr = err
			return
		}
		index = &ReleaseIndex{}
		indexErr = json.Unmarshal(b, index)
	})
	return index, indexErr
}

// BuildIndex makes the release index of catalogues (by version).
func BuildIndex(cats map[string]*Catalogue) *ReleaseIndex {
	x := &ReleaseIndex{KubeVersions: map[string][]string{}, Vars: map[string][]int{},
		Galaxy: map[string]string{}, Commits: map[string]string{}, CommitDates: map[string]string{}}
	for v := range cats {
		x.Releases = append(x.Releases, v)
	}
	sort.Slice(x.Releases, func(i, j int) bool { return ReleaseLess(x.Releases[i], x.Releases[j]) })
	for i, v := range x.Releases {
		c := cats[v]
		if c.Release != nil {
			if comp := c.Release.Components["kube_version"]; comp != nil {
				x.KubeVersions[v] = comp.Versions
			}
		}
		for name := range c.Vars {
			x.Vars[name] = append(x.Vars[name], i)
		}
		if c.Galaxy != "" {
			x.Galaxy[v] = c.Galaxy
		}
		if c.Commit != "" {
			x.Commits[v] = c.Commit
		}
		if c.CommitDate != "" {
			x.CommitDates[v] = c.CommitDate
		}
	}
	return x
}

// IsRelease reports whether a bundled version is a release ("v2.31.0"),
// not a branch snapshot ("master").
func IsRelease(version string) bool { return strings.HasPrefix(version, "v") }

// askedMinor is the minor a version asked for names: "v2.32" for
// "v2.32.0", "2.32.3", "v2.32.x" or "v2.32"; "" for anything else.
func askedMinor(version string) string {
	v := "v" + strings.TrimPrefix(version, "v")
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return ""
	}
	for i, p := range parts {
		if _, err := strconv.Atoi(p); err != nil && (i < 2 || p != "x") {
			return ""
		}
	}
	return "v" + parts[0] + "." + parts[1]
}

// Claiming returns the bundled branch snapshot that stands in for a
// release of which no bundled release exists: of the snapshots whose
// galaxy.yml version (recorded by the generator) is of the minor version
// names ("v2.32.0", "v2.32", "v2.32.x"), the newest by commit date. ""
// when none claims it.
func Claiming(version string) string {
	m := askedMinor(version)
	x, err := Index()
	if m == "" || err != nil {
		return ""
	}
	best, bestAt := "", time.Time{}
	for _, r := range x.Releases {
		g := x.Galaxy[r]
		if IsRelease(r) || g == "" || Minor("v"+g) != m {
			continue
		}
		at, err := time.Parse(time.RFC3339, x.CommitDates[r])
		if err != nil {
			continue
		}
		if best == "" || at.After(bestAt) {
			best, bestAt = r, at
		}
	}
	return best
}

// SnapshotNote says that kubespray asked itself was not read and which
// snapshot stands in for it: "kubespray v2.32.0 itself was not read: this
// is kubespray's master of 2026-08-21 (commit 46dbdd39...), whose
// galaxy.yml says 2.32.0".
func SnapshotNote(c *Catalogue, asked string) string {
	v := "v" + strings.TrimPrefix(asked, "v")
	if strings.Count(v, ".") == 1 {
		v += ".x"
	}
	date := c.CommitDate
	if t, err := time.Parse(time.RFC3339, date); err == nil {
		date = t.UTC().Format("2006-01-02")
	}
	return fmt.Sprintf("kubespray %s itself was not read: this is kubespray's %s of %s (commit %s), whose galaxy.yml says %s",
		v, c.Version, date, c.Commit, c.Galaxy)
}

// ReleaseLess orders bundled versions: releases by number, master last.
func ReleaseLess(a, b string) bool {
	if a == DefaultVersion || b == DefaultVersion {
		return b == DefaultVersion && a != DefaultVersion
	}
	return versionNewer(b, a)
}

// Minor is a release's "v2.28" ("master" for master).
func Minor(release string) string {
	if release == DefaultVersion {
		return release
	}
	if i := strings.LastIndexByte(release, '.'); strings.Count(release, ".") == 2 {
		return release[:i]
	}
	return release
}

// ReleaseForKube is the newest bundled release (not a branch snapshot)
// with checksums for Kubernetes v, as written first ("v1.31.9" is what a
// release that writes the v pins), then with or without the leading v;
// "" when none has: the release a cluster at v was most likely built with.
func ReleaseForKube(v string) string {
	x, err := Index()
	if err != nil || v == "" {
		return ""
	}
	bare := strings.TrimPrefix(v, "v")
	for _, same := range []func(k string) bool{
		func(k string) bool { return k == v },
		func(k string) bool { return strings.TrimPrefix(k, "v") == bare },
	} {
		for i := len(x.Releases) - 1; i >= 0; i-- {
			r := x.Releases[i]
			if !IsRelease(r) {
				continue
			}
			for _, k := range x.KubeVersions[r] {
				if same(k) {
					return r
				}
			}
		}
	}
	return ""
}
