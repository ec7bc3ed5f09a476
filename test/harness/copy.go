package harness

import (
	"io/fs"
	"os"
	"path/filepath"
)

// CopyTree copies a directory tree (regular files, directories and
// symlinks as links) from src to dst, so a test may change the copy of a
// read-only fixture.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, out)
		case info.IsDir():
			return os.MkdirAll(out, 0o755)
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(out, data, info.Mode().Perm()|0o200)
		}
	})
}
