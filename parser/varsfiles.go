package parser

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// yamlExts is ansible-core's YAML_FILENAME_EXTENSIONS.
var yamlExts = []string{".yml", ".yaml", ".json"}

// findExts is the order find_vars_files tries: the bare name first.
var findExts = []string{"", ".yml", ".yaml", ".json"}

// varsDirsOf is the directories whose group_vars/ and host_vars/
// loadVarsFiles reads for sources, in order, each once: a source's own
// directory when it is one, else the directory it is in.
func varsDirsOf(sources []string) []string {
	var dirs []string
	seen := map[string]bool{}
	for _, src := range sources {
		if src == "" {
			continue
		}
		if strings.Contains(src, ",") {
			if _, err := os.Stat(src); err != nil {
				continue
			}
		}
		dir := src
		if st, err := os.Stat(src); err != nil || !st.IsDir() {
			dir = filepath.Dir(src)
		}
		dirs = append(dirs, dir)
		if seen[dir] {
			continue
		}
		seen[dir] = true
	}
	return dirs
}

// varsPrefetch reads and parses the group_vars/ and host_vars/ files of
// the sources' directories in the background, while the sources
// themselves are parsed: the files do not depend on the hosts and groups
// (which only decide, afterwards, what is applied and what an error
// means).
type varsPrefetch struct {
	done    chan struct{}
	stop    atomic.Bool
	results map[string]*varsDirRead // by filepath.Join(dir, sub)
}

func prefetchVars(sources []string) *varsPrefetch {
	p := &varsPrefetch{done: make(chan struct{}), results: map[string]*varsDirRead{}}
	dirs := varsDirsOf(sources)
	go func() {
		defer close(p.done)
		seen := map[string]bool{}
		for _, dir := range dirs {
			if seen[dir] {
				continue
			}
			seen[dir] = true
			for _, sub := range []string{"group_vars", "host_vars"} {
				if p.stop.Load() {
					return
				}
				p.results[filepath.Join(dir, sub)] = readVarsDir(dir, sub, &p.stop)
			}
		}
	}()
	return p
}

// wait returns the read of dir/sub (nil when it was not read), after
// the prefetch is done.
func (p *varsPrefetch) wait(dir, sub string) *varsDirRead {
	if p == nil {
		return nil
	}
	<-p.done
	return p.results[filepath.Join(dir, sub)]
}

// cancel stops the prefetch (the sources failed to parse) and waits for
// it.
func (p *varsPrefetch) cancel() {
	if p == nil {
		return
	}
	p.stop.Store(true)
	<-p.done
}

// loadVarsFiles reads group_vars/ and host_vars/ beside each source, as the
// host_group_vars vars plugin does (DataLoader.find_vars_files: the name
// itself, as a file or a directory walked recursively in sorted order,
// else name.yml, name.yaml, name.json; the first that exists wins). What
// pre read already is not read again.
func (inv *Inventory) loadVarsFiles(pre *varsPrefetch) error {
	seen := map[string]bool{}
	for _, dir := range varsDirsOf(inv.Sources) {
		inv.varsDirs = append(inv.varsDirs, dir)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		for _, sub := range []string{"group_vars", "host_vars"} {
			into := inv.GroupVarsFiles
			if sub == "host_vars" {
				into = inv.HostVarsFiles
			}
			r := pre.wait(dir, sub)
			if r == nil {
				r = readVarsDir(dir, sub, nil)
			}
			if err := inv.applyVarsDir(r, into); err != nil {
				return err
			}
		}
	}
	return nil
}

// varsDirRead is one group_vars/ or host_vars/ directory read and its
// files parsed, before anything is applied to the inventory.
type varsDirRead struct {
	dir, sub string
	notDir   bool  // base exists and is no directory
	err      error // the listing failed
	jobs     []*varsFileRead
}

type varsFileRead struct {
	name, path string
	vf         *VarsFile
	warnings   []string
	err        error
	size       int64
}

// readVarsDir lists dir/sub and reads and parses its files on all CPUs
// (stop, when not nil, ends it early: the read is then not used).
func readVarsDir(dir, sub string, stop *atomic.Bool) *varsDirRead {
	r := &varsDirRead{dir: dir, sub: sub}
	base := filepath.Join(dir, sub)
	st, err := os.Stat(base)
	if err != nil {
		return r
	}
	if !st.IsDir() {
		r.notDir = true
		return r
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		r.err = fmt.Errorf("%s: %v", base, err)
		return r
	}
	present := map[string]fs.DirEntry{}
	for _, e := range entries {
		present[e.Name()] = e
	}
	// every name a file or directory here can stand for
	names := map[string]bool{}
	for n := range present {
		names[n] = true
		for _, ext := range yamlExts {
			if strings.HasSuffix(n, ext) && len(n) > len(ext) {
				names[strings.TrimSuffix(n, ext)] = true
			}
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, name := range sorted {
		paths, err := findVarsFiles(base, name, present)
		if err != nil {
			r.err = err
			return r
		}
		for _, p := range paths {
			r.jobs = append(r.jobs, &varsFileRead{name: name, path: p})
		}
	}
	// files are independent: read and parse them on all CPUs, then apply
	// the results (and their warnings) in Ansible's order
	var wg sync.WaitGroup
	next := make(chan *varsFileRead)
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(r.jobs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				if stop != nil && stop.Load() {
					continue
				}
				var read int64
				j.vf, read, j.warnings, j.err = readVarsFile(j.path)
				if read >= 0 {
					j.size = read // what was read is its size: no stat of its own
				} else if st, err := os.Stat(j.path); err == nil && st.Mode().IsRegular() {
					j.size = st.Size()
				}
			}
		}()
	}
	for _, j := range r.jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	return r
}

// applyVarsDir applies a read directory's files to the inventory, in
// Ansible's order, with their warnings.
func (inv *Inventory) applyVarsDir(r *varsDirRead, into map[string][]*VarsFile) error {
	if r.notDir {
		inv.warnf("Found %s that is not a directory, skipping: %s", r.sub, filepath.Join(r.dir, r.sub))
		return nil
	}
	if r.err != nil {
		return r.err
	}
	for _, j := range r.jobs {
		if j.size <= MaxFileBytes {
			if inv.bytesRead += j.size; inv.bytesRead > MaxInventoryBytes {
				return &FileSizeError{Path: j.path, Limit: MaxInventoryBytes, What: "inventory"}
			}
		}
		for _, w := range j.warnings {
			inv.warn(w)
		}
		if j.err != nil {
			known := inv.groups[j.name] != nil
			if r.sub == "host_vars" {
				known = inv.hosts[j.name] != nil
			}
			if known {
				return j.err
			}
			// Ansible reads files only for existing groups/hosts
			inv.warnf("%v (not used: no %s named %q)", j.err, strings.TrimSuffix(r.sub, "_vars"), j.name)
			continue
		}
		j.vf.dir = r.dir
		into[j.name] = append(into[j.name], j.vf)
	}
	return nil
}

// findVarsFiles is DataLoader.find_vars_files for one entity name.
func findVarsFiles(base, name string, present map[string]fs.DirEntry) ([]string, error) {
	for _, ext := range findExts {
		n := name + ext
		e := present[n]
		if e == nil {
			continue
		}
		full := filepath.Join(base, n)
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			st, err := os.Stat(full)
			if err != nil {
				continue // a dangling link does not exist for os.path.exists
			}
			isDir = st.IsDir()
		}
		if isDir {
			return dirVarsFiles(full)
		}
		return []string{full}, nil
	}
	return nil, nil
}

// dirVarsFiles is DataLoader._get_dir_vars_files.
func dirVarsFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", dir, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, ".") || strings.HasSuffix(n, "~") {
			continue
		}
		ext := pyExt(n)
		full := filepath.Join(dir, n)
		st, err := os.Stat(full)
		if err != nil {
			continue
		}
		if st.IsDir() {
			if ext == "" {
				sub, err := dirVarsFiles(full)
				if err != nil {
					return nil, err
				}
				out = append(out, sub...)
			}
			continue
		}
		if st.Mode().IsRegular() && (ext == "" || ext == ".yml" || ext == ".yaml" || ext == ".json") {
			out = append(out, full)
		}
	}
	return out, nil
}

// pyExt is os.path.splitext(name)[1]: leading dots do not start an extension.
func pyExt(name string) string {
	trimmed := strings.TrimLeft(name, ".")
	i := strings.LastIndexByte(trimmed, '.')
	if i < 0 {
		return ""
	}
	return trimmed[i:]
}

// readVarsFile loads one group_vars/host_vars file; size is the bytes it
// read (-1 when it could not be read). A whole-file vault is not
// decrypted: Vault is set and a warning returned.
func readVarsFile(path string) (vf *VarsFile, size int64, warnings []string, err error) {
	data, err := ReadFile(path, 0)
	if err != nil {
		var ke *FileKindError
		var se *FileSizeError
		if errors.As(err, &ke) || errors.As(err, &se) {
			return nil, -1, nil, err
		}
		return nil, -1, nil, fmt.Errorf("%s: %v", path, err)
	}
	size = int64(len(data))
	vf = &VarsFile{Path: path, Vars: NewMap()}
	if bytes.HasPrefix(data, []byte("$ANSIBLE_VAULT")) {
		vf.Vault = true
		warnings = append(warnings, fmt.Sprintf("%s: whole-file ansible-vault: its variables are not read (never decrypted); ansible-core needs the vault password to load it", path))
		return vf, size, warnings, nil
	}
	var v *Value
	err = guard(path, func() (e error) {
		v, e = loadData(path, data, func(w string) { warnings = append(warnings, w) })
		return e
	})
	if err != nil {
		return nil, size, warnings, err
	}
	if v == nil || isFalsy(v) {
		return vf, size, warnings, nil
	}
	if v.Kind != KindMap {
		return nil, size, warnings, fmt.Errorf("%s: failed to combine variables, expected dicts but got a '%s' and a 'dict'", path, v.Kind)
	}
	vf.Vars = v.Map
	if sops := v.Map.Get("sops"); sops != nil && sops.Kind == KindMap && (sops.Map.Get("mac") != nil || sops.Map.Get("lastmodified") != nil) {
		warnings = append(warnings, fmt.Sprintf("%s: SOPS-encrypted file: its values are read as the ENC[...] strings written in it (ansible-core does the same unless the community.sops vars plugin is enabled)", path))
	}
	return vf, size, warnings, nil
}

// isFalsy is Python truthiness for a loaded document.
func isFalsy(v *Value) bool {
	switch v.Kind {
	case KindNull:
		return true
	case KindBool:
		return !v.Bool
	case KindInt:
		return v.Int.Sign() == 0
	case KindFloat:
		return v.Float == 0
	case KindString:
		return v.Str == ""
	case KindList:
		return len(v.List) == 0
	case KindMap:
		return v.Map.Len() == 0
	}
	return false
}
