//go:build shared

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const kubesprayTree = "../../../../shared/kubespray-full/v2.31.0"

// offlineInventory is what the e2e inventory sets: offline.yml's registry
// overrides, the versions the artefacts build makes where they differ
// from v2.31.0's defaults, and the local-path helper image, whose default
// ("busybox") names no registry.
var offlineInventory = map[string]string{
	"registry_host":     "192.0.2.1:5000",
	"kube_image_repo":   "{{ registry_host }}",
	"gcr_image_repo":    "{{ registry_host }}",
	"github_image_repo": "{{ registry_host }}",
	"docker_image_repo": "{{ registry_host }}",
	"quay_image_repo":   "{{ registry_host }}",

	"metrics_server_version":                   "0.8.0",
	"local_path_provisioner_version":           "0.0.30",
	"local_path_provisioner_helper_image_repo": "{{ registry_host }}/library/busybox",
}

// kubesprayVars loads the defaults files the image variables live in.
func kubesprayVars(t *testing.T) map[string]any {
	t.Helper()
	vars := map[string]any{}
	for _, f := range []string{
		"roles/kubespray_defaults/defaults/main/download.yml",
		"roles/kubespray_defaults/vars/main/main.yml",
		"roles/kubernetes-apps/external_provisioner/local_path_provisioner/defaults/main.yml",
	} {
		b, err := os.ReadFile(filepath.Join(kubesprayTree, f))
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for k, v := range m {
			vars[k] = v
		}
	}
	return vars
}

// defaultKubeVersion is main.yml's kube_version: the first amd64 key of
// kubelet_checksums.
func defaultKubeVersion(t *testing.T) string {
	t.Helper()
	return checksumVersions(t, "kubelet_checksums")[0]
}

// defaultEtcdVersion is etcd_version's default,
// `(etcd_binary_checksums['amd64'].keys() | select('version', '3.7', '<'))[0]`:
// the first amd64 key of etcd_binary_checksums below 3.7.
func defaultEtcdVersion(t *testing.T) string {
	t.Helper()
	for _, v := range checksumVersions(t, "etcd_binary_checksums") {
		if !versionAtLeast(t, v, "3.7") {
			return v
		}
	}
	t.Fatal("etcd_binary_checksums.amd64 has no version below 3.7")
	return ""
}

// checksumVersions are the amd64 keys of checksums.yml's table, in order.
func checksumVersions(t *testing.T, table string) []string {
	t.Helper()
	f := filepath.Join(kubesprayTree, "roles/kubespray_defaults/vars/main/checksums.yml")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	find := func(n *yaml.Node, key string) *yaml.Node {
		for i := 0; n != nil && i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1]
			}
		}
		return nil
	}
	amd64 := find(find(doc.Content[0], table), "amd64")
	if amd64 == nil || len(amd64.Content) == 0 {
		t.Fatalf("%s: no %s.amd64", f, table)
	}
	var out []string
	for i := 0; i+1 < len(amd64.Content); i += 2 {
		out = append(out, amd64.Content[i].Value)
	}
	return out
}

var (
	jinjaExpr    = regexp.MustCompile(`\{\{\s*(.*?)\s*\}\}`)
	jinjaName    = regexp.MustCompile(`^[a-z0-9_]+$`)
	jinjaIndex   = regexp.MustCompile(`^([a-z0-9_]+)\[([a-z0-9_]+)\]$`)
	jinjaVersion = regexp.MustCompile(`^'([^']*)' if ([a-z0-9_]+) is version\('([^']*)', '>='\) else '([^']*)'$`)
)

// render evaluates the few Jinja forms kubespray's image variables use:
// a name, a map indexed by a name, and `'a' if v is version('x', '>=')
// else 'b'`. Anything else fails the test, naming the expression.
func render(t *testing.T, vars map[string]any, s string) string {
	t.Helper()
	for depth := 0; strings.Contains(s, "{{"); depth++ {
		if depth > 10 {
			t.Fatalf("render %q: too deep", s)
		}
		s = jinjaExpr.ReplaceAllStringFunc(s, func(m string) string {
			e := jinjaExpr.FindStringSubmatch(m)[1]
			switch {
			case jinjaName.MatchString(e):
				return lookup(t, vars, e)
			case jinjaIndex.MatchString(e):
				g := jinjaIndex.FindStringSubmatch(e)
				table, ok := vars[g[1]].(map[string]any)
				if !ok {
					t.Fatalf("%s is not a map", g[1])
				}
				key := render(t, vars, lookup(t, vars, g[2]))
				v, ok := table[key]
				if !ok {
					t.Fatalf("%s has no key %q", g[1], key)
				}
				return render(t, vars, scalar(v))
			case jinjaVersion.MatchString(e):
				g := jinjaVersion.FindStringSubmatch(e)
				if versionAtLeast(t, render(t, vars, lookup(t, vars, g[2])), g[3]) {
					return g[1]
				}
				return g[4]
			}
			t.Fatalf("render: unsupported expression %q", e)
			return ""
		})
	}
	return s
}

func lookup(t *testing.T, vars map[string]any, name string) string {
	t.Helper()
	v, ok := vars[name]
	if !ok {
		t.Fatalf("no variable %s", name)
	}
	return scalar(v)
}

func scalar(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := yaml.Marshal(v)
	return strings.TrimSpace(string(b))
}

func versionAtLeast(t *testing.T, v, min string) bool {
	t.Helper()
	a, b := strings.Split(v, "."), strings.Split(min, ".")
	for i := 0; i < len(a) && i < len(b); i++ {
		x, err1 := strconv.Atoi(a[i])
		y, err2 := strconv.Atoi(b[i])
		if err1 != nil || err2 != nil {
			t.Fatalf("version %q or %q is not numeric", v, min)
		}
		if x != y {
			return x > y
		}
	}
	return len(a) >= len(b)
}

// TestNamesAreKubespraysOwn renders each image's <var>_image_repo and
// <var>_image_tag from kubespray v2.31.0's defaults with the offline
// inventory, and the names kubeadm and layercheck's probe pull, and checks
// the catalogue pushes exactly those.
func TestNamesAreKubespraysOwn(t *testing.T) {
	vars := kubesprayVars(t)
	kubeVersion := defaultKubeVersion(t)
	vars["kube_version"] = kubeVersion
	vars["kube_major_version"] = kubeVersion[:strings.LastIndex(kubeVersion, ".")]
	vars["etcd_version"] = defaultEtcdVersion(t)
	// calico_version: the first amd64 key of calicoctl_binary_checksums.
	vars["calico_version"] = checksumVersions(t, "calicoctl_binary_checksums")[0]
	for k, v := range offlineInventory {
		vars[k] = v
	}
	reg := offlineInventory["registry_host"]

	// kubeadm pulls <imageRepository>/<component>:v<kube_version>, and
	// kubespray renders imageRepository from kubeadm_image_repo.
	tmpl, err := os.ReadFile(filepath.Join(kubesprayTree, "roles/kubernetes/control-plane/templates/kubeadm-config.v1beta4.yaml.j2"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tmpl), "\nimageRepository: {{ kubeadm_image_repo }}\n") {
		t.Fatal("kubeadm-config.v1beta4.yaml.j2 no longer sets imageRepository from kubeadm_image_repo")
	}
	// The probe's default is upstream's agnhost under registry.k8s.io, which
	// is kube_image_repo's default.
	opts, err := os.ReadFile("../../../verify/cluster/options.go")
	if err != nil {
		t.Fatal(err)
	}
	probe := regexp.MustCompile(`p\.Image = "registry\.k8s\.io/([^"]+)"`).FindSubmatch(opts)
	if probe == nil {
		t.Fatal("verify/cluster/options.go: no registry.k8s.io probe image default")
	}

	for _, s := range catalogue {
		var want string
		switch {
		case s.Var != "":
			want = render(t, vars, lookup(t, vars, s.Var+"_image_repo")) + ":" + render(t, vars, lookup(t, vars, s.Var+"_image_tag"))
		case s.Repo == "e2e-test-images/agnhost":
			want = reg + "/" + string(probe[1])
		default:
			want = render(t, vars, lookup(t, vars, "kubeadm_image_repo")) + "/" + s.Repo + ":v" + kubeVersion
		}
		if got := s.ref(reg); got != want {
			t.Errorf("catalogue pushes %s, kubespray pulls %s", got, want)
		}
	}
}

// notPulled is every container image in kubespray v2.31.0's downloads that
// the catalogue does not build, with the inventory setting (or default)
// that keeps cluster.yml from pulling it. The flannel e2e inventory also
// turns off calico's, nodelocaldns', dns-autoscaler's and nginx-proxy's
// images, which the catalogue builds for a run of kubespray's defaults.
var notPulled = map[string]string{
	"calico_typha":              "typha_enabled: false (default)",
	"calico_apiserver":          "calico_apiserver_enabled: false (default)",
	"cilium":                    "kube_network_plugin: calico (default) or flannel",
	"cilium_operator":           "kube_network_plugin: calico (default) or flannel",
	"cilium_hubble_relay":       "cilium_enable_hubble: false (default)",
	"cilium_hubble_certgen":     "cilium_enable_hubble: false (default)",
	"cilium_hubble_ui":          "cilium_enable_hubble: false (default)",
	"cilium_hubble_ui_backend":  "cilium_enable_hubble: false (default)",
	"cilium_hubble_envoy":       "cilium_enable_hubble: false (default)",
	"multus":                    "kube_network_plugin_multus: false (default)",
	"kube_ovn":                  "kube_network_plugin: calico (default) or flannel",
	"kube_router":               "kube_network_plugin: calico (default) or flannel",
	"kube-vip":                  "kube_vip_enabled: false (default)",
	"haproxy":                   "loadbalancer_apiserver_type: nginx (default)",
	"registry":                  "registry_enabled: false (default)",
	"local_volume_provisioner":  "local_volume_provisioner_enabled: false (default)",
	"ingress_alb_controller":    "ingress_alb_enabled: false (default)",
	"cert_manager_controller":   "cert_manager_enabled: false (default)",
	"cert_manager_cainjector":   "cert_manager_enabled: false (default)",
	"cert_manager_webhook":      "cert_manager_enabled: false (default)",
	"csi_attacher":              "cinder_csi_enabled, aws_ebs_csi_enabled: false (default)",
	"csi_provisioner":           "cinder_csi_enabled, aws_ebs_csi_enabled: false (default)",
	"csi_snapshotter":           "cinder_csi_enabled, aws_ebs_csi_enabled: false (default)",
	"csi_resizer":               "cinder_csi_enabled, aws_ebs_csi_enabled: false (default)",
	"csi_livenessprobe":         "cinder_csi_enabled, aws_ebs_csi_enabled: false (default)",
	"csi_node_driver_registrar": "cinder_csi_enabled, aws_ebs_csi_enabled: false (default)",
	"snapshot_controller":       "csi_snapshot_controller_enabled: false (default)",
	"cinder_csi_plugin":         "cinder_csi_enabled: false (default)",
	"aws_ebs_csi_plugin":        "aws_ebs_csi_enabled: false (default)",
	"metallb_speaker":           "metallb_speaker_enabled: false (default)",
	"metallb_controller":        "metallb_enabled: false (default)",
}

// TestEveryDownloadedImageIsBuiltOrTurnedOff: each container image in
// kubespray's downloads is in the catalogue or named in notPulled with
// what turns it off, so a release that adds an image fails here first.
func TestEveryDownloadedImageIsBuiltOrTurnedOff(t *testing.T) {
	downloads, ok := kubesprayVars(t)["downloads"].(map[string]any)
	if !ok || len(downloads) == 0 {
		t.Fatal("download.yml: no downloads map")
	}
	built := map[string]bool{}
	for _, s := range catalogue {
		built[s.Var] = true
	}
	for key, d := range downloads {
		entry, _ := d.(map[string]any)
		if c, ok := entry["container"]; !ok || c == false {
			continue
		}
		if built[key] == (notPulled[key] != "") {
			t.Errorf("downloads.%s (%v): want it either built or in notPulled, not both or neither", key, entry["repo"])
		}
	}
	for key := range notPulled {
		if _, ok := downloads[key]; !ok {
			t.Errorf("notPulled names %s, which downloads has not", key)
		}
	}
}
