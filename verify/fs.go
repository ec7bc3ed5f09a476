package verify

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/layercheck/layercheck/parser/filekind"
)

// FS reads a node's files under Root: "/" on a node, a copied or generated
// node tree in tests. Methods take absolute node paths ("/etc/etcd.env");
// those that follow symlinks do so inside Root, as the node would see them.
type FS struct {
	// Root is the node's filesystem root.
	Root string
	// Sys reads the files (host paths from Path); nil means this machine's
	// file system. `layercheck verify` gives one over SFTP.
	Sys NodeFS
	// Links, when set, remembers what Resolve learnt of each path it walked
	// (a symlink and its target, or not a symlink), so the directories
	// every file shares (/etc, /etc/kubernetes, the /etc/kubernetes/pki
	// link) are looked up once per check of a node, not once per file:
	// over SFTP each lookup is a round trip. Copies of an FS share it.
	Links *LinkCache
}

// LinkCache is what FS.Resolve has learnt of the paths it walked; safe for
// concurrent use (the layers of a node run at once). A node's links are
// taken not to change while it is checked.
type LinkCache struct {
	mu sync.Mutex
	m  map[string]linkEntry
}

type linkEntry struct {
	link   bool
	target string
}

// NewLinkCache returns an empty LinkCache.
func NewLinkCache() *LinkCache { return &LinkCache{m: map[string]linkEntry{}} }

func (c *LinkCache) get(p string) (linkEntry, bool) {
	if c == nil {
		return linkEntry{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[p]
	return e, ok
}

func (c *LinkCache) put(p string, e linkEntry) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[p] = e
}

// Files is the NodeFS f reads through: Sys, or OSFS when nil.
func (f FS) Files() NodeFS {
	if f.Sys != nil {
		return f.Sys
	}
	return OSFS{}
}

// Path maps an absolute node path ("/etc/etcd.env") under Root.
func (f FS) Path(p string) string {
	return filepath.Join(f.Root, filepath.FromSlash(strings.TrimPrefix(p, "/")))
}

// Display strips Root again, so reports show node paths.
func (f FS) Display(p string) string {
	if f.Root == "" || f.Root == "/" {
		return p
	}
	rel, err := filepath.Rel(f.Root, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return p
	}
	return "/" + filepath.ToSlash(rel)
}

// ReadFile reads a node file under Root without resolving symlinks inside
// Root first (an absolute link target then points outside Root). A FIFO or
// device is an error, never a blocked read.
func (f FS) ReadFile(p string) ([]byte, error) { return f.readRegular(f.Path(p)) }

// Resolve resolves every symlink in the node path p inside Root, as the
// node would see it: an absolute link target such as
// /etc/kubernetes/pki -> /etc/kubernetes/ssl stays under Root. It returns
// the node path of the final file or directory; more than 40 links is an
// error, as on Linux.
func (f FS) Resolve(p string) (string, error) {
	parts := splitNode(p)
	cur := "/"
	hops := 0
	for len(parts) > 0 {
		part := parts[0]
		parts = parts[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, part)
		e, known := f.Links.get(next)
		if !known {
			fi, err := f.Files().Lstat(f.Path(next))
			if err != nil {
				return "", err
			}
			e.link = fi.Mode()&os.ModeSymlink != 0
		}
		if !e.link {
			f.Links.put(next, e)
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		if !known {
			target, err := f.Files().Readlink(f.Path(next))
			if err != nil {
				return "", err
			}
			e.target = target
			f.Links.put(next, e)
		}
		target := e.target
		if !path.IsAbs(target) {
			target = path.Join(cur, target)
		}
		parts = append(splitNode(target), parts...)
		cur = "/"
	}
	return cur, nil
}

func splitNode(p string) []string {
	p = strings.Trim(path.Clean("/"+p), "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// List lists the names of the entries in a node directory, sorted; a
// missing directory gives an error.
func (f FS) List(dir string) ([]string, error) {
	ents, err := f.Files().ReadDir(f.Path(dir))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out, nil
}

// Exists reports whether a node path exists (following symlinks inside Root).
func (f FS) Exists(p string) bool {
	r, err := f.Resolve(p)
	if err != nil {
		return false
	}
	_, err = f.Files().Stat(f.Path(r))
	return err == nil
}

// Read reads a node file, following symlinks inside Root.
func (f FS) Read(p string) ([]byte, error) {
	r, err := f.Resolve(p)
	if err != nil {
		return nil, err
	}
	return f.readRegular(f.Path(r))
}

// readRegular is readRegular through f.Sys when set: the same checks on
// the file's mode and size, the read through Sys.
func (f FS) readRegular(p string) ([]byte, error) {
	if f.Sys == nil {
		return readRegular(p)
	}
	st, err := f.Sys.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: p, Err: fmt.Errorf("is a %s, not a file", filekind.Of(st.Mode()))}
	}
	if st.Size() > maxNodeFileBytes {
		return nil, &fs.PathError{Op: "read", Path: p, Err: fmt.Errorf("larger than %d bytes", maxNodeFileBytes)}
	}
	return f.Sys.ReadFile(p)
}

// maxNodeFileBytes bounds a node file read (configs, certificates,
// kubeconfigs: kilobytes).
const maxNodeFileBytes = 64 << 20

// readRegular reads a regular file of at most maxNodeFileBytes without
// ever blocking: a FIFO, socket or device is an error naming its kind
// (the *fs.PathError keeps the path, so messages can show the node path).
func readRegular(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("is a %s, not a file", filekind.Of(st.Mode()))}
	}
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxNodeFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxNodeFileBytes {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d bytes", maxNodeFileBytes)}
	}
	return b, nil
}

// Stat stats a node path, following symlinks inside Root.
func (f FS) Stat(p string) (os.FileInfo, error) {
	r, err := f.Resolve(p)
	if err != nil {
		return nil, err
	}
	return f.Files().Stat(f.Path(r))
}

// PathErr is err without the Root-prefixed path a *fs.PathError carries,
// so messages name node paths only.
func PathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ReadLink returns the target of the symlink at node path p, as written
// (relative or absolute); p's directories are resolved inside Root first.
// A p that is not a symlink is an error.
func (f FS) ReadLink(p string) (string, error) {
	dir, err := f.Resolve(path.Dir(path.Clean("/" + p)))
	if err != nil {
		return "", err
	}
	return f.Files().Readlink(f.Path(path.Join(dir, path.Base(p))))
}
