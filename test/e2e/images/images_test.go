package main

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// hostUserland is what the test copies out of this machine's own root:
// the programs every Linux build host has, dynamically linked.
var hostUserland = userland{required: []string{"sh", "cp", "mkdir", "rm", "chmod"}}

// tinyBinary builds a real static program that prints its arguments.
func tinyBinary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() { fmt.Println(\"tiny\", os.Args[1:]) }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module tiny\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "tiny")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// treeFile is what fakeBuildDir puts in each tree of Files, below the
// tree.
const treeFile = "etc/tree-file"

// fakeBuildDir lays bin out as every binary the catalogue wants (its own,
// its Files' and its Debian root's programs, modules and libraries), and a
// tree holding treeFile for each tree, except for the images in missing.
func fakeBuildDir(t *testing.T, bin string, missing ...string) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	put := func(p string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range catalogue {
		if slices.Contains(missing, s.Repo) {
			continue
		}
		if p := s.binary(dir); p != "" {
			put(p)
		}
		for _, f := range s.Files {
			switch {
			case f.Tree:
				put(filepath.Join(s.built(dir, f.Source), treeFile))
			case f.Source != "":
				put(s.built(dir, f.Source))
			}
		}
		if d := s.Debian; d != nil {
			root := s.built(dir, d.Root)
			for _, p := range d.Programs {
				put(filepath.Join(root, "usr", "bin", p))
			}
			for _, m := range d.Dirs {
				put(filepath.Join(root, m, "module.so"))
			}
			for _, l := range d.Libs {
				put(filepath.Join(root, "usr", "lib", "x86_64-linux-gnu", l))
			}
		}
	}
	return dir
}

// checkFiles checks that the image (hdrs, extracted at root) holds each of
// s's Files and its Debian root's programs, modules and libraries as the
// spec says, bin being what fakeBuildDir wrote for each.
func checkFiles(t *testing.T, s spec, hdrs map[string]*tar.Header, root string, bin []byte) {
	t.Helper()
	file := func(p string, mode int64) {
		t.Helper()
		h := hdrs[p]
		if h == nil || h.Typeflag != tar.TypeReg || (mode != 0 && h.Mode&0o7777 != mode) || h.Uid != 0 {
			t.Errorf("%s: header %+v, want a root-owned file", p, h)
			return
		}
		if got, err := os.ReadFile(filepath.Join(root, p)); err != nil || !bytes.Equal(got, bin) {
			t.Errorf("%s: not the built file (%v)", p, err)
		}
	}
	for _, f := range s.Files {
		h := hdrs[f.Path]
		switch {
		case f.Tree:
			file(path.Join(f.Path, treeFile), 0o644)
		case f.Source != "":
			file(f.Path, 0o644)
		case f.Link != "":
			if h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != f.Link {
				t.Errorf("%s: header %+v, want a link to %s", f.Path, h, f.Link)
			}
		default:
			typ := byte(tar.TypeReg)
			if f.Dir {
				typ = tar.TypeDir
			}
			if h == nil || h.Typeflag != typ || h.Mode&0o7777 != int64(f.Mode) || h.Uid != f.Owner || h.Gid != f.Owner {
				t.Errorf("%s: header %+v, want type %c mode %o owner %d", f.Path, h, typ, f.Mode, f.Owner)
			}
		}
	}
	if d := s.Debian; d != nil {
		in := &rootfsCopier{root: root, l: newLayer()}
		for _, p := range d.Programs {
			if found, ok := in.findProgram(p); !ok {
				t.Errorf("%s: not in the image's PATH directories", p)
			} else if real, err := in.resolve(found); err != nil {
				t.Errorf("%s: %v", found, err)
			} else {
				file(real, 0)
			}
		}
		for _, m := range d.Dirs {
			file(path.Join(m, "module.so"), 0)
		}
		for _, l := range d.Libs {
			if p, err := in.findLib(l); err != nil {
				t.Errorf("%s: %v", l, err)
			} else {
				file(p, 0)
			}
		}
	}
}

// registry is distribution serving a temp dir on 127.0.0.1:0, counting
// the requests that write (POST, PUT, PATCH).
type registry struct {
	addr   string
	writes atomic.Int64
}

func startRegistry(t *testing.T) *registry {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h, err := registryHandler(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &registry{addr: ln.Addr().String()}
	counted := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			r.writes.Add(1)
		}
		h.ServeHTTP(w, req)
	})
	done := make(chan error, 1)
	go func() { done <- serve(ctx, newServer(counted), ln, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve after cancel: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop within 15 s of its context ending")
		}
	})
	return r
}

func runPush(t *testing.T, reg, buildDir string) (stdout, stderr string) {
	t.Helper()
	var out, log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := push(ctx, pushOptions{registry: reg, buildDir: buildDir, rootfs: "/",
		userland: hostUserland, specs: catalogue, out: &out, log: &log})
	if err != nil {
		t.Fatalf("push: %v\nstderr:\n%s", err, log.String())
	}
	return out.String(), log.String()
}

// extract writes the image's flattened filesystem under dir (regular
// files, dirs and symlinks) and returns the tar headers by path.
func extract(t *testing.T, ref string, dir string) map[string]*tar.Header {
	t.Helper()
	r, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	if mt, err := img.MediaType(); err != nil || mt != types.OCIManifestSchema1 {
		t.Errorf("%s: manifest media type %q, %v; want %s", ref, mt, err, types.OCIManifestSchema1)
	}
	return extractImage(t, ref, img, dir)
}

// extractImage is extract for an image at hand; what names it in errors.
func extractImage(t *testing.T, what string, img v1.Image, dir string) map[string]*tar.Header {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	hdrs := map[string]*tar.Header{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		hdrs["/"+strings.TrimSuffix(h.Name, "/")] = h
		p := filepath.Join(dir, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeSymlink:
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.Symlink(h.Linkname, p)
			}
		case tar.TypeReg:
			var b []byte
			if b, err = io.ReadAll(tr); err == nil {
				if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
					err = os.WriteFile(p, b, 0o755)
				}
			}
		}
		if err != nil {
			t.Fatalf("%s: %s: %v", what, h.Name, err)
		}
	}
	return hdrs
}

func TestPushPullAndPushAgain(t *testing.T) {
	bin := tinyBinary(t)
	want, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	reg := startRegistry(t)
	build := fakeBuildDir(t, bin)

	out, log := runPush(t, reg.addr, build)
	if log != "" {
		t.Errorf("push logged:\n%s", log)
	}
	for _, s := range catalogue {
		if !strings.Contains(out, "pushed "+s.ref(reg.addr)+"@sha256:") {
			t.Errorf("no pushed line for %s in:\n%s", s.ref(reg.addr), out)
		}
	}

	for _, s := range catalogue {
		t.Run(s.Repo, func(t *testing.T) {
			r, _ := name.NewTag(s.ref(reg.addr), name.Insecure)
			img, err := remote.Image(r)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.OS != "linux" || cf.Architecture != "amd64" {
				t.Errorf("platform %s/%s, want linux/amd64", cf.OS, cf.Architecture)
			}
			if !slices.Equal(cf.Config.Entrypoint, s.Entrypoint) || !slices.Equal(cf.Config.Cmd, s.Cmd) {
				t.Errorf("entrypoint %q cmd %q, want %q %q", cf.Config.Entrypoint, cf.Config.Cmd, s.Entrypoint, s.Cmd)
			}
			workdir := s.WorkingDir
			if workdir == "" {
				workdir = "/"
			}
			if !slices.Equal(cf.Config.Env, s.env()) || cf.Config.User != s.User || cf.Config.WorkingDir != workdir {
				t.Errorf("env %q user %q workdir %q, want %q %q %q", cf.Config.Env, cf.Config.User, cf.Config.WorkingDir, s.env(), s.User, workdir)
			}
			root := t.TempDir()
			hdrs := extract(t, s.ref(reg.addr), root)
			for _, p := range []string{"/etc/passwd", "/etc/group", "/etc/nsswitch.conf"} {
				if hdrs[p] == nil {
					t.Errorf("no %s", p)
				}
			}
			if h := hdrs["/tmp"]; h == nil || h.Mode&0o1777 != 0o1777 {
				t.Errorf("/tmp is %+v, want a sticky world-writable dir", h)
			}
			if s.Path != "" {
				h := hdrs[s.Path]
				if h == nil || h.Mode&0o777 != 0o755 || h.ModTime.Unix() != 0 || h.Uid != 0 {
					t.Fatalf("%s: header %+v, want mode 0755, uid 0, mtime 0", s.Path, h)
				}
				got, err := os.ReadFile(filepath.Join(root, s.Path))
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s: not the built binary (%v)", s.Path, err)
				}
			}
			checkFiles(t, s, hdrs, root, want)
			if s.Userland {
				// The same programs resolve, with every library they need,
				// inside the image alone.
				if _, err := hostUserland.layer(root); err != nil {
					t.Errorf("userland incomplete in the image: %v", err)
				}
				checkELFClosure(t, root, hdrs)
				if h := hdrs["/bin"]; h == nil || h.Linkname != "usr/bin" {
					t.Errorf("/bin is %+v, want Debian's link to usr/bin", h)
				}
				// No layer above the userland makes a directory of a
				// merged-/usr link, which would hide what is behind it.
				for _, p := range mergedUsr {
					if st, err := os.Lstat(p); err == nil && st.Mode()&os.ModeSymlink != 0 {
						if h := hdrs[p]; h == nil || h.Typeflag != tar.TypeSymlink {
							t.Errorf("%s is %+v in the image, a link on this host", p, h)
						}
					}
				}
				runInRoot(t, root)
			} else if hdrs["/usr/bin/cp"] != nil {
				t.Error("an image without userland has /usr/bin/cp")
			}
		})
	}

	before := reg.writes.Load()
	out, _ = runPush(t, reg.addr, build)
	if n := reg.writes.Load() - before; n != 0 {
		t.Errorf("second push made %d write requests, want 0", n)
	}
	if strings.Contains(out, "pushed ") || strings.Count(out, "unchanged ") != len(catalogue) {
		t.Errorf("second push, want every image unchanged:\n%s", out)
	}
}

// checkELFClosure reads every ELF file of the image with debug/elf and
// checks its interpreter and DT_NEEDED libraries are in the image.
func checkELFClosure(t *testing.T, root string, hdrs map[string]*tar.Header) {
	t.Helper()
	// exists resolves p's links inside root, as the kernel does in the
	// container (os.Stat would follow an absolute link out of root).
	in := &rootfsCopier{root: root, l: newLayer()}
	exists := func(p string) bool {
		real, err := in.resolve(p)
		return err == nil && hdrs[real] != nil && hdrs[real].Typeflag == tar.TypeReg
	}
	elves := 0
	for p, h := range hdrs {
		if h.Typeflag != tar.TypeReg {
			continue
		}
		f, err := elf.Open(filepath.Join(root, p))
		if err != nil {
			continue
		}
		elves++
		libs, err := f.ImportedLibraries()
		if err != nil {
			t.Errorf("%s: %v", p, err)
		}
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				b, _ := io.ReadAll(prog.Open())
				if interp := strings.TrimRight(string(b), "\x00"); !exists(interp) {
					t.Errorf("%s: interpreter %s not in the image", p, interp)
				}
			}
		}
		f.Close()
	lib:
		for _, l := range libs {
			for _, d := range []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"} {
				if exists(path.Join(d, l)) {
					continue lib
				}
			}
			t.Errorf("%s needs %s, not in the image", p, l)
		}
	}
	if elves < 5 {
		t.Errorf("%d ELF files in the image, want sh, cp, mkdir, rm, chmod at least", elves)
	}
}

// runInRoot runs the helper pod's setup and teardown, and the CNI init
// container's cp, in the image's root (chroot needs root).
func runInRoot(t *testing.T, root string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Log("not root: the image's programs are checked by their ELF headers only")
		return
	}
	script := "set -eu; mkdir -m 0777 -p /v/pvc; cp -f /bin/sh /v/pvc/x; chmod 0755 /v/pvc/x; rm -rf /v; echo ok"
	out, err := exec.Command("chroot", root, "/bin/sh", "-c", script).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Errorf("chroot %s /bin/sh: %v\n%s", root, err, out)
	}
}

func TestPushSkipsAbsentBinary(t *testing.T) {
	reg := startRegistry(t)
	build := fakeBuildDir(t, tinyBinary(t), "coredns/coredns")
	out, log := runPush(t, reg.addr, build)
	ref := reg.addr + "/coredns/coredns:v1.12.4"
	if !strings.Contains(log, "skip "+ref+": no "+filepath.Join(build, "coredns", "v1.12.4", "coredns")) {
		t.Errorf("stderr does not say coredns is skipped:\n%s", log)
	}
	if strings.Contains(out, ref) {
		t.Errorf("coredns pushed without its binary:\n%s", out)
	}
	r, _ := name.NewTag(ref, name.Insecure)
	if _, err := remote.Head(r); !notFound(err) {
		t.Errorf("HEAD %s: %v, want 404", ref, err)
	}
	if !strings.Contains(out, "pushed "+reg.addr+"/pause:3.10.1@") {
		t.Errorf("the others are not pushed:\n%s", out)
	}
}

func TestUserlandNeedsItsPrograms(t *testing.T) {
	_, err := userland{required: []string{"no-such-program-here"}}.layer("/")
	if err == nil || !strings.Contains(err.Error(), "no no-such-program-here in") {
		t.Errorf("err = %v, want it to name the missing program", err)
	}
	_, err = hostUserland.layer(filepath.Join(t.TempDir(), "absent"))
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("err = %v, want it to name the absent root", err)
	}
}

func TestUserlandLayerIsDeterministic(t *testing.T) {
	digest := func() string {
		l, err := hostUserland.layer("/")
		if err != nil {
			t.Fatal(err)
		}
		v, err := l.v1Layer()
		if err != nil {
			t.Fatal(err)
		}
		d, err := v.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d.String()
	}
	if a, b := digest(), digest(); a != b {
		t.Errorf("two builds of the same files: %s, %s", a, b)
	}
}

func TestRegistryRootUnusable(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	reg := startRegistryAt(t, filepath.Join(f, "sub"))
	// A root under a regular file cannot hold blobs: the push fails with
	// the registry's answer, it does not hang.
	var out, log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := push(ctx, pushOptions{registry: reg, buildDir: fakeBuildDir(t, tinyBinary(t)), rootfs: "/",
		userland: hostUserland, specs: catalogue[:1], out: &out, log: &log})
	if err == nil || !strings.Contains(err.Error(), "pause:3.10.1") {
		t.Errorf("push into an unusable root: %v, want an error naming the image", err)
	}
}

func startRegistryAt(t *testing.T, root string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h, err := registryHandler(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = serve(ctx, newServer(h), ln, io.Discard) }()
	return ln.Addr().String()
}

// builtVersions adds one image per other version built, and only for the
// images whose tag is their build version.
func TestBuiltVersions(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"kubernetes/v1.35.4", "kubernetes/v1.34.3", "kubernetes/v1.33.6.tmp", "coredns/v1.12.1", "pause/3.10.1"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]bool{}
	for _, s := range builtVersions(catalogue, dir) {
		got[s.Repo+":"+s.Tag] = true
	}
	for _, want := range []string{"kube-apiserver:v1.34.3", "kube-proxy:v1.34.3", "coredns/coredns:v1.12.1", "coredns/coredns:v1.12.4", "kube-apiserver:v1.35.4"} {
		if !got[want] {
			t.Errorf("builtVersions lacks %s", want)
		}
	}
	for _, not := range []string{"kube-apiserver:v1.33.6.tmp", "e2e-test-images/agnhost:v1.34.3"} {
		if got[not] {
			t.Errorf("builtVersions has %s", not)
		}
	}
	if len(got) != len(catalogue)+5 {
		t.Errorf("builtVersions gave %d images, want the catalogue's %d and 5 (4 kube images and coredns at other versions)", len(got), len(catalogue))
	}
}
