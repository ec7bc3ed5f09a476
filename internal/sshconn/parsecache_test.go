package sshconn

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// The parses are kept while the files stay as they are: a host key added
// to known_hosts (by accept-new, or by the operator between two runs of a
// long-lived process) is seen by the next dial, and a key file replaced
// by another is read again.
func TestParsesFollowTheFiles(t *testing.T) {
	dir := t.TempDir()
	kh := filepath.Join(dir, "known_hosts")
	tg := &Target{Name: "node1", Host: "192.0.2.11", Port: 22, KnownHostsFiles: []string{kh}}
	remote := &net.TCPAddr{IP: net.ParseIP(tg.Host), Port: 22}
	other, key := edKey(t), edKey(t)
	require.NoError(t, os.WriteFile(kh, []byte(knownhosts.Line([]string{"192.0.2.12"}, other)+"\n"), 0o600))
	cb, _, err := hostKeyCallback(tg, Options{})
	require.NoError(t, err)
	require.ErrorContains(t, cb(tg.Addr(), remote, key), "is not known")

	f, err := os.OpenFile(kh, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = fmt.Fprintln(f, knownhosts.Line([]string{tg.Host}, key))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	cb, _, err = hostKeyCallback(tg, Options{})
	require.NoError(t, err)
	assert.NoError(t, cb(tg.Addr(), remote, key), "a key added to known_hosts was not seen")

	id := filepath.Join(dir, "id")
	writeKey := func(k any) ssh.PublicKey {
		blk, err := ssh.MarshalPrivateKey(k, "")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(id, pem.EncodeToMemory(blk), 0o600))
		s, err := ssh.NewSignerFromKey(k)
		require.NoError(t, err)
		return s.PublicKey()
	}
	_, priv1, _ := ed25519.GenerateKey(rand.Reader)
	pub1 := writeKey(priv1)
	require.Equal(t, pub1.Marshal(), readKeyFile(id).signer.PublicKey().Marshal())
	_, priv2, _ := ed25519.GenerateKey(rand.Reader)
	pub2 := writeKey(priv2)
	// the same size: a new modification time tells them apart
	require.NoError(t, os.Chtimes(id, time.Time{}, time.Now().Add(time.Second)))
	assert.Equal(t, pub2.Marshal(), readKeyFile(id).signer.PublicKey().Marshal(), "a replaced key file was not read again")

	require.NoError(t, os.Remove(id))
	assert.ErrorIs(t, readKeyFile(id).readErr, os.ErrNotExist)
}

func edKey(t *testing.T) ssh.PublicKey {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	k, err := ssh.NewPublicKey(pub)
	require.NoError(t, err)
	return k
}

// BenchmarkClientConfig is what each dial of a fleet spends before it
// connects: its private key (RSA 3072, as ssh-keygen makes by default on
// older systems) and a known_hosts of 100 machines with three host keys
// each. "first" parses them, as every dial did; "fleet" is a dial after
// the first.
func BenchmarkClientConfig(b *testing.B) {
	dir := b.TempDir()
	rk, err := rsa.GenerateKey(rand.Reader, 3072)
	require.NoError(b, err)
	var lines []byte
	for i := range 100 {
		for _, k := range []any{&rk.PublicKey, ed25519.PublicKey(make([]byte, ed25519.PublicKeySize))} {
			pk, err := ssh.NewPublicKey(k)
			require.NoError(b, err)
			lines = fmt.Appendf(lines, "%s\n", knownhosts.Line([]string{fmt.Sprintf("192.0.2.%d", 11+i)}, pk))
		}
	}
	kh, id := filepath.Join(dir, "known_hosts"), filepath.Join(dir, "id_rsa")
	require.NoError(b, os.WriteFile(kh, lines, 0o600))
	blk, err := ssh.MarshalPrivateKey(rk, "")
	require.NoError(b, err)
	require.NoError(b, os.WriteFile(id, pem.EncodeToMemory(blk), 0o600))
	tg := &Target{Name: "node50", User: "ansible", Host: "192.0.2.60", Port: 22, KeyFiles: []string{id}, KnownHostsFiles: []string{kh}}
	dial := func(b *testing.B) {
		_, cleanup, err := clientConfig(tg, Options{AgentSocket: "/nonexistent"})
		if err != nil {
			b.Fatal(err)
		}
		cleanup()
	}
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			parsedFiles.Clear()
			dial(b)
		}
	})
	b.Run("fleet", func(b *testing.B) {
		for b.Loop() {
			dial(b)
		}
	})
}
