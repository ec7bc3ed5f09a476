package cluster

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/layercheck/layercheck/verify"
)

// Options are the inventory's groups and the kubespray values the cluster
// layers judge against. JSON names are kubespray's variable names (the
// groups are groups['...'] as lists of inventory hostnames). Defaults,
// applied by Defaults, are kubespray v2.31.0's: roles/kubespray_defaults/
// defaults/main/main.yml unless a comment names another file.
type Options struct {
	// Inventory groups (inventory hostnames; kubespray names each Node after
	// its inventory_hostname).
	KubeControlPlane []string `json:"kube_control_plane"`
	KubeNode         []string `json:"kube_node"`
	Etcd             []string `json:"etcd"`
	CalicoRR         []string `json:"calico_rr"`
	// NodeNames maps an inventory hostname to its kube_override_hostname
	// when that differs: the name kubespray registers the Node (and kubeadm
	// suffixes its static pods) with instead of the inventory hostname.
	// Hosts not in it are Nodes of their own name.
	NodeNames map[string]string `json:"node_names"`

	KubeNetworkPlugin string `json:"kube_network_plugin"` // calico
	// calico_ipip_mode / calico_vxlan_mode: Never / Always
	// (roles/network_plugin/calico_defaults/defaults/main.yml).
	CalicoIPIPMode  string `json:"calico_ipip_mode"`
	CalicoVXLANMode string `json:"calico_vxlan_mode"`
	// CalicoPoolName is calico_pool_name (default-pool); CalicoPoolCIDR is
	// calico_pool_cidr, which defaults to kube_pods_subnet.
	CalicoPoolName string `json:"calico_pool_name"`
	CalicoPoolCIDR string `json:"calico_pool_cidr"`
	// CalicoPoolBlocksize is calico_pool_blocksize (26,
	// roles/network_plugin/calico_defaults/defaults/main.yml), the pool's
	// blockSize kubespray's check.yml asserts.
	CalicoPoolBlocksize int `json:"calico_pool_blocksize"`
	// flannel_backend_type (vxlan) and, for vxlan, flannel_vxlan_vni (1),
	// flannel_vxlan_port (8472) and flannel_vxlan_direct_routing (false):
	// roles/network_plugin/flannel/defaults/main.yml. VNI and port are
	// pointers so that an explicit 0 is not taken for unset.
	FlannelBackendType        string `json:"flannel_backend_type"`
	FlannelVXLANVNI           *int   `json:"flannel_vxlan_vni"`
	FlannelVXLANPort          *int   `json:"flannel_vxlan_port"`
	FlannelVXLANDirectRouting bool   `json:"flannel_vxlan_direct_routing"`

	// Booleans that default to true in kubespray are pointers: nil means
	// kubespray's default.
	EnableNodelocaldns  *bool  `json:"enable_nodelocaldns"`   // true
	EnableDNSAutoscaler *bool  `json:"enable_dns_autoscaler"` // true
	DNSMode             string `json:"dns_mode"`              // coredns
	// CorednsReplicas is coredns_replicas, used when the autoscaler is off
	// (roles/kubernetes-apps/ansible/defaults/main.yml: 2).
	CorednsReplicas int `json:"coredns_replicas"`
	// DNSMinReplicas is dns_min_replicas (default min(2, |k8s_cluster|)),
	// DNSNodesPerReplica / DNSCoresPerReplica the linear autoscaler's
	// parameters (16 / 256; roles/kubernetes-apps/ansible/defaults/main.yml).
	DNSMinReplicas     int `json:"dns_min_replicas"`
	DNSNodesPerReplica int `json:"dns_nodes_per_replica"`
	DNSCoresPerReplica int `json:"dns_cores_per_replica"`

	EtcdDeploymentType string `json:"etcd_deployment_type"` // host

	MetricsServerEnabled        bool `json:"metrics_server_enabled"`         // false
	LocalPathProvisionerEnabled bool `json:"local_path_provisioner_enabled"` // false
	// local_path_provisioner_storage_class (local-path), _namespace
	// (local-path-storage) and _is_default_storageclass ("true"):
	// roles/kubernetes-apps/external_provisioner/local_path_provisioner/defaults/main.yml.
	LocalPathProvisionerStorageClass string `json:"local_path_provisioner_storage_class"`
	LocalPathProvisionerNamespace    string `json:"local_path_provisioner_namespace"`
	LocalPathProvisionerIsDefault    *bool  `json:"local_path_provisioner_is_default_storageclass"`
	HelmEnabled                      bool   `json:"helm_enabled"` // false

	// KubeVersion is the inventory's kube_version; unset, the kubelets are
	// judged against the control plane's version (GET /version), which
	// the release that installed the cluster gave both.
	// KubesprayVersion is the release the cluster was built with, whose
	// defaults fill what the options leave unset (see node.Options);
	// DefaultsFrom says whose were applied when not v2.31.0's.
	KubesprayVersion string `json:"kubespray_version"`
	DefaultsFrom     string `json:"-"`

	KubeVersion          string `json:"kube_version"`
	DNSDomain            string `json:"dns_domain"`             // cluster.local
	KubeServiceAddresses string `json:"kube_service_addresses"` // 10.233.0.0/18
	KubePodsSubnet       string `json:"kube_pods_subnet"`       // 10.233.64.0/18
}

func ptr[T any](v T) *T { return &v }

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// Defaults fills unset values with kubespray v2.31.0's defaults.
func (o *Options) Defaults() {
	o.DefaultsFrom = verify.ApplyReleaseDefaults(o, o.KubesprayVersion, o.KubeVersion)
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&o.KubeNetworkPlugin, "calico")
	def(&o.CalicoIPIPMode, "Never")
	def(&o.CalicoVXLANMode, "Always")
	def(&o.CalicoPoolName, "default-pool")
	def(&o.FlannelBackendType, "vxlan")
	if o.FlannelVXLANVNI == nil {
		o.FlannelVXLANVNI = ptr(1)
	}
	if o.FlannelVXLANPort == nil {
		o.FlannelVXLANPort = ptr(8472)
	}
	def(&o.DNSMode, "coredns")
	if o.EnableNodelocaldns == nil {
		o.EnableNodelocaldns = ptr(true)
	}
	if o.EnableDNSAutoscaler == nil {
		o.EnableDNSAutoscaler = ptr(true)
	}
	def(&o.EtcdDeploymentType, "host")
	def(&o.LocalPathProvisionerStorageClass, "local-path")
	def(&o.LocalPathProvisionerNamespace, "local-path-storage")
	def(&o.DNSDomain, "cluster.local")
	def(&o.KubeServiceAddresses, "10.233.0.0/18")
	def(&o.KubePodsSubnet, "10.233.64.0/18")
	def(&o.CalicoPoolCIDR, o.KubePodsSubnet)
	if o.CalicoPoolBlocksize == 0 {
		o.CalicoPoolBlocksize = 26
	}
	if o.CorednsReplicas == 0 {
		o.CorednsReplicas = 2
	}
	if o.DNSMinReplicas == 0 {
		o.DNSMinReplicas = min(2, len(o.K8sCluster()))
	}
	if o.DNSNodesPerReplica == 0 {
		o.DNSNodesPerReplica = 16
	}
	if o.DNSCoresPerReplica == 0 {
		o.DNSCoresPerReplica = 256
	}
}

// Validate checks the values a layer would misread; errors name the option.
func (o *Options) Validate() error {
	if err := verify.CheckDefaultsRelease(o.KubesprayVersion); err != nil {
		return fmt.Errorf("option kubespray_version: %v", err)
	}
	// A fixed order, so the first bad option named is always the same one
	// (calico_pool_cidr defaults to kube_pods_subnet and would repeat it).
	for _, opt := range []struct{ name, v string }{
		{"kube_pods_subnet", o.KubePodsSubnet},
		{"kube_service_addresses", o.KubeServiceAddresses},
		{"calico_pool_cidr", o.CalicoPoolCIDR},
	} {
		if _, err := netip.ParsePrefix(opt.v); err != nil {
			return fmt.Errorf("option %s: %q is not a CIDR", opt.name, opt.v)
		}
	}
	for name, v := range map[string]string{"calico_ipip_mode": o.CalicoIPIPMode, "calico_vxlan_mode": o.CalicoVXLANMode} {
		if !slices.Contains([]string{"Always", "Never", "CrossSubnet"}, v) {
			return fmt.Errorf("option %s: %q is not one of Always, Never, CrossSubnet", name, v)
		}
	}
	if v := o.CalicoPoolBlocksize; v < 20 || v > 32 {
		return fmt.Errorf("option calico_pool_blocksize: %d is not a block size calico takes for an IPv4 pool (20-32)", v)
	}
	if v := o.FlannelVXLANVNI; v != nil && (*v < 0 || *v > 1<<24-1) {
		return fmt.Errorf("option flannel_vxlan_vni: %d is not a VXLAN network identifier (0-16777215)", *v)
	}
	if v := o.FlannelVXLANPort; v != nil && (*v < 0 || *v > 65535) {
		return fmt.Errorf("option flannel_vxlan_port: %d is not a UDP port (0 is the kernel's default, 8472)", *v)
	}
	if !slices.Contains([]string{"host", "kubeadm", "docker"}, o.EtcdDeploymentType) {
		return fmt.Errorf("option etcd_deployment_type: %q is not one of host, kubeadm, docker", o.EtcdDeploymentType)
	}
	if len(o.K8sCluster()) == 0 {
		return fmt.Errorf("options kube_control_plane, kube_node, calico_rr: no host in k8s_cluster; pass the inventory's groups")
	}
	return nil
}

// K8sCluster is kubespray's k8s_cluster group (roles/dynamic_groups):
// kube_control_plane, kube_node and calico_rr hosts, in that order,
// without repeats. It is linear in the number of hosts.
func (o *Options) K8sCluster() []string {
	seen := make(map[string]bool, len(o.KubeControlPlane)+len(o.KubeNode)+len(o.CalicoRR))
	var out []string
	for _, g := range [][]string{o.KubeControlPlane, o.KubeNode, o.CalicoRR} {
		for _, h := range g {
			if !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	return out
}

// hostSet is a set of inventory hostnames.
type hostSet map[string]bool

func newHostSet(hosts []string) hostSet {
	s := make(hostSet, len(hosts))
	for _, h := range hosts {
		s[h] = true
	}
	return s
}

// inventory is the inventory's groups indexed once per run, so that the
// layers look hosts up in maps instead of scanning lists: the cost of a run
// stays linear in the number of hosts (clusters of 5,000 nodes exist).
type inventory struct {
	// k8sCluster is Options.K8sCluster(), in its order.
	k8sCluster []string
	// inK8sCluster, kubeNode, controlPlane and calicoRR are the groups as sets.
	inK8sCluster, kubeNode, controlPlane, calicoRR hostSet
	// nodes is the Node names of k8s_cluster (kube_override_hostname or
	// the inventory hostname) as a set; override maps a host to its
	// kube_override_hostname where that differs.
	nodes    hostSet
	override map[string]string
}

func newInventory(o *Options) *inventory {
	k := o.K8sCluster()
	inv := &inventory{k8sCluster: k, inK8sCluster: newHostSet(k), kubeNode: newHostSet(o.KubeNode),
		controlPlane: newHostSet(o.KubeControlPlane), calicoRR: newHostSet(o.CalicoRR),
		nodes: make(hostSet, len(k)), override: map[string]string{}}
	for h, n := range o.NodeNames {
		if n != "" && n != h {
			inv.override[h] = n
		}
	}
	for _, h := range k {
		inv.nodes[inv.nodeName(h)] = true
	}
	return inv
}

// nodeName is the Node name of inventory host h.
func (inv *inventory) nodeName(h string) string {
	if n, ok := inv.override[h]; ok {
		return n
	}
	return h
}

// label names host h for messages, with its Node name when that differs.
func (inv *inventory) label(h string) string {
	if n, ok := inv.override[h]; ok {
		return h + " (Node " + n + ")"
	}
	return h
}

// Probe configures the workload probe and the local-path PVC probe.
type Probe struct {
	// Enabled runs the probes (default true); check mode skips them.
	Enabled *bool `json:"probe"`
	// Image answers HTTP with its pod name: agnhost netexec serves
	// /hostname (default registry.k8s.io/e2e-test-images/agnhost:2.53).
	Image string `json:"probe_image"`
	// Port is the container port netexec listens on (default 8080).
	Port int `json:"probe_port"`
	// Namespace is created for the probe and deleted after it (default
	// layercheck-probe-<random>); it must not exist beforehand, but for
	// the run before's, deleted, which is waited for.
	Namespace string `json:"probe_namespace"`
	// Timeout bounds the whole probe in seconds (default 120), creating
	// and waiting for its objects. Its namespace is deleted after the
	// probe, whatever its outcome, without waiting for it to go.
	Timeout float64 `json:"probe_timeout"`
	// CleanupTimeout, in seconds (default 60), is how long a probe
	// namespace an earlier run deleted may take to go before a run reports
	// it stuck, and the wait for the probe_namespace the run before
	// deleted.
	CleanupTimeout float64 `json:"probe_cleanup_timeout"`
	// Path is how the Service is reached: auto (the ClusterIP when this
	// host can reach it, i.e. on a node, else the API server's service
	// proxy), cluster_ip or service_proxy.
	Path string `json:"probe_path"`
	// AddrMap maps "host:port" the probe would contact (the ClusterIP) to
	// the one it really contacts, for tests; the key "cluster_ip:80" stands
	// for the probe Service's ClusterIP, which is allocated during the run.
	AddrMap map[string]string `json:"addr_map"`
}

func (p *Probe) defaults() error {
	if p.Image == "" {
		p.Image = "registry.k8s.io/e2e-test-images/agnhost:2.53"
	}
	if p.Port == 0 {
		p.Port = 8080
	}
	if p.Port < 1 || p.Port > 65535 {
		return fmt.Errorf("option probe_port: %d is not a port", p.Port)
	}
	if p.Timeout == 0 {
		p.Timeout = 120
	}
	if p.Timeout < 0 || p.Timeout > 3600 {
		return fmt.Errorf("option probe_timeout: %v seconds is out of range (0, 3600]", p.Timeout)
	}
	if p.CleanupTimeout == 0 {
		p.CleanupTimeout = 60
	}
	if p.CleanupTimeout < 0 || p.CleanupTimeout > 3600 {
		return fmt.Errorf("option probe_cleanup_timeout: %v seconds is out of range (0, 3600]", p.CleanupTimeout)
	}
	if p.Path == "" {
		p.Path = "auto"
	}
	if !slices.Contains([]string{"auto", "cluster_ip", "service_proxy"}, p.Path) {
		return fmt.Errorf("option probe_path: %q is not one of auto, cluster_ip, service_proxy", p.Path)
	}
	for from, to := range p.AddrMap {
		for _, a := range []string{from, to} {
			if _, _, err := net.SplitHostPort(a); err != nil {
				return fmt.Errorf("option addr_map: %q is not host:port: %v", a, err)
			}
		}
	}
	return nil
}

func (p *Probe) timeout() time.Duration { return time.Duration(p.Timeout * float64(time.Second)) }

// cleanupTimeout is CleanupTimeout as a duration (60s when unset, for an
// Env built without Request).
func (p *Probe) cleanupTimeout() time.Duration {
	if p.CleanupTimeout <= 0 {
		return 60 * time.Second
	}
	return time.Duration(p.CleanupTimeout * float64(time.Second))
}
