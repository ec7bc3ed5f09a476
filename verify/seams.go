package verify

import (
	"context"
	"io"
	"io/fs"
	"net"
	"os"
)

// NodeFS reads the node's files. Names are host paths as FS.Path gives
// them (Root joined with the node path). Errors are *fs.PathError wrapping
// the errno the node's kernel gave (syscall.ENOENT, syscall.EACCES, ...),
// as package os returns them, so messages read the same whichever NodeFS
// read the node.
type NodeFS interface {
	Lstat(name string) (fs.FileInfo, error)
	Stat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
	// ReadDir lists a directory sorted by name, as os.ReadDir.
	ReadDir(name string) ([]fs.DirEntry, error)
	ReadFile(name string) ([]byte, error)
	// Open opens a file for random reads (Go build information of a binary).
	Open(name string) (NodeFile, error)
}

// NodeFile is an open node file.
type NodeFile interface {
	io.ReaderAt
	io.Closer
}

// OSFS is the NodeFS of this machine (package os).
type OSFS struct{}

func (OSFS) Lstat(name string) (fs.FileInfo, error)     { return os.Lstat(name) }
func (OSFS) Stat(name string) (fs.FileInfo, error)      { return os.Stat(name) }
func (OSFS) Readlink(name string) (string, error)       { return os.Readlink(name) }
func (OSFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }
func (OSFS) ReadFile(name string) ([]byte, error)       { return os.ReadFile(name) }
func (OSFS) Open(name string) (NodeFile, error)         { return os.Open(name) }

// DialFunc opens a connection as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)
