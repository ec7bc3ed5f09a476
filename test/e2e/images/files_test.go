package main

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeFile writes b at dir/rel with mode, making its parents.
func writeFile(t *testing.T, dir, rel string, b []byte, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

// assembled is s assembled from buildDir with the host's userland, and
// its flattened filesystem under a temp dir.
func assembled(t *testing.T, s spec, buildDir string) (map[string]*tar.Header, string) {
	t.Helper()
	base, err := newLayers("/", hostUserland)
	if err != nil {
		t.Fatal(err)
	}
	img, err := assemble(s, buildDir, base)
	if err != nil {
		t.Fatalf("assemble: %v", err)
	}
	root := t.TempDir()
	return extractImage(t, s.Repo, img, root), root
}

// Every kind of entry Files has lands in the image as the spec says: a
// tree with its modes and links, a file, a symlink, and empty files and
// directories with their owners.
func TestFilesLayer(t *testing.T) {
	build := t.TempDir()
	dir := filepath.Join(build, "calico", "v1")
	bin := []byte("binary")
	writeFile(t, dir, "node", bin, 0o644)
	writeFile(t, dir, "tool", []byte("tool"), 0o750)
	writeFile(t, dir, "fs/etc/rc.local", []byte("calico-node -startup\n"), 0o755)
	writeFile(t, dir, "fs/etc/service/available/felix/run", []byte("#!/bin/sh\n"), 0o555)
	writeFile(t, dir, "fs/usr/sbin/start_runit", []byte("#!/bin/sh\n"), 0o755)
	if err := os.Symlink("runit/runsvdir/current", filepath.Join(dir, "fs/etc/current")); err != nil {
		t.Fatal(err)
	}
	s := spec{Repo: "calico/node", Tag: "v1", Component: "calico", Version: "v1", Binary: "node", Path: "/usr/bin/calico-node",
		Files: []file{
			{Path: "/", Source: "fs", Tree: true},
			{Path: "/opt/cni/bin/install", Source: "tool"},
			{Path: "/opt/cni/bin/calico-ipam", Link: "./calico"},
			{Path: "/status", Dir: true, Mode: 0o755},
			{Path: "/status/status.json", Mode: 0o644, Owner: 999},
			{Path: "/var/lib/x", Dir: true, Mode: 0o700, Owner: 65534},
		},
		Env: []string{"SVDIR=/etc/service/enabled"}, WorkingDir: "/opt/cni/bin"}
	if why := s.missing(build); why != "" {
		t.Fatalf("missing: %s", why)
	}
	hdrs, root := assembled(t, s, build)

	want := []struct {
		path  string
		typ   byte
		mode  int64
		owner int
		link  string
	}{
		{"/usr/bin/calico-node", tar.TypeReg, 0o755, 0, ""},
		{"/etc/rc.local", tar.TypeReg, 0o755, 0, ""},
		{"/etc/service/available/felix/run", tar.TypeReg, 0o555, 0, ""},
		{"/usr/sbin/start_runit", tar.TypeReg, 0o755, 0, ""},
		{"/etc/current", tar.TypeSymlink, 0o777, 0, "runit/runsvdir/current"},
		{"/opt/cni/bin/install", tar.TypeReg, 0o750, 0, ""},
		{"/opt/cni/bin/calico-ipam", tar.TypeSymlink, 0o777, 0, "./calico"},
		{"/status", tar.TypeDir, 0o755, 0, ""},
		{"/status/status.json", tar.TypeReg, 0o644, 999, ""},
		{"/var/lib/x", tar.TypeDir, 0o700, 65534, ""},
	}
	for _, w := range want {
		h := hdrs[w.path]
		if h == nil {
			t.Errorf("%s: not in the image", w.path)
			continue
		}
		if h.Typeflag != w.typ || h.Mode&0o7777 != w.mode || h.Uid != w.owner || h.Gid != w.owner || h.Linkname != w.link {
			t.Errorf("%s: type %c mode %o uid %d gid %d link %q; want %c %o %d %q", w.path,
				h.Typeflag, h.Mode, h.Uid, h.Gid, h.Linkname, w.typ, w.mode, w.owner, w.link)
		}
	}
	if h := hdrs["/status/status.json"]; h != nil && h.Size != 0 {
		t.Errorf("/status/status.json: %d bytes, want an empty file", h.Size)
	}
	if got, err := os.ReadFile(filepath.Join(root, "usr/bin/calico-node")); err != nil || !bytes.Equal(got, bin) {
		t.Errorf("/usr/bin/calico-node is not the built binary (%v)", err)
	}
	if got, err := os.ReadFile(filepath.Join(root, "etc/rc.local")); err != nil || string(got) != "calico-node -startup\n" {
		t.Errorf("/etc/rc.local: %q, %v", got, err)
	}

	base, err := newLayers("/", hostUserland)
	if err != nil {
		t.Fatal(err)
	}
	img, err := assemble(s, build, base)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cf.Config.Env, []string{envPath, "SVDIR=/etc/service/enabled"}) || cf.Config.WorkingDir != "/opt/cni/bin" {
		t.Errorf("env %q workdir %q", cf.Config.Env, cf.Config.WorkingDir)
	}
}

// An Env entry for PATH replaces the default one.
func TestEnvPath(t *testing.T) {
	s := spec{Env: []string{"PATH=/opt/cni/bin:/usr/bin"}}
	if got := s.env(); !slices.Equal(got, []string{"PATH=/opt/cni/bin:/usr/bin"}) {
		t.Errorf("env = %q, want the spec's PATH alone", got)
	}
	if got := (spec{}).env(); !slices.Equal(got, []string{envPath}) {
		t.Errorf("env = %q, want %q", got, envPath)
	}
}

// A Debian root's programs come with the libraries they need from that
// root, and run there (chroot, as root). The host's own root stands for
// one the artefacts build unpacked.
func TestDebianLayer(t *testing.T) {
	build := t.TempDir()
	if err := os.MkdirAll(filepath.Join(build, "nginx", "1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(build, "nginx", "1", "root")); err != nil {
		t.Fatal(err)
	}
	s := spec{Repo: "library/nginx", Tag: "1", Component: "nginx", Version: "1",
		Debian: &debian{Root: "root", Programs: []string{"sh", "cp", "mkdir", "rm", "chmod"}, Libs: []string{"libgcc_s.so.1"}},
		Files:  []file{{Path: "/var/lib/nginx", Dir: true, Mode: 0o755}}}
	if why := s.missing(build); why != "" {
		t.Fatalf("missing: %s", why)
	}
	hdrs, root := assembled(t, s, build)
	if _, err := hostUserland.layer(root); err != nil {
		t.Errorf("the programs do not resolve inside the image: %v", err)
	}
	checkELFClosure(t, root, hdrs)
	runInRoot(t, root)
	// glibc dlopens libgcc_s for pthread_exit: nginx's thread pool aborts
	// without it.
	in := &rootfsCopier{root: root, l: newLayer()}
	if lib, err := in.findLib("libgcc_s.so.1"); err != nil {
		t.Errorf("libgcc_s.so.1 not in the image: %v", err)
	} else if real, err := in.resolve(lib); err != nil || hdrs[real] == nil || hdrs[real].Typeflag != tar.TypeReg {
		t.Errorf("%s: resolves to %s (%v), not a file of the image", lib, real, err)
	}
	if h := hdrs["/var/lib/nginx"]; h == nil || h.Typeflag != tar.TypeDir {
		t.Errorf("/var/lib/nginx is %+v, want a directory", h)
	}
}

// A spec says which of its sources is absent, and a bad Files entry or a
// Debian root without a program fails the image, naming it.
func TestFilesMissingAndBad(t *testing.T) {
	build := t.TempDir()
	writeFile(t, build, "c/v/bin", []byte("x"), 0o755)
	for _, c := range []struct {
		s    spec
		want string
	}{
		{spec{Component: "c", Version: "v", Binary: "bin", Files: []file{{Path: "/x", Source: "absent"}}},
			"no " + filepath.Join(build, "c", "v", "absent")},
		{spec{Component: "c", Version: "v", Debian: &debian{Root: "root", Programs: []string{"nginx"}}},
			"no " + filepath.Join(build, "c", "v", "root")},
		{spec{Component: "c", Version: "v", Binary: "absent", Path: "/absent"},
			"no " + filepath.Join(build, "c", "v", "absent")},
	} {
		if got := c.s.missing(build); got != c.want {
			t.Errorf("missing = %q, want %q", got, c.want)
		}
	}
	base, err := newLayers("/", hostUserland)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    spec
		want string
	}{
		{spec{Component: "c", Version: "v", Files: []file{{Path: "relative", Link: "x"}}}, "relative: not an absolute path"},
		{spec{Component: "c", Version: "v", Files: []file{{Path: "/t", Source: "bin", Tree: true}}}, "bin: not a directory"},
		{spec{Component: "c", Version: "v", Debian: &debian{Root: "bin", Programs: []string{"nginx"}}}, "debian root"},
		{spec{Component: "c", Version: "v", Debian: &debian{Root: "..", Libs: []string{"libnope.so.9"}}}, "libnope.so.9: not found under"},
	} {
		_, err := assemble(c.s, build, base)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("assemble %+v: %v, want an error with %q", c.s.Files, err, c.want)
		}
	}
}
