package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/harness"
)

func TestProgressLine(t *testing.T) {
	assert.Nil(t, progressLine(nil, func() time.Duration { return time.Second }), "no terminal, no progress line")

	var b bytes.Buffer
	p := progressLine(&b, func() time.Duration { return 2400 * time.Millisecond })
	require.NotNil(t, p)
	p(1, 3, 0)
	p(2, 3, 1)
	p(3, 3, 1)
	assert.Equal(t, "\r1/3 hosts, 0 failed, 2s \r2/3 hosts, 1 failed, 2s \r3/3 hosts, 1 failed, 2s \n", b.String())
}

// unreachableInventory writes an inventory of n hosts in k8s_cluster whose
// SSH port on loopback is closed: each host ends quickly as unreachable.
func unreachableInventory(t *testing.T, n int) string {
	t.Helper()
	port := harness.FreePort(t)
	var hosts strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&hosts, "node%d ansible_host=127.0.0.1 ansible_port=%d ansible_user=nobody\n", i, port)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "hosts.ini")
	require.NoError(t, os.WriteFile(p, []byte("[kube_control_plane]\n"+hosts.String()+"[k8s_cluster:children]\nkube_control_plane\n"), 0o644))
	t.Setenv("HOME", dir)
	t.Setenv("SSH_AUTH_SOCK", "")
	return p
}

// `layercheck verify` with standard error on a real pseudo-terminal shows
// the progress line (hosts done / total, failed so far, elapsed), ended by
// a newline; the report on standard output carries none of it.
func TestVerifyProgressOnTerminal(t *testing.T) {
	inv := unreachableInventory(t, 3)
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	defer ptmx.Close()
	require.True(t, isTerminal(tty))

	// Read the terminal while verify writes to it; the data is taken
	// before the terminal side is closed (Linux drops what is unread).
	var mu sync.Mutex
	var seen strings.Builder
	lastLine := make(chan struct{})
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			seen.Write(buf[:n])
			if strings.Contains(seen.String(), "3/3 hosts") && strings.HasSuffix(seen.String(), "\n") {
				close(lastLine)
				mu.Unlock()
				return
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = Run(ctx, []string{"verify", "-i", inv, "--connect-timeout", "5s"}, Streams{In: strings.NewReader(""), Out: &out, ErrOut: tty})
	require.Equal(t, 1, ExitCode(err), "%v\n%s", err, out.String())
	select {
	case <-lastLine:
	case <-ctx.Done():
	}
	require.NoError(t, tty.Close())
	mu.Lock()
	term := seen.String()
	mu.Unlock()

	assert.Regexp(t, `\r1/3 hosts, 1 failed, \d+s `, term)
	assert.Regexp(t, `\r3/3 hosts, 3 failed, \d+s \r?\n`, term, "the last host ends the line")
	assert.Contains(t, out.String(), "UNREACHABLE")
	assert.NotContains(t, out.String(), "hosts, ", "no progress in the report")
}

// When standard error is no terminal (a file, a pipe: CI logs) there is no
// progress line.
func TestVerifyNoProgressWithoutTerminal(t *testing.T) {
	inv := unreachableInventory(t, 2)
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	defer f.Close()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	piped := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		piped <- string(b)
	}()

	for name, errOut := range map[string]*os.File{"file": f, "pipe": w} {
		require.False(t, isTerminal(errOut), name)
		var out bytes.Buffer
		err := Run(context.Background(), []string{"verify", "-i", inv, "--connect-timeout", "5s"}, Streams{In: strings.NewReader(""), Out: &out, ErrOut: errOut})
		require.Equal(t, 1, ExitCode(err), "%s: %v\n%s", name, err, out.String())
		assert.Contains(t, out.String(), "2 hosts: 0 ok", name)
	}
	require.NoError(t, w.Close())
	fileErr, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	for name, s := range map[string]string{"file": string(fileErr), "pipe": <-piped} {
		assert.NotContains(t, s, "hosts, ", name)
		assert.NotContains(t, s, "\r", name)
	}
}
