package node

import (
	"net/netip"
	"strings"

	"github.com/layercheck/layercheck/verify"
)

// Options are the kubespray values a node check needs. The verify role fills
// them from the host's hostvars; names are kubespray's variable names, and
// defaults (applied by Defaults) are kubespray v2.31.0's
// (roles/kubespray_defaults/defaults/main/main.yml unless noted).
type Options struct {
	KubeCertDir        string `json:"kube_cert_dir"`        // /etc/kubernetes/ssl
	KubeConfigDir      string `json:"kube_config_dir"`      // /etc/kubernetes
	EtcdCertDir        string `json:"etcd_cert_dir"`        // /etc/ssl/etcd/ssl
	EtcdDeploymentType string `json:"etcd_deployment_type"` // host | kubeadm | docker
	EnableNodelocaldns bool   `json:"enable_nodelocaldns"`  // true
	NodelocaldnsIP     string `json:"nodelocaldns_ip"`      // 169.254.25.10
	SkydnsServer       string `json:"skydns_server"`        // third address of kube_service_addresses
	// SkydnsServerSecondary is skydns_server_secondary, the second CoreDNS
	// service of dns_mode coredns_dual (fourth address of
	// kube_service_addresses); ManualDNSServer is manual_dns_server, the
	// cluster DNS of dns_mode manual (empty by default).
	SkydnsServerSecondary string   `json:"skydns_server_secondary"`
	ManualDNSServer       string   `json:"manual_dns_server"`
	KubeServiceAddresses  string   `json:"kube_service_addresses"` // 10.233.0.0/18
	KubePodsSubnet        string   `json:"kube_pods_subnet"`       // 10.233.64.0/18
	DNSDomain             string   `json:"dns_domain"`             // cluster.local
	UpstreamDNSServers    []string `json:"upstream_dns_servers"`   // empty
	KubeVersion           string   `json:"kube_version"`           // 1.35.4 (v2.31.0)
	KubeProxyMode         string   `json:"kube_proxy_mode"`        // ipvs
	KubeNetworkPlugin     string   `json:"kube_network_plugin"`    // calico
	CalicoIPIPMode        string   `json:"calico_ipip_mode"`       // Never
	CalicoVXLANMode       string   `json:"calico_vxlan_mode"`      // Always
	CalicoNetworkBackend  string   `json:"calico_network_backend"` // vxlan
	// flannel_backend_type (vxlan), and for vxlan flannel_vxlan_vni (1),
	// whose number names flannel's device flannel.<VNI>, and
	// flannel_vxlan_port (8472): roles/network_plugin/flannel/defaults.
	// Pointers, so that an explicit 0 is not taken for unset.
	FlannelBackendType            string `json:"flannel_backend_type"`
	FlannelVXLANVNI               *int   `json:"flannel_vxlan_vni"`
	FlannelVXLANPort              *int   `json:"flannel_vxlan_port"`
	LocalReleaseDir               string `json:"local_release_dir"`                 // /tmp/releases
	BinDir                        string `json:"bin_dir"`                           // /usr/local/bin
	HelmEnabled                   bool   `json:"helm_enabled"`                      // false
	LocalPathProvisionerEnabled   bool   `json:"local_path_provisioner_enabled"`    // false
	LocalPathProvisionerClaimRoot string `json:"local_path_provisioner_claim_root"` // /opt/local-path-provisioner/
	// CiliumCertDir is cilium_cert_dir (/etc/cilium/certs,
	// roles/network_plugin/cilium/defaults/main.yml), where kubespray links
	// the etcd certificates for cilium when CiliumIdentityAllocationMode
	// (cilium_identity_allocation_mode, default crd) is kvstore.
	CiliumCertDir                string `json:"cilium_cert_dir"`
	CiliumIdentityAllocationMode string `json:"cilium_identity_allocation_mode"`
	// The workers' path to the API server (roles/kubernetes/node/tasks/main.yml
	// "Install nginx-proxy" / "Install haproxy"): with
	// loadbalancer_apiserver_localhost (default: true when
	// loadbalancer_apiserver, an external balancer, is not defined) a host
	// outside kube_control_plane runs loadbalancer_apiserver_type's static
	// pod (nginx, or haproxy) in kube_manifest_dir ({{ kube_config_dir
	// }}/manifests), configured in nginx_config_dir (/etc/nginx) or
	// haproxy_config_dir (/etc/haproxy), listening on 127.0.0.1:
	// loadbalancer_apiserver_port (default kube_apiserver_port, 6443) and
	// balancing over every kube_control_plane host's main_access_ip:
	// kube_apiserver_port. A pointer, so that an explicit false is not
	// taken for unset.
	LoadbalancerAPIServerLocalhost *bool          `json:"loadbalancer_apiserver_localhost"`
	LoadbalancerAPIServer          map[string]any `json:"loadbalancer_apiserver"`
	LoadbalancerAPIServerType      string         `json:"loadbalancer_apiserver_type"`
	LoadbalancerAPIServerPort      int            `json:"loadbalancer_apiserver_port"`
	KubeAPIServerPort              int            `json:"kube_apiserver_port"`
	KubeManifestDir                string         `json:"kube_manifest_dir"`
	NginxConfigDir                 string         `json:"nginx_config_dir"`
	HaproxyConfigDir               string         `json:"haproxy_config_dir"`
	// KubeControlPlaneAccessIPs maps each kube_control_plane host to its
	// main_access_ip (access_ip, else ip; kubespray's network_facts role),
	// "" where the inventory gives neither: the upstreams nginx.conf and
	// haproxy.cfg list.
	KubeControlPlaneAccessIPs map[string]string `json:"kube_control_plane_access_ips"`
	// Groups this host is in (group_names), e.g. etcd, kube_control_plane, kube_node.
	Groups []string `json:"group_names"`
	// EtcdMembers are the inventory hostnames of the etcd group (groups['etcd']).
	EtcdMembers []string `json:"etcd_members"`
	// EtcdMemberName is this host's etcd_member_name (hostvars; kubespray's
	// default is "etcd<index in groups['etcd']>"); empty means derive it from
	// EtcdMembers and ETCD_INITIAL_CLUSTER order.
	EtcdMemberName string `json:"etcd_member_name"`
	// DNSMode is dns_mode (coredns, coredns_dual, manual, none); empty means coredns.
	DNSMode string `json:"dns_mode"`
	// ResolvconfMode is resolvconf_mode (host_resolvconf, docker_dns, none);
	// empty means host_resolvconf.
	ResolvconfMode string `json:"resolvconf_mode"`
	// AutoRenewCertificates is auto_renew_certificates (false,
	// roles/kubernetes/control-plane/defaults/main/main.yml): kubespray then
	// installs and starts k8s-certs-renew.timer on kube_control_plane hosts,
	// which runs bin_dir/k8s-certs-renew.sh on the calendar of
	// auto_renew_certificates_systemd_calendar.
	AutoRenewCertificates bool `json:"auto_renew_certificates"`
	// Certificate thresholds in days: warn below CertWarnDays, fail below CertFailDays.
	CertWarnDays int `json:"cert_warn_days"` // 30
	CertFailDays int `json:"cert_fail_days"` // 7
	// KubesprayVersion is the kubespray release the cluster was built
	// with (the role's layercheck_kubespray_version): its defaults fill
	// what the options leave unset. Empty: the release is inferred from
	// kube_version, else v2.31.0's defaults.
	KubesprayVersion string `json:"kubespray_version"`
	// DefaultsFrom says, when another release's defaults were applied,
	// which and why (Defaults sets it; the report carries it).
	DefaultsFrom string `json:"-"`
}

// InGroup reports whether the host is in group.
func (o *Options) InGroup(group string) bool {
	for _, g := range o.Groups {
		if g == group {
			return true
		}
	}
	return false
}

// NewOptions returns Options holding kubespray's boolean defaults, which a
// Go zero value cannot express: enable_nodelocaldns is true in kubespray
// v2.31.0 (roles/kubespray_defaults/defaults/main/main.yml). Decode the
// given values over it; Defaults fills the rest.
func NewOptions() Options { return Options{EnableNodelocaldns: true} }

// Defaults fills unset options with kubespray v2.31.0's defaults
// (roles/kubespray_defaults/defaults/main/main.yml; skydns_server is the
// third address of kube_service_addresses as kubespray computes it with
// ipaddr('net') | ipaddr(3)). Booleans cannot be told apart from false and
// are left as given: start from NewOptions for kubespray's.
func (o *Options) Defaults() {
	o.DefaultsFrom = verify.ApplyReleaseDefaults(o, o.KubesprayVersion, o.KubeVersion)
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&o.KubeConfigDir, "/etc/kubernetes")
	def(&o.KubeCertDir, strings.TrimSuffix(o.KubeConfigDir, "/")+"/ssl") // "{{ kube_config_dir }}/ssl"
	def(&o.EtcdCertDir, "/etc/ssl/etcd/ssl")
	def(&o.EtcdDeploymentType, "host")
	def(&o.NodelocaldnsIP, "169.254.25.10")
	def(&o.KubeServiceAddresses, "10.233.0.0/18")
	def(&o.KubePodsSubnet, "10.233.64.0/18")
	def(&o.DNSDomain, "cluster.local")
	def(&o.KubeProxyMode, "ipvs")
	def(&o.KubeNetworkPlugin, "calico")
	def(&o.CalicoIPIPMode, "Never")
	def(&o.CalicoVXLANMode, "Always")
	def(&o.CalicoNetworkBackend, "vxlan")
	def(&o.FlannelBackendType, "vxlan")
	if o.FlannelVXLANVNI == nil {
		vni := 1
		o.FlannelVXLANVNI = &vni
	}
	if o.FlannelVXLANPort == nil {
		port := 8472
		o.FlannelVXLANPort = &port
	}
	def(&o.KubeManifestDir, strings.TrimSuffix(o.KubeConfigDir, "/")+"/manifests") // "{{ kube_config_dir }}/manifests"
	def(&o.LoadbalancerAPIServerType, "nginx")
	def(&o.NginxConfigDir, "/etc/nginx")
	def(&o.HaproxyConfigDir, "/etc/haproxy")
	if o.KubeAPIServerPort == 0 {
		o.KubeAPIServerPort = 6443
	}
	if o.LoadbalancerAPIServerPort == 0 {
		o.LoadbalancerAPIServerPort = o.KubeAPIServerPort // loadbalancer_apiserver_port | default(kube_apiserver_port)
	}
	if o.LoadbalancerAPIServerLocalhost == nil {
		localhost := o.LoadbalancerAPIServer == nil // "{{ loadbalancer_apiserver is not defined }}"
		o.LoadbalancerAPIServerLocalhost = &localhost
	}
	def(&o.LocalReleaseDir, "/tmp/releases")
	def(&o.BinDir, "/usr/local/bin")
	def(&o.LocalPathProvisionerClaimRoot, "/opt/local-path-provisioner/")
	def(&o.CiliumCertDir, "/etc/cilium/certs")
	def(&o.CiliumIdentityAllocationMode, "crd")
	def(&o.DNSMode, "coredns")
	def(&o.ResolvconfMode, "host_resolvconf")
	if o.SkydnsServer == "" {
		o.SkydnsServer = nthAddress(o.KubeServiceAddresses, 3)
	}
	if o.SkydnsServerSecondary == "" {
		o.SkydnsServerSecondary = nthAddress(o.KubeServiceAddresses, 4)
	}
	if o.CertWarnDays == 0 {
		o.CertWarnDays = 30
	}
	if o.CertFailDays == 0 {
		o.CertFailDays = 7
	}
}

// nthAddress is the n-th address of an IPv4/IPv6 CIDR ("" when not a CIDR).
func nthAddress(cidr string, n int) string {
	first, _, _ := strings.Cut(cidr, ",") // kube_service_subnets.split(',') | first
	p, err := netip.ParsePrefix(strings.TrimSpace(first))
	if err != nil {
		return ""
	}
	a := p.Masked().Addr()
	for i := 0; i < n; i++ {
		a = a.Next()
	}
	return a.String()
}
