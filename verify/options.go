package verify

// Options are the kubespray values a node check needs. The verify role fills
// them from the host's hostvars; names are kubespray's variable names, and
// defaults (applied by Defaults) are kubespray v2.31.0's
// (roles/kubespray_defaults/defaults/main/main.yml unless noted).
type Options struct {
	KubeCertDir                   string   `json:"kube_cert_dir"`                     // /etc/kubernetes/ssl
	KubeConfigDir                 string   `json:"kube_config_dir"`                   // /etc/kubernetes
	EtcdCertDir                   string   `json:"etcd_cert_dir"`                     // /etc/ssl/etcd/ssl
	EtcdDeploymentType            string   `json:"etcd_deployment_type"`              // host | kubeadm | docker
	EnableNodelocaldns            bool     `json:"enable_nodelocaldns"`               // true
	NodelocaldnsIP                string   `json:"nodelocaldns_ip"`                   // 169.254.25.10
	SkydnsServer                  string   `json:"skydns_server"`                     // third address of kube_service_addresses
	KubeServiceAddresses          string   `json:"kube_service_addresses"`            // 10.233.0.0/18
	KubePodsSubnet                string   `json:"kube_pods_subnet"`                  // 10.233.64.0/18
	DNSDomain                     string   `json:"dns_domain"`                        // cluster.local
	UpstreamDNSServers            []string `json:"upstream_dns_servers"`              // empty
	KubeVersion                   string   `json:"kube_version"`                      // 1.35.4 (v2.31.0)
	KubeProxyMode                 string   `json:"kube_proxy_mode"`                   // ipvs
	KubeNetworkPlugin             string   `json:"kube_network_plugin"`               // calico
	CalicoIPIPMode                string   `json:"calico_ipip_mode"`                  // Never
	CalicoVXLANMode               string   `json:"calico_vxlan_mode"`                 // Always
	CalicoNetworkBackend          string   `json:"calico_network_backend"`            // vxlan
	LocalReleaseDir               string   `json:"local_release_dir"`                 // /tmp/releases
	BinDir                        string   `json:"bin_dir"`                           // /usr/local/bin
	HelmEnabled                   bool     `json:"helm_enabled"`                      // false
	LocalPathProvisionerEnabled   bool     `json:"local_path_provisioner_enabled"`    // false
	LocalPathProvisionerClaimRoot string   `json:"local_path_provisioner_claim_root"` // /opt/local-path-provisioner/
	// Groups this host is in (group_names), e.g. etcd, kube_control_plane, kube_node.
	Groups []string `json:"group_names"`
	// EtcdMembers are the inventory hostnames of the etcd group (groups['etcd']).
	EtcdMembers []string `json:"etcd_members"`
	// Certificate thresholds in days: warn below CertWarnDays, fail below CertFailDays.
	CertWarnDays int `json:"cert_warn_days"` // 30
	CertFailDays int `json:"cert_fail_days"` // 7
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
