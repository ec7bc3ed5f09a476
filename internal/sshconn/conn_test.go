package sshconn

import (
	"io"
	"strings"
	"testing"

	"github.com/pkg/sftp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An account whose login shell is /sbin/nologin prints a line where
// sftp-server's first packet is due; that line is what the error quotes
// (seen on nodes where the ssh user was kubespray's kube_owner).
func TestHeadRecorderQuotesWhatTheAccountPrinted(t *testing.T) {
	head := &headRecorder{r: strings.NewReader("This account is currently not available.\n")}
	_, err := sftp.NewClientPipe(head, nopWriteCloser{io.Discard})
	require.Error(t, err)
	head.drain()
	assert.Equal(t, "This account is currently not available.", head.text())

	bin := &headRecorder{r: strings.NewReader("\x00\x00\x00\x05\x02\x00\x00\x00\x03")}
	_, _ = io.ReadAll(bin)
	assert.Empty(t, bin.text(), "protocol bytes are not quoted")
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
