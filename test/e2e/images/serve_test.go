package main

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets a test run the command itself: the test binary with
// IMAGES_MAIN=1 is `images`.
func TestMain(m *testing.M) {
	if os.Getenv("IMAGES_MAIN") == "1" {
		os.Args = append([]string{"images"}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestServeAnswersThenStopsOnSIGTERM(t *testing.T) {
	cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--root", t.TempDir())
	cmd.Env = append(os.Environ(), "IMAGES_MAIN=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		done <- cmd.Wait()
	}()
	var addr string
	select {
	case l := <-lines:
		addr = strings.TrimPrefix(l, "listening ")
		if addr == l {
			t.Fatalf("first line %q, want listening ADDR", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve printed nothing within 30 s")
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/v2/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Docker-Distribution-Api-Version") != "registry/2.0" {
		t.Errorf("GET /v2/: %s %q, want 200 from a registry/2.0", resp.Status, resp.Header.Get("Docker-Distribution-Api-Version"))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v, want exit 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Error("serve still running 15 s after SIGTERM")
	}
}

func TestServeNeedsRoot(t *testing.T) {
	cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "IMAGES_MAIN=1")
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "--root is required") {
		t.Errorf("serve without --root: %v %s", err, b)
	}
}

func TestPushToNothingFailsNamingTheImage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var out, log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = push(ctx, pushOptions{registry: addr, buildDir: fakeBuildDir(t, tinyBinary(t)), rootfs: "/",
		userland: hostUserland, specs: catalogue[:1], out: &out, log: &log})
	if err == nil || !strings.Contains(err.Error(), addr+"/pause:3.10.1") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("push to a closed port: %v, want connection refused naming the image", err)
	}
}
