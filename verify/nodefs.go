package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
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
		fi, err := env.fsys().Lstat(env.Path(next))
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
		target, err := env.fsys().Readlink(env.Path(next))
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
	ents, err := env.fsys().ReadDir(env.Path(dir))
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
	_, err = env.fsys().Stat(env.Path(r))
	return err == nil
}

// nodeRead reads a node file, following symlinks inside Root.
func nodeRead(env *Env, p string) ([]byte, error) {
	r, err := nodeResolve(env, p)
	if err != nil {
		return nil, err
	}
	return env.fsys().ReadFile(env.Path(r))
}

// statNode stats a node path, following symlinks inside Root.
func statNode(env *Env, p string) (os.FileInfo, error) {
	r, err := nodeResolve(env, p)
	if err != nil {
		return nil, err
	}
	return env.fsys().Stat(env.Path(r))
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
