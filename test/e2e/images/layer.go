package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// epoch is every entry's mtime, so the same files always make the same
// layer digest.
var epoch = time.Unix(0, 0).UTC()

// entry is one file, directory or symlink of a layer; name is absolute
// inside the image.
type entry struct {
	name   string
	mode   fs.FileMode // permission bits only
	dir    bool
	link   string // symlink target, as the source has it
	source string // host file the content is read from
	data   []byte // or the content itself
	owner  int    // uid and gid; 0 for root
}

// layer collects entries by name and writes them as one tar in name order.
type layer struct {
	entries map[string]entry
}

func newLayer() *layer { return &layer{entries: map[string]entry{}} }

// add records e and every parent directory of e.
func (l *layer) add(e entry) {
	for d := path.Dir(e.name); d != "/"; d = path.Dir(d) {
		if _, ok := l.entries[d]; !ok {
			l.entries[d] = entry{name: d, mode: 0o755, dir: true}
		}
	}
	if old, ok := l.entries[e.name]; ok && old.dir && e.dir {
		return
	}
	l.entries[e.name] = e
}

// file adds the host file src at name with src's permission bits.
func (l *layer) file(name, src string) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", src)
	}
	l.add(entry{name: name, mode: st.Mode().Perm(), source: src})
	return nil
}

// tree adds the host directory src at name, whole: its directories and
// regular files with their permission bits, and its symlinks as they are.
func (l *layer) tree(name, src string) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: not a directory", src)
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		n := path.Join(name, filepath.ToSlash(rel))
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			l.add(entry{name: n, link: target})
		case d.IsDir():
			if n == "/" {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			l.add(entry{name: n, mode: info.Mode().Perm(), dir: true})
		default:
			return l.file(n, p)
		}
		return nil
	})
}

// tar writes the layer: sorted names, root-owned unless an entry says
// otherwise, fixed mtimes.
func (l *layer) tar(w io.Writer) error {
	names := make([]string, 0, len(l.entries))
	for n := range l.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tar.NewWriter(w)
	for _, n := range names {
		e := l.entries[n]
		mode := int64(e.mode.Perm())
		if e.mode&fs.ModeSticky != 0 {
			mode |= 0o1000
		}
		h := &tar.Header{Name: n[1:], Mode: mode, Uid: e.owner, Gid: e.owner, ModTime: epoch, Format: tar.FormatPAX}
		switch {
		case e.dir:
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		case e.link != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, e.link, 0o777
		default:
			h.Typeflag = tar.TypeReg
		}
		var body io.Reader
		if h.Typeflag == tar.TypeReg {
			body, h.Size = bytes.NewReader(e.data), int64(len(e.data))
			if e.source != "" {
				f, err := os.Open(e.source)
				if err != nil {
					return err
				}
				defer f.Close()
				st, err := f.Stat()
				if err != nil {
					return err
				}
				body, h.Size = f, st.Size()
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		if body != nil {
			if _, err := io.Copy(tw, body); err != nil {
				return fmt.Errorf("%s: %w", n, err)
			}
		}
	}
	return tw.Close()
}

// v1Layer is the layer as an OCI gzip layer. The tar is written afresh,
// streaming the files, each time go-containerregistry reads it (once for
// the digest, once for an upload), so a 100 MB binary is never held whole.
func (l *layer) v1Layer() (v1.Layer, error) {
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(l.tar(pw)) }()
		return pr, nil
	}, tarball.WithMediaType(types.OCILayer))
}
