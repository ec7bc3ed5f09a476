package node

import (
	"context"
	"crypto/tls"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/verify"
)

// nginxConfOneCP is kubespray v2.31.0's
// roles/kubernetes/node/templates/loadbalancer/nginx.conf.j2 rendered for
// a worker of kubespray's sample inventory with one control-plane host
// (node1, main_access_ip 10.10.0.11) and the sample's
// loadbalancer_apiserver_port 6443 and loadbalancer_apiserver_healthcheck_port
// 8081, byte for byte (the shared test renders the template again and
// compares): the "-%}" of the for loop leaves the upstream's "}" indented.
const nginxConfOneCP = `error_log stderr notice;

worker_processes 2;
worker_rlimit_nofile 130048;
worker_shutdown_timeout 10s;

events {
  multi_accept on;
  use epoll;
  worker_connections 16384;
}

stream {
  upstream kube_apiserver {
    least_conn;
    server 10.10.0.11:6443;
    }

  server {
    listen        127.0.0.1:6443;
    proxy_pass    kube_apiserver;
    proxy_timeout 10m;
    proxy_connect_timeout 1s;
  }
}

http {
  aio threads;
  aio_write on;
  tcp_nopush on;
  tcp_nodelay on;

  keepalive_timeout 5m;
  keepalive_requests 100;
  reset_timedout_connection on;
  server_tokens off;
  autoindex off;

  server {
    listen 8081;
    location /healthz {
      access_log off;
      return 200;
    }
    location /stub_status {
      stub_status on;
      access_log off;
    }
  }
  }
`

// nginxProxyManifest is templates/manifests/nginx-proxy.manifest.j2
// rendered with the same values and kubespray v2.31.0's nginx image
// (download.yml: docker.io/library/nginx:1.28.2-alpine); the checksum is
// the one of an empty file, as kubespray's is nginx.conf's.
const nginxProxyManifest = `apiVersion: v1
kind: Pod
metadata:
  name: nginx-proxy
  namespace: kube-system
  labels:
    addonmanager.kubernetes.io/mode: Reconcile
    k8s-app: kube-nginx
  annotations:
    nginx-cfg-checksum: "da39a3ee5e6b4b0d3255bfef95601890afd80709"
spec:
  hostNetwork: true
  dnsPolicy: ClusterFirstWithHostNet
  nodeSelector:
    kubernetes.io/os: linux
  priorityClassName: system-node-critical
  containers:
  - name: nginx-proxy
    image: docker.io/library/nginx:1.28.2-alpine
    imagePullPolicy: IfNotPresent
    resources:
      requests:
        cpu: 25m
        memory: 32M
    livenessProbe:
      httpGet:
        path: /healthz
        port: 8081
    readinessProbe:
      httpGet:
        path: /healthz
        port: 8081
    volumeMounts:
    - mountPath: /etc/nginx
      name: etc-nginx
      readOnly: true
  volumes:
  - name: etc-nginx
    hostPath:
      path: /etc/nginx
`

// haproxyCfgThreeCP is the kube_api part of haproxy.cfg.j2 rendered for
// three control-plane hosts, one of them IPv6 (ipwrap puts it in
// brackets).
const haproxyCfgThreeCP = `frontend kube_api_frontend
  bind 127.0.0.1:6443
  mode tcp
  option tcplog
  default_backend kube_api_backend

backend kube_api_backend
  mode tcp
  balance leastconn
  default-server inter 15s downinter 15s rise 2 fall 2 slowstart 60s maxconn 1000 maxqueue 256 weight 100
  option httpchk GET /healthz
  http-check expect status 200
  server node1 10.10.0.11:6443 check check-ssl verify none
  server node2 10.10.0.12:6443 check check-ssl verify none
  server node3 [fd00::13]:6443 check check-ssl verify none
  `

// workerTree is node2 of a cluster whose control plane is node1
// (10.10.0.11): kubespray's nginx-proxy files from the rendered templates,
// kubelet.conf's server set as roles/kubernetes/kubeadm's lineinfile sets
// it, and an API server on loopback (the tree's apiserver certificate,
// which carries localhost) that 127.0.0.1:6443 is mapped to. It returns
// the tree, its env and the listener (closed at cleanup).
func workerTree(t *testing.T) (*harness.Tree, *Env, net.Listener) {
	t.Helper()
	tr := buildTree(t, harness.Config{Host: "node2"})
	must(t, tr.WriteFile("/etc/nginx/nginx.conf", []byte(nginxConfOneCP), 0o755))
	must(t, tr.WriteFile("/etc/kubernetes/manifests/nginx-proxy.yml", []byte(nginxProxyManifest), 0o640))
	setKubeletServer(t, tr, "https://localhost:6443")
	cert, err := tls.LoadX509KeyPair(tr.Path("/etc/kubernetes/ssl/apiserver.crt"), tr.Path("/etc/kubernetes/ssl/apiserver.key"))
	must(t, err)
	l := tlsListener(t, cert)
	env := testEnv(tr, testNow)
	env.Options.Groups = []string{"k8s_cluster", "kube_node"}
	env.Options.KubeControlPlaneAccessIPs = map[string]string{"node1": "10.10.0.11"}
	env.AddrMap = map[string]string{"127.0.0.1:6443": l.Addr().String()}
	return tr, env, l
}

// setKubeletServer rewrites kubelet.conf's server line as kubespray's
// "Update server field in kubelet kubeconfig" does.
func setKubeletServer(t *testing.T, tr *harness.Tree, server string) {
	t.Helper()
	b, err := readTreeFile(tr, "/etc/kubernetes/kubelet.conf")
	must(t, err)
	var out []string
	for _, line := range strings.Split(b, "\n") {
		if strings.Contains(line, "server:") {
			line = "    server: " + server
		}
		out = append(out, line)
	}
	must(t, tr.WriteFile("/etc/kubernetes/kubelet.conf", []byte(strings.Join(out, "\n")), 0o600))
}

func readTreeFile(tr *harness.Tree, p string) (string, error) {
	b, err := (verify.FS{Root: tr.Root}).ReadFile(p)
	return string(b), err
}

// tlsListener answers TLS handshakes with cert until the test ends.
func tlsListener(t *testing.T, cert tls.Certificate) net.Listener {
	t.Helper()
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	must(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				_ = c.(*tls.Conn).Handshake()
				c.Close()
			}()
		}
	}()
	return l
}

// lbResults runs the kubelet layer and returns its localhost_lb results.
func lbResults(t *testing.T, env *Env) []verify.Result {
	t.Helper()
	res, _, err := kubeletLayer{}.Check(context.Background(), env)
	must(t, err)
	var out []verify.Result
	for _, r := range res {
		if strings.HasPrefix(r.Check, "localhost_lb:") {
			out = append(out, r)
		}
	}
	return out
}

func TestLocalhostLBHealthyWorker(t *testing.T) {
	_, env, _ := workerTree(t)
	res, facts, err := kubeletLayer{}.Check(context.Background(), env)
	must(t, err)
	if bad := failed(res); len(bad) > 0 {
		t.Fatalf("healthy worker: %+v", bad)
	}
	var checks []string
	for _, r := range res {
		if strings.HasPrefix(r.Check, "localhost_lb:") {
			checks = append(checks, r.Check)
			if r.Status != verify.StatusOK {
				t.Errorf("%s: %+v", r.Check, r)
			}
		}
	}
	want := []string{"localhost_lb:manifest", "localhost_lb:listen", "localhost_lb:upstreams", "localhost_lb:kubelet_conf", "localhost_lb:connect"}
	if !slices.Equal(checks, want) {
		t.Errorf("checks %v, want %v", checks, want)
	}
	f := facts.(*KubeletFacts).LocalhostLB
	if f == nil || f.Type != "nginx" || !slices.Equal(f.Upstreams, []string{"10.10.0.11:6443"}) || !slices.Equal(f.Listen, []string{"127.0.0.1:6443"}) ||
		f.KubeletServer != "https://localhost:6443" || f.Manifest != "/etc/kubernetes/manifests/nginx-proxy.yml" {
		t.Errorf("facts: %+v", f)
	}
	if r := resultCheck(res, "localhost_lb:connect"); r == nil || !strings.Contains(r.Msg, "certificate kube-apiserver (issuer kubernetes)") ||
		!strings.Contains(r.Msg, "trusted by kubelet.conf's certificate-authority-data") {
		t.Errorf("connect: %+v", r)
	}
}

// The e2e's break: nginx-proxy's static pod moved out of the manifests.
func TestLocalhostLBManifestMissing(t *testing.T) {
	tr, env, _ := workerTree(t)
	must(t, tr.Remove("/etc/kubernetes/manifests/nginx-proxy.yml"))
	r := resultCheck(lbResults(t, env), "localhost_lb:manifest")
	if r == nil || r.Status != verify.StatusFail || !strings.Contains(r.Msg, "/etc/kubernetes/manifests/nginx-proxy.yml cannot be read on node2") ||
		!strings.Contains(r.Msg, "loadbalancer_apiserver_localhost is true and loadbalancer_apiserver_type is nginx") ||
		!strings.Contains(r.Remediation, "roles/kubernetes/node/tasks/loadbalancer/nginx-proxy.yml") {
		t.Errorf("manifest missing: %+v", r)
	}
	// A manifest that is no static pod of kubespray's.
	must(t, tr.WriteFile("/etc/kubernetes/manifests/nginx-proxy.yml", []byte("kind: Pod\nspec:\n  containers:\n  - name: other\n"), 0o640))
	r = resultCheck(lbResults(t, env), "localhost_lb:manifest")
	if r == nil || r.Status != verify.StatusFail || !strings.Contains(r.Msg, "hostNetwork is not true") || !strings.Contains(r.Msg, "no container nginx-proxy") ||
		!strings.Contains(r.Msg, "mounts no hostPath /etc/nginx") {
		t.Errorf("foreign manifest: %+v", r)
	}
}

func TestLocalhostLBKubeletConfBypasses(t *testing.T) {
	tr, env, _ := workerTree(t)
	setKubeletServer(t, tr, "https://10.10.0.11:6443")
	r := resultCheck(lbResults(t, env), "localhost_lb:kubelet_conf")
	if r == nil || r.Status != verify.StatusFail || !strings.Contains(r.Msg, "names server https://10.10.0.11:6443, not https://localhost:6443") ||
		!strings.Contains(r.Remediation, "Update server field in kubelet kubeconfig") {
		t.Errorf("kubelet.conf past nginx-proxy: %+v", r)
	}
	must(t, tr.Remove("/etc/kubernetes/kubelet.conf"))
	r = resultCheck(lbResults(t, env), "localhost_lb:kubelet_conf")
	if r == nil || r.Status != verify.StatusFail || !strings.Contains(r.Msg, "/etc/kubernetes/kubelet.conf on node2: cannot be read") {
		t.Errorf("no kubelet.conf: %+v", r)
	}
}

// After a control-plane host was replaced or added without re-running
// the workers, nginx.conf names the old set.
func TestLocalhostLBStaleUpstreams(t *testing.T) {
	tr, env, _ := workerTree(t)
	env.Options.KubeControlPlaneAccessIPs = map[string]string{"node1": "10.10.0.11", "node4": "10.10.0.14"}
	r := resultCheck(lbResults(t, env), "localhost_lb:upstreams")
	if r == nil || r.Status != verify.StatusFail || !strings.Contains(r.Msg, "lacks 10.10.0.14:6443") ||
		!strings.Contains(r.Msg, "lists 1 API server for the 2 hosts of kube_control_plane") || !strings.Contains(r.Msg, "of node1, node4") {
		t.Errorf("control plane grown: %+v", r)
	}
	env.Options.KubeControlPlaneAccessIPs = map[string]string{"node4": "10.10.0.14"}
	r = resultCheck(lbResults(t, env), "localhost_lb:upstreams")
	if r == nil || r.Status != verify.StatusFail || !strings.Contains(r.Msg, "lists 10.10.0.11:6443, which no kube_control_plane host has") {
		t.Errorf("control plane replaced: %+v", r)
	}
	// An address the inventory does not give is not compared; the count is.
	env.Options.KubeControlPlaneAccessIPs = map[string]string{"node1": ""}
	r = resultCheck(lbResults(t, env), "localhost_lb:upstreams")
	if r == nil || r.Status != verify.StatusOK || !strings.Contains(r.Msg, "the address of node1 is not in the inventory") {
		t.Errorf("unknown address: %+v", r)
	}
	env.Options.KubeControlPlaneAccessIPs = nil
	r = resultCheck(lbResults(t, env), "localhost_lb:upstreams")
	if r == nil || r.Status != verify.StatusOK || !strings.Contains(r.Msg, "were not given, so not compared") {
		t.Errorf("no addresses: %+v", r)
	}
	// Another loadbalancer_apiserver_port than the config listens on.
	env.Options.LoadbalancerAPIServerPort = 8383
	res := lbResults(t, env)
	if r := resultCheck(res, "localhost_lb:listen"); r == nil || r.Status != verify.StatusFail || !strings.Contains(r.Msg, "listens on 127.0.0.1:6443, not 127.0.0.1:8383") {
		t.Errorf("port: %+v", r)
	}
	if r := resultCheck(res, "localhost_lb:kubelet_conf"); r == nil || r.Status != verify.StatusFail || !strings.Contains(r.Msg, "not https://localhost:8383") {
		t.Errorf("port in kubelet.conf: %+v", r)
	}
	must(t, tr.Remove("/etc/nginx/nginx.conf"))
	env.Options.LoadbalancerAPIServerPort = 6443
	r = resultCheck(lbResults(t, env), "localhost_lb:upstreams")
	if r == nil || r.Status != verify.StatusFail || !strings.Contains(r.Msg, "config /etc/nginx/nginx.conf cannot be read on node2") {
		t.Errorf("no nginx.conf: %+v", r)
	}
}

func TestLocalhostLBConnect(t *testing.T) {
	tr, env, l := workerTree(t)
	l.Close()
	r := resultCheck(lbResults(t, env), "localhost_lb:connect")
	if r == nil || r.Status != verify.StatusFail || !strings.Contains(r.Msg, "no API server answers on 127.0.0.1:6443 on node2 within 1s") ||
		!strings.Contains(r.Remediation, "crictl ps -a --name nginx-proxy") {
		t.Errorf("nothing listening: %+v", r)
	}
	// Something answers with a certificate the cluster CA did not sign.
	other, err := harness.NewCA(harness.ECDSAP256, "other", testNow.Add(-time.Hour), testNow.Add(time.Hour))
	must(t, err)
	c, k, err := other.Issue(harness.ECDSAP256, harness.Leaf{CN: "impostor", DNS: []string{"localhost"}, Server: true,
		NotBefore: testNow.Add(-time.Hour), NotAfter: testNow.Add(time.Hour)}, nil)
	must(t, err)
	l2 := tlsListener(t, tls.Certificate{Certificate: [][]byte{c.Raw}, PrivateKey: k})
	env.AddrMap["127.0.0.1:6443"] = l2.Addr().String()
	r = resultCheck(lbResults(t, env), "localhost_lb:connect")
	if r == nil || r.Status != verify.StatusFail || !strings.Contains(r.Msg, "does not trust for localhost") {
		t.Errorf("untrusted: %+v", r)
	}
	_ = tr
}

// Where kubespray gives the host no localhost load balancer, or its
// kubelet does not go through it, there is no localhost_lb result.
func TestLocalhostLBNotApplicable(t *testing.T) {
	_, env, _ := workerTree(t)
	no := false
	for name, edit := range map[string]func(o *Options){
		"control plane":                    func(o *Options) { o.Groups = []string{"k8s_cluster", "kube_control_plane", "kube_node"} },
		"groups unknown":                   func(o *Options) { o.Groups = nil },
		"loadbalancer_apiserver_localhost": func(o *Options) { o.LoadbalancerAPIServerLocalhost = &no },
		"loadbalancer_apiserver":           func(o *Options) { o.LoadbalancerAPIServer = map[string]any{"address": "10.10.0.100", "port": 8443} },
	} {
		e := *env
		edit(&e.Options)
		if res := lbResults(t, &e); len(res) != 0 {
			t.Errorf("%s: %+v", name, res)
		}
	}
	// An external balancer makes loadbalancer_apiserver_localhost false by default.
	o := NewOptions()
	o.LoadbalancerAPIServer = map[string]any{"address": "10.10.0.100"}
	o.Defaults()
	if *o.LoadbalancerAPIServerLocalhost {
		t.Error("loadbalancer_apiserver defined: loadbalancer_apiserver_localhost defaults to true")
	}
	o = NewOptions()
	o.Defaults()
	if !*o.LoadbalancerAPIServerLocalhost || o.LoadbalancerAPIServerPort != 6443 || o.KubeManifestDir != "/etc/kubernetes/manifests" {
		t.Errorf("kubespray's defaults: %+v", o)
	}
	env.Options.LoadbalancerAPIServerType = "traefik"
	res := lbResults(t, env)
	if len(res) != 1 || res[0].Status != verify.StatusWarn || !strings.Contains(res[0].Msg, `loadbalancer_apiserver_type "traefik"`) {
		t.Errorf("unknown type: %+v", res)
	}
}

func TestLocalhostLBHaproxy(t *testing.T) {
	tr, env, _ := workerTree(t)
	must(t, tr.Remove("/etc/nginx/nginx.conf"))
	must(t, tr.Remove("/etc/kubernetes/manifests/nginx-proxy.yml"))
	manifest := strings.NewReplacer("nginx-proxy", "haproxy", "kube-nginx", "kube-haproxy", "nginx-cfg", "haproxy-cfg",
		"docker.io/library/nginx:1.28.2-alpine", "docker.io/library/haproxy:3.2.13-alpine", "/etc/nginx", "/usr/local/etc/haproxy/",
		"etc-nginx", "etc-haproxy").Replace(nginxProxyManifest)
	manifest = strings.Replace(manifest, "      path: /usr/local/etc/haproxy/\n", "      path: /etc/haproxy\n", 1)
	must(t, tr.WriteFile("/etc/kubernetes/manifests/haproxy.yml", []byte(manifest), 0o640))
	must(t, tr.WriteFile("/etc/haproxy/haproxy.cfg", []byte(haproxyCfgThreeCP), 0o755))
	env.Options.LoadbalancerAPIServerType = "haproxy"
	env.Options.KubeControlPlaneAccessIPs = map[string]string{"node1": "10.10.0.11", "node2": "10.10.0.12", "node3": "fd00::13"}
	res := lbResults(t, env)
	if len(res) != 5 {
		t.Fatalf("haproxy: %+v", res)
	}
	for _, r := range res {
		if r.Status != verify.StatusOK {
			t.Errorf("haproxy %s: %+v", r.Check, r)
		}
	}
	if r := resultCheck(res, "localhost_lb:manifest"); !strings.Contains(r.Msg, "/etc/kubernetes/manifests/haproxy.yml present") || !strings.Contains(r.Msg, "haproxy:3.2.13-alpine") {
		t.Errorf("haproxy manifest: %+v", r)
	}
}

func TestParseLBConfigs(t *testing.T) {
	listen, up, addrs := parseNginxConf([]byte(nginxConfOneCP))
	if !slices.Equal(listen, []string{"127.0.0.1:6443"}) || !slices.Equal(up, []string{"10.10.0.11:6443"}) || !slices.Equal(addrs, up) {
		t.Errorf("nginx: %v %v %v", listen, up, addrs)
	}
	ipv6 := strings.Replace(nginxConfOneCP, "    server 10.10.0.11:6443;\n", "    server 10.10.0.11:6443;\n    server [fd00::12]:6443;\n", 1)
	ipv6 = strings.Replace(ipv6, "    listen        127.0.0.1:6443;\n", "    listen        127.0.0.1:6443;\n    listen        [::1]:6443;\n", 1)
	listen, _, addrs = parseNginxConf([]byte(ipv6))
	if !slices.Equal(listen, []string{"127.0.0.1:6443", "[::1]:6443"}) || !slices.Equal(addrs, []string{"10.10.0.11:6443", "[fd00::12]:6443"}) {
		t.Errorf("nginx ipv6: %v %v", listen, addrs)
	}
	listen, up, addrs = parseHaproxyCfg([]byte(haproxyCfgThreeCP))
	if !slices.Equal(listen, []string{"127.0.0.1:6443"}) || !slices.Equal(addrs, []string{"10.10.0.11:6443", "10.10.0.12:6443", "[fd00::13]:6443"}) || up[0] != "node1 10.10.0.11:6443" {
		t.Errorf("haproxy: %v %v %v", listen, up, addrs)
	}
	for _, junk := range []string{"", "stream {\n", "}}}}", "upstream kube_apiserver {\n server x;\n"} {
		listen, up, _ := parseNginxConf([]byte(junk))
		if len(up) != 0 || len(listen) != 0 {
			t.Errorf("nginx %q: %v %v", junk, listen, up)
		}
	}
}

// The test harness's worker (harness.Tree.LocalhostLB, which the ssh
// fleet tests give their workers) passes the layer as kubespray's
// rendering does.
func TestLocalhostLBHarnessWorker(t *testing.T) {
	tr := buildTree(t, harness.Config{Host: "node2"})
	must(t, tr.LocalhostLB("10.10.0.11:6443"))
	env := testEnv(tr, testNow)
	env.Options.Groups = []string{"k8s_cluster", "kube_node"}
	env.Options.KubeControlPlaneAccessIPs = map[string]string{"node1": "10.10.0.11"}
	env.AddrMap = map[string]string{"127.0.0.1:6443": tr.ServeAPIServerTLS(t)}
	res := lbResults(t, env)
	if len(res) != 5 {
		t.Fatalf("harness worker: %+v", res)
	}
	for _, r := range res {
		if r.Status != verify.StatusOK {
			t.Errorf("harness worker %s: %+v", r.Check, r)
		}
	}
	listen, up, _ := parseNginxConf([]byte(mustRead(t, tr, "/etc/nginx/nginx.conf")))
	want, wantUp, _ := parseNginxConf([]byte(nginxConfOneCP))
	if !slices.Equal(listen, want) || !slices.Equal(up, wantUp) {
		t.Errorf("harness nginx.conf: %v %v, kubespray's: %v %v", listen, up, want, wantUp)
	}
}

func mustRead(t *testing.T, tr *harness.Tree, p string) string {
	t.Helper()
	s, err := readTreeFile(tr, p)
	must(t, err)
	return s
}
