package sshconn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	shellquote "github.com/kballard/go-shellquote"
	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/layercheck/layercheck/verify"
)

// SFTPServers are the paths of OpenSSH's sftp-server tried, in order, when
// the SFTP subsystem runs through sudo (Debian/Ubuntu, RHEL/Fedora,
// Arch/SUSE, others).
var SFTPServers = []string{"/usr/lib/openssh/sftp-server", "/usr/libexec/openssh/sftp-server", "/usr/lib/ssh/sftp-server", "/usr/libexec/sftp-server"}

// Conn is an open connection to one node: its files over SFTP, its
// commands over SSH sessions, and connections from the node.
type Conn struct {
	Target *Target
	Client *ssh.Client
	SFTP   *sftp.Client

	sftpSession *ssh.Session
	sftpStderr  *bytes.Buffer
	closeOnce   sync.Once
}

// Dial connects to t and starts SFTP: the sftp subsystem, or with
// t.Become `sudo -n -u <become user> <sftp-server>` in a session, so files
// only root may read (private keys) are readable. Errors say what failed.
func Dial(ctx context.Context, t *Target, opts Options) (*Conn, error) {
	cl, err := Client(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	c := &Conn{Target: t, Client: cl}
	if err := c.startSFTP(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	return c, nil
}

func (c *Conn) startSFTP(ctx context.Context) error {
	t := c.Target
	type res struct {
		cl  *sftp.Client
		err error
	}
	done := make(chan res, 1)
	go func() {
		if !t.sudo() {
			cl, err := sftp.NewClient(c.Client)
			if err != nil {
				err = fmt.Errorf("host %s: start the sftp subsystem as %s: %w (is Subsystem sftp enabled in sshd_config?)", t.Name, t.User, err)
			}
			done <- res{cl, err}
			return
		}
		s, err := c.Client.NewSession()
		if err != nil {
			done <- res{nil, fmt.Errorf("host %s: open a session: %w", t.Name, err)}
			return
		}
		stdin, err1 := s.StdinPipe()
		stdout, err2 := s.StdoutPipe()
		if err := errors.Join(err1, err2); err != nil {
			s.Close()
			done <- res{nil, err}
			return
		}
		c.sftpStderr = &bytes.Buffer{}
		s.Stderr = &lockedWriter{w: c.sftpStderr}
		if err := s.Start(becomeSFTPCommand(t.BecomeUser)); err != nil {
			s.Close()
			done <- res{nil, fmt.Errorf("host %s: start sftp-server through sudo: %w", t.Name, err)}
			return
		}
		head := &headRecorder{r: stdout}
		cl, err := sftp.NewClientPipe(head, stdin)
		if err != nil {
			_ = s.Wait()
			head.drain()
			msg := strings.TrimSpace(c.sftpStderr.String())
			s.Close()
			hint := ""
			if strings.Contains(msg, "password is required") || strings.Contains(msg, "a terminal is required") {
				hint = fmt.Sprintf(": ansible_become needs passwordless sudo for %s (NOPASSWD in sudoers); layercheck never sends a become password", t.User)
			}
			if text := head.text(); text != "" {
				// The account printed text where sftp-server's first packet
				// was due: its login shell ran no command.
				hint += fmt.Sprintf(": the account printed %q instead of running the command; its login shell runs no commands (kubespray's adduser role gives the users kube and etcd the shell /sbin/nologin: log in as another user)", text)
			}
			done <- res{nil, fmt.Errorf("host %s: sftp-server through sudo -n as %s failed: %v %s%s", t.Name, t.User, err, msg, hint)}
			return
		}
		c.sftpSession = s
		done <- res{cl, nil}
	}()
	select {
	case r := <-done:
		c.SFTP = r.cl
		return r.err
	case <-ctx.Done():
		c.Client.Close()
		return fmt.Errorf("host %s: start sftp: %w", t.Name, ctx.Err())
	}
}

// becomeSFTPCommand runs the first sftp-server found through sudo -n.
func becomeSFTPCommand(user string) string {
	script := "for p in " + shellquote.Join(SFTPServers...) + `; do if [ -x "$p" ]; then exec "$p"; fi; done; echo "no sftp-server in ` + strings.Join(SFTPServers, " ") + `" >&2; exit 127`
	return shellquote.Join("sudo", "-n", "-u", user, "--", "/bin/sh", "-c", script)
}

// Close ends SFTP and the SSH connection.
func (c *Conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		if c.SFTP != nil {
			c.SFTP.Close()
		}
		if c.sftpSession != nil {
			c.sftpSession.Close()
		}
		err = c.Client.Close()
	})
	return err
}

// DialNode opens a connection from the node to addr (TCP only: SSH
// forwards streams), as verify.Env.Dial.
func (c *Conn) DialNode(ctx context.Context, network, addr string) (net.Conn, error) {
	if network != "tcp" && network != "tcp4" && network != "tcp6" {
		return nil, fmt.Errorf("dial %s %s through the SSH connection to %s: only tcp is forwarded", network, addr, c.Target.Name)
	}
	conn, err := c.Client.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial tcp %s from %s (through SSH): %w", addr, c.Target.Name, err)
	}
	return conn, nil
}

// FS is the node's file system over SFTP, as verify.NodeFS.
func (c *Conn) FS() verify.NodeFS { return sftpFS{c.SFTP} }

// Cmder runs node commands in SSH sessions (through sudo -n when the
// target becomes), as verify.Cmder.
func (c *Conn) Cmder() verify.Cmder { return sshCmder{c} }

type sftpFS struct{ c *sftp.Client }

// pathErr gives SFTP errors the shape package os gives: *fs.PathError
// with the errno, so the layers' messages read as on the node.
func pathErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	var errno error = err
	var se *sftp.StatusError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		errno = syscall.ENOENT
	case errors.Is(err, fs.ErrPermission):
		errno = syscall.EACCES
	case errors.As(err, &se):
		switch {
		case strings.Contains(se.Error(), "not a directory"):
			errno = syscall.ENOTDIR
		case strings.Contains(se.Error(), "is a directory"):
			errno = syscall.EISDIR
		}
	}
	var pe *fs.PathError
	if errors.As(errno, &pe) {
		errno = pe.Err
	}
	return &fs.PathError{Op: op, Path: name, Err: errno}
}

func (f sftpFS) Lstat(name string) (fs.FileInfo, error) {
	fi, err := f.c.Lstat(name)
	return fi, pathErr("lstat", name, err)
}

func (f sftpFS) Stat(name string) (fs.FileInfo, error) {
	fi, err := f.c.Stat(name)
	return fi, pathErr("stat", name, err)
}

func (f sftpFS) Readlink(name string) (string, error) {
	s, err := f.c.ReadLink(name)
	return s, pathErr("readlink", name, err)
}

func (f sftpFS) ReadDir(name string) ([]fs.DirEntry, error) {
	fis, err := f.c.ReadDir(name)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	out := make([]fs.DirEntry, 0, len(fis))
	for _, fi := range fis {
		out = append(out, fs.FileInfoToDirEntry(fi))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

// ReadFile reads a file in as few round trips as its size allows: open,
// fstat, one read of the size fstat gives (split in concurrent requests
// above SFTP's packet size), close. io.ReadAll's buffer starts at 512
// bytes and grows, a round trip per step and one more to see EOF: eight
// for a kubeconfig. The file is read as fstat found it (one that grows
// meanwhile, as if read a moment earlier); a file of unknown size (0, as
// in /proc) is read to EOF.
func (f sftpFS) ReadFile(name string) ([]byte, error) {
	fh, err := f.c.Open(name)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err == nil && fi.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EISDIR}
	}
	if err == nil && fi.Size() > 0 {
		data := make([]byte, fi.Size())
		n, err := fh.ReadAt(data, 0)
		if err != nil && err != io.EOF {
			return nil, pathErr("read", name, err)
		}
		return data[:n], nil // short: the file shrank since fstat
	}
	data, err := readToEOF(fh)
	if err != nil {
		return nil, pathErr("read", name, err)
	}
	return data, nil
}

// readToEOF reads r to its end in reads of SFTP's packet size, so a small
// file of unknown size takes two round trips (its data, then EOF).
func readToEOF(r io.Reader) ([]byte, error) {
	out := []byte{}
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func (f sftpFS) Open(name string) (verify.NodeFile, error) {
	fh, err := f.c.Open(name)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	return fh, nil
}

type sshCmder struct{ c *Conn }

func (s sshCmder) Command(ctx context.Context, name string, args ...string) verify.Cmd {
	return &sshCmd{c: s.c, ctx: ctx, argv: append([]string{name}, args...)}
}

type sshCmd struct {
	c    *Conn
	ctx  context.Context
	argv []string
}

// Output runs the command in a new session with the environment
// LocalCmder sets (LC_ALL=C, no pager, no colours), through sudo -n when
// the target becomes. Exit status 127 (command not found) wraps
// exec.ErrNotFound, as os/exec reports a missing program.
func (s *sshCmd) Output() ([]byte, error) {
	sess, err := s.c.Client.NewSession()
	if err != nil {
		return nil, &verify.RunError{Command: s.argv, Inner: err}
	}
	defer sess.Close()
	line := append([]string{"env", "SYSTEMD_PAGER=", "SYSTEMD_COLORS=0", "LC_ALL=C"}, s.argv...)
	if s.c.Target.sudo() {
		line = append([]string{"sudo", "-n", "-u", s.c.Target.BecomeUser, "--"}, line...)
	}
	var stdout, stderr bytes.Buffer
	sess.Stdout, sess.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	go func() { done <- sess.Run(shellquote.Join(line...)) }()
	select {
	case err = <-done:
	case <-s.ctx.Done():
		sess.Close()
		err = s.ctx.Err()
	}
	if err != nil {
		var ee *ssh.ExitError
		if errors.As(err, &ee) && ee.ExitStatus() == 127 {
			err = fmt.Errorf("%w: %s", exec.ErrNotFound, strings.TrimSpace(stderr.String()))
		}
		return stdout.Bytes(), &verify.RunError{Command: s.argv, Output: append(stdout.Bytes(), stderr.Bytes()...), Inner: err}
	}
	return stdout.Bytes(), nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// headRecorder keeps the first bytes read through it, to say what a
// remote account printed where a protocol was expected.
type headRecorder struct {
	r    io.Reader
	head []byte
}

func (h *headRecorder) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if room := 200 - len(h.head); room > 0 {
		h.head = append(h.head, p[:min(n, room)]...)
	}
	return n, err
}

// drain reads what is left of the head, once the remote command has
// ended (its output is then buffered and ends in EOF).
func (h *headRecorder) drain() {
	_, _ = io.Copy(io.Discard, io.LimitReader(h, int64(max(200-len(h.head), 0))))
}

// text is what was read, when it is a line of printable text.
func (h *headRecorder) text() string {
	t := strings.TrimSpace(string(h.head))
	if t == "" {
		return ""
	}
	for _, r := range t {
		if r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r == utf8.RuneError) {
			return ""
		}
	}
	return t
}
