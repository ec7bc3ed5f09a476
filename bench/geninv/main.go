// Command geninv writes a large kubespray-style inventory for benchmarks:
// an INI hosts file with N hosts in kubespray's groups, group_vars for all,
// k8s_cluster, kube_control_plane, kube_node and etcd (file and directory
// forms), and a host_vars file for every tenth host.
//
//	go run ./bench/geninv -hosts 5000 -out DIR
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	n := flag.Int("hosts", 5000, "number of hosts")
	out := flag.String("out", "", "directory to write (created)")
	ranges := flag.Bool("ranges", false, "write the kube_node hosts as host ranges (node[4:N], 100,000 a line), sharing all their variables, without host_vars files")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "geninv: -out is required")
		os.Exit(2)
	}
	if err := write(*out, *n, *ranges); err != nil {
		fmt.Fprintln(os.Stderr, "geninv:", err)
		os.Exit(1)
	}
}

func write(dir string, n int, ranges bool) error {
	for _, d := range []string{"group_vars/all", "group_vars/k8s_cluster", "host_vars"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(dir, "inventory.ini"))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	cp := 3
	etcd := 3
	fmt.Fprintln(w, "[kube_control_plane]")
	for i := 1; i <= cp; i++ {
		fmt.Fprintf(w, "node%d ansible_host=10.%d.%d.%d ip=10.%d.%d.%d etcd_member_name=etcd%d\n", i, i/65536%256, i/256%256, i%256, i/65536%256, i/256%256, i%256, i)
	}
	fmt.Fprintln(w, "\n[etcd:children]\nkube_control_plane")
	fmt.Fprintln(w, "\n[kube_node]")
	for i := cp + 1; ranges && i <= n; i += 100000 {
		fmt.Fprintf(w, "node[%d:%d]\n", i, min(i+99999, n))
	}
	for i := cp + 1; !ranges && i <= n; i++ {
		fmt.Fprintf(w, "node%d ansible_host=10.%d.%d.%d ip=10.%d.%d.%d node_rack=r%d\n", i, i/65536%256, i/256%256, i%256, i/65536%256, i/256%256, i%256, i%40)
	}
	fmt.Fprintln(w, "\n[k8s_cluster:children]\nkube_control_plane\nkube_node")
	fmt.Fprintln(w, "\n[all:vars]\nansible_user=ubuntu\nupgrade_cluster_setup=True")
	_ = etcd
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	files := map[string]string{
		"group_vars/all/all.yml":                 "---\nbin_dir: /usr/local/bin\nloadbalancer_apiserver_port: 6443\nloadbalancer_apiserver_healthcheck_port: 8081\nupstream_dns_servers:\n  - 8.8.8.8\n  - 8.8.4.4\nntp_enabled: false\nunsafe_show_logs: false\n",
		"group_vars/all/containerd.yml":          "---\ncontainerd_storage_dir: /var/lib/containerd\ncontainerd_registries_mirrors:\n  - prefix: docker.io\n    mirrors:\n      - host: https://registry-1.docker.io\n        capabilities: [pull, resolve]\n        skip_verify: false\n",
		"group_vars/k8s_cluster/k8s-cluster.yml": "---\nkube_network_plugin: calico\nkube_service_addresses: 10.233.0.0/18\nkube_pods_subnet: 10.233.64.0/18\nkube_proxy_mode: ipvs\ncluster_name: cluster.local\nenable_nodelocaldns: true\nnodelocaldns_ip: 169.254.25.10\ncontainer_manager: containerd\nkubeconfig_localhost: false\n",
		"group_vars/k8s_cluster/addons.yml":      "---\nhelm_enabled: false\nmetrics_server_enabled: false\nlocal_path_provisioner_enabled: false\ningress_nginx_enabled: false\n",
		"group_vars/etcd.yml":                    "---\netcd_deployment_type: host\n",
		"group_vars/kube_node.yml":               "---\nkubelet_max_pods: 110\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	for i := 10; !ranges && i <= n; i += 10 {
		body := fmt.Sprintf("---\nnode_labels:\n  rack: r%d\n  pool: \"p%d\"\nkubelet_max_pods: %d\n", i%40, i%7, 100+i%50)
		if err := os.WriteFile(filepath.Join(dir, "host_vars", fmt.Sprintf("node%d.yml", i)), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}
