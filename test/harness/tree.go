// Package harness builds node trees for the tests: the files kubespray
// v2.31.0 leaves on a control-plane + etcd node, generated with crypto/x509
// at a "now" the test passes in, so no test depends on today's date.
//
// The shapes follow kubespray v2.31.0 with its sample inventory:
// kubeadm's PKI in kube_cert_dir (/etc/kubernetes/ssl; CAs 87600h, leaves
// 8760h, notBefore backdated 5 minutes) with the /etc/kubernetes/pki symlink,
// kubeadm's kubeconfigs in /etc/kubernetes, the kubelet's rotated client
// certificate in /var/lib/kubelet/pki, make-ssl-etcd.sh's certificates in
// etcd_cert_dir (/etc/ssl/etcd/ssl; ca, member-, admin-, node-<host>,
// certificates_duration 36500 days), /etc/etcd.env (roles/etcd/templates/
// etcd.env.j2), /etc/kubernetes/kubeadm-config.yaml
// (kubeadm-config.v1beta4.yaml.j2), /etc/kubernetes/kubelet-config.yaml
// (kubelet-config.v1beta1.yaml.j2), the resolv.conf files of Ubuntu 24.04
// with systemd-resolved, /sys/class/net entries for calico's vxlan.calico,
// and downloads in local_release_dir (/tmp/releases).
//
// The trees hold throw-away private keys; they live in t.TempDir().
package harness

import (
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Config describes the node to build. Zero fields take the values of node1
// of kubespray's sample inventory with three control-plane/etcd hosts.
type Config struct {
	// Now is the moment the certificates were made (required).
	Now time.Time
	// Host is this node's inventory_hostname; Hosts all etcd/control-plane hosts.
	Host  string
	Hosts []string
	// IPs of Hosts, same order.
	IPs []string
	// Keys is the key algorithm (ECDSA-P256 unless set).
	Keys KeyAlgorithm

	KubeVersion          string // 1.35.4
	KubePodsSubnet       string // 10.233.64.0/18
	KubeServiceAddresses string // 10.233.0.0/18
	DNSDomain            string // cluster.local
	KubeProxyMode        string // ipvs
	NodelocaldnsIP       string // 169.254.25.10
	KubeCertDir          string // /etc/kubernetes/ssl
	EtcdCertDir          string // /etc/ssl/etcd/ssl
	// ResolvConfNameservers are the nameservers of the resolv.conf kubelet
	// hands to pods (/run/systemd/resolve/resolv.conf).
	ResolvConfNameservers []string // nodelocaldns_ip, 10.10.0.1
	// Interfaces created under /sys/class/net.
	Interfaces []string // eth0, vxlan.calico
	// EtcdClientURL is what etcd.env advertises on loopback.
	EtcdLoopbackURL string // https://127.0.0.1:2379
}

func (c *Config) defaults() {
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&c.Host, "node1")
	if len(c.Hosts) == 0 {
		c.Hosts = []string{"node1", "node2", "node3"}
	}
	if len(c.IPs) == 0 {
		c.IPs = []string{"10.10.0.11", "10.10.0.12", "10.10.0.13"}
	}
	if c.Keys == "" {
		c.Keys = ECDSAP256
	}
	def(&c.KubeVersion, "1.35.4")
	def(&c.KubePodsSubnet, "10.233.64.0/18")
	def(&c.KubeServiceAddresses, "10.233.0.0/18")
	def(&c.DNSDomain, "cluster.local")
	def(&c.KubeProxyMode, "ipvs")
	def(&c.NodelocaldnsIP, "169.254.25.10")
	def(&c.KubeCertDir, "/etc/kubernetes/ssl")
	def(&c.EtcdCertDir, "/etc/ssl/etcd/ssl")
	def(&c.EtcdLoopbackURL, "https://127.0.0.1:2379")
	if c.ResolvConfNameservers == nil {
		c.ResolvConfNameservers = []string{c.NodelocaldnsIP, "10.10.0.1"}
	}
	if c.Interfaces == nil {
		c.Interfaces = []string{"eth0", "vxlan.calico"}
	}
}

// Tree is a built node tree.
type Tree struct {
	Root   string
	Config Config
	// KubeCA, FrontProxyCA, EtcdCA sign the tree's certificates.
	KubeCA, FrontProxyCA, EtcdCA *CA
	keys                         map[string]crypto.Signer // node path of a cert -> its key
}

// IP is the host's own address.
func (t *Tree) IP() string {
	for i, h := range t.Config.Hosts {
		if h == t.Config.Host && i < len(t.Config.IPs) {
			return t.Config.IPs[i]
		}
	}
	return t.Config.IPs[0]
}

// Path maps a node path under Root.
func (t *Tree) Path(nodePath string) string {
	return filepath.Join(t.Root, filepath.FromSlash(strings.TrimPrefix(nodePath, "/")))
}

// WriteFile writes a node file, making its directories.
func (t *Tree) WriteFile(nodePath string, data []byte, mode os.FileMode) error {
	p := t.Path(nodePath)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, mode)
}

// Remove deletes a node file.
func (t *Tree) Remove(nodePath string) error { return os.Remove(t.Path(nodePath)) }

// Build writes a healthy node tree under root.
func Build(root string, cfg Config) (*Tree, error) {
	if cfg.Now.IsZero() {
		return nil, fmt.Errorf("harness: Config.Now is required")
	}
	cfg.defaults()
	t := &Tree{Root: root, Config: cfg, keys: map[string]crypto.Signer{}}
	steps := []func() error{t.kubeadmPKI, t.kubeconfigs, t.kubeletPKI, t.etcdPKI, t.configs, t.netAndReleases}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (t *Tree) writeCert(certPath string, cert *x509.Certificate, keyPath string, key crypto.Signer, pkcs8 bool) error {
	if err := t.WriteFile(certPath, certPEM(cert), 0o644); err != nil {
		return err
	}
	t.keys[certPath] = key
	if keyPath == "" {
		return nil
	}
	kp, err := keyPEM(key, pkcs8)
	if err != nil {
		return err
	}
	return t.WriteFile(keyPath, kp, 0o600)
}

func ips(ss ...string) []net.IP {
	var out []net.IP
	for _, s := range ss {
		if ip := net.ParseIP(s); ip != nil {
			out = append(out, ip)
		}
	}
	return out
}

// kubeadm: `kubeadm init phase certs all` with kubespray's kubeadm-config.
func (t *Tree) kubeadmPKI() error {
	c := t.Config
	nb := c.Now.Add(-5 * time.Minute)
	caEnd := c.Now.Add(87600 * time.Hour)
	leafEnd := c.Now.Add(8760 * time.Hour)
	var err error
	if t.KubeCA, err = NewCA(c.Keys, "kubernetes", nb, caEnd); err != nil {
		return err
	}
	if t.FrontProxyCA, err = NewCA(c.Keys, "front-proxy-ca", nb, caEnd); err != nil {
		return err
	}
	d := c.KubeCertDir
	if err := t.writeCert(d+"/ca.crt", t.KubeCA.Cert, d+"/ca.key", t.KubeCA.Key, false); err != nil {
		return err
	}
	if err := t.writeCert(d+"/front-proxy-ca.crt", t.FrontProxyCA.Cert, d+"/front-proxy-ca.key", t.FrontProxyCA.Key, false); err != nil {
		return err
	}
	svcIP := firstServiceIP(c.KubeServiceAddresses)
	sansDNS := []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc." + c.DNSDomain, "localhost"}
	sansDNS = append(sansDNS, c.Hosts...)
	sansIP := ips(append([]string{svcIP, t.IP(), "127.0.0.1", "::1"}, c.IPs...)...)
	leaves := []struct {
		name string
		ca   *CA
		l    Leaf
	}{
		{"apiserver", t.KubeCA, Leaf{CN: "kube-apiserver", DNS: sansDNS, IPs: sansIP, Server: true}},
		{"apiserver-kubelet-client", t.KubeCA, Leaf{CN: "kube-apiserver-kubelet-client", Org: []string{"kubeadm:cluster-admins"}, Client: true}},
		{"front-proxy-client", t.FrontProxyCA, Leaf{CN: "front-proxy-client", Client: true}},
	}
	for _, lf := range leaves {
		lf.l.NotBefore, lf.l.NotAfter = nb, leafEnd
		cert, key, err := lf.ca.Issue(c.Keys, lf.l, nil)
		if err != nil {
			return err
		}
		if err := t.writeCert(d+"/"+lf.name+".crt", cert, d+"/"+lf.name+".key", key, false); err != nil {
			return err
		}
	}
	// Service-account key pair: not certificates.
	sa, err := newKey(c.Keys)
	if err != nil {
		return err
	}
	kp, _ := keyPEM(sa, true)
	if err := t.WriteFile(d+"/sa.key", kp, 0o600); err != nil {
		return err
	}
	pub, _ := x509.MarshalPKIXPublicKey(sa.Public())
	if err := t.WriteFile(d+"/sa.pub", pemBlock("PUBLIC KEY", pub), 0o644); err != nil {
		return err
	}
	// kubespray's preinstall role links /etc/kubernetes/pki to kube_cert_dir.
	if d != "/etc/kubernetes/pki" {
		if err := os.Symlink(d, t.Path("/etc/kubernetes/pki")); err != nil {
			return err
		}
	}
	return nil
}

// Kubeconfig user of one kubeadm kubeconfig.
type kubeconfigSpec struct {
	file, user string
	l          Leaf
}

func (t *Tree) kubeconfigs() error {
	c := t.Config
	specs := []kubeconfigSpec{
		{"admin.conf", "kubernetes-admin", Leaf{CN: "kubernetes-admin", Org: []string{"kubeadm:cluster-admins"}}},
		{"super-admin.conf", "kubernetes-super-admin", Leaf{CN: "kubernetes-super-admin", Org: []string{"system:masters"}}},
		{"controller-manager.conf", "system:kube-controller-manager", Leaf{CN: "system:kube-controller-manager"}},
		{"scheduler.conf", "system:kube-scheduler", Leaf{CN: "system:kube-scheduler"}},
	}
	for _, s := range specs {
		s.l.NotBefore, s.l.NotAfter, s.l.Client = c.Now.Add(-5*time.Minute), c.Now.Add(8760*time.Hour), true
		if err := t.WriteKubeconfig("/etc/kubernetes/"+s.file, s.user, s.l, t.KubeCA); err != nil {
			return err
		}
	}
	// kubelet.conf after kubeadm's kubelet-finalize phase: the client
	// certificate is the kubelet's rotated one.
	return t.WriteFile("/etc/kubernetes/kubelet.conf", []byte(kubeconfigYAML(t.server(), t.KubeCA.CertPEM(),
		"system:node:"+c.Host,
		"    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem\n    client-key: /var/lib/kubelet/pki/kubelet-client-current.pem\n")), 0o600)
}

func (t *Tree) server() string { return "https://" + t.IP() + ":6443" }

// WriteKubeconfig writes a kubeconfig whose user has an embedded client
// certificate issued by ca (kubeadm's shape).
func (t *Tree) WriteKubeconfig(nodePath, user string, l Leaf, ca *CA) error {
	cert, key, err := ca.Issue(t.Config.Keys, l, nil)
	if err != nil {
		return err
	}
	kp, err := keyPEM(key, false)
	if err != nil {
		return err
	}
	t.keys[nodePath] = key
	userBody := "    client-certificate-data: " + base64.StdEncoding.EncodeToString(certPEM(cert)) + "\n" +
		"    client-key-data: " + base64.StdEncoding.EncodeToString(kp) + "\n"
	return t.WriteFile(nodePath, []byte(kubeconfigYAML(t.server(), t.KubeCA.CertPEM(), user, userBody)), 0o600)
}

func kubeconfigYAML(server string, caPEM []byte, user, userBody string) string {
	return "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: " +
		base64.StdEncoding.EncodeToString(caPEM) + "\n    server: " + server + "\n  name: cluster.local\n" +
		"contexts:\n- context:\n    cluster: cluster.local\n    user: " + user + "\n  name: " + user + "@cluster.local\n" +
		"current-context: " + user + "@cluster.local\nkind: Config\npreferences: {}\nusers:\n- name: " + user +
		"\n  user:\n" + userBody
}

// kubelet: the rotated client certificate (cert and key in one file, linked
// from kubelet-client-current.pem) and the self-signed serving pair.
func (t *Tree) kubeletPKI() error {
	c := t.Config
	nb := c.Now.Add(-5 * time.Minute)
	cert, key, err := t.KubeCA.Issue(c.Keys, Leaf{CN: "system:node:" + c.Host, Org: []string{"system:nodes"},
		NotBefore: nb, NotAfter: c.Now.Add(8760 * time.Hour), Client: true}, nil)
	if err != nil {
		return err
	}
	kp, err := keyPEM(key, false)
	if err != nil {
		return err
	}
	stamp := c.Now.UTC().Format("2006-01-02-15-04-05")
	real := "/var/lib/kubelet/pki/kubelet-client-" + stamp + ".pem"
	if err := t.WriteFile(real, append(certPEM(cert), kp...), 0o600); err != nil {
		return err
	}
	t.keys[real] = key
	if err := os.Symlink(real, t.Path("/var/lib/kubelet/pki/kubelet-client-current.pem")); err != nil {
		return err
	}
	// kubelet's self-signed serving certificate: a CA "<host>-ca@<unix>"
	// and the serving cert, both in kubelet.crt.
	sca, err := NewCA(c.Keys, fmt.Sprintf("%s-ca@%d", c.Host, c.Now.Unix()), nb, c.Now.Add(8760*time.Hour))
	if err != nil {
		return err
	}
	sc, sk, err := sca.Issue(c.Keys, Leaf{CN: fmt.Sprintf("%s@%d", c.Host, c.Now.Unix()), DNS: []string{c.Host},
		NotBefore: nb, NotAfter: c.Now.Add(8760 * time.Hour), Server: true}, nil)
	if err != nil {
		return err
	}
	skp, _ := keyPEM(sk, false)
	if err := t.WriteFile("/var/lib/kubelet/pki/kubelet.crt", append(certPEM(sc), certPEM(sca.Cert)...), 0o644); err != nil {
		return err
	}
	t.keys["/var/lib/kubelet/pki/kubelet.crt"] = sk
	return t.WriteFile("/var/lib/kubelet/pki/kubelet.key", skp, 0o600)
}

// etcd: make-ssl-etcd.sh with MASTERS and HOSTS = all hosts.
func (t *Tree) etcdPKI() error {
	c := t.Config
	end := c.Now.Add(36500 * 24 * time.Hour)
	var err error
	if t.EtcdCA, err = NewCA(c.Keys, "etcd-ca", c.Now, end); err != nil {
		return err
	}
	d := c.EtcdCertDir
	if err := t.writeCert(d+"/ca.pem", t.EtcdCA.Cert, d+"/ca-key.pem", t.EtcdCA.Key, true); err != nil {
		return err
	}
	dns := append([]string{"localhost"}, c.Hosts...)
	dns = append(dns, "etcd.kube-system.svc."+c.DNSDomain, "etcd.kube-system.svc", "etcd.kube-system", "etcd")
	ipl := ips(append(append([]string{}, c.IPs...), "127.0.0.1", "::1")...)
	for _, h := range c.Hosts {
		for _, kind := range []string{"member", "admin", "node"} {
			cert, key, err := t.EtcdCA.Issue(c.Keys, Leaf{CN: "etcd-" + kind + "-" + h, DNS: dns, IPs: ipl,
				NotBefore: c.Now, NotAfter: end, Client: true, Server: true}, nil)
			if err != nil {
				return err
			}
			base := d + "/" + kind + "-" + h
			if err := t.writeCert(base+".pem", cert, base+"-key.pem", key, true); err != nil {
				return err
			}
		}
	}
	return t.WriteFile("/usr/local/share/ca-certificates/etcd-ca.crt", t.EtcdCA.CertPEM(), 0o640)
}

// ReissueLeaf replaces the certificate at nodePath (a PEM file) by one with
// the same subject, SANs and key, signed by the same CA (or by signer when
// not nil), valid from notBefore to notAfter: expired, short-lived or
// mis-chained variants.
func (t *Tree) ReissueLeaf(nodePath string, notBefore, notAfter time.Time, signer *CA) error {
	data, err := os.ReadFile(t.Path(nodePath))
	if err != nil {
		return err
	}
	old, err := firstCert(data)
	if err != nil {
		return fmt.Errorf("%s: %w", nodePath, err)
	}
	key := t.keys[nodePath]
	if key == nil {
		return fmt.Errorf("harness: no key known for %s", nodePath)
	}
	if signer == nil {
		for _, ca := range []*CA{t.KubeCA, t.FrontProxyCA, t.EtcdCA} {
			if old.CheckSignatureFrom(ca.Cert) == nil {
				signer = ca
			}
		}
		if signer == nil {
			return fmt.Errorf("harness: %s is not signed by a tree CA", nodePath)
		}
	}
	l := Leaf{CN: old.Subject.CommonName, Org: old.Subject.Organization, DNS: old.DNSNames, IPs: old.IPAddresses,
		NotBefore: notBefore, NotAfter: notAfter}
	for _, u := range old.ExtKeyUsage {
		l.Client = l.Client || u == x509.ExtKeyUsageClientAuth
		l.Server = l.Server || u == x509.ExtKeyUsageServerAuth
	}
	cert, _, err := signer.Issue(t.Config.Keys, l, key)
	if err != nil {
		return err
	}
	return t.WriteFile(nodePath, certPEM(cert), 0o644)
}

// KeyOf returns the private key generated for the certificate at nodePath.
func (t *Tree) KeyOf(nodePath string) crypto.Signer { return t.keys[nodePath] }

// EtcdFiles are the server files etcd.env names for this host (node paths).
func (t *Tree) EtcdFiles() (ca, cert, key string) {
	d := t.Config.EtcdCertDir
	return d + "/ca.pem", d + "/member-" + t.Config.Host + ".pem", d + "/member-" + t.Config.Host + "-key.pem"
}

func firstServiceIP(cidr string) string { return serviceIP(cidr, 1) }

// coreDNSIP is kubespray's default skydns_server, the 3rd address of
// kube_service_addresses.
func coreDNSIP(cidr string) string { return serviceIP(cidr, 3) }

func serviceIP(cidr string, nth byte) string {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		return ""
	}
	ip := n.IP.To4()
	if ip == nil {
		return ""
	}
	out := make(net.IP, 4)
	copy(out, ip)
	out[3] += nth
	return out.String()
}
