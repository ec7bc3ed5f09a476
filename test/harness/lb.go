package harness

import (
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// LocalhostLB makes the tree a worker behind kubespray's nginx-proxy
// (loadbalancer_apiserver_localhost, kubespray's default): nginx.conf in
// the shape kubespray v2.31.0's loadbalancer/nginx.conf.j2 renders it,
// listening on 127.0.0.1:6443 and balancing over upstreams
// ("10.10.0.11:6443"), the static pod of manifests/nginx-proxy.manifest.j2
// in /etc/kubernetes/manifests, and kubelet.conf's server
// https://localhost:6443, as kubespray's "Update server field in kubelet
// kubeconfig" sets it.
func (t *Tree) LocalhostLB(upstreams ...string) error {
	var servers strings.Builder
	for _, u := range upstreams {
		servers.WriteString("    server " + u + ";\n    ")
	}
	conf := "error_log stderr notice;\n\nworker_processes 2;\nworker_rlimit_nofile 130048;\nworker_shutdown_timeout 10s;\n\n" +
		"events {\n  multi_accept on;\n  use epoll;\n  worker_connections 16384;\n}\n\n" +
		"stream {\n  upstream kube_apiserver {\n    least_conn;\n" + servers.String() + "}\n\n" +
		"  server {\n    listen        127.0.0.1:6443;\n    proxy_pass    kube_apiserver;\n    proxy_timeout 10m;\n    proxy_connect_timeout 1s;\n  }\n}\n"
	if err := t.WriteFile("/etc/nginx/nginx.conf", []byte(conf), 0o755); err != nil {
		return err
	}
	manifest := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: nginx-proxy\n  namespace: kube-system\n  labels:\n    addonmanager.kubernetes.io/mode: Reconcile\n    k8s-app: kube-nginx\n" +
		"spec:\n  hostNetwork: true\n  dnsPolicy: ClusterFirstWithHostNet\n  priorityClassName: system-node-critical\n  containers:\n  - name: nginx-proxy\n" +
		"    image: docker.io/library/nginx:1.28.2-alpine\n    imagePullPolicy: IfNotPresent\n    volumeMounts:\n    - mountPath: /etc/nginx\n      name: etc-nginx\n      readOnly: true\n" +
		"  volumes:\n  - name: etc-nginx\n    hostPath:\n      path: /etc/nginx\n"
	if err := t.WriteFile("/etc/kubernetes/manifests/nginx-proxy.yml", []byte(manifest), 0o640); err != nil {
		return err
	}
	kc, err := readFile(t.Path("/etc/kubernetes/kubelet.conf"))
	if err != nil {
		return err
	}
	if !strings.Contains(kc, "server: "+t.server()) {
		return fmt.Errorf("harness: kubelet.conf names no server %s", t.server())
	}
	return t.WriteFile("/etc/kubernetes/kubelet.conf", []byte(strings.Replace(kc, "server: "+t.server(), "server: https://localhost:6443", 1)), 0o600)
}

// ServeAPIServerTLS answers TLS handshakes on a loopback port with the
// tree's apiserver certificate (its SANs hold localhost), as the API
// server behind nginx-proxy does, until the test ends; it returns the
// address, for addr_map's "127.0.0.1:6443".
func (t *Tree) ServeAPIServerTLS(tb testing.TB) string {
	tb.Helper()
	d := t.Config.KubeCertDir
	cert, err := tls.LoadX509KeyPair(t.Path(d+"/apiserver.crt"), t.Path(d+"/apiserver.key"))
	if err != nil {
		tb.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				_ = c.(*tls.Conn).Handshake()
				c.Close()
			}(c)
		}
	}()
	return l.Addr().String()
}
