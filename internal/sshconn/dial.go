package sshconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Options are how Dial connects, beyond the Target.
type Options struct {
	// Timeout bounds the TCP connection and the SSH handshake (default 10s,
	// Ansible's default timeout).
	Timeout time.Duration
	// AcceptNewHostKeys adds an unknown host key to the first known_hosts
	// file and goes on, as OpenSSH's StrictHostKeyChecking=accept-new; a
	// changed host key is refused all the same.
	AcceptNewHostKeys bool
	// AgentSocket is the ssh-agent's socket (default $SSH_AUTH_SOCK; empty
	// and unset: no agent).
	AgentSocket string
}

// knownHostsMu serialises appends to known_hosts files.
var knownHostsMu sync.Mutex

// Client dials t (through its jump host when it has one) and completes the
// SSH handshake within opts.Timeout. The error names the host, the address
// and what failed (connect, host key, authentication).
func Client(ctx context.Context, t *Target, opts Options) (*ssh.Client, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	cfg, cleanup, err := clientConfig(t, opts)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	var conn net.Conn
	if t.Jump != nil {
		jc, err := Client(ctx, t.Jump, opts)
		if err != nil {
			return nil, fmt.Errorf("via jump host %s: %w", t.Jump.Name, err)
		}
		conn, err = jc.DialContext(ctx, "tcp", t.Addr())
		if err != nil {
			jc.Close()
			return nil, fmt.Errorf("connect to %s through jump host %s: %w", t.Addr(), t.Jump.Name, err)
		}
		c, err := handshake(ctx, conn, t, cfg, opts.Timeout)
		if err != nil {
			jc.Close()
			return nil, err
		}
		go func() { c.Wait(); jc.Close() }()
		return c, nil
	}
	conn, err = (&net.Dialer{Timeout: opts.Timeout}).DialContext(ctx, "tcp", t.Addr())
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", t.Addr(), err)
	}
	return handshake(ctx, conn, t, cfg, opts.Timeout)
}

func handshake(ctx context.Context, conn net.Conn, t *Target, cfg *ssh.ClientConfig, timeout time.Duration) (*ssh.Client, error) {
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	type res struct {
		c     ssh.Conn
		chans <-chan ssh.NewChannel
		reqs  <-chan *ssh.Request
		err   error
	}
	done := make(chan res, 1)
	go func() {
		c, chans, reqs, err := ssh.NewClientConn(conn, t.Addr(), cfg)
		done <- res{c, chans, reqs, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			conn.Close()
			var ne net.Error
			if errors.As(r.err, &ne) && ne.Timeout() {
				return nil, fmt.Errorf("ssh handshake with %s@%s: not done within %s (is an SSH server listening there?): %w", t.User, t.Addr(), timeout, r.err)
			}
			return nil, fmt.Errorf("ssh handshake with %s@%s: %w", t.User, t.Addr(), r.err)
		}
		_ = conn.SetDeadline(time.Time{})
		return ssh.NewClient(r.c, r.chans, r.reqs), nil
	case <-ctx.Done():
		conn.Close()
		return nil, fmt.Errorf("ssh handshake with %s@%s: not done within %s (is an SSH server listening there?): %w", t.User, t.Addr(), timeout, ctx.Err())
	}
}

func clientConfig(t *Target, opts Options) (*ssh.ClientConfig, func(), error) {
	cleanup := func() {}
	var signers []ssh.Signer
	var keyErrs []string
	files := t.KeyFiles
	explicit := len(files) > 0
	if !explicit {
		if home, err := os.UserHomeDir(); err == nil {
			for _, n := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
				files = append(files, filepath.Join(home, ".ssh", n))
			}
		}
	}
	for _, f := range files {
		k := readKeyFile(f)
		if k.readErr != nil {
			if explicit {
				keyErrs = append(keyErrs, fmt.Sprintf("private key %s: %v", f, k.readErr))
			}
			continue
		}
		if err := k.parseErr; err != nil {
			var pm *ssh.PassphraseMissingError
			if errors.As(err, &pm) {
				keyErrs = append(keyErrs, fmt.Sprintf("private key %s is passphrase-protected: add it to ssh-agent (ssh-add %s) and run with SSH_AUTH_SOCK set", f, f))
			} else {
				keyErrs = append(keyErrs, fmt.Sprintf("private key %s: %v", f, err))
			}
			continue
		}
		signers = append(signers, k.signer)
	}
	var auths []ssh.AuthMethod
	sock := opts.AgentSocket
	if sock == "" {
		sock = os.Getenv("SSH_AUTH_SOCK")
	}
	if sock != "" {
		if ac, err := net.DialTimeout("unix", sock, 2*time.Second); err == nil {
			ag := agent.NewClient(ac)
			cleanup = func() { ac.Close() }
			agentSigners, err := ag.Signers()
			if err == nil {
				signers = append(signers, agentSigners...)
			}
		}
	}
	if len(signers) == 0 {
		msg := "no private key to log in with: set ansible_ssh_private_key_file or load a key into ssh-agent (SSH_AUTH_SOCK)"
		if len(keyErrs) > 0 {
			msg = strings.Join(keyErrs, "; ")
		}
		cleanup()
		return nil, nil, fmt.Errorf("host %s: %s", t.Name, msg)
	}
	auths = append(auths, ssh.PublicKeys(signers...))
	cb, algos, err := hostKeyCallback(t, opts)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return &ssh.ClientConfig{
		User:              t.User,
		Auth:              auths,
		HostKeyCallback:   cb,
		HostKeyAlgorithms: algos,
		Timeout:           opts.Timeout,
	}, cleanup, nil
}

// hostKeyCallback checks the server's key against t.KnownHostsFiles as
// OpenSSH does: a known key must match; an unknown one is refused unless
// StrictHostKeyChecking is no or accept-new (or opts.AcceptNewHostKeys),
// when it is added to the first file. It also returns the key algorithms
// known for the host, so the server is asked for the key type on file.
func hostKeyCallback(t *Target, opts Options) (ssh.HostKeyCallback, []string, error) {
	var files []string
	for _, f := range t.KnownHostsFiles {
		if f == "/dev/null" {
			continue
		}
		if _, err := os.Stat(f); err == nil {
			files = append(files, f)
		}
	}
	accept := t.StrictHostKeyChecking == "accept-new" || t.StrictHostKeyChecking == "no" || opts.AcceptNewHostKeys
	check := func(string, net.Addr, ssh.PublicKey) error { return &knownhosts.KeyError{} }
	if len(files) > 0 {
		cb, err := knownHosts(files)
		if err != nil {
			return nil, nil, fmt.Errorf("host %s: known_hosts: %v", t.Name, err)
		}
		check = cb
	}
	// Key types on file for this host, via a probe key that cannot match.
	var algos []string
	probeAddr := &net.TCPAddr{IP: net.IPv4zero, Port: t.Port}
	if ip := net.ParseIP(t.Host); ip != nil {
		probeAddr.IP = ip
	}
	// The callback takes the dialled "host:port", as ssh passes it; the
	// normalized form drops port 22, which the callback cannot split.
	if err := check(t.Addr(), probeAddr, probeKey{}); err != nil {
		var ke *knownhosts.KeyError
		if errors.As(err, &ke) {
			seen := map[string]bool{}
			for _, k := range ke.Want {
				for _, a := range algorithmsFor(k.Key.Type()) {
					if !seen[a] {
						seen[a] = true
						algos = append(algos, a)
					}
				}
			}
		}
	}
	cb := func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		err := check(hostname, remote, key)
		if err == nil {
			return nil
		}
		var ke *knownhosts.KeyError
		if !errors.As(err, &ke) {
			return err
		}
		hostname = knownhosts.Normalize(hostname)
		if len(ke.Want) > 0 {
			var where []string
			for _, w := range ke.Want {
				where = append(where, fmt.Sprintf("%s:%d", w.Filename, w.Line))
			}
			return fmt.Errorf("REMOTE HOST IDENTIFICATION HAS CHANGED for %s: it offered %s key %s, which does not match %s; if the host was reinstalled, remove the old key with ssh-keygen -R '%s' and check the new one", hostname, key.Type(), ssh.FingerprintSHA256(key), strings.Join(where, ", "), hostname)
		}
		if !accept {
			return fmt.Errorf("host key of %s is not known (%s key %s; known_hosts files: %s): check it and add it (ssh-keyscan -p %d %s >> ~/.ssh/known_hosts), or run with --accept-new-host-keys", hostname, key.Type(), ssh.FingerprintSHA256(key), strings.Join(t.KnownHostsFiles, ", "), t.Port, t.Host)
		}
		if len(t.KnownHostsFiles) == 0 || t.KnownHostsFiles[0] == "/dev/null" {
			return nil
		}
		knownHostsMu.Lock()
		defer knownHostsMu.Unlock()
		f := t.KnownHostsFiles[0]
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			return fmt.Errorf("add host key of %s to %s: %v", hostname, f, err)
		}
		fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("add host key of %s to %s: %v", hostname, f, err)
		}
		defer fh.Close()
		_, err = fh.WriteString(knownhosts.Line([]string{knownhosts.Normalize(t.Addr())}, key) + "\n")
		return err
	}
	return cb, algos, nil
}

func algorithmsFor(keyType string) []string {
	if keyType == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{keyType}
}

// probeKey is a public key no known_hosts line holds.
type probeKey struct{}

func (probeKey) Type() string                        { return "layercheck-probe" }
func (probeKey) Marshal() []byte                     { return []byte("layercheck-probe") }
func (probeKey) Verify([]byte, *ssh.Signature) error { return errors.New("probe key") }
