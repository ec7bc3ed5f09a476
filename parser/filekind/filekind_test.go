package filekind

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOfRealFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for path, want := range map[string]string{fifo: "FIFO", dir: "directory", "/dev/null": "character device"} {
		st, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, want, Of(st.Mode()), path)
	}
	assert.Equal(t, "socket", Of(fs.ModeSocket))
	assert.Equal(t, "block device", Of(fs.ModeDevice))
	assert.Equal(t, "irregular file", Of(fs.ModeIrregular))
}
