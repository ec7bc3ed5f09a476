//go:build e2e || shared

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/harness"
)

// The e2e cluster of kubespray's defaults (E2E_CNI=calico, the default of
// `make e2e-cluster`): kubespray's own inventory/sample with its group_vars
// as the release ships them (calico with VXLAN, nodelocaldns,
// dns-autoscaler, nginx-proxy on the workers, kube_proxy_mode ipvs, ...),
// plus the add-ons operators enable first and only what this machine and
// the lab force, each setting with its reason. What differs from the
// sample is read back from the inventory written (sampleDiff), so the
// results list it as the run had it.

// clusterGroups are the e2e cluster's groups: node1 is the control plane
// and etcd, all three are nodes.
const clusterGroups = `
[kube_control_plane]
node1

[etcd]
node1

[kube_node]
node1
node2
node3

[k8s_cluster:children]
kube_control_plane
kube_node
`

// setting is one inventory variable the e2e sets, and why.
type setting struct {
	Name  string
	Value any
	Why   string
}

// lab is what the lab gives the inventory: where files_repo and the
// registry are, the nodes' only resolver, the hard RLIMIT_NOFILE the node
// machines inherit, and what `artefacts.sh cluster` printed (artefactSettings).
type lab struct {
	FilesRepo, Registry, Resolver string
	Nofile                        uint64
	Built                         []setting
}

// whyOffline is the reason of every variable that points kubespray at the
// lab's files_repo and registry: the sample's own offline.yml lines.
const whyOffline = "offline: no route out of the lab; the sample's group_vars/all/offline.yml, uncommented, with files_repo and registry_host the lab's"

// offlineSettings are kubespray's offline variables
// (inventory/sample/group_vars/all/offline.yml) for the lab's files_repo
// and registry, which both e2e clusters set.
func offlineSettings(filesRepo, registry string) []setting {
	s := []setting{
		{"files_repo", filesRepo, whyOffline},
		{"registry_host", registry, whyOffline},
	}
	for _, v := range []string{"kube_image_repo", "gcr_image_repo", "github_image_repo", "docker_image_repo", "quay_image_repo"} {
		s = append(s, setting{v, "{{ registry_host }}", whyOffline})
	}
	for _, u := range []struct{ name, url string }{
		{"kubeadm_download_url", "{{ files_repo }}/dl.k8s.io/release/v{{ kube_version }}/bin/linux/{{ image_arch }}/kubeadm"},
		{"kubectl_download_url", "{{ files_repo }}/dl.k8s.io/release/v{{ kube_version }}/bin/linux/{{ image_arch }}/kubectl"},
		{"kubelet_download_url", "{{ files_repo }}/dl.k8s.io/release/v{{ kube_version }}/bin/linux/{{ image_arch }}/kubelet"},
		{"cni_download_url", "{{ files_repo }}/github.com/containernetworking/plugins/releases/download/v{{ cni_version }}/cni-plugins-linux-{{ image_arch }}-v{{ cni_version }}.tgz"},
		{"crictl_download_url", "{{ files_repo }}/github.com/kubernetes-sigs/cri-tools/releases/download/v{{ crictl_version }}/crictl-v{{ crictl_version }}-{{ ansible_system | lower }}-{{ image_arch }}.tar.gz"},
		{"etcd_download_url", "{{ files_repo }}/github.com/etcd-io/etcd/releases/download/v{{ etcd_version }}/etcd-v{{ etcd_version }}-linux-{{ image_arch }}.tar.gz"},
		{"helm_download_url", "{{ files_repo }}/get.helm.sh/helm-v{{ helm_version }}-linux-{{ image_arch }}.tar.gz"},
		{"runc_download_url", "{{ files_repo }}/github.com/opencontainers/runc/releases/download/v{{ runc_version }}/runc.{{ image_arch }}"},
		{"containerd_download_url", "{{ files_repo }}/github.com/containerd/containerd/releases/download/v{{ containerd_version }}/containerd-{{ containerd_version }}-linux-{{ image_arch }}.tar.gz"},
		{"nerdctl_download_url", "{{ files_repo }}/github.com/containerd/nerdctl/releases/download/v{{ nerdctl_version }}/nerdctl-{{ nerdctl_version }}-{{ ansible_system | lower }}-{{ image_arch }}.tar.gz"},
	} {
		s = append(s, setting{u.name, u.url, whyOffline})
	}
	return append(s,
		setting{"containerd_registries_mirrors", []any{map[string]any{
			"prefix": registry,
			"server": "http://" + registry,
			"mirrors": []any{map[string]any{
				"host": "http://" + registry, "capabilities": []string{"pull", "resolve"}, "skip_verify": true,
			}},
		}}, "offline: the lab's registry speaks plain HTTP, as many an offline mirror does"},
		setting{"local_path_provisioner_helper_image_repo", "{{ registry_host }}/library/busybox",
			"offline: kubespray's default is \"busybox\", a docker.io short name no *_image_repo reaches"},
	)
}

// defaultsSettings is everything the defaults cluster sets beside the
// sample: offline, what this machine forces, the add-ons, layercheck's
// probe image and the artefacts' versions and checksums.
func defaultsSettings(l lab) []setting {
	s := offlineSettings(l.FilesRepo, l.Registry)
	s = append(s,
		setting{"calicoctl_download_url", "{{ files_repo }}/github.com/projectcalico/calico/releases/download/v{{ calico_ctl_version }}/calicoctl-linux-{{ image_arch }}", whyOffline},
		setting{"calico_crds_download_url", "{{ files_repo }}/github.com/projectcalico/calico/raw/v{{ calico_version }}/manifests/crds.yaml", whyOffline},
		// This machine.
		setting{"kube_proxy_mode", "iptables", "this machine: its kernel has no IPVS (the sample's ipvs needs ip_vs and its schedulers)"},
		setting{"kube_proxy_conntrack_max_per_core", 0, "this machine: nf_conntrack_max cannot be set from a node's network namespace, so kube-proxy leaves it"},
		setting{"kube_proxy_conntrack_min", 0, "this machine: as kube_proxy_conntrack_max_per_core"},
		setting{"kubelet_fail_cgroup_v1", false, "this machine: cgroup v1 (kubelet 1.35 refuses it unless told not to fail)"},
		setting{"kubeadm_ignore_preflight_errors", []string{"SystemVerification"},
			"this machine: cgroup v1; kubeadm 1.35's SystemVerification preflight refuses it unless that check is skipped as well"},
		setting{"containerd_extra_runtime_args", map[string]any{"restrict_oom_score_adj": true},
			"this machine: no CAP_SYS_RESOURCE in the nodes, so the pause container's negative oom_score_adj would make runc fail"},
	)
	if l.Nofile < 65535 {
		s = append(s, setting{"containerd_base_runtime_spec_rlimit_nofile", l.Nofile,
			"this machine: runc cannot raise RLIMIT_NOFILE above the hard limit the nodes inherit (no CAP_SYS_RESOURCE); kubespray's base spec asks 65535"})
	}
	s = append(s,
		// Not eviction_hard_control_plane: v2.31.0 never reads it
		// (kubespray#13396, the lint's known-bug); node1 gets eviction_hard.
		setting{"eviction_hard", nodeEviction, "this machine: the nodes' disk is the host's, which other work fills; kubelet's default 15% imagefs threshold taints them with disk pressure mid-run"},
		setting{"upstream_dns_servers", []string{l.Resolver},
			"these nodes: Debian 12 without systemd-resolved, whose only resolver is the lab gateway; left empty, CoreDNS and nodelocaldns forward to /etc/resolv.conf, where kubespray's last play puts nodelocaldns first: the loop kubespray#9948 describes, which the loop plugin stops by exiting and layercheck's dns layer reports"},
		// The add-ons operators enable first.
		setting{"metrics_server_enabled", true, "add-on operators enable first (kubectl top, the HPA); the flannel e2e cluster enables it too"},
		setting{"local_path_provisioner_enabled", true, "add-on operators enable first (a default StorageClass); the flannel e2e cluster enables it too"},
		setting{"helm_enabled", true, "add-on operators enable first (most other add-ons ship as charts); the flannel e2e cluster enables it too, and the artefacts build it"},
		// layercheck.
		setting{"layercheck_cluster_probe_image", l.Registry + "/e2e-test-images/agnhost:2.53", "offline: layercheck's workload probe from the lab's registry (a layercheck variable, not kubespray's)"},
	)
	return append(s, l.Built...)
}

// nodeEviction is kubelet's evictionHard on nodes whose disk is shared.
var nodeEviction = map[string]string{"memory.available": "100Mi", "nodefs.available": "2%", "imagefs.available": "2%"}

// notDefaultLine is how artefacts.sh says why it prints a version other
// than the release's default: "# Not the release's <default>: <why>"
// right above the variable.
var notDefaultLine = regexp.MustCompile(`^# Not the release's (.*)$`)

// artefactSettings reads what `artefacts.sh cluster` printed: the YAML
// map of *_version and *_checksum variables, each with its reason (a
// version with artefacts.sh's own comment above it, a checksum as the
// sha256 of the file built).
func artefactSettings(out string) ([]setting, error) {
	var m yaml.Node
	if err := yaml.Unmarshal([]byte(out), &m); err != nil {
		return nil, fmt.Errorf("artefacts.sh cluster printed no YAML: %v", err)
	}
	if len(m.Content) != 1 || m.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("artefacts.sh cluster printed no YAML map:\n%s", out)
	}
	why := map[string]string{}
	lines := strings.Split(out, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if mt := notDefaultLine.FindStringSubmatch(lines[i]); mt != nil {
			if name, _, ok := strings.Cut(lines[i+1], ":"); ok {
				why[name] = "offline: what artefacts.sh builds, not the release's " + mt[1]
			}
		}
	}
	var s []setting
	mp := m.Content[0]
	for i := 0; i+1 < len(mp.Content); i += 2 {
		name := mp.Content[i].Value
		var v any
		if err := mp.Content[i+1].Decode(&v); err != nil {
			return nil, fmt.Errorf("artefacts.sh cluster: %s: %v", name, err)
		}
		w := why[name]
		switch {
		case w != "":
		case strings.HasSuffix(name, "_checksum"):
			w = "offline: the sha256 of the file artefacts.sh built into files_repo"
		default:
			return nil, fmt.Errorf("artefacts.sh cluster printed %s without saying why it is not the release's default", name)
		}
		s = append(s, setting{name, v, w})
	}
	return s, nil
}

// settingsMap is settings as the variables of a group_vars file.
func settingsMap(s []setting) map[string]any {
	m := make(map[string]any, len(s))
	for _, x := range s {
		m[x.Name] = x.Value
	}
	return m
}

// writeSampleInventory writes, in dir, the inventory of kubespray's
// sample at ksDir with the node harness's hosts.ini and groups: hosts.ini
// (hostsIni, then groups) and a copy of inventory/sample/group_vars with
// settings applied as an operator does: a variable the sample sets is
// edited where the sample sets it, the others go to group_vars/all/e2e.yml,
// each below a comment with its reason. No settings: the sample as it is.
// It returns the path of hosts.ini.
func writeSampleInventory(ksDir, dir string, hostsIni []byte, groups string, settings []setting) (string, error) {
	src := filepath.Join(ksDir, "inventory", "sample", "group_vars")
	dst := filepath.Join(dir, "group_vars")
	if err := os.RemoveAll(dst); err != nil {
		return "", err
	}
	if err := harness.CopyTree(src, dst); err != nil {
		return "", fmt.Errorf("copying kubespray's sample group_vars: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(dst, "*", "*.yml"))
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	// A variable the sample sets is edited in every file that sets it.
	used := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		edited, here, err := editTopLevel(data, settings)
		if err != nil {
			return "", fmt.Errorf("%s: %w", f, err)
		}
		if len(here) == 0 {
			continue
		}
		if err := os.WriteFile(f, edited, 0o644); err != nil {
			return "", err
		}
		for k := range here {
			used[k] = true
		}
	}
	rest := slices.DeleteFunc(slices.Clone(settings), func(s setting) bool { return used[s.Name] })
	if len(rest) > 0 {
		b, err := commentedYAML(rest)
		if err != nil {
			return "", err
		}
		head := "# Written by test/e2e: what the e2e cluster sets that kubespray's sample does not, each below its reason.\n"
		if err := os.WriteFile(filepath.Join(dst, "all", "e2e.yml"), append([]byte(head), b...), 0o644); err != nil {
			return "", err
		}
	}
	path := filepath.Join(dir, "hosts.ini")
	if err := os.WriteFile(path, append(slices.Clip(hostsIni), groups...), 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// editTopLevel replaces, in a group_vars file, the line of each
// top-level variable of settings that the file sets by the setting (its
// reason as a comment, then "name: value" on one line) and says which it
// replaced. A value the file writes over more than one line is an error:
// the edit would leave its other lines behind.
func editTopLevel(data []byte, settings []setting) ([]byte, map[string]bool, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, err
	}
	used := map[string]bool{}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return data, used, nil
	}
	at := map[string]int{} // name -> line (1-based)
	multi := map[string]bool{}
	mp := doc.Content[0]
	for i := 0; i+1 < len(mp.Content); i += 2 {
		k, v := mp.Content[i], mp.Content[i+1]
		at[k.Value] = k.Line
		multi[k.Value] = v.Line != k.Line || v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0
	}
	lines := strings.Split(string(data), "\n")
	repl := map[int][]string{}
	for _, s := range settings {
		line, ok := at[s.Name]
		if !ok {
			continue
		}
		if multi[s.Name] || (line < len(lines) && strings.HasPrefix(lines[line], " ")) {
			return nil, nil, fmt.Errorf("%s is written over several lines; set it by hand", s.Name)
		}
		v, err := flowValue(s.Value)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", s.Name, err)
		}
		var out []string
		for _, w := range strings.Split(s.Why, "\n") {
			out = append(out, "# test/e2e: "+w)
		}
		out = append(out, "# the sample: "+lines[line-1], s.Name+": "+v)
		repl[line-1] = out
		used[s.Name] = true
	}
	var b strings.Builder
	for i, l := range lines {
		if r, ok := repl[i]; ok {
			b.WriteString(strings.Join(r, "\n"))
		} else {
			b.WriteString(l)
		}
		if i < len(lines)-1 {
			b.WriteByte('\n')
		}
	}
	return []byte(b.String()), used, nil
}

// flowValue is v as YAML on one line.
func flowValue(v any) (string, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return "", err
	}
	if n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode {
		n.Style = yaml.FlowStyle
	}
	b, err := yaml.Marshal(&n)
	if err != nil {
		return "", err
	}
	s := strings.TrimSuffix(string(b), "\n")
	if strings.Contains(s, "\n") {
		return "", fmt.Errorf("does not fit on one line: %q", s)
	}
	return s, nil
}

// commentedYAML is settings as a YAML map, each key below its reason.
func commentedYAML(settings []setting) ([]byte, error) {
	mp := &yaml.Node{Kind: yaml.MappingNode}
	for _, s := range settings {
		var v yaml.Node
		if err := v.Encode(s.Value); err != nil {
			return nil, fmt.Errorf("%s: %v", s.Name, err)
		}
		mp.Content = append(mp.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: s.Name, HeadComment: s.Why}, &v)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{mp}}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// difference is one variable whose value a host gets from the e2e
// inventory differs from what it gets from kubespray's sample: Sample and
// Set as JSON ("" when unset), Default kubespray's role default where the
// sample leaves it unset, Why the setting's reason ("" when no setting
// explains it).
type difference struct {
	Name, Sample, Default, Set, Why string
}

// sampleDiff loads both inventories as Ansible does (parser.Load) and
// lists, for the hosts, every variable whose value differs between the
// sample's inventory and the e2e's, in the order of settings (any other
// difference last, with no reason). A variable that differs on some hosts
// and not others is listed once. cat, when not nil, gives the role default
// of what the sample leaves unset.
func sampleDiff(sampleInv, inv string, hosts []string, settings []setting, cat *kubespray.Catalogue) ([]difference, error) {
	a, err := parser.Load(sampleInv)
	if err != nil {
		return nil, fmt.Errorf("the sample's inventory: %w", err)
	}
	b, err := parser.Load(inv)
	if err != nil {
		return nil, fmt.Errorf("the e2e inventory: %w", err)
	}
	why := map[string]string{}
	order := map[string]int{}
	for i, s := range settings {
		why[s.Name] = s.Why
		order[s.Name] = i
	}
	seen := map[string]*difference{}
	for _, h := range hosts {
		av, err := hostVars(a, h)
		if err != nil {
			return nil, fmt.Errorf("the sample's inventory: %w", err)
		}
		bv, err := hostVars(b, h)
		if err != nil {
			return nil, fmt.Errorf("the e2e inventory: %w", err)
		}
		for _, k := range unionKeys(av, bv) {
			if bytes.Equal(av[k], bv[k]) || seen[k] != nil {
				continue
			}
			d := &difference{Name: k, Sample: string(av[k]), Set: string(bv[k]), Why: why[k]}
			if av[k] == nil && cat != nil {
				if v := cat.Lookup(k); v != nil {
					if j, err := json.Marshal(v.Default); err == nil {
						d.Default = string(j) + " (" + v.File + ")"
					}
				}
			}
			seen[k] = d
		}
	}
	out := make([]difference, 0, len(seen))
	for _, d := range seen {
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool {
		oi, iok := order[out[i].Name]
		oj, jok := order[out[j].Name]
		if iok != jok {
			return iok
		}
		if iok {
			return oi < oj
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// hostVars is a host's variables as `ansible-inventory --host` prints
// them, each as compact JSON.
func hostVars(inv *parser.Inventory, host string) (map[string][]byte, error) {
	h := inv.Host(host)
	if h == nil {
		return nil, fmt.Errorf("no host %s", host)
	}
	j, err := inv.HostJSON(h, nil)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			return nil, err
		}
		out[k] = c.Bytes()
	}
	return out, nil
}

func unionKeys(a, b map[string][]byte) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// checkDiff says what is wrong with the differences of the e2e inventory
// from the sample against settings: a difference no setting explains, a
// setting that is not a difference (the sample has it already: only what
// differs is set), a variable kubespray does not define (cat; layercheck's
// own layercheck_* and offline.yml's files_repo and registry_host excepted).
func checkDiff(diffs []difference, settings []setting, cat *kubespray.Catalogue) []string {
	var bad []string
	differs := map[string]bool{}
	for _, d := range diffs {
		differs[d.Name] = true
		if d.Why == "" {
			bad = append(bad, fmt.Sprintf("%s differs from the sample (%s, here %s) and no setting says why", d.Name, orUnset(d.Sample), orUnset(d.Set)))
		}
	}
	for _, s := range settings {
		if !differs[s.Name] {
			bad = append(bad, fmt.Sprintf("%s is set to what the sample already gives it", s.Name))
		}
		if cat != nil && !strings.HasPrefix(s.Name, "layercheck_") && !offlineNames[s.Name] && cat.Lookup(s.Name) == nil {
			bad = append(bad, fmt.Sprintf("%s is not a variable of kubespray %s", s.Name, cat.Version))
		}
	}
	return bad
}

// offlineNames are the variables the sample's offline.yml introduces for
// its other lines to use; kubespray itself defines neither.
var offlineNames = map[string]bool{"files_repo": true, "registry_host": true}

func orUnset(s string) string {
	if s == "" {
		return "unset"
	}
	return s
}
