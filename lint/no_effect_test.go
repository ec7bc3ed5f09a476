package lint

import (
	"strings"
	"testing"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
)

// lintNoEffect runs the lint on files with the bundled catalogue of release.
func lintNoEffect(t *testing.T, release string, files map[string]string) *Report {
	t.Helper()
	cat, err := kubespray.Bundled(release)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := parser.Load(writeTree(t, files))
	if err != nil {
		t.Fatal(err)
	}
	r := Run(Input{Inventory: inv, Catalogue: cat, AnsibleCore: "2.18"})
	checkSeverities(t, r)
	return r
}

func noEffect(r *Report) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Rule == "no-effect" {
			out = append(out, f)
		}
	}
	return out
}

const noEffectHosts = "[kube_control_plane]\ncp1\n[etcd]\ncp1\n[kube_node]\nw1\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n"

const registryAuth = `containerd_registry_auth:
  - registry: registry.example.com
    username: pull
    password: secret
`

// kubespray v2.28 renders config-v1.toml.j2, the only template reading
// containerd_registry_auth, for containerd 1.x only: with the default
// containerd 2 the login is silently missing (kubespray #12296).
func TestNoEffectContainerdRegistryAuth(t *testing.T) {
	for _, rel := range []string{"v2.28.1", "v2.31.0", "master"} {
		r := lintNoEffect(t, rel, map[string]string{
			"hosts.ini":                       noEffectHosts,
			"group_vars/all/containerd.yml":   registryAuth,
			"group_vars/k8s_cluster/main.yml": "container_manager: containerd\n",
		})
		fs := noEffect(r)
		if len(fs) != 1 || fs[0].Variable != "containerd_registry_auth" {
			t.Fatalf("%s: want one no-effect on containerd_registry_auth, got %+v", rel, fs)
		}
		f := fs[0]
		for _, want := range []string{
			"not (containerd_version is version('2.0.0', '>='))",
			"roles/container-engine/containerd/tasks/main.yml:",
		} {
			if !strings.Contains(f.Message, want) {
				t.Errorf("%s: message %q lacks %q", rel, f.Message, want)
			}
		}
		if !strings.Contains(f.Why, "roles/container-engine/containerd/templates/config-v1.toml.j2:75") || !strings.Contains(f.Why, "containerd_version is \"2.") {
			t.Errorf("%s: why %q lacks the template read and the default containerd_version", rel, f.Why)
		}
		if !strings.Contains(f.Fix, "config.toml.j2 instead") {
			t.Errorf("%s: fix %q lacks the template rendered instead", rel, f.Fix)
		}
		if f.Where != "group_vars/all/containerd.yml:2:3" || len(f.Hosts) != 2 {
			t.Errorf("%s: where %q hosts %v", rel, f.Where, f.Hosts)
		}
	}
}

// With containerd 1.7 set, config-v1.toml.j2 is rendered and reads it.
func TestNoEffectContainerd17(t *testing.T) {
	r := lintNoEffect(t, "v2.28.1", map[string]string{
		"hosts.ini":                     noEffectHosts,
		"group_vars/all/containerd.yml": registryAuth + "containerd_version: 1.7.27\n",
	})
	if fs := noEffect(r); len(fs) != 0 {
		t.Fatalf("containerd 1.7: want no no-effect, got %+v", fs)
	}
	// before v2.28 config.toml.j2 (the only template) reads it
	r = lintNoEffect(t, "v2.27.1", map[string]string{
		"hosts.ini":                     noEffectHosts,
		"group_vars/all/containerd.yml": registryAuth,
	})
	if fs := noEffect(r); len(fs) != 0 {
		t.Fatalf("v2.27.1: want no no-effect, got %+v", fs)
	}
}

// calico's role runs only for kube_network_plugin == 'calico'
// (roles/network_plugin/meta/main.yml).
func TestNoEffectCalicoWithFlannel(t *testing.T) {
	files := map[string]string{
		"hosts.ini":                                 noEffectHosts,
		"group_vars/k8s_cluster/k8s-cluster.yml":    "kube_network_plugin: flannel\n",
		"group_vars/k8s_cluster/k8s-net-calico.yml": "calico_wireguard_enabled: true\n",
	}
	r := lintNoEffect(t, "v2.31.0", files)
	fs := noEffect(r)
	if len(fs) != 1 || fs[0].Variable != "calico_wireguard_enabled" {
		t.Fatalf("want one no-effect on calico_wireguard_enabled, got %+v", fs)
	}
	if !strings.Contains(fs[0].Message, "kube_network_plugin == 'calico' (roles/kubernetes/preinstall/tasks/main.yml:119, roles/network_plugin/tasks/main.yml:7, roles/reset/tasks/main.yml:435)") ||
		!strings.Contains(fs[0].Why, `kube_network_plugin is "flannel" (group_vars/k8s_cluster/k8s-cluster.yml:1:22)`) {
		t.Errorf("finding %+v", fs[0])
	}
	// with calico (kubespray's default) it is read
	delete(files, "group_vars/k8s_cluster/k8s-cluster.yml")
	if fs := noEffect(lintNoEffect(t, "v2.31.0", files)); len(fs) != 0 {
		t.Fatalf("calico: want no no-effect, got %+v", fs)
	}
}

// Linting kubespray v2.26.1's own sample for v2.31.0 (its upgrade golden)
// found kube_ovn_* settings "with no effect" under calico: the sample's
// k8s-net-kube-ovn.yml restates kube-ovn's defaults. A value equal to
// kubespray's default is no mistake; another value is.
func TestNoEffectSkipsTheDefault(t *testing.T) {
	files := map[string]string{
		"hosts.ini": noEffectHosts,
		"group_vars/k8s_cluster/k8s-net-kube-ovn.yml": "kube_ovn_external_address: 8.8.8.8\n",
	}
	if fs := noEffect(lintNoEffect(t, "v2.31.0", files)); len(fs) != 0 {
		t.Fatalf("kube-ovn's default restated: want no no-effect, got %+v", fs)
	}
	files["group_vars/k8s_cluster/k8s-net-kube-ovn.yml"] = "kube_ovn_external_address: 9.9.9.9\n"
	if fs := noEffect(lintNoEffect(t, "v2.31.0", files)); len(fs) != 1 {
		t.Fatalf("another address: want one no-effect, got %+v", fs)
	}
}
