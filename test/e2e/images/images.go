package main

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// envPath is the PATH of distroless and of the upstream images.
const envPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// spec is one image: where kubespray pulls it from (repo and tag below
// registry_host, with every *_image_repo set to "{{ registry_host }}"),
// the binary the artefacts build makes (build/<component>/<version>/<binary>)
// and where the manifests expect it.
type spec struct {
	// Repo and Tag: the reference below the registry, as kubespray v2.31.0
	// renders the variables named in Var.
	Repo, Tag string
	// Var: kubespray's <Var>_image_repo and <Var>_image_tag; empty for
	// kubeadm's images (<kubeadm_image_repo>/<Repo>:v<kube_version>) and
	// the probe.
	Var string
	// Component, Version, Binary locate the binary in the build dir; an
	// empty Binary is an image of the userland alone.
	Component, Version, Binary string
	Path                       string // where the binary goes in the image
	Userland                   bool   // needs the base layer of Debian userland
	Entrypoint, Cmd            []string
	User                       string
	// Env: the image's environment beside PATH (an entry for PATH
	// replaces envPath); WorkingDir: "/" when empty.
	Env        []string
	WorkingDir string
	// Files: what the image holds beside its binary, in the same layer.
	Files []file
	// Debian: programs out of a root the artefacts build unpacked from
	// Debian packages, in a layer under the userland layer.
	Debian *debian
}

// file is one more entry of an image: a file or a whole directory of the
// image's build dir (build/<Component>/<Version>/<Source>), a symlink, or
// an empty file or directory with its owner.
type file struct {
	Path   string // in the image
	Source string // relative to the image's build dir
	Tree   bool   // Source is a directory, copied whole at Path
	Link   string // a symlink to Link
	// With no Source and no Link: an empty directory (Dir) or file, with
	// Mode and Owner (uid and gid).
	Dir   bool
	Mode  fs.FileMode
	Owner int
}

// debian names what an image takes out of a root filesystem the artefacts
// build unpacked from Debian packages (build/<Component>/<Version>/<Root>):
// Programs, every file of Dirs and the libraries Libs that a program loads
// with dlopen, each with the libraries it needs, from that root alone.
type debian struct {
	Root                 string
	Programs, Dirs, Libs []string
}

// catalogue is every image an offline kubespray v2.31.0 cluster.yml pulls
// with flannel or with its defaults (calico, nodelocaldns, dns-autoscaler,
// the workers' nginx-proxy; artefacts.sh cluster with E2E_CNI=calico
// builds them), with metrics-server and local-path-provisioner, plus the
// verify probe, and etcd for etcd_deployment_type kubeadm (day 2's trap
// that switches a running cluster to it; with the default host, kubespray
// runs etcd from the binary). An image whose binaries are not built is
// skipped by push.
var catalogue = []spec{
	// kubelet's sandbox (containerd's sandbox_image); upstream runs 65535.
	{Repo: "pause", Tag: "3.10.1", Var: "pod_infra", Component: "pause", Version: "3.10.1", Binary: "pause",
		Path: "/pause", Entrypoint: []string{"/pause"}, User: "65535:65535"},
	// kubeadm's static pods run the binary from PATH (imageRepository is
	// kube_image_repo); kube-proxy's DaemonSet runs /usr/local/bin/kube-proxy.
	kubeImage("kube-apiserver", false),
	kubeImage("kube-controller-manager", false),
	kubeImage("kube-scheduler", false),
	kubeImage("kube-proxy", true),
	// The Deployment runs the image's entrypoint with -conf. Upstream runs
	// as nonroot with cap_net_bind_service set on /coredns as a file
	// capability; this layer carries no xattrs, so it runs as root and
	// binds :53 with the NET_BIND_SERVICE the manifest adds.
	{Repo: "coredns/coredns", Tag: "v1.12.4", Var: "coredns", Component: "coredns", Version: "v1.12.4", Binary: "coredns",
		Path: "/coredns", Entrypoint: []string{"/coredns"}},
	{Repo: "metrics-server/metrics-server", Tag: "v0.8.0", Var: "metrics_server", Component: "metrics-server", Version: "v0.8.0", Binary: "metrics-server",
		Path: "/metrics-server", Entrypoint: []string{"/metrics-server"}, User: "65534"},
	// The Deployment's command is local-path-provisioner, from PATH.
	{Repo: "rancher/local-path-provisioner", Tag: "v0.0.30", Var: "local_path_provisioner", Component: "local-path-provisioner", Version: "v0.0.30", Binary: "local-path-provisioner",
		Path: "/usr/bin/local-path-provisioner", Cmd: []string{"local-path-provisioner"}},
	// The helper pod runs /bin/sh on the setup and teardown scripts
	// (mkdir -m 0777 -p, rm -rf). kubespray's default repo is "busybox",
	// which containerd reads as docker.io/library/busybox.
	{Repo: "library/busybox", Tag: "latest", Var: "local_path_provisioner_helper", Userland: true, Cmd: []string{"sh"}},
	// flanneld at /opt/bin; its install-cni init container runs cp.
	{Repo: "flannel/flannel", Tag: "v0.28.4", Var: "flannel", Component: "flannel", Version: "v0.28.4", Binary: "flanneld",
		Path: "/opt/bin/flanneld", Userland: true, Entrypoint: []string{"/opt/bin/flanneld"}},
	// Its init container runs cp -f /flannel /opt/cni/bin/flannel.
	{Repo: "flannel/flannel-cni-plugin", Tag: "v1.7.1-flannel1", Var: "flannel_init", Component: "flannel-cni-plugin", Version: "v1.7.1-flannel1", Binary: "flannel",
		Path: "/flannel", Userland: true, Cmd: []string{"/flannel"}},
	// calico-node's DaemonSet sets no command: the image's start_runit runs
	// calico's rc.local (calico-node -startup, then the runit services it
	// enables: felix, monitor-addresses, allocate-tunnel-addrs,
	// node-status-reporter, cni; no BIRD with kubespray's VXLAN backend)
	// and execs runsvdir. The probes run /bin/calico-node and the
	// mount-bpffs init container calico-node from PATH; Debian's /bin is
	// usr/bin. Not here: upstream's mountns (cgo), which only its eBPF data
	// plane uses (mount-bpffs runs -best-effort), and BIRD.
	// calico-node is built without cgo, so without libbpf, whose stub
	// panics when called. Felix's iptables data plane calls it once, at
	// start, to remove the connect-time load balancer a former eBPF data
	// plane may have left (felix/dataplane/linux/int_dataplane.go,
	// bpfnat.RemoveConnectTimeLoadBalancer): on the node machines felix
	// panicked there in a loop and calico-node never became Ready.
	// FELIX_DebugSkipCTLBCleanup=true, felix's own switch, skips that
	// clean-up; a node that never ran the eBPF data plane has nothing to
	// clean up.
	{Repo: "calico/node", Tag: "v3.31.5", Var: "calico_node", Component: "calico", Version: "v3.31.5", Binary: "calico-node",
		Path: "/usr/bin/calico-node", Userland: true, Cmd: []string{"start_runit"},
		Env:    []string{"SVDIR=/etc/service/enabled", "FELIX_DebugSkipCTLBCleanup=true"},
		Files:  []file{{Path: "/", Source: "node-filesystem", Tree: true}},
		Debian: &debian{Root: "runit", Programs: []string{"runsvdir", "runsv", "sv", "svlogd", "chpst"}}},
	// Its init containers run /opt/cni/bin/calico-ipam -upgrade and
	// /opt/cni/bin/install, which copies the other files of /opt/cni/bin to
	// the host; calico-ipam is calico by another name, as upstream links
	// it. Upstream's image also carries calico's builds of host-local,
	// loopback, portmap, tuning and flannel, which install would copy over
	// the ones kubespray's CNI archive put there.
	{Repo: "calico/cni", Tag: "v3.31.5", Var: "calico_cni", Component: "calico", Version: "v3.31.5", Binary: "calico",
		Path: "/opt/cni/bin/calico", Cmd: []string{"/opt/cni/bin/install"},
		Env:        []string{"PATH=/opt/cni/bin:" + strings.TrimPrefix(envPath, "PATH=")},
		Files:      []file{{Path: "/opt/cni/bin/install", Source: "install"}, {Path: "/opt/cni/bin/calico-ipam", Link: "./calico"}},
		WorkingDir: "/opt/cni/bin"},
	// kube-controllers runs as 999 (kubespray's Deployment says
	// runAsNonRoot), through wrapper, which restarts it when it asks to, and
	// rewrites /status/status.json, which check-status reads for the
	// probes: that file (and the profiles it writes on a signal) is 999's.
	{Repo: "calico/kube-controllers", Tag: "v3.31.5", Var: "calico_policy", Component: "calico", Version: "v3.31.5", Binary: "kube-controllers",
		Path: "/usr/bin/kube-controllers", Entrypoint: []string{"/usr/bin/wrapper", "/usr/bin/kube-controllers"}, User: "999",
		Files: []file{
			{Path: "/usr/bin/check-status", Source: "check-status"},
			{Path: "/usr/bin/wrapper", Source: "wrapper"},
			{Path: "/status", Dir: true, Mode: 0o755},
			{Path: "/status/status.json", Mode: 0o644, Owner: 999},
			{Path: "/profiles", Dir: true, Mode: 0o755},
			{Path: "/profiles/mem.pprof", Mode: 0o644, Owner: 999},
			{Path: "/profiles/cpu.pprof", Mode: 0o644, Owner: 999},
		}},
	// nodelocaldns: the DaemonSet passes arguments only; node-cache runs
	// iptables for its NOTRACK rules.
	{Repo: "dns/k8s-dns-node-cache", Tag: "1.25.0", Var: "nodelocaldns", Component: "node-cache", Version: "1.25.0", Binary: "node-cache",
		Path: "/node-cache", Userland: true, Entrypoint: []string{"/node-cache"}},
	// dns-autoscaler: the Deployment's command is
	// /cluster-proportional-autoscaler; upstream is distroless nonroot.
	{Repo: "cpa/cluster-proportional-autoscaler", Tag: "v1.8.8", Var: "dnsautoscaler", Component: "cluster-proportional-autoscaler",
		Version: "v1.8.8", Binary: "cluster-proportional-autoscaler", Path: "/cluster-proportional-autoscaler",
		Entrypoint: []string{"/cluster-proportional-autoscaler"}, User: "65532", Env: []string{"HOME=/"}},
	// The workers' nginx-proxy, a static pod that mounts kubespray's
	// nginx.conf over /etc/nginx and sets no command: Debian's nginx under
	// kubespray's tag (nginx has no Go source), with the temp, log and pid
	// directories it builds in. Its stream module is a dynamic one that
	// conf does not load, so the command loads it beside upstream's
	// "daemon off;" (artefacts.sh's NGINX_GLOBALS, with which nginx -t
	// accepts kubespray's conf and without which it does not); glibc loads
	// libgcc_s when one of the threads that conf turns on exits.
	{Repo: "library/nginx", Tag: "1.28.2-alpine", Var: "nginx", Component: "nginx", Version: "1.28.2-alpine",
		Debian: &debian{Root: "root", Programs: []string{"nginx"}, Dirs: []string{"/usr/lib/nginx/modules"}, Libs: []string{"libgcc_s.so.1"}},
		Files: []file{
			{Path: "/var/lib/nginx", Dir: true, Mode: 0o755},
			{Path: "/var/log/nginx", Dir: true, Mode: 0o755},
			{Path: "/run", Dir: true, Mode: 0o755},
		},
		Cmd: []string{"nginx", "-g", "daemon off; load_module /usr/lib/nginx/modules/ngx_stream_module.so;"}},
	// kubeadm's etcd static pod runs etcd from PATH; the server binary of
	// the etcd release archive (artefacts.sh etcd).
	{Repo: "coreos/etcd", Tag: "v3.6.10", Var: "etcd", Component: "etcd", Version: "v3.6.10", Binary: "etcd",
		Path: "/usr/local/bin/etcd", Entrypoint: []string{"/usr/local/bin/etcd"}},
	// layercheck's workload probe (verify/cluster probe_image): agnhost netexec.
	{Repo: "e2e-test-images/agnhost", Tag: "2.53", Var: "", Component: "kubernetes", Version: "v1.35.4", Binary: "agnhost",
		Path: "/agnhost", Entrypoint: []string{"/agnhost"}},
}

// builtVersions is the catalogue with each versioned image (one whose tag
// is its build version) once per version built in buildDir: a day-2 run
// pulls the older release's images for the install and the newer
// release's for the upgrade from one registry. The catalogue's own
// version is kept even when not built (push then skips it, saying so).
func builtVersions(specs []spec, buildDir string) []spec {
	var out []spec
	for _, s := range specs {
		out = append(out, s)
		if s.Binary == "" || s.Tag != s.Version {
			continue
		}
		dirs, _ := os.ReadDir(filepath.Join(buildDir, s.Component))
		for _, d := range dirs {
			v := d.Name()
			if v == s.Version || !d.IsDir() || strings.HasSuffix(v, ".tmp") {
				continue
			}
			o := s
			o.Tag, o.Version = v, v
			out = append(out, o)
		}
	}
	return out
}

func kubeImage(name string, userland bool) spec {
	p := "/usr/local/bin/" + name
	return spec{Repo: name, Tag: "v1.35.4", Component: "kubernetes", Version: "v1.35.4", Binary: name,
		Path: p, Userland: userland, Entrypoint: []string{p}}
}

// ref is the image's reference on registry.
func (s spec) ref(registry string) string { return registry + "/" + s.Repo + ":" + s.Tag }

// binary is the host path of the image's binary in buildDir ("" if none).
func (s spec) binary(buildDir string) string {
	if s.Binary == "" {
		return ""
	}
	return s.built(buildDir, s.Binary)
}

// built is the host path of name in the image's build dir.
func (s spec) built(buildDir, name string) string {
	return filepath.Join(buildDir, s.Component, s.Version, filepath.FromSlash(name))
}

// env is the image's environment: PATH (envPath unless Env sets it), then
// Env.
func (s spec) env() []string {
	for _, e := range s.Env {
		if strings.HasPrefix(e, "PATH=") {
			return s.Env
		}
	}
	return append([]string{envPath}, s.Env...)
}

// filesLayer is the image's binary and Files as one layer; nil when the
// image has neither.
func (s spec) filesLayer(buildDir string) (*layer, error) {
	bin := s.binary(buildDir)
	if bin == "" && len(s.Files) == 0 {
		return nil, nil
	}
	l := newLayer()
	if bin != "" {
		if err := l.file(s.Path, bin); err != nil {
			return nil, err
		}
		e := l.entries[s.Path]
		e.mode = 0o755
		l.entries[s.Path] = e
	}
	for _, f := range s.Files {
		if !path.IsAbs(f.Path) {
			return nil, fmt.Errorf("%s: not an absolute path in the image", f.Path)
		}
		switch {
		case f.Tree:
			if err := l.tree(f.Path, s.built(buildDir, f.Source)); err != nil {
				return nil, err
			}
		case f.Source != "":
			if err := l.file(f.Path, s.built(buildDir, f.Source)); err != nil {
				return nil, err
			}
		case f.Link != "":
			l.add(entry{name: f.Path, link: f.Link})
		default:
			l.add(entry{name: f.Path, mode: f.Mode, dir: f.Dir, owner: f.Owner})
		}
	}
	return l, nil
}

// debianLayer copies s.Debian's programs and dirs, with their libraries,
// out of its root in buildDir; nil when the image has none.
func (s spec) debianLayer(buildDir string) (*layer, error) {
	if s.Debian == nil {
		return nil, nil
	}
	root := s.built(buildDir, s.Debian.Root)
	l, err := userland{required: s.Debian.Programs, dirs: s.Debian.Dirs, libs: s.Debian.Libs}.layer(root)
	if err != nil {
		return nil, fmt.Errorf("debian root: %w", err)
	}
	return l, nil
}

// layers are what every image shares, built once per push.
type layers struct {
	etc      v1.Layer
	userland func() (v1.Layer, error)
}

// assemble builds s as an OCI image for linux/amd64: the etc layer, the
// Debian programs, the userland layer (its merged /bin, /lib and /lib64
// links win over a Debian root's own directories of those names, so its
// libraries are the ones every program finds), then the binary and Files.
func assemble(s spec, buildDir string, base layers) (v1.Image, error) {
	ls := []v1.Layer{base.etc}
	own := func(l *layer, err error) error {
		if err != nil || l == nil {
			return err
		}
		v, err := l.v1Layer()
		if err == nil {
			ls = append(ls, v)
		}
		return err
	}
	if err := own(s.debianLayer(buildDir)); err != nil {
		return nil, err
	}
	if s.Userland {
		u, err := base.userland()
		if err != nil {
			return nil, err
		}
		ls = append(ls, u)
	}
	if err := own(s.filesLayer(buildDir)); err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.AppendLayers(img, ls...)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Config.Env = s.env()
	cf.Config.Entrypoint, cf.Config.Cmd = s.Entrypoint, s.Cmd
	cf.Config.User = s.User
	cf.Config.WorkingDir = "/"
	if s.WorkingDir != "" {
		cf.Config.WorkingDir = s.WorkingDir
	}
	cf.Config.Labels = map[string]string{"org.opencontainers.image.title": path.Base(s.Repo)}
	return mutate.ConfigFile(img, cf)
}

// newLayers makes the etc layer now and the userland layer from rootfs on
// first use.
func newLayers(rootfs string, set userland) (layers, error) {
	etc, err := etcLayer().v1Layer()
	if err != nil {
		return layers{}, err
	}
	var (
		u    v1.Layer
		uErr error
		done bool
	)
	return layers{etc: etc, userland: func() (v1.Layer, error) {
		if !done {
			done = true
			l, err := set.layer(rootfs)
			if err != nil {
				uErr = fmt.Errorf("userland layer: %w", err)
			} else {
				u, uErr = l.v1Layer()
			}
		}
		return u, uErr
	}}, nil
}

// missing says why s cannot be built from buildDir, or "": its binary, a
// file or tree of Files, or its Debian root is not there.
func (s spec) missing(buildDir string) string {
	var want []string
	if bin := s.binary(buildDir); bin != "" {
		want = append(want, bin)
	}
	for _, f := range s.Files {
		if f.Source != "" {
			want = append(want, s.built(buildDir, f.Source))
		}
	}
	if s.Debian != nil {
		want = append(want, s.built(buildDir, s.Debian.Root))
	}
	for _, p := range want {
		if _, err := os.Stat(p); err != nil {
			return "no " + p
		}
	}
	return ""
}
