//go:build shared

package main

import (
	"archive/tar"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

const calicoTree = "../../../../shared/calico-src/v3.31.5"

// manifestExecs is what kubespray v2.31.0's manifests run in the images
// the catalogue builds for its defaults: each path as the template writes
// it, to be found in the image of that variable (a bare name on the
// image's PATH, as the runtime finds it).
var manifestExecs = []struct {
	template, image string
	execs           []string
}{
	{"roles/network_plugin/calico/templates/calico-node.yml.j2", "calico_cni",
		[]string{"/opt/cni/bin/calico-ipam", "/opt/cni/bin/install"}},
	{"roles/network_plugin/calico/templates/calico-node.yml.j2", "calico_node",
		[]string{`"calico-node"`, "/bin/calico-node"}},
	{"roles/kubernetes-apps/policy_controller/calico/templates/calico-kube-controllers.yml.j2", "calico_policy",
		[]string{"/usr/bin/check-status"}},
	{"roles/kubernetes-apps/ansible/templates/dns-autoscaler.yml.j2", "dnsautoscaler",
		[]string{"/cluster-proportional-autoscaler"}},
}

// calicoNodeTree lays calico's node/filesystem out under dir as
// artefacts.sh does for the calico/node image: etc as it is, sbin's
// scripts in /usr/sbin (calico's Dockerfile: COPY filesystem/sbin/*
// /usr/sbin/).
func calicoNodeTree(t *testing.T, dir string) {
	t.Helper()
	src := filepath.Join(calicoTree, "node", "filesystem")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if sub, base := filepath.Split(rel); sub == "sbin/" {
			rel = filepath.Join("usr", "sbin", base)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		writeFile(t, dir, rel, b, 0o755)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// found resolves what an image runs inside its extracted root, as the
// runtime does: an absolute path through the image's own links, a bare
// name in the PATH of its environment. It returns the file's path, or "".
func found(root string, hdrs map[string]*tar.Header, s spec, name string) string {
	in := &rootfsCopier{root: root, l: newLayer()}
	candidates := []string{name}
	if !path.IsAbs(name) {
		candidates = nil
		for _, e := range s.env() {
			if dirs, ok := strings.CutPrefix(e, "PATH="); ok {
				for _, d := range strings.Split(dirs, ":") {
					candidates = append(candidates, path.Join(d, name))
				}
			}
		}
	}
	for _, c := range candidates {
		if real, err := in.resolve(c); err == nil && hdrs[real] != nil && hdrs[real].Typeflag == tar.TypeReg {
			return real
		}
	}
	return ""
}

// TestImagesHoldWhatKubesprayRuns: every path kubespray's manifests exec
// in an image of its defaults is in the template still and in the image,
// and every image's own command (what runs when the manifest sets none:
// calico/node's start_runit, node-cache, nginx) is there too, calico/node's
// start_runit from calico's own tree.
func TestImagesHoldWhatKubesprayRuns(t *testing.T) {
	build := fakeBuildDir(t, tinyBinary(t))
	byVar := map[string]spec{}
	for _, s := range catalogue {
		if s.Var != "" {
			byVar[s.Var] = s
		}
		for _, f := range s.Files {
			if f.Tree && s.Repo == "calico/node" {
				calicoNodeTree(t, s.built(build, f.Source))
			}
		}
	}
	images := map[string]struct {
		hdrs map[string]*tar.Header
		root string
	}{}
	image := func(s spec) (map[string]*tar.Header, string) {
		if im, ok := images[s.Repo]; ok {
			return im.hdrs, im.root
		}
		hdrs, root := assembled(t, s, build)
		images[s.Repo] = struct {
			hdrs map[string]*tar.Header
			root string
		}{hdrs, root}
		return hdrs, root
	}

	for _, m := range manifestExecs {
		b, err := os.ReadFile(filepath.Join(kubesprayTree, m.template))
		if err != nil {
			t.Fatal(err)
		}
		s, ok := byVar[m.image]
		if !ok {
			t.Fatalf("the catalogue has no image for %s", m.image)
		}
		hdrs, root := image(s)
		for _, e := range m.execs {
			if !strings.Contains(string(b), e) {
				t.Errorf("%s no longer runs %s", m.template, e)
			}
			if found(root, hdrs, s, strings.Trim(e, `"`)) == "" {
				t.Errorf("%s runs %s in %s, which the image does not hold", m.template, e, s.Repo)
			}
		}
	}
	for _, s := range catalogue {
		cmd := s.Entrypoint
		if len(cmd) == 0 {
			cmd = s.Cmd
		}
		if len(cmd) == 0 {
			t.Errorf("%s: no entrypoint and no command", s.Repo)
			continue
		}
		hdrs, root := image(s)
		if found(root, hdrs, s, cmd[0]) == "" {
			t.Errorf("%s: its command %s is not in the image", s.Repo, cmd[0])
		}
	}
}
