package lint

import (
	"fmt"
	"strings"

	"github.com/layercheck/layercheck/clusterstate"
)

func init() {
	registerRule("cluster-version", SeverityError,
		"with the live cluster: kube_version more than one minor ahead of the running control plane or behind it, kubelets the target would leave newer than the API server or more than 3 minors behind, a container runtime other than container_manager or newer than the target containerd_version, etcd members newer than etcd_version",
		checkClusterVersions)
}

// controlPlaneVersion is the oldest version the control plane runs: the
// kube-apiserver static pods' image tags (during an upgrade they differ),
// else GET /version. what names where it was read.
func controlPlaneVersion(st *clusterstate.State) (v kver, what string, ok bool) {
	for _, p := range st.ControlPlane {
		if p.Component != "kube-apiserver" {
			continue
		}
		pv, good := parseKver(p.Version)
		if !good {
			continue
		}
		if !ok || pv.less(v) {
			v, ok = pv, true
			what = fmt.Sprintf("Pod kube-system/%s image %s", p.Pod, p.Image)
		}
	}
	if ok {
		return v, what, true
	}
	if v, ok = parseKver(st.ServerVersion); ok {
		return v, fmt.Sprintf("GET /version gitVersion %s at %s", st.ServerVersion, st.Server), true
	}
	return kver{}, "", false
}

// defaultVersion is a component's templated default: the newest version
// the release has checksums for ("{{ (kubelet_checksums['amd64'] |
// dict2items)[0].key }}"), or the literal default of older releases.
func (c *checkCtx) defaultVersion(name string) func() string {
	return func() string {
		if c.cat.Release != nil {
			if comp := c.cat.Release.Components[name]; comp != nil && len(comp.Versions) > 0 {
				return comp.Versions[0]
			}
		}
		return ""
	}
}

func checkClusterVersions(c *checkCtx) []Finding {
	st := c.in.Cluster
	if st == nil {
		return nil
	}
	var out []Finding
	cp, cpWhat, cpOK := controlPlaneVersion(st)
	for _, t := range c.targets("kube_version", c.clusterHosts(), c.defaultVersion("kube_version")) {
		tv, ok := parseKver(t.text)
		if !ok {
			continue // the version rule says so
		}
		if cpOK {
			if f, bad := c.controlPlaneSkew(t, tv, cp, cpWhat); bad {
				out = append(out, f)
			}
		}
		out = append(out, c.kubeletSkew(t, tv, st, cp, cpOK)...)
	}
	out = append(out, c.runtimeVersions(st)...)
	out = append(out, c.etcdVersions(st)...)
	return out
}

// upgradeTask is the kubespray task that runs kubeadm's upgrade.
const upgradeTask = `roles/kubernetes/control-plane/tasks/kubeadm-upgrade.yml "Kubeadm | Upgrade first control plane node" (kubeadm upgrade apply)`

func (c *checkCtx) controlPlaneSkew(t target, tv, cp kver, cpWhat string) (Finding, bool) {
	f := c.clusterFinding("cluster-version", SeverityError, t)
	ahead := cp.minorsAhead(tv)
	switch {
	case tv[0] != cp[0] || ahead > 1:
		f.Message = fmt.Sprintf("%s is %d minors ahead of the control plane's %s (%s): kubeadm upgrades one minor at a time",
			c.inventoryValue(t), ahead, cp, cpWhat)
		// kubeadm N supports control planes from N-1.0 on (its
		// MinimumControlPlaneVersion), which it checks first: what a
		// v2.31.0 upgrade from 1.33.5 to 1.35.4 stopped on.
		f.Why = fmt.Sprintf("upgrade-cluster.yml stops at %s: kubeadm %s refuses the cluster, \"this version of kubeadm only supports deploying clusters with the control plane version >= %d.%d.0. Current version: v%s\", after the nodes' binaries were downloaded and the first control plane cordoned (its etcd may already be upgraded: the etcd play runs before).",
			upgradeTask, "v"+tv.String(), tv[0], tv[1]-1, cp)
		next := fmt.Sprintf("%d.%d", cp[0], cp[1]+1)
		f.Fix = fmt.Sprintf("upgrade one minor per run: first to Kubernetes %s (with the kubespray release whose default it is, or %s), run upgrade-cluster.yml, then the next minor",
			next, c.setFix(t, fmt.Sprintf(`"%s.x"`, next)))
		return f, true
	case ahead < 0:
		f.Message = fmt.Sprintf("%s is older than the control plane's %s (%s): a Kubernetes downgrade",
			c.inventoryValue(t), cp, cpWhat)
		f.Why = fmt.Sprintf("kubeadm does not downgrade a minor (%s fails, or with --force leaves objects stored in versions the older API server cannot serve); kubespray has no downgrade path.", upgradeTask)
		f.Fix = c.setFix(t, fmt.Sprintf(`"%s"`, cp)) + ", or a newer patch of the same minor"
		return f, true
	case ahead == 0 && tv.less(cp):
		f.Severity = SeverityWarning
		f.Message = fmt.Sprintf("%s is an older patch than the control plane's %s (%s): a patch downgrade",
			c.inventoryValue(t), cp, cpWhat)
		f.Why = "kubeadm upgrade apply goes back to an older patch only with a warning, and kubespray's download role replaces the binaries with older ones on every node."
		f.Fix = c.setFix(t, fmt.Sprintf(`"%s"`, cp))
		return f, true
	}
	return f, false
}

// kubeletSkew checks every kubelet against the target control plane: the
// version skew policy lets kubelets be older than kube-apiserver by up to
// three minors, never newer.
//
// A kubelet at or below the running control plane's minor that the target
// is older than is the control plane's downgrade, said once by
// controlPlaneSkew.
func (c *checkCtx) kubeletSkew(t target, tv kver, st *clusterstate.State, cp kver, cpOK bool) []Finding {
	keys, by := groupNodes(st.Nodes, func(n *clusterstate.Node) string { return n.KubeletVersion })
	var out []Finding
	for _, k := range keys {
		kv, ok := parseKver(k)
		if !ok {
			continue
		}
		nodes := by[k]
		f := c.nodesFinding(t, nodes)
		switch behind := kv.minorsAhead(tv); {
		case kv[1] > tv[1] || kv[0] != tv[0]:
			if cpOK && kv[0] == cp[0] && kv[1] <= cp[1] {
				continue
			}
			f.Message = fmt.Sprintf("%s is older than the kubelet %s on %d node(s) (Node status.nodeInfo.kubeletVersion: %s): kubelets may not be newer than kube-apiserver",
				c.inventoryValue(t), k, len(nodes), namesOf(nodes))
			f.Why = "Kubernetes' version skew policy: kubelet must not be newer than kube-apiserver; kubespray would downgrade the control plane below its kubelets, and kubelets newer than the API server send fields it drops."
			f.Fix = c.setFix(t, fmt.Sprintf(`"%s"`, strings.TrimPrefix(k, "v")))
		case behind > 3:
			f.Message = fmt.Sprintf("%s is %d minors ahead of the kubelet %s on %d node(s) (Node status.nodeInfo.kubeletVersion: %s): kubelets may lag kube-apiserver by at most 3 minors",
				c.inventoryValue(t), behind, k, len(nodes), namesOf(nodes))
			f.Why = "Kubernetes' version skew policy: kubelet may be up to three minors older than kube-apiserver. upgrade-cluster.yml upgrades the control plane first, then the nodes one by one: until then these kubelets talk to an API server they do not support."
			f.Fix = fmt.Sprintf("upgrade these nodes' kubelets first (upgrade-cluster.yml at their control plane's version, --limit them), or choose a kube_version at most 3 minors ahead of %s", k)
		default:
			continue
		}
		out = append(out, f)
	}
	return out
}

// runtimeNames maps container_manager to the name kubelet reports in
// status.nodeInfo.containerRuntimeVersion (<name>://<version>).
var runtimeNames = map[string]string{"containerd": "containerd", "crio": "cri-o", "docker": "docker"}

// runtimeVersions checks each node's container runtime against
// container_manager and, for containerd, the target containerd_version.
func (c *checkCtx) runtimeVersions(st *clusterstate.State) []Finding {
	var out []Finding
	keys, by := groupNodes(st.Nodes, func(n *clusterstate.Node) string { return n.ContainerRuntimeVersion })
	if len(keys) == 0 {
		return nil
	}
	for _, t := range c.targets("container_manager", c.clusterHosts(), nil) {
		want := runtimeNames[t.text]
		if want == "" {
			continue
		}
		for _, k := range keys {
			name, ver, ok := strings.Cut(k, "://")
			if !ok || name == want {
				continue
			}
			nodes := by[k]
			f := c.nodesFinding(t, nodes)
			f.Message = fmt.Sprintf("%s but %d node(s) run %s %s (Node status.nodeInfo.containerRuntimeVersion: %s)",
				c.inventoryValue(t), len(nodes), name, ver, namesOf(nodes))
			f.Why = "kubespray installs container_manager's runtime and points kubelet at its socket: the pods and images of the running runtime are left behind and every pod on these nodes restarts."
			f.Fix = c.setFix(t, fmt.Sprintf("%q", runtimeManager(name))) + ", or migrate the runtime on purpose (kubespray's docs/upgrades/migrate_docker2containerd.md)"
			out = append(out, f)
		}
	}
	for _, t := range c.targets("containerd_version", c.hostsWith("container_manager", "containerd"), c.defaultVersion("containerd_version")) {
		tv, ok := parseKver(t.text)
		if !ok {
			continue
		}
		for _, k := range keys {
			name, ver, _ := strings.Cut(k, "://")
			rv, ok := parseKver(ver)
			if name != "containerd" || !ok || !tv.less(rv) {
				continue
			}
			nodes := by[k]
			f := c.nodesFinding(t, nodes)
			f.Message = fmt.Sprintf("%s is older than containerd %s on %d node(s) (Node status.nodeInfo.containerRuntimeVersion: %s): a runtime downgrade",
				c.inventoryValue(t), ver, len(nodes), namesOf(nodes))
			f.Why = "kubespray's containerd role (roles/container-engine/containerd/tasks/main.yml \"Containerd | Unpack containerd archive\") unpacks the older release over the running one and restarts it: state written by the newer containerd may not load."
			f.Fix = c.setFix(t, fmt.Sprintf("%q", strings.TrimPrefix(ver, "v")))
			out = append(out, f)
		}
	}
	return out
}

func runtimeManager(name string) string {
	for m, n := range runtimeNames {
		if n == name {
			return m
		}
	}
	return name
}

// hostsWith are the cluster hosts whose name resolves to val (set or
// kubespray's default).
func (c *checkCtx) hostsWith(name, val string) []string {
	var out []string
	for _, t := range c.targets(name, c.clusterHosts(), nil) {
		if t.text == val {
			out = append(out, t.u.hosts...)
		}
	}
	return out
}

// nodesFinding starts a cluster-version error about t that concerns these
// Nodes: its hosts are those of them the inventory lists.
func (c *checkCtx) nodesFinding(t target, nodes []string) Finding {
	f := c.clusterFinding("cluster-version", SeverityError, t)
	if hs := c.inventoryNames(nodes); len(hs) > 0 {
		f.Hosts = hs
	}
	return f
}
