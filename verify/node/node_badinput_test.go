package node

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/verify"
)

// Broken, hostile or half-written node files give results naming the node
// path, never a panic, a hang or the fixture's real path.
func TestNodeLayersBadInput(t *testing.T) {
	tr := buildTree(t, harness.Config{})
	w := func(p, data string) { must(t, tr.WriteFile(p, []byte(data), 0o644)) }
	w("/etc/kubernetes/admin.conf", "users: [\n")                                                                    // not YAML
	w("/etc/kubernetes/scheduler.conf", "users:\n- name: x\n  user:\n    client-certificate-data: '!!not base64'\n") // bad base64
	w("/etc/kubernetes/controller-manager.conf", "- just\n- a list\n")                                               // wrong shape
	w("/etc/kubernetes/ssl/empty.crt", "")                                                                           // empty
	w("/etc/kubernetes/ssl/garbage.crt", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")           // bad DER
	w("/etc/kubernetes/kubelet-config.yaml", "clusterDNS: {a: b}\n")                                                 // wrong type
	w("/etc/kubernetes/kubeadm-config.yaml", "---\n- a\n---\nkind: ClusterConfiguration\nnetworking: 5\n")           // list doc, wrong type
	must(t, os.MkdirAll(tr.Path("/etc/ssl/etcd/ssl/dir.pem"), 0o755))                                                // directory named like a cert
	must(t, os.Symlink("/etc/ssl/etcd/ssl/loop-a.pem", tr.Path("/etc/ssl/etcd/ssl/loop-b.pem")))                     // symlink loop
	must(t, os.Symlink("/etc/ssl/etcd/ssl/loop-b.pem", tr.Path("/etc/ssl/etcd/ssl/loop-a.pem")))
	must(t, os.Remove(tr.Path("/var/lib/kubelet/pki/kubelet-client-current.pem"))) // dangling link
	must(t, os.Symlink("/var/lib/kubelet/pki/kubelet-client-gone.pem", tr.Path("/var/lib/kubelet/pki/kubelet-client-current.pem")))
	must(t, os.RemoveAll(tr.Path("/sys/class/net")))

	env := testEnv(tr, testNow)
	env.LayerTimeout = 10 * time.Second
	done := make(chan *Report, 1)
	go func() {
		rep, err := Run(context.Background(), env, []string{"certificates", "install", "kubelet", "cni", "addons"}, nil)
		must(t, err)
		done <- rep
	}()
	var rep *Report
	select {
	case rep = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("layers hang on bad input")
	}
	out, _ := json.Marshal(rep.Layers) // Report.Root names the tree on purpose
	if strings.Contains(string(out), tr.Root) {
		i := strings.Index(string(out), tr.Root)
		t.Errorf("report names the tree's real path %s: ...%s...", tr.Root, string(out)[max(0, i-300):i+100])
	}
	if strings.Contains(string(out), "panicked") {
		t.Fatalf("a layer panicked: %s", out)
	}
	want := map[string][]string{
		"certificates": {"/etc/kubernetes/admin.conf on node1 is not a kubeconfig", "scheduler.conf#users[x].client-certificate-data on node1 is not a base64 PEM",
			"/etc/kubernetes/ssl/garbage.crt on node1 is not a readable certificate", "/etc/ssl/etcd/ssl/loop-a.pem on node1 cannot be opened: /etc/ssl/etcd/ssl/loop-a.pem: too many levels",
			"/var/lib/kubelet/pki/kubelet-client-current.pem on node1 cannot be opened"},
		"kubelet": {"/etc/kubernetes/kubelet-config.yaml: yaml: unmarshal errors"},
		"install": {"/etc/kubernetes/kubeadm-config.yaml"},
		"cni":     {"cannot list /sys/class/net: no such file or directory"},
	}
	for layer, msgs := range want {
		lr := rep.Layers[layer]
		var all []string
		for _, r := range lr.Results {
			all = append(all, r.Msg)
		}
		for _, m := range msgs {
			if !strings.Contains(strings.Join(all, "\n"), m) {
				t.Errorf("%s: no message with %q in:\n%s", layer, m, strings.Join(all, "\n"))
			}
		}
		if lr.Status != verify.StatusFail && lr.Status != verify.StatusError {
			t.Errorf("%s: status %s", layer, lr.Status)
		}
	}
}

func FuzzParseKubeadmConfig(f *testing.F) {
	f.Add([]byte("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nnetworking:\n  podSubnet: 10.233.64.0/18\n---\nkind: KubeProxyConfiguration\nmode: ipvs\n"))
	f.Add([]byte("---\n- a\n---\nkind: InitConfiguration\nnodeRegistration: [1]\n"))
	f.Add([]byte("kind: &a ClusterConfiguration\nx: *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		kc, err := ParseKubeadmConfig("/etc/kubernetes/kubeadm-config.yaml", data)
		if err == nil && kc == nil {
			t.Fatal("nil config without error")
		}
		if err != nil && !strings.HasPrefix(err.Error(), "/etc/kubernetes/kubeadm-config.yaml") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

func FuzzCertificatePEM(f *testing.F) {
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"))
	f.Add([]byte("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n"))
	f.Add([]byte("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = parsePEMCerts(data)
		if _, err := privateKeyPublic(data); err != nil && strings.Contains(err.Error(), string(data)) && len(data) > 8 {
			t.Fatalf("error quotes the key text")
		}
		_ = opensslName(data)
	})
}
