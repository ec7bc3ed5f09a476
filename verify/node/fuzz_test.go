package node

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"k8s.io/client-go/tools/clientcmd"
)

// The node files verify reads are user input in the sense that a broken
// or hostile node may hold anything: each reader returns a value or an
// error, never panics or hangs. `make fuzz` runs these.

// FuzzEtcdEnv feeds arbitrary text to the /etc/etcd.env reader.
func FuzzEtcdEnv(f *testing.F) {
	for _, s := range []string{
		"ETCD_DATA_DIR=/var/lib/etcd\nETCD_ADVERTISE_CLIENT_URLS=https://10.0.0.1:2379\nETCD_LISTEN_CLIENT_URLS=https://10.0.0.1:2379,https://127.0.0.1:2379\n",
		"# comment\nETCD_NAME=\"etcd1\"\nETCD_INITIAL_CLUSTER=etcd1=https://10.0.0.1:2380,etcd2=https://10.0.0.2:2380\n",
		"ETCD_AUTO_COMPACTION_RETENTION=8\nETCD_HEARTBEAT_INTERVAL=\\\n250\nETCD_CLIENT_CERT_AUTH=true\n",
		"ETCD_LISTEN_CLIENT_URLS=https://root:pw@[::1]:2379\nX='a b' Y=\"c\\\"d\"\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseEtcdEnv([]byte(s))
		if err == nil && e == nil {
			t.Fatal("no result and no error")
		}
	})
}

// FuzzKubeadmConfig feeds arbitrary text to the kubeadm-config.yaml reader.
func FuzzKubeadmConfig(f *testing.F) {
	for _, s := range []string{
		"apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: 10.0.0.1\n---\napiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.33.1\nnetworking:\n  podSubnet: 10.233.64.0/18\n  serviceSubnet: 10.233.0.0/18\n",
		"kind: ClusterConfiguration\napiServer:\n  certSANs: [a, b]\n  extraArgs:\n  - name: x\n    value: y\n",
		"---\n...\n",
		"a: &a [*a]\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseKubeadmConfig("kubeadm-config.yaml", []byte(s))
		if err == nil && c == nil {
			t.Fatal("no result and no error")
		}
	})
}

// FuzzPEM feeds arbitrary bytes to the certificate file reader: a file is
// certificates, a key (an error now), or an error; never a panic.
func FuzzPEM(f *testing.F) {
	for _, s := range []string{
		"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUa\n-----END CERTIFICATE-----\n",
		"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI\n-----END EC PRIVATE KEY-----\n",
		"-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n",
		"garbage",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		certs, hasKey, err := parsePEMCerts(b)
		if err == nil && len(certs) == 0 {
			t.Fatalf("no certificate and no error (key %v)", hasKey)
		}
		if err != nil && strings.Contains(err.Error(), "PRIVATE KEY-----") {
			t.Fatalf("error quotes the key: %v", err)
		}
	})
}

// FuzzKubeconfig feeds arbitrary text to both kubeconfig readers: the
// node layer's (certificates in kubeconfigs) and client-go's, which
// `layercheck cluster` uses.
func FuzzKubeconfig(f *testing.F) {
	for _, s := range []string{
		"apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n    certificate-authority-data: AAAA\nusers:\n- name: u\n  user:\n    token: abc\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
		"",
		"clusters: [{}]\n",
		"users:\n- user:\n    client-certificate-data: '!!'\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var kc kubeconfig
		_ = yaml.Unmarshal([]byte(s), &kc)
		cfg, err := clientcmd.Load([]byte(s))
		if err != nil {
			return
		}
		if cfg == nil {
			t.Fatal("no config and no error")
		}
		_, _ = clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	})
}
