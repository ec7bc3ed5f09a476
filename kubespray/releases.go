package kubespray

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"io"
	"sort"
	"strings"
	"sync"
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
	x := &ReleaseIndex{KubeVersions: map[string][]string{}, Vars: map[string][]int{}}
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
	}
	return x
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
