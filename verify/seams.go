package verify

import (
	"context"
	"crypto/tls"
	"io"
	"io/fs"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
)

// NodeFS reads the node's files. Names are host paths as Env.Path gives
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

// fsys is the NodeFS the layers read through: Env.FS, or OSFS when nil.
func (e *Env) fsys() NodeFS {
	if e.FS != nil {
		return e.FS
	}
	return OSFS{}
}

// DialFunc opens a connection as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// dial opens a connection from the node to addr (after AddrMap) within
// timeout: through Env.Dial when set (e.g. an SSH connection to the node),
// else from this machine.
func (e *Env) dial(ctx context.Context, network, addr string, timeout time.Duration) (net.Conn, error) {
	if e.Dial == nil {
		return (&net.Dialer{Timeout: timeout}).DialContext(ctx, network, addr)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return e.Dial(ctx, network, addr)
}

// dialTLS is dial followed by a TLS handshake with cfg, within timeout.
func (e *Env) dialTLS(ctx context.Context, addr string, cfg *tls.Config, timeout time.Duration) (net.Conn, error) {
	if e.Dial == nil {
		return (&tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: cfg}).DialContext(ctx, "tcp", addr)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	raw, err := e.Dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := tls.Client(raw, cfg)
	if err := c.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	return c, nil
}

// grpcDialOptions make the etcd client dial through Env.Dial when set.
func (e *Env) grpcDialOptions(timeout time.Duration) []grpc.DialOption {
	if e.Dial == nil {
		return nil
	}
	return []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		return e.dial(ctx, "tcp", addr, timeout)
	})}
}
