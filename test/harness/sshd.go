package harness

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// SSHDPath is OpenSSH's server as Debian's openssh-server installs it
// (scripts/ssh-deps.sh installs it).
const SSHDPath = "/usr/sbin/sshd"

// SFTPServerPath is Debian's sftp-server.
const SFTPServerPath = "/usr/lib/openssh/sftp-server"

// KeyPair is a throw-away ed25519 key written as an OpenSSH private key
// file (mode 0600) with its public key.
type KeyPair struct {
	File   string
	Signer ssh.Signer
	Public ssh.PublicKey
}

// NewKeyPair makes a key and writes it to file.
func NewKeyPair(t testing.TB, file string) *KeyPair {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, pem.EncodeToMemory(blk), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return &KeyPair{File: file, Signer: s, Public: s.PublicKey()}
}

// SSHD is a real OpenSSH sshd on a loopback port with its own host key.
type SSHD struct {
	Addr    string // 127.0.0.1:port
	Port    int
	HostKey *KeyPair
	// Log is the file sshd logs to (LogLevel DEBUG1).
	Log string
	cmd *exec.Cmd
}

// RequireSSHD fails the test (it does not skip) when sshd cannot run here:
// OpenSSH's server is missing, or the test does not run as root (sshd's
// privilege separation needs it).
func RequireSSHD(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(SSHDPath); err != nil {
		t.Fatalf("%s not found: install OpenSSH's server (make ssh-deps, or apt-get install -y openssh-server); the SSH tests need a real sshd", SSHDPath)
	}
	if os.Geteuid() != 0 {
		t.Fatalf("the SSH tests start sshd on loopback ports and need root (uid 0) for its privilege separation; run them as root (CI does)")
	}
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatalf("sshd's privilege separation directory /run/sshd: %v", err)
	}
}

// StartSSHD starts sshd on 127.0.0.1 with a new host key, accepting the
// public keys in authorizedKeys (a file readable by every user), until the
// test ends. Extra lines are appended to sshd_config.
func StartSSHD(t testing.TB, authorizedKeys string, extra ...string) *SSHD {
	t.Helper()
	RequireSSHD(t)
	dir := t.TempDir()
	hk := NewKeyPair(t, filepath.Join(dir, "ssh_host_ed25519_key"))
	var s *SSHD
	for attempt := 0; ; attempt++ {
		port := FreePort(t)
		s = &SSHD{Addr: fmt.Sprintf("127.0.0.1:%d", port), Port: port, HostKey: hk, Log: filepath.Join(dir, fmt.Sprintf("sshd-%d.log", attempt))}
		cfg := strings.Join(append([]string{
			fmt.Sprintf("Port %d", port),
			"ListenAddress 127.0.0.1",
			"HostKey " + hk.File,
			"PidFile none",
			"AuthorizedKeysFile " + authorizedKeys,
			"StrictModes no",
			"UsePAM no",
			"PasswordAuthentication no",
			"KbdInteractiveAuthentication no",
			"PubkeyAuthentication yes",
			"PermitRootLogin prohibit-password",
			"AllowTcpForwarding yes",
			"MaxSessions 50",
			"MaxStartups 200",
			"LogLevel DEBUG1",
			"Subsystem sftp " + SFTPServerPath,
		}, extra...), "\n") + "\n"
		cf := filepath.Join(dir, "sshd_config")
		if err := os.WriteFile(cf, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(SSHDPath, "-t", "-f", cf).CombinedOutput(); err != nil {
			t.Fatalf("sshd -t: %v: %s", err, out)
		}
		s.cmd = exec.Command(SSHDPath, "-D", "-f", cf, "-E", s.Log)
		var stderr bytes.Buffer
		s.cmd.Stderr = &stderr
		if err := s.cmd.Start(); err != nil {
			t.Fatalf("start sshd: %v", err)
		}
		if waitPort(s.Addr, 10*time.Second) {
			break
		}
		s.Stop()
		log, _ := os.ReadFile(s.Log)
		if attempt > 3 {
			t.Fatalf("sshd on %s did not listen: %s %s", s.Addr, stderr.String(), log)
		}
	}
	t.Cleanup(s.Stop)
	return s
}

func waitPort(addr string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// Stop ends sshd (its listener; sessions in progress end with it).
func (s *SSHD) Stop() {
	if s.cmd != nil && s.cmd.Process != nil && s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// KnownHostsLine is the known_hosts line for this server.
func (s *SSHD) KnownHostsLine() string {
	return knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, s.HostKey.Public)
}

// AuthorizedKeysDir makes a directory every user can read (for
// AuthorizedKeysFile, which sshd reads as the login user), removed when
// the test ends, and writes the public keys to authorized_keys there.
func AuthorizedKeysDir(t testing.TB, keys ...ssh.PublicKey) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "layercheck-sshd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, k := range keys {
		b.Write(ssh.MarshalAuthorizedKey(k))
	}
	f := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}
