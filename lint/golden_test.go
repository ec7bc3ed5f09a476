package lint

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// brokenExtra are the extra vars the golden run passes with the broken
// sample: a key=value string and JSON (a real bool: no finding).
var brokenExtra = []string{"helm_update=yes", `{"kube_vip_arp_enabled": true}`}

// seeded lists every fault planted in inventory-samples/broken: rule,
// variable, and where the finding must point.
var seeded = []struct{ rule, variable, where string }{
	// INI [all:vars] x=true, yes, and a quoted INI value.
	{"string-as-bool", "download_run_once", "inventory.ini:26"},
	{"string-as-bool", "ntp_enabled", "inventory.ini:28"},
	{"string-as-bool", "skip_downloads", "inventory.ini:29"},
	// INI host line x=true.
	{"string-as-bool", "kubeconfig_localhost", "inventory.ini:6"},
	// quoted YAML, ints, and the other validate_inventory booleans.
	{"string-as-bool", "download_always_pull", "group_vars/all/all.yml:3"},
	{"string-as-bool", "ntp_manage_config", "group_vars/all/all.yml:4"},
	{"string-as-bool", "epel_enabled", "group_vars/all/all.yml:5"},
	{"string-as-bool", "override_system_hostname", "group_vars/all/all.yml:6"},
	{"string-as-bool", "system_upgrade", "group_vars/all/all.yml:7"},
	{"string-as-bool", "drain_nodes", "group_vars/all/all.yml:12"},
	{"string-as-bool", "kube_profiling", "group_vars/all/all.yml:13"},
	{"not-a-bool", "disable_ipv6_dns", "group_vars/all/all.yml:16"},
	{"removed-variable", "kubelet_static_pod_path", "group_vars/all/all.yml:18"},
	{"string-as-bool", "containerd_use_systemd_cgroup", "group_vars/all/containerd.yml:2"},
	{"string-as-bool", "containerd_enable_unprivileged_ports", "group_vars/all/containerd.yml:3"},
	{"string-as-bool", "containerd_enable_unprivileged_icmp", "group_vars/all/containerd.yml:4"},
	{"string-as-bool", "etcd_peer_client_auth", "group_vars/etcd/etcd.yml:2"},
	{"string-as-bool", "etcd_secure_client", "group_vars/etcd/etcd.yml:3"},
	{"choice", "kube_proxy_mode", "group_vars/k8s_cluster/k8s-cluster.yml:3"},
	{"choice", "cert_management", "group_vars/k8s_cluster/k8s-cluster.yml:4"},
	{"kubespray-assert", "etcd_deployment_type", "group_vars/k8s_cluster/k8s-cluster.yml:6"},
	{"network-cidr", "kube_service_addresses", "group_vars/k8s_cluster/k8s-cluster.yml:10"},
	{"network-overlap", "kube_pods_subnet", "group_vars/k8s_cluster/k8s-cluster.yml:11"},
	{"network-cidr", "kube_service_addresses_ipv6", "group_vars/k8s_cluster/k8s-cluster.yml:12"},
	{"nodelocaldns-ip", "nodelocaldns_ip", "group_vars/k8s_cluster/k8s-cluster.yml:14"},
	{"string-as-bool", "kube_proxy_strict_arp", "group_vars/k8s_cluster/k8s-cluster.yml:15"},
	{"string-as-bool", "kube_encrypt_secret_data", "group_vars/k8s_cluster/k8s-cluster.yml:16"},
	{"string-as-bool", "auto_renew_certificates", "group_vars/k8s_cluster/k8s-cluster.yml:18"},
	{"string-as-bool", "kube_api_anonymous_auth", "group_vars/k8s_cluster/k8s-cluster.yml:19"},
	{"unknown-variable", "kube_proxy_strict_ar", "group_vars/k8s_cluster/k8s-cluster.yml:21"},
	{"unknown-variable", "metallb_enable", "group_vars/k8s_cluster/k8s-cluster.yml:22"},
	{"certificates-duration", "certificates_duration", "group_vars/k8s_cluster/k8s-cluster.yml:24"},
	{"choice", "calico_network_backend", "group_vars/k8s_cluster/k8s-net-calico.yml:2"},
	// calico_ipip_mode (line 3) and calico_vxlan_mode both Always: one finding.
	{"kubespray-assert", "calico_vxlan_mode", "group_vars/k8s_cluster/k8s-net-calico.yml:4"},
	{"string-as-bool", "calico_ipam_strictaffinity", "group_vars/k8s_cluster/k8s-net-calico.yml:5"},
	{"string-as-bool", "typha_enabled", "group_vars/k8s_cluster/k8s-net-calico.yml:6"},
	{"string-as-bool", "helm_enabled", "group_vars/k8s_cluster/addons.yml:2"},
	{"string-as-bool", "openstack_lbaas_enabled", "group_vars/k8s_cluster/addons.yml:3"},
	{"metrics-server-tls", "metrics_server_enabled", "group_vars/k8s_cluster/addons.yml:4"},
	{"local-path-provisioner", "local_path_provisioner_enabled", "group_vars/k8s_cluster/addons.yml:5"},
	{"string-as-bool", "cert_manager_enabled", "group_vars/k8s_cluster/addons.yml:6"},
	{"string-as-bool", "argocd_enabled", "group_vars/k8s_cluster/addons.yml:7"},
	{"string-as-bool", "registry_enabled", "group_vars/k8s_cluster/addons.yml:8"},
	{"string-as-bool", "gateway_api_enabled", "group_vars/k8s_cluster/addons.yml:10"},
	{"metrics-server-tls", "metrics_server_kubelet_insecure_tls", "host_vars/node4.yml:3"},
	{"string-as-bool", "kubelet_systemd_hardening", "host_vars/node4.yml:4"},
	{"string-as-bool", "helm_update", "-e"},
	{"etcd-even", "", "inventory.ini:9"},
	{"calico-rr", "", "inventory.ini:17"},
	{"group-vars-unused", "", "group_vars/k8s-cluster.yml"},
}

// notReported are values in the broken sample that are fine.
var notReported = []string{
	"download_localhost", "kubectl_localhost", "kubeconfig_localhost_ansible_host", "unsafe_show_logs",
	"kube_vip_enabled", "metallb_enabled", "kube_vip_arp_enabled", "dns_mode", "container_manager", "resolvconf_mode",
}

func TestBrokenSampleGolden(t *testing.T) {
	r := lintTree(t, filepath.Join("..", "inventory-samples", "broken"), brokenExtra...)
	got, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	testutil.Golden(t, filepath.Join("testdata", "broken.golden.json"), got, *update, "lint of inventory-samples/broken")

	for _, s := range seeded {
		ok := false
		for _, f := range r.Findings {
			if f.Rule == s.rule && (s.variable == "" || f.Variable == s.variable) &&
				(f.Where == s.where || strings.HasPrefix(f.Where, s.where+":")) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("seeded fault not reported: %s %s at %s", s.rule, s.variable, s.where)
		}
	}
	for _, v := range notReported {
		for _, f := range r.Findings {
			if f.Variable == v && (f.Rule == "string-as-bool" || f.Rule == "not-a-bool" || f.Rule == "choice") {
				t.Errorf("fine value reported: %+v", f)
			}
		}
	}
	if r.Errors == 0 || r.Warnings == 0 {
		t.Errorf("errors=%d warnings=%d", r.Errors, r.Warnings)
	}
}
