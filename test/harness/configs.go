package harness

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func firstCert(data []byte) (*x509.Certificate, error) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, errors.New("no CERTIFICATE block")
		}
		if b.Type == "CERTIFICATE" {
			return x509.ParseCertificate(b.Bytes)
		}
	}
}

func (t *Tree) configs() error {
	c := t.Config
	ip := t.IP()
	var endpoints, initial []string
	for i, h := range c.Hosts {
		endpoints = append(endpoints, fmt.Sprintf("      - \"https://%s:2379\"", c.IPs[i]))
		initial = append(initial, fmt.Sprintf("etcd%d=https://%s:2380", i+1, c.IPs[i]))
		_ = h
	}
	etcdName := "etcd1"
	for i, h := range c.Hosts {
		if h == c.Host {
			etcdName = fmt.Sprintf("etcd%d", i+1)
		}
	}
	kubeadm := fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: "%[1]s"
  bindPort: 6443
nodeRegistration:
  name: "%[2]s"
  criSocket: unix:///var/run/containerd/containerd.sock
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
clusterName: cluster.local
encryptionAlgorithm: %[3]s
certificateValidityPeriod: 8760h
caCertificateValidityPeriod: 87600h
etcd:
  external:
      endpoints:
%[4]s
      caFile: %[5]s/ca.pem
      certFile: %[5]s/node-%[2]s.pem
      keyFile: %[5]s/node-%[2]s-key.pem
dns:
  disabled: true
networking:
  dnsDomain: %[6]s
  serviceSubnet: "%[7]s"
  podSubnet: "%[8]s"
kubernetesVersion: v%[9]s
controlPlaneEndpoint: "%[1]s:6443"
certificatesDir: %[10]s
imageRepository: registry.k8s.io
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
bindAddress: "0.0.0.0"
clusterCIDR: "%[8]s"
hostnameOverride: "%[2]s"
mode: %[11]s
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: True
clusterDNS:
- %[12]s
`, ip, c.Host, c.Keys, strings.Join(endpoints, "\n"), c.EtcdCertDir, c.DNSDomain, c.KubeServiceAddresses,
		c.KubePodsSubnet, c.KubeVersion, c.KubeCertDir, c.KubeProxyMode, c.NodelocaldnsIP)
	if err := t.WriteFile("/etc/kubernetes/kubeadm-config.yaml", []byte(kubeadm), 0o640); err != nil {
		return err
	}
	kubelet := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
nodeStatusUpdateFrequency: "10s"
failSwapOn: True
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: True
  x509:
    clientCAFile: %[1]s/ca.crt
authorization:
  mode: Webhook
staticPodPath: /etc/kubernetes/manifests
cgroupDriver: systemd
containerRuntimeEndpoint : unix:///var/run/containerd/containerd.sock
maxPods: 110
address: "%[2]s"
healthzPort: 10248
healthzBindAddress: "127.0.0.1"
clusterDomain: %[3]s
rotateCertificates: true
clusterDNS:
- %[4]s
resolvConf: "/run/systemd/resolve/resolv.conf"
`, c.KubeCertDir, ip, c.DNSDomain, c.NodelocaldnsIP)
	if err := t.WriteFile("/etc/kubernetes/kubelet-config.yaml", []byte(kubelet), 0o644); err != nil {
		return err
	}
	// kubespray's network_plugin/cni role unpacks the CNI plugins; calico's
	// install-cni container writes its conflist.
	if err := t.WriteFile("/opt/cni/bin/loopback", []byte("\x7fELF"), 0o755); err != nil {
		return err
	}
	if err := t.WriteFile("/etc/cni/net.d/10-calico.conflist", []byte(`{"name": "k8s-pod-network", "cniVersion": "0.3.1", "plugins": [{"type": "calico"}, {"type": "portmap", "capabilities": {"portMappings": true}}]}`+"\n"), 0o644); err != nil {
		return err
	}
	ca, cert, key := t.EtcdFiles()
	d := c.EtcdCertDir
	env := fmt.Sprintf(`# Environment file for etcd 3.6.10
ETCD_DATA_DIR=/var/lib/etcd
ETCD_ADVERTISE_CLIENT_URLS=https://%[1]s:2379
ETCD_INITIAL_ADVERTISE_PEER_URLS=https://%[1]s:2380
ETCD_INITIAL_CLUSTER_STATE=existing
ETCD_LISTEN_CLIENT_URLS=https://%[1]s:2379,%[2]s
ETCD_INITIAL_CLUSTER_TOKEN=k8s_etcd
ETCD_LISTEN_PEER_URLS=https://%[1]s:2380
ETCD_NAME=%[3]s
ETCD_PROXY=off
ETCD_INITIAL_CLUSTER=%[4]s

# TLS settings
ETCD_TRUSTED_CA_FILE=%[5]s
ETCD_CERT_FILE=%[6]s
ETCD_KEY_FILE=%[7]s
ETCD_CLIENT_CERT_AUTH=true

ETCD_PEER_TRUSTED_CA_FILE=%[5]s
ETCD_PEER_CERT_FILE=%[6]s
ETCD_PEER_KEY_FILE=%[7]s
ETCD_PEER_CLIENT_CERT_AUTH=True

# CLI settings
ETCDCTL_ENDPOINTS=%[2]s
ETCDCTL_CACERT=%[5]s
ETCDCTL_KEY=%[8]s/admin-%[9]s-key.pem
ETCDCTL_CERT=%[8]s/admin-%[9]s.pem
`, ip, c.EtcdLoopbackURL, etcdName, strings.Join(initial, ","), ca, cert, key, d, c.Host)
	if err := t.WriteFile("/etc/etcd.env", []byte(env), 0o640); err != nil {
		return err
	}
	var rc strings.Builder
	rc.WriteString("# This is /run/systemd/resolve/resolv.conf managed by man:systemd-resolved(8).\n# Do not edit.\n\n")
	for _, ns := range c.ResolvConfNameservers {
		rc.WriteString("nameserver " + ns + "\n")
	}
	rc.WriteString("search default.svc." + c.DNSDomain + " svc." + c.DNSDomain + "\n")
	if err := t.WriteFile("/run/systemd/resolve/resolv.conf", []byte(rc.String()), 0o644); err != nil {
		return err
	}
	// kubespray v2.31.0 roles/kubernetes/preinstall/templates/resolved.conf.j2
	// (dns_late, nodelocaldns, no upstream_dns_servers).
	if err := t.WriteFile("/etc/systemd/resolved.conf.d/kubespray.conf", []byte("[Resolve]\nDNS="+c.NodelocaldnsIP+
		"\nFallbackDNS=10.10.0.1\nDomains=default.svc."+c.DNSDomain+" svc."+c.DNSDomain+"\nDNSSEC=no\nCache=no-negative\n"), 0o644); err != nil {
		return err
	}
	return t.WriteFile("/etc/resolv.conf", []byte("nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch default.svc."+
		c.DNSDomain+" svc."+c.DNSDomain+"\n"), 0o644)
}

// SetResolvConf rewrites the resolv.conf kubelet hands to pods.
func (t *Tree) SetResolvConf(nameservers ...string) error {
	var rc strings.Builder
	for _, ns := range nameservers {
		rc.WriteString("nameserver " + ns + "\n")
	}
	return t.WriteFile("/run/systemd/resolve/resolv.conf", []byte(rc.String()), 0o644)
}

// netAndReleases makes /sys/class/net entries and kubespray's downloads in
// local_release_dir. Each interface is up as the kernel shows it: flags
// 0x1003 (IFF_UP, IFF_BROADCAST, IFF_MULTICAST) and operstate "up", or
// "unknown" for the tunnel devices, which report no carrier.
func (t *Tree) netAndReleases() error {
	for _, ifc := range t.Config.Interfaces {
		oper := "up"
		if TunnelDevice(ifc) {
			oper = "unknown"
		}
		if err := t.WriteFile("/sys/class/net/"+ifc+"/operstate", []byte(oper+"\n"), 0o444); err != nil {
			return err
		}
		if err := t.WriteFile("/sys/class/net/"+ifc+"/flags", []byte("0x1003\n"), 0o444); err != nil {
			return err
		}
	}
	v := t.Config.KubeVersion
	for name, size := range map[string]int{
		"kubeadm-" + v + "-amd64": 4096, "kubectl-" + v + "-amd64": 2048, "kubelet-" + v + "-amd64": 8192,
		"etcd-3.6.10-linux-amd64.tar.gz": 1024, "cni-plugins-linux-amd64-1.8.0.tgz": 512,
	} {
		if err := t.WriteFile("/tmp/releases/"+name, make([]byte, size), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// SetKubeadmConfig replaces old by new in kubeadm-config.yaml (drift variants).
func (t *Tree) SetKubeadmConfig(old, new string) error {
	p := "/etc/kubernetes/kubeadm-config.yaml"
	data, err := readFile(t.Path(p))
	if err != nil {
		return err
	}
	if !strings.Contains(data, old) {
		return fmt.Errorf("harness: %q not in %s", old, p)
	}
	return t.WriteFile(p, []byte(strings.ReplaceAll(data, old, new)), 0o640)
}

func readFile(p string) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}

// TunnelDevice says whether an interface is one of the network plugins'
// tunnel devices (vxlan.calico, tunl0, flannel.<VNI>, flannel-wg,
// cilium_*), whose operstate is "unknown" while they are up.
func TunnelDevice(name string) bool {
	return name == "vxlan.calico" || name == "tunl0" || strings.HasPrefix(name, "flannel") || strings.HasPrefix(name, "cilium_")
}
