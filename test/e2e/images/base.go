package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// debianUserland is what the images that run more than their own static
// binary exec: kube-proxy the iptables family (ipset for kube_proxy_mode
// ipvs, nft for nftables, conntrack to clear UDP entries); flannel
// iptables, iptables-restore and their ip6 twins (pkg/trafficmngr/iptables;
// it sets addresses and routes over netlink, not with ip) and cp in its
// install-cni init container; the CNI plugin's init container cp; the
// local-path-provisioner's helper pod /bin/sh on scripts that mkdir, rm
// and chmod; node-cache iptables (its NOTRACK rules). calico-node: its
// start_runit and rc.local run env, cat, which, mkdir, cp and rm; felix
// picks the iptables backend by running iptables-legacy-save and
// iptables-nft-save (environment.FindBestBinary) and then runs that
// backend's save and restore, ipset for its sets, conntrack to delete
// flows, modprobe for nf_conntrack_proto_sctp. It sets links and routes
// over netlink; only its eBPF data plane runs ip (and bpftool), and
// kubespray's default is iptables. The node machines' root has all of
// these (test/nodes/nodes.sh installs iproute2, iptables, ipset, conntrack
// and kmod).
var debianUserland = userland{
	required: []string{
		"sh", "cp", "mkdir", "rm", "chmod", "cat", "env", "which",
		"iptables", "iptables-save", "iptables-restore",
		"ip6tables", "ip6tables-save", "ip6tables-restore",
		"iptables-legacy", "iptables-legacy-save", "iptables-legacy-restore",
		"ip6tables-legacy", "ip6tables-legacy-save", "ip6tables-legacy-restore",
		"iptables-nft", "iptables-nft-save", "iptables-nft-restore",
		"ip6tables-nft", "ip6tables-nft-save", "ip6tables-nft-restore",
		"ipset", "conntrack", "modprobe",
	},
	optional: []string{
		"ls", "ln", "mv", "touch", "nft",
	},
	// xtables extensions are dlopen'd by name, never in DT_NEEDED.
	dirs: []string{"/usr/lib/x86_64-linux-gnu/xtables"},
}

// mergedUsr are Debian's top-level links into /usr: kept whether or not a
// program was found through them, since manifests and ELF interpreters
// name /bin/sh and /lib64/ld-linux-x86-64.so.2.
var mergedUsr = []string{"/bin", "/sbin", "/lib", "/lib64"}

// userland names the programs a base layer holds: required ones must be
// in the root filesystem, optional ones are taken when present, dirs are
// copied whole, and libs are libraries no program names but one loads with
// dlopen (found as ld.so finds a DT_NEEDED one).
type userland struct {
	required, optional, dirs, libs []string
}

// binDirs are searched in PATH order for a program; libDirs for a
// DT_NEEDED library, as ld.so does on Debian amd64.
var (
	binDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}
	libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}
)

// rootfsCopier copies files out of a root filesystem into a layer, keeping
// every symlink met on the way (Debian's merged /bin, /lib64, the
// /etc/alternatives chain) so the same paths resolve inside the image.
type rootfsCopier struct {
	root string
	l    *layer
	seen map[string]bool
}

// resolve walks p inside root component by component, adds each symlink
// it crosses to the layer and returns the real path (inside root).
func (c *rootfsCopier) resolve(p string) (string, error) {
	for hops := 0; hops < 40; hops++ {
		parts := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
		cur := "/"
		restarted := false
		for i, part := range parts {
			next := path.Join(cur, part)
			st, err := os.Lstat(filepath.Join(c.root, next))
			if err != nil {
				return "", err
			}
			if st.Mode()&fs.ModeSymlink == 0 {
				cur = next
				continue
			}
			target, err := os.Readlink(filepath.Join(c.root, next))
			if err != nil {
				return "", err
			}
			c.l.add(entry{name: next, link: target})
			if !path.IsAbs(target) {
				target = path.Join(cur, target)
			}
			p = path.Join(append([]string{target}, parts[i+1:]...)...)
			restarted = true
			break
		}
		if !restarted {
			return cur, nil
		}
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", p)
}

// copyFile adds the file at p (inside root) with every library it needs.
func (c *rootfsCopier) copyFile(p string) error {
	real, err := c.resolve(p)
	if err != nil {
		return err
	}
	if c.seen[real] {
		return nil
	}
	c.seen[real] = true
	src := filepath.Join(c.root, real)
	if err := c.l.file(real, src); err != nil {
		return err
	}
	needed, err := elfNeeds(src)
	if err != nil {
		return err
	}
	for _, n := range needed {
		lib, err := c.findLib(n)
		if err != nil {
			return fmt.Errorf("%s needs %s: %w", real, n, err)
		}
		if err := c.copyFile(lib); err != nil {
			return err
		}
	}
	return nil
}

// elfNeeds is the interpreter and DT_NEEDED libraries of an ELF file; nil
// for anything else (a script, a static binary).
func elfNeeds(p string) ([]string, error) {
	f, err := elf.Open(p)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	var out []string
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			b := make([]byte, prog.Filesz)
			if _, err := prog.ReadAt(b, 0); err != nil {
				return nil, fmt.Errorf("%s: interpreter: %w", p, err)
			}
			out = append(out, strings.TrimRight(string(b), "\x00"))
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return append(out, libs...), nil
}

func (c *rootfsCopier) findLib(name string) (string, error) {
	if path.IsAbs(name) {
		return name, nil
	}
	for _, d := range libDirs {
		// Lstat: an absolute link would point out of the root.
		if _, err := os.Lstat(filepath.Join(c.root, d, name)); err == nil {
			return path.Join(d, name), nil
		}
	}
	return "", fmt.Errorf("not found under %s in %s", strings.Join(libDirs, ", "), c.root)
}

func (c *rootfsCopier) findProgram(name string) (string, bool) {
	for _, d := range binDirs {
		if _, err := os.Lstat(filepath.Join(c.root, d, name)); err == nil {
			return path.Join(d, name), true
		}
	}
	return "", false
}

// layer copies u's programs, the libraries they need and its dirs out of
// rootfs.
func (u userland) layer(rootfs string) (*layer, error) {
	if st, err := os.Stat(rootfs); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("root filesystem %s: not a directory (make nodes-up builds it)", rootfs)
	}
	c := &rootfsCopier{root: rootfs, l: newLayer(), seen: map[string]bool{}}
	for _, p := range mergedUsr {
		if st, err := os.Lstat(filepath.Join(rootfs, p)); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			real, err := c.resolve(p)
			if err != nil {
				return nil, err
			}
			c.l.add(entry{name: real, mode: 0o755, dir: true}) // no dangling link

		}
	}
	for i, names := range [][]string{u.required, u.optional} {
		for _, n := range names {
			p, ok := c.findProgram(n)
			if !ok {
				if i == 0 {
					return nil, fmt.Errorf("%s: no %s in %s", rootfs, n, strings.Join(binDirs, ", "))
				}
				continue
			}
			if err := c.copyFile(p); err != nil {
				return nil, fmt.Errorf("%s: %w", n, err)
			}
		}
	}
	for _, n := range u.libs {
		lib, err := c.findLib(n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		if err := c.copyFile(lib); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
	}
	for _, d := range u.dirs {
		real, err := c.resolve(d)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		ents, err := os.ReadDir(filepath.Join(rootfs, real))
		if err != nil {
			return nil, err
		}
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		for _, n := range names {
			if err := c.copyFile(path.Join(real, n)); err != nil {
				return nil, err
			}
		}
	}
	return c.l, nil
}

// etcLayer is the minimal /etc every image has: the users distroless and
// the upstream images run as (root, nonroot 65532, nobody 65534),
// files-only name service, and a sticky /tmp.
func etcLayer() *layer {
	l := newLayer()
	l.add(entry{name: "/etc/passwd", mode: 0o644, data: []byte(
		"root:x:0:0:root:/root:/bin/sh\n" +
			"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n" +
			"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n")})
	l.add(entry{name: "/etc/group", mode: 0o644, data: []byte(
		"root:x:0:\nnonroot:x:65532:\nnogroup:x:65534:\n")})
	l.add(entry{name: "/etc/nsswitch.conf", mode: 0o644, data: []byte(
		"passwd: files\ngroup: files\nhosts: files dns\n")})
	l.add(entry{name: "/tmp", mode: 0o777 | fs.ModeSticky, dir: true})
	return l
}
