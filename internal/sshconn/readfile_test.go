package sshconn

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pkg/sftp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requestCounter reads the client's SFTP packets on their way to the
// server and counts them by type.
type requestCounter struct {
	r   io.Reader
	mu  sync.Mutex
	buf []byte
	n   map[byte]int
}

func (c *requestCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = append(c.buf, p[:n]...)
	for len(c.buf) >= 5 {
		l := int(binary.BigEndian.Uint32(c.buf))
		if len(c.buf) < 4+l {
			break
		}
		c.n[c.buf[4]]++
		c.buf = c.buf[4+l:]
	}
	return n, err
}

func (c *requestCounter) reset() map[byte]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.n
	c.n = map[byte]int{}
	return old
}

type pipeRWC struct {
	io.Reader
	io.WriteCloser
}

// SFTP request types (draft-ietf-secsh-filexfer-02).
const (
	fxpOpen  = 3
	fxpClose = 4
	fxpRead  = 5
	fxpFstat = 8
)

// ReadFile takes one read request for a file of known size, where
// io.ReadAll's growing buffer took one per step and one more to see EOF
// (eight for a 5 KB kubeconfig): over SSH each is a round trip, on every
// file of every host. Files of unknown size (/proc) and files above SFTP's
// packet size are still read whole.
func TestReadFileRoundTrips(t *testing.T) {
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	counter := &requestCounter{r: toServer, n: map[byte]int{}}
	srv, err := sftp.NewServer(pipeRWC{counter, fromServer})
	require.NoError(t, err)
	go func() { _ = srv.Serve() }()
	cl, err := sftp.NewClientPipe(toClient, fromClient)
	require.NoError(t, err)
	t.Cleanup(func() { fromServer.Close(); toServer.Close(); cl.Close() })
	fsys := sftpFS{cl}

	dir := t.TempDir()
	for _, tc := range []struct {
		size  int
		reads int
	}{{0, 1}, {1, 1}, {5000, 1}, {32 << 10, 1}, {100 << 10, 4}} {
		p := filepath.Join(dir, "f")
		want := bytes.Repeat([]byte("0123456789abcdef"), tc.size/16+1)[:tc.size]
		require.NoError(t, os.WriteFile(p, want, 0o600))
		counter.reset()
		got, err := fsys.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, want, got, "size %d", tc.size)
		n := counter.reset()
		assert.Equal(t, tc.reads, n[fxpRead], "size %d: read requests", tc.size)
		assert.Equal(t, 1, n[fxpOpen], "size %d", tc.size)
		assert.Equal(t, 1, n[fxpFstat], "size %d", tc.size)
		assert.Equal(t, 1, n[fxpClose], "size %d", tc.size)
	}

	// /proc reports size 0 for a file with content: read to EOF.
	want, err := os.ReadFile("/proc/version")
	require.NoError(t, err)
	require.NotEmpty(t, want)
	got, err := fsys.ReadFile("/proc/version")
	require.NoError(t, err)
	assert.Equal(t, want, got)

	_, err = fsys.ReadFile(dir)
	require.Error(t, err, "a directory")
	_, err = fsys.ReadFile(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
