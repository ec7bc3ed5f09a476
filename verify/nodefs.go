package verify

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"
)

// nodeResolve resolves every symlink in the node path p inside Env.Root, as
// the node would see it: an absolute link target such as
// /etc/kubernetes/pki -> /etc/kubernetes/ssl stays under Root. It returns
// the node path of the final file or directory.
func nodeResolve(env *Env, p string) (string, error) {
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
		fi, err := os.Lstat(env.Path(next))
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(env.Path(next))
		if err != nil {
			return "", err
		}
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

// nodeList lists the names of the regular files (after symlinks) in a node
// directory, sorted; a missing directory gives an error.
func nodeList(env *Env, dir string) ([]string, error) {
	ents, err := os.ReadDir(env.Path(dir))
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

// nodeExists reports whether a node path exists (following symlinks inside Root).
func nodeExists(env *Env, p string) bool {
	r, err := nodeResolve(env, p)
	if err != nil {
		return false
	}
	_, err = os.Stat(env.Path(r))
	return err == nil
}

// nodeRead reads a node file, following symlinks inside Root.
func nodeRead(env *Env, p string) ([]byte, error) {
	r, err := nodeResolve(env, p)
	if err != nil {
		return nil, err
	}
	return readRegular(env.Path(r))
}

// maxNodeFileBytes bounds a node file read (configs, certificates,
// kubeconfigs: kilobytes).
const maxNodeFileBytes = 64 << 20

// readRegular reads a regular file of at most maxNodeFileBytes without
// ever blocking: a FIFO, socket or device is an error naming its kind
// (the *fs.PathError keeps the path for nodeErr).
func readRegular(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("is a %s, not a file", fileKind(st.Mode()))}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxNodeFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxNodeFileBytes {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d bytes", maxNodeFileBytes)}
	}
	return b, nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m.IsDir():
		return "directory"
	}
	return "irregular file"
}

// statNode stats a node path, following symlinks inside Root.
func statNode(env *Env, p string) (os.FileInfo, error) {
	r, err := nodeResolve(env, p)
	if err != nil {
		return nil, err
	}
	return os.Stat(env.Path(r))
}

// nodeErr is err without the Root-prefixed path a *fs.PathError carries,
// so messages name node paths only.
func nodeErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
