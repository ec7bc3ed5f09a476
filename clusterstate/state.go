// Package clusterstate is the running cluster's state as the inventory is
// held against it before upgrade-cluster.yml, scale.yml or a re-run of
// cluster.yml (layercheck lint --kubeconfig / --cluster-from, the lint
// role with layercheck_lint_cluster). verify/cluster.ReadState fills it
// through the API server, and the flannel and calico layers share its
// types; lint's cluster-* rules judge it. So lint and verify stand side by
// side on it, neither importing the other. It depends on nothing, so the
// inventory_lint module takes it as JSON without linking client-go.
package clusterstate

// State is the cluster as read, each value with the object and field it
// came from (Fields names them for messages).
type State struct {
	// Server is the API server URL.
	Server string `json:"server"`
	// ServerVersion is GET /version's gitVersion ("v1.35.4").
	ServerVersion string `json:"server_version,omitempty"`
	// ControlPlane are kube-system's control-plane static pods
	// (kube-apiserver, kube-controller-manager, kube-scheduler, kubeadm's
	// etcd) with their image tags.
	ControlPlane []StaticPod `json:"control_plane,omitempty"`
	Nodes        []Node      `json:"nodes"`
	// KubeadmConfig is kube-system/kubeadm-config's ClusterConfiguration;
	// nil when the ConfigMap is absent (see Unread).
	KubeadmConfig *KubeadmConfig `json:"kubeadm_config,omitempty"`
	// KubeProxyMode is kube-system/kube-proxy's config.conf mode ("" is
	// kube-proxy's default, iptables); nil without the ConfigMap.
	KubeProxyMode *string `json:"kube_proxy_mode,omitempty"`
	// DaemonSets and Deployments are kube-system's, by name.
	DaemonSets  []string `json:"daemonsets,omitempty"`
	Deployments []string `json:"deployments,omitempty"`
	// IPPool is calico's pool calico_pool_name (nil: none read).
	IPPool *IPPool `json:"ippool,omitempty"`
	// CalicoBackend is kube-system/calico-config's calico_backend; nil
	// without the ConfigMap.
	CalicoBackend *string `json:"calico_backend,omitempty"`
	// Flannel is kube-system/kube-flannel-cfg's net-conf.json, read when
	// kube_network_plugin is flannel or the kube-flannel DaemonSet runs;
	// nil otherwise or when it could not be read (see Unread).
	Flannel *FlannelNetConf `json:"flannel,omitempty"`
	// Etcd is etcd's member list with each member's version, when read.
	Etcd *Etcd `json:"etcd,omitempty"`
	// Unread says what could not be read and why ("ConfigMap
	// kube-system/kubeadm-config: not found"); the checks that need it
	// stay silent.
	Unread []string `json:"unread,omitempty"`
	// Requests is the number of API requests the read made.
	Requests int64 `json:"requests"`
}

// StaticPod is one control-plane static pod.
type StaticPod struct {
	Component string `json:"component"` // the pod's component label
	Node      string `json:"node"`
	Pod       string `json:"pod"`
	Image     string `json:"image"`
	// Version is the image tag ("v1.35.4"), "" for a digest-only image.
	Version string `json:"version,omitempty"`
}

// Node is one Node object.
type Node struct {
	Name string `json:"name"`
	// KubeletVersion and ContainerRuntimeVersion are status.nodeInfo's
	// ("v1.35.4", "containerd://2.2.3").
	KubeletVersion          string `json:"kubelet_version,omitempty"`
	ContainerRuntimeVersion string `json:"container_runtime_version,omitempty"`
	// Ready is the Ready condition; ReadyReason its reason when not.
	Ready       bool   `json:"ready"`
	ReadyReason string `json:"ready_reason,omitempty"`
	// PodCIDR is spec.podCIDR.
	PodCIDR string `json:"pod_cidr,omitempty"`
	// Unschedulable is spec.unschedulable: the Node is cordoned.
	Unschedulable bool `json:"unschedulable,omitempty"`
	// Taints are spec.taints as key[=value]:effect.
	Taints []string          `json:"taints,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

// KubeadmConfig is what kubespray writes into kubeadm's
// ClusterConfiguration from the inventory.
type KubeadmConfig struct {
	KubernetesVersion string `json:"kubernetes_version,omitempty"`
	ClusterName       string `json:"cluster_name,omitempty"`
	PodSubnet         string `json:"pod_subnet,omitempty"`
	ServiceSubnet     string `json:"service_subnet,omitempty"`
	DNSDomain         string `json:"dns_domain,omitempty"`
	// NodeCIDRMaskSize is controllerManager's node-cidr-mask-size-ipv4
	// (or node-cidr-mask-size) extra arg, "" when not set.
	NodeCIDRMaskSize string `json:"node_cidr_mask_size,omitempty"`
}

// IPPool is calico's crd.projectcalico.org/v1 IPPool spec.
type IPPool struct {
	Name      string `json:"name"`
	CIDR      string `json:"cidr,omitempty"`
	IPIPMode  string `json:"ipip_mode,omitempty"`
	VXLANMode string `json:"vxlan_mode,omitempty"`
	BlockSize int    `json:"block_size,omitempty"`
}

// FlannelNetConf is flannel's net-conf.json, the fields kubespray writes
// (roles/network_plugin/flannel/templates/cni-flannel.yml.j2). Absent
// vxlan fields are nil: flannel then uses its own defaults (VNI 1, port 0,
// the kernel's 8472, no direct routing).
type FlannelNetConf struct {
	Network     string `json:"Network,omitempty"`
	EnableIPv4  bool   `json:"EnableIPv4,omitempty"`
	EnableIPv6  bool   `json:"EnableIPv6,omitempty"`
	IPv6Network string `json:"IPv6Network,omitempty"`
	Backend     struct {
		Type          string `json:"Type"`
		VNI           *int   `json:"VNI,omitempty"`
		Port          *int   `json:"Port,omitempty"`
		DirectRouting *bool  `json:"DirectRouting,omitempty"`
	} `json:"Backend"`
}

// Etcd is the etcd cluster's member list.
type Etcd struct {
	// Endpoint is the client URL the list came from.
	Endpoint string   `json:"endpoint"`
	Members  []Member `json:"members"`
}

// Member is one etcd member; Version is its Maintenance.Status version
// ("" when its status could not be read).
type Member struct {
	Name       string   `json:"name"`
	PeerURLs   []string `json:"peer_urls,omitempty"`
	ClientURLs []string `json:"client_urls,omitempty"`
	IsLearner  bool     `json:"is_learner,omitempty"`
	Version    string   `json:"version,omitempty"`
}

// Object names for messages: where each value of State was read.
const (
	KubeadmConfigMap = "ConfigMap kube-system/kubeadm-config ClusterConfiguration"
	KubeProxyMap     = "ConfigMap kube-system/kube-proxy config.conf"
	CalicoConfigMap  = "ConfigMap kube-system/calico-config"
	FlannelConfigMap = "ConfigMap kube-system/kube-flannel-cfg net-conf.json"
)

// Node returns the node named name, nil if none.
func (s *State) Node(name string) *Node {
	for i := range s.Nodes {
		if s.Nodes[i].Name == name {
			return &s.Nodes[i]
		}
	}
	return nil
}

// HasDaemonSet reports whether kube-system has DaemonSet name.
func (s *State) HasDaemonSet(name string) bool { return has(s.DaemonSets, name) }

// HasDeployment reports whether kube-system has Deployment name.
func (s *State) HasDeployment(name string) bool { return has(s.Deployments, name) }

func has(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
