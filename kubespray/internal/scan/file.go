package scan

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// File is the on-disk form of a bundled catalogue
// (kubespray/catalogue_<version>.json): what Load found in one kubespray
// version, and which commit that was.
type File struct {
	// Kubespray is the version ("v2.31.0", "master"); Commit the full
	// kubespray commit the data was taken from.
	Kubespray string `json:"kubespray"`
	Commit    string `json:"commit"`
	// CommitDate is the commit's date (ISO 8601, as git log %cI gives it);
	// Galaxy is the version the tree's galaxy.yml gives ("2.32.0"): what a
	// branch snapshot such as master claims to become (see Provenance).
	CommitDate string `json:"commit_date,omitempty"`
	Galaxy     string `json:"galaxy_version,omitempty"`
	// Files are the vars files read (relative); Skipped those not read, with why.
	Files   []string `json:"files"`
	Skipped []string `json:"skipped,omitempty"`
	// Vars maps a variable name to its definitions (see Tree.Defs).
	Vars map[string][]Def `json:"vars"`
	// Release holds the facts of the release's tasks, playbooks and
	// checksums (ReadRelease); nil when generated without them.
	Release *Release `json:"release,omitempty"`
}

// Source is what a kubespray data directory's SOURCE.txt says:
// "kubernetes-sigs/kubespray <version> <commit> — ...".
func Source(dir string) (version, commit string, err error) {
	b, err := os.ReadFile(filepath.Join(dir, "SOURCE.txt"))
	if err != nil {
		return "", "", err
	}
	f := strings.Fields(string(b))
	if len(f) < 3 || f[0] != "kubernetes-sigs/kubespray" || len(f[2]) != 40 {
		return "", "", fmt.Errorf("%s: expected \"kubernetes-sigs/kubespray <version> <commit> ...\"", filepath.Join(dir, "SOURCE.txt"))
	}
	return f[1], f[2], nil
}

// Encode renders f deterministically: keys sorted, two-space indent, one
// trailing newline.
func (f *File) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// FileName is the bundled catalogue's file name for a version: gzip of
// the JSON File (the nine bundled releases take about 0.4 MB so, 3.8 MB
// uncompressed), the form Generate writes and review reads; the lint
// reads its binary form (BinaryFileName).
func FileName(version string) string { return "catalogue_" + version + ".json.gz" }

// Decode reads a bundled catalogue written by Generate.
func Decode(gz []byte) (*File, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	var f File
	dec := json.NewDecoder(zr)
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	return &f, nil
}

// Provenance is what Generate records of each version besides its files:
// FullDir, when not "", holds each version's whole tree
// (FullDir/<version>, with SOURCE.txt naming the same commit), whose
// galaxy.yml gives File.Galaxy; Dates maps a commit to its date
// (File.CommitDate), which no file of the tree holds. A version whose
// commit has no date, or whose whole tree has no galaxy.yml version, is
// an error when FullDir is set: the catalogue must say what it was read
// from.
type Provenance struct {
	FullDir string
	Dates   map[string]string
}

// ReadCommitDates reads a file of "<version> <commit> <date>" lines (#
// starts a comment) into a map from commit to date.
func ReadCommitDates(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 || len(f[1]) != 40 {
			return nil, fmt.Errorf("%s:%d: expected \"<version> <commit> <date>\"", path, i+1)
		}
		if _, err := time.Parse(time.RFC3339, f[2]); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
		out[f[1]] = f[2]
	}
	return out, nil
}

// GalaxyVersion is the version of a kubespray tree's galaxy.yml.
func GalaxyVersion(dir string) (string, error) { return galaxyVersion(dir) }

// galaxyVersion is the version of a kubespray tree's galaxy.yml.
func galaxyVersion(dir string) (string, error) {
	p := filepath.Join(dir, "galaxy.yml")
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	var g struct {
		Version string `yaml:"version"`
	}
	if err := yaml.Unmarshal(b, &g); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	if g.Version == "" {
		return "", fmt.Errorf("%s: no version", p)
	}
	return g.Version, nil
}

// Generate reads every kubespray data directory under dataDir (one per
// version, each with SOURCE.txt) and writes FileName(version) into outDir;
// srcDir, when not "", holds each version's tasks and playbooks
// (srcDir/<version>, read by ReadRelease); prov adds where each version
// came from (Provenance). It returns the versions written, sorted.
func Generate(dataDir, srcDir, outDir string, prov Provenance) ([]*File, error) {
	ents, err := os.ReadDir(dataDir)
	if err != nil {
		return nil, err
	}
	var out []*File
	for _, e := range ents {
		dir := filepath.Join(dataDir, e.Name())
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "SOURCE.txt")); err != nil {
			continue
		}
		version, commit, err := Source(dir)
		if err != nil {
			return nil, err
		}
		if version != e.Name() {
			return nil, fmt.Errorf("%s: SOURCE.txt names version %s", dir, version)
		}
		t, err := Load(dir)
		if err != nil {
			return nil, err
		}
		f := &File{Kubespray: version, Commit: commit, Files: t.Files, Skipped: t.Skipped, Vars: t.Defs}
		src := ""
		if srcDir != "" {
			src = filepath.Join(srcDir, version)
			if sv, sc, err := Source(src); err != nil || sv != version || sc != commit {
				return nil, fmt.Errorf("%s: not the tasks of kubespray %s %s (%v)", src, version, commit, err)
			}
		}
		if prov.FullDir != "" {
			full := filepath.Join(prov.FullDir, version)
			if fv, fc, err := Source(full); err != nil || fv != version || fc != commit {
				return nil, fmt.Errorf("%s: not the tree of kubespray %s %s (%v)", full, version, commit, err)
			}
			if f.Galaxy, err = galaxyVersion(full); err != nil {
				return nil, fmt.Errorf("kubespray %s: %w", version, err)
			}
			if f.CommitDate = prov.Dates[commit]; f.CommitDate == "" {
				return nil, fmt.Errorf("kubespray %s: no date for commit %s (add it to the commit dates)", version, commit)
			}
		}
		if f.Release, err = ReadRelease(src, dir, t.Defs); err != nil {
			return nil, fmt.Errorf("kubespray %s: %w", version, err)
		}
		if prov.FullDir != "" {
			// the templates are only in the whole tree
			if f.Release.Guarded, err = ReadGuards(filepath.Join(prov.FullDir, version), t.Defs); err != nil {
				return nil, fmt.Errorf("kubespray %s: %w", version, err)
			}
			// and the shapes' fields read by templates too
			if f.Release.Shapes, err = ReadShapes(src, filepath.Join(prov.FullDir, version), t.Defs); err != nil {
				return nil, fmt.Errorf("kubespray %s: %w", version, err)
			}
		}
		b, err := f.Encode()
		if err != nil {
			return nil, err
		}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		zw.Write(b)
		if err := zw.Close(); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(outDir, FileName(version)), gz.Bytes(), 0o644); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no kubespray data directory (with SOURCE.txt) found", dataDir)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kubespray < out[j].Kubespray })
	return out, nil
}
