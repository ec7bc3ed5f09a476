package sshconn

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// A host on port 22 whose known_hosts line holds only its ed25519 key must
// be asked for that key type: sshd offers ECDSA first, and OpenSSH, like
// this, prefers the types on file. Found on kubespray nodes, where every
// verify failed with "REMOTE HOST IDENTIFICATION HAS CHANGED".
func TestHostKeyAlgorithmsFromKnownHosts(t *testing.T) {
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	edKey, err := ssh.NewPublicKey(edPub)
	require.NoError(t, err)
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ecKey, err := ssh.NewPublicKey(&ec.PublicKey)
	require.NoError(t, err)

	for _, port := range []int{22, 2222} {
		kh := filepath.Join(t.TempDir(), "known_hosts")
		tg := &Target{Name: "node1", Host: "192.0.2.11", Port: port, KnownHostsFiles: []string{kh}}
		require.NoError(t, os.WriteFile(kh, []byte(knownhosts.Line([]string{knownhosts.Normalize(tg.Addr())}, edKey)+"\n"), 0o600))
		cb, algos, err := hostKeyCallback(tg, Options{})
		require.NoError(t, err)
		assert.Equal(t, []string{ssh.KeyAlgoED25519}, algos, "port %d", port)
		remote := &net.TCPAddr{IP: net.ParseIP(tg.Host), Port: port}
		assert.NoError(t, cb(tg.Addr(), remote, edKey), "port %d", port)
		err = cb(tg.Addr(), remote, ecKey)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "REMOTE HOST IDENTIFICATION HAS CHANGED")
	}
}
