//go:build e2e

// Package e2e runs kubespray's own roles, offline, on node machines
// (test/nodes/nodes.sh: systemd-nspawn containers in a lab network
// namespace), then verify.yml and `layercheck verify` against what those
// roles laid down, healthy and with breaks seeded one at a time. It needs
// root and ../shared/kubespray-full; `make e2e` runs it and writes
// test/e2e/RESULTS.md.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The lab: nodes.sh puts the bridge's gateway, where files_repo listens,
// at this address inside the lab network namespace.
const (
	labGateway = "192.0.2.1"
	filesPort  = "8080"
)

var (
	repoRoot     string // this checkout
	kubesprayDir string // ../shared/kubespray-full
	cacheDir     string // built artefacts, venvs, logs
)

func TestMain(m *testing.M) {
	// Re-executed inside the lab namespace as the files_repo server.
	if dir := os.Getenv("LAYERCHECK_E2E_SERVE"); dir != "" {
		serveFiles(dir, os.Getenv("LAYERCHECK_E2E_LISTEN"))
		return
	}
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	kubesprayDir = filepath.Join(repoRoot, "..", "shared", "kubespray-full")
	cacheDir = os.Getenv("LAYERCHECK_E2E_DIR")
	if cacheDir == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cacheDir = filepath.Join(base, "layercheck", "e2e")
	}
	os.Exit(m.Run())
}

// serveFiles is files_repo: a plain HTTP file server, as an operator's
// offline mirror is, on the lab gateway address.
func serveFiles(dir, addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "files_repo:", err)
		os.Exit(1)
	}
	fmt.Println("listening", ln.Addr())
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	_ = srv.Serve(ln)
}

// startFilesRepo serves dir at http://labGateway:filesPort inside the lab
// namespace until the test ends.
func startFilesRepo(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nodesScript(), "exec", self)
	cmd.Env = append(os.Environ(), "LAYERCHECK_E2E_SERVE="+dir, "LAYERCHECK_E2E_LISTEN="+net.JoinHostPort(labGateway, filesPort))
	ownGroup(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			ready <- sc.Text()
		}
		close(ready)
	}()
	select {
	case line, ok := <-ready:
		if !ok || !strings.HasPrefix(line, "listening") {
			t.Fatalf("files_repo did not start: %q", line)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("files_repo did not start within 30 s")
	}
	return "http://" + net.JoinHostPort(labGateway, filesPort)
}

// ownGroup starts cmd in a process group of its own, so that killGroup
// stops the server it runs through nodes.sh exec and ip netns exec.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
}

func nodesScript() string { return filepath.Join(repoRoot, "test", "nodes", "nodes.sh") }

// run runs a command with a deadline, its output appended to logFile, and
// returns the output.
func run(t *testing.T, timeout time.Duration, logFile, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 10 * time.Second
	var buf bytes.Buffer
	var w io.Writer = &buf
	if logFile != "" {
		// The log is written as the command runs, to follow a long one.
		_ = os.MkdirAll(filepath.Dir(logFile), 0o755)
		if f, ferr := os.OpenFile(logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); ferr == nil {
			defer f.Close()
			fmt.Fprintf(f, "$ %s %s\n", name, strings.Join(args, " "))
			w = io.MultiWriter(&buf, f)
		}
	}
	cmd.Stdout = w
	cmd.Stderr = w
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s: timed out after %s", name, timeout)
	}
	return buf.String(), err
}

// inLab runs a command inside the lab network namespace, where the nodes are.
func inLab(t *testing.T, timeout time.Duration, logFile, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	return run(t, timeout, logFile, dir, env, nodesScript(), append([]string{"exec", name}, args...)...)
}

// onNode runs a shell command on a node through ssh, as root.
func onNode(t *testing.T, node, script string) string {
	t.Helper()
	out, err := run(t, 2*time.Minute, "", "", nil, nodesScript(), "ssh", node, "sudo sh -c "+shellQuote(script))
	if err != nil {
		t.Fatalf("%s: %s: %v\n%s", node, script, err, out)
	}
	return out
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// downAtEnd takes the nodes down when the test ends, unless
// LAYERCHECK_E2E_KEEP leaves them running for a later run.
func downAtEnd(t *testing.T, logFile string) {
	t.Cleanup(func() {
		if os.Getenv("LAYERCHECK_E2E_KEEP") != "" {
			t.Logf("LAYERCHECK_E2E_KEEP: the nodes are left running (%s down stops them)", nodesScript())
			return
		}
		if out, err := run(t, timeoutNodes, logFile, repoRoot, nil, nodesScript(), "down"); err != nil {
			t.Errorf("nodes down: %v\n%s", err, out)
		}
	})
}
