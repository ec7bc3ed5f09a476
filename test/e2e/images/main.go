// Command images makes the container images an offline kubespray v2.31.0
// cluster.yml pulls, without a container engine, and serves them from a
// local registry, for the e2e cluster on the node machines.
//
//	images serve --addr 192.0.2.1:5000 --root DIR
//	images push  --registry 192.0.2.1:5000 --build-dir DIR --rootfs ROOTFS [--all-versions]
//
// serve is distribution's registry (github.com/distribution/distribution/v3,
// its handlers as a library) on plain HTTP with the filesystem driver under
// DIR. It prints "listening ADDR" once it accepts connections and stops on
// SIGTERM or SIGINT.
//
// push assembles each image from the binaries the artefacts build leaves in
// DIR/<component>/<version>/ (test/e2e/artefacts.sh) and, for the images
// that exec more than their own binary (kube-proxy, flannel, the CNI
// plugin's init container, local-path-provisioner's helper pod,
// calico-node, node-cache), a base layer of userland copied out of the
// node machines' Debian root filesystem; runit (calico-node) and nginx
// come from roots the artefacts build unpacked from Debian's packages. It
// skips, with a line on stderr, an image whose binaries are absent, leaves
// alone an image the registry already holds with the same digest, and
// prints one line per image: pushed|unchanged REF@DIGEST SIZE.
//
// 192.0.2.1 exists only inside the lab network namespace of
// test/nodes/nodes.sh, so both run there (the host cannot reach it):
//
//	go build -o /tmp/images .   # in test/e2e/images
//	./test/nodes/nodes.sh exec /tmp/images serve --addr 192.0.2.1:5000 --root REGISTRY_DIR &
//	./test/nodes/nodes.sh exec /tmp/images push --registry 192.0.2.1:5000 \
//	    --build-dir ~/.cache/layercheck/e2e/build --rootfs ~/.cache/layercheck/nodes/rootfs
//	./test/nodes/nodes.sh ssh node1 curl -s http://192.0.2.1:5000/v2/_catalog
//	kill %1
//
// (nodes.sh exec is `ip netns exec <prefix>-lab`.) The inventory then sets
// registry_host: "192.0.2.1:5000", kube_image_repo, gcr_image_repo,
// github_image_repo, docker_image_repo and quay_image_repo to
// "{{ registry_host }}", local_path_provisioner_helper_image_repo to
// "{{ registry_host }}/library/busybox", metrics_server_version to 0.8.0
// and local_path_provisioner_version to 0.0.30 (the versions the artefacts
// build; v2.31.0's defaults are 0.8.1 and 0.0.32), and tells containerd the
// registry is plain HTTP (an http:// containerd_registries_mirrors entry).
// The flannel cluster sets kube_network_plugin: flannel,
// enable_nodelocaldns: false, enable_dns_autoscaler: false and
// loadbalancer_apiserver_localhost: false; with artefacts.sh cluster's
// E2E_CNI=calico, calico's, nodelocaldns', dns-autoscaler's and nginx's
// images are built too, for kubespray's defaults. What neither builds is
// turned off by kubespray's own defaults (names_shared_test.go's
// notPulled).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serveMain(os.Args[2:])
	case "push":
		err = pushMain(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: images serve --addr HOST:PORT --root DIR\n       images push --registry HOST:PORT --build-dir DIR --rootfs DIR")
	os.Exit(2)
}

func cacheDir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "layercheck")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "layercheck")
}

func serveMain(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", "192.0.2.1:5000", "listen address")
	root := fs.String("root", "", "registry storage directory (required)")
	_ = fs.Parse(args)
	if *root == "" {
		return errors.New("serve: --root is required")
	}
	if err := os.MkdirAll(*root, 0o755); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	h, err := registryHandler(ctx, *root)
	if err != nil {
		return err
	}
	fmt.Println("listening", ln.Addr())
	return serve(ctx, newServer(h), ln, os.Stderr)
}

func pushMain(args []string) error {
	fs := flag.NewFlagSet("push", flag.ExitOnError)
	registry := fs.String("registry", "192.0.2.1:5000", "registry HOST:PORT (plain HTTP)")
	e2e := os.Getenv("LAYERCHECK_E2E_DIR")
	if e2e == "" {
		e2e = filepath.Join(cacheDir(), "e2e")
	}
	buildDir := fs.String("build-dir", filepath.Join(e2e, "build"), "the artefacts build's binaries, <component>/<version>/<binary>")
	rootfs := fs.String("rootfs", filepath.Join(cacheDir(), "nodes", "rootfs"), "the node machines' Debian root filesystem")
	timeout := fs.Duration("timeout", 15*time.Minute, "the whole push")
	all := fs.Bool("all-versions", false, "also every other version of a versioned image found in the build dir (a day-2 run's older release)")
	_ = fs.Parse(args)
	specs := catalogue
	if *all {
		specs = builtVersions(catalogue, *buildDir)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	return push(ctx, pushOptions{
		registry: *registry, buildDir: *buildDir, rootfs: *rootfs,
		userland: debianUserland, specs: specs, out: os.Stdout, log: os.Stderr,
	})
}
