package verify

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingFS counts the lookups Resolve makes: over SFTP each is a round
// trip.
type countingFS struct {
	OSFS
	mu              sync.Mutex
	lstat, readlink int
}

func (c *countingFS) Lstat(name string) (fs.FileInfo, error) {
	c.mu.Lock()
	c.lstat++
	c.mu.Unlock()
	return c.OSFS.Lstat(name)
}

func (c *countingFS) Readlink(name string) (string, error) {
	c.mu.Lock()
	c.readlink++
	c.mu.Unlock()
	return c.OSFS.Readlink(name)
}

// With a LinkCache, the directories and links every file shares are looked
// up once per node: kubeadm's nine certificates read through
// /etc/kubernetes/pki cost one lookup each after the first, where each
// walked /etc, /etc/kubernetes, the link, its target's directories again
// (768 lookups on a node of the fleet, 96 with the cache). Answers are
// the same, missing files are not remembered.
func TestResolveLinkCache(t *testing.T) {
	root := t.TempDir()
	ssl := filepath.Join(root, "etc/kubernetes/ssl")
	require.NoError(t, os.MkdirAll(ssl, 0o755))
	require.NoError(t, os.Symlink("/etc/kubernetes/ssl", filepath.Join(root, "etc/kubernetes/pki")))
	names := []string{"ca.crt", "apiserver.crt", "apiserver-kubelet-client.crt", "front-proxy-ca.crt", "front-proxy-client.crt"}
	for _, n := range names {
		require.NoError(t, os.WriteFile(filepath.Join(ssl, n), []byte(n), 0o644))
	}

	resolveAll := func(f FS) []string {
		var out []string
		for _, n := range names {
			r, err := f.Resolve("/etc/kubernetes/pki/" + n)
			require.NoError(t, err)
			out = append(out, r)
		}
		return out
	}
	plain := &countingFS{}
	want := resolveAll(FS{Root: root, Sys: plain})
	assert.Equal(t, "/etc/kubernetes/ssl/ca.crt", want[0])
	// each file: /etc, /etc/kubernetes, pki (a link), then /etc,
	// /etc/kubernetes, ssl and the file again
	assert.Equal(t, 7*len(names), plain.lstat)
	assert.Equal(t, len(names), plain.readlink)

	cached := &countingFS{}
	f := FS{Root: root, Sys: cached, Links: NewLinkCache()}
	assert.Equal(t, want, resolveAll(f))
	// /etc, /etc/kubernetes, pki, ssl once; each file once
	assert.Equal(t, 4+len(names), cached.lstat)
	assert.Equal(t, 1, cached.readlink)
	assert.Equal(t, want, resolveAll(f), "a second pass asks nothing")
	assert.Equal(t, 4+len(names), cached.lstat)

	data, err := f.Read("/etc/kubernetes/pki/ca.crt")
	require.NoError(t, err)
	assert.Equal(t, "ca.crt", string(data))

	// A missing file is looked up each time: it may be made meanwhile.
	_, err = f.Resolve("/etc/kubernetes/pki/sa.key")
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, os.WriteFile(filepath.Join(ssl, "sa.key"), []byte("k"), 0o600))
	r, err := f.Resolve("/etc/kubernetes/pki/sa.key")
	require.NoError(t, err)
	assert.Equal(t, "/etc/kubernetes/ssl/sa.key", r)

	// The layers of a node resolve at once.
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.Equal(t, want, resolveAll(FS{Root: root, Sys: cached, Links: f.Links}))
		}()
	}
	wg.Wait()
}
