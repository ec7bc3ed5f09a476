package node

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/layercheck/layercheck/verify"
)

// The kubelet layer's part on the workers' path to the API server. With
// loadbalancer_apiserver_localhost (kubespray's default while no external
// loadbalancer_apiserver is defined), roles/kubernetes/node (kubespray
// v2.31.0 tasks/main.yml, "Install nginx-proxy" / "Install haproxy") gives
// every host outside kube_control_plane a static pod that balances
// 127.0.0.1:loadbalancer_apiserver_port over the control-plane hosts
// (tasks/loadbalancer/nginx-proxy.yml: templates/loadbalancer/nginx.conf.j2
// into nginx_config_dir, templates/manifests/nginx-proxy.manifest.j2 into
// kube_manifest_dir; haproxy.yml the same with haproxy.cfg.j2), and
// roles/kubernetes/kubeadm ("Update server field in kubelet kubeconfig")
// points kubelet.conf's server at https://localhost:<that port>. The
// kubelet of such a host reaches no API server without it: the loss shows
// in the cluster only as the Node NotReady, 40 s later.

// LocalhostLBFacts is what the kubelet layer read of the localhost load
// balancer (kubelet facts localhost_lb).
type LocalhostLBFacts struct {
	// Type is loadbalancer_apiserver_type (nginx or haproxy).
	Type     string `json:"loadbalancer_apiserver_type"`
	Manifest string `json:"manifest"`
	Config   string `json:"config"`
	// Listen is what the config listens on, Upstreams the API servers it
	// balances over, as written (nginx: "10.10.0.11:6443"; haproxy:
	// "node1 10.10.0.11:6443").
	Listen    []string `json:"listen"`
	Upstreams []string `json:"upstreams"`
	// KubeletServer is kubelet.conf's server.
	KubeletServer string `json:"kubelet_server,omitempty"`
	// Dialed is the address the connection check dialed, after addr_map.
	Dialed string `json:"dialed"`
}

// localhostLB is the part of kubespray's localhost load balancer that
// applies to this host: nginx-proxy's (or haproxy's) manifest, file and
// pod name, and the config's path.
type localhostLB struct {
	kind     string // nginx-proxy or haproxy: the pod's name and container
	manifest string
	config   string
	port     int
}

// lbApplies says whether kubespray gives this host a localhost load
// balancer its kubelet goes through: a host outside kube_control_plane
// (roles/kubernetes/kubeadm rewrites the server of no control-plane
// kubelet.conf) with loadbalancer_apiserver_localhost and no external
// loadbalancer_apiserver. Hosts whose groups are not known are left out.
func lbApplies(o Options) bool {
	return o.InGroup("kube_node") && !o.InGroup("kube_control_plane") &&
		o.LoadbalancerAPIServerLocalhost != nil && *o.LoadbalancerAPIServerLocalhost && o.LoadbalancerAPIServer == nil
}

// localhostLBChecks are the results of the localhost load balancer on
// this host (none where it does not apply, as on control-plane hosts).
func localhostLBChecks(ctx context.Context, env *Env) ([]verify.Result, *LocalhostLBFacts) {
	o := env.Options
	if !lbApplies(o) {
		return nil, nil
	}
	host := hostName(env)
	lb := localhostLB{port: o.LoadbalancerAPIServerPort}
	switch o.LoadbalancerAPIServerType {
	case "nginx":
		lb.kind, lb.manifest, lb.config = "nginx-proxy", path.Join(o.KubeManifestDir, "nginx-proxy.yml"), path.Join(o.NginxConfigDir, "nginx.conf")
	case "haproxy":
		lb.kind, lb.manifest, lb.config = "haproxy", path.Join(o.KubeManifestDir, "haproxy.yml"), path.Join(o.HaproxyConfigDir, "haproxy.cfg")
	default:
		return []verify.Result{{Check: "localhost_lb:manifest", Status: verify.StatusWarn,
			Msg: fmt.Sprintf("loadbalancer_apiserver_type %q is not one kubespray installs on the workers (nginx, haproxy): %s's path to the API server through localhost was not checked",
				o.LoadbalancerAPIServerType, host),
			Remediation: "set loadbalancer_apiserver_type to nginx (kubespray's default) or haproxy and re-run cluster.yml"}}, nil
	}
	f := &LocalhostLBFacts{Type: o.LoadbalancerAPIServerType, Manifest: lb.manifest, Config: lb.config, Listen: []string{}, Upstreams: []string{}}
	because := fmt.Sprintf("loadbalancer_apiserver_localhost is true and loadbalancer_apiserver_type is %s", o.LoadbalancerAPIServerType)
	rerun := fmt.Sprintf("re-run cluster.yml for this host (--limit %s; roles/kubernetes/node/tasks/loadbalancer/%s.yml writes %s and %s)",
		host, lb.kind, lb.config, lb.manifest)
	var results []verify.Result
	results = append(results, lbManifest(env, lb, because, rerun))
	results = append(results, lbConfig(env, lb, f, rerun)...)
	results = append(results, lbKubeletConf(env, lb, f))
	results = append(results, lbConnect(ctx, env, lb, f))
	return results, f
}

// lbManifest checks the static pod's manifest: there, a Pod kubelet can
// run on the host network, mounting the config's directory.
func lbManifest(env *Env, lb localhostLB, because, rerun string) verify.Result {
	host := hostName(env)
	r := verify.Result{Check: "localhost_lb:manifest"}
	data, err := env.Read(lb.manifest)
	if err != nil {
		r.Status = verify.StatusFail
		r.Msg = fmt.Sprintf("%s's static pod %s cannot be read on %s (%v) although %s: kubelet runs no %s, and this worker's kubelet, which kubelet.conf sends to https://localhost:%d, reaches no API server",
			lb.kind, lb.manifest, host, verify.PathErr(err), because, lb.kind, lb.port)
		r.Remediation = rerun
		return r
	}
	var pod lbPod
	var problems []string
	if err := yaml.Unmarshal(data, &pod); err != nil {
		problems = append(problems, "it is not YAML: "+err.Error())
	} else {
		if pod.Kind != "Pod" {
			problems = append(problems, fmt.Sprintf("kind is %q, not Pod", pod.Kind))
		}
		if !pod.Spec.HostNetwork {
			problems = append(problems, "hostNetwork is not true, so it does not listen on the host's 127.0.0.1")
		}
		if pod.image(lb.kind) == "" {
			problems = append(problems, "it has no container "+lb.kind+" with an image")
		}
		dir := path.Dir(lb.config)
		if !slices.ContainsFunc(pod.Spec.Volumes, func(v lbVolume) bool { return path.Clean(v.HostPath.Path) == dir }) {
			problems = append(problems, "it mounts no hostPath "+dir+", where its config is")
		}
	}
	if len(problems) > 0 {
		r.Status = verify.StatusFail
		r.Msg = fmt.Sprintf("%s on %s is not the static pod kubespray writes: %s", lb.manifest, host, strings.Join(problems, "; "))
		r.Remediation = rerun
		return r
	}
	r.Status = verify.StatusOK
	r.Msg = fmt.Sprintf("%s present (%s, image %s)", lb.manifest, because, pod.image(lb.kind))
	return r
}

// lbPod is the part of the static pod's manifest the layer reads.
type lbPod struct {
	Kind string `yaml:"kind"`
	Spec struct {
		HostNetwork bool `yaml:"hostNetwork"`
		Containers  []struct {
			Name  string `yaml:"name"`
			Image string `yaml:"image"`
		} `yaml:"containers"`
		Volumes []lbVolume `yaml:"volumes"`
	} `yaml:"spec"`
}

type lbVolume struct {
	HostPath struct {
		Path string `yaml:"path"`
	} `yaml:"hostPath"`
}

// image is the image of container name ("" when there is none).
func (p *lbPod) image(name string) string {
	for _, c := range p.Spec.Containers {
		if c.Name == name {
			return c.Image
		}
	}
	return ""
}

// lbConfig checks what nginx.conf (haproxy.cfg) listens on and balances
// over: 127.0.0.1:loadbalancer_apiserver_port, and every kube_control_plane
// host's main_access_ip:kube_apiserver_port, as the templates render them.
func lbConfig(env *Env, lb localhostLB, f *LocalhostLBFacts, rerun string) []verify.Result {
	o := env.Options
	host := hostName(env)
	data, err := env.Read(lb.config)
	if err != nil {
		return []verify.Result{{Check: "localhost_lb:upstreams", Status: verify.StatusFail,
			Msg:         fmt.Sprintf("%s's config %s cannot be read on %s: %v", lb.kind, lb.config, host, verify.PathErr(err)),
			Remediation: rerun}}
	}
	var addrs []string
	if lb.kind == "nginx-proxy" {
		f.Listen, f.Upstreams, addrs = parseNginxConf(data)
	} else {
		f.Listen, f.Upstreams, addrs = parseHaproxyCfg(data)
	}
	var results []verify.Result
	wantListen := net.JoinHostPort("127.0.0.1", strconv.Itoa(lb.port))
	if slices.Contains(f.Listen, wantListen) {
		results = append(results, verify.Result{Check: "localhost_lb:listen", Status: verify.StatusOK,
			Msg: fmt.Sprintf("%s listens on %s (loadbalancer_apiserver_port %d)", lb.config, wantListen, lb.port)})
	} else {
		results = append(results, verify.Result{Check: "localhost_lb:listen", Status: verify.StatusFail,
			Msg: fmt.Sprintf("%s on %s listens on %s, not %s (loadbalancer_apiserver_port %d), where kubelet.conf sends kubelet",
				lb.config, host, orNone(f.Listen), wantListen, lb.port),
			Expected: wantListen, Actual: f.Listen, Remediation: rerun})
	}
	// What the template renders: hostvars[host]['main_access_ip'] |
	// ansible.utils.ipwrap ~ ':' ~ kube_apiserver_port per control plane.
	cps := make([]string, 0, len(o.KubeControlPlaneAccessIPs))
	for h := range o.KubeControlPlaneAccessIPs {
		cps = append(cps, h)
	}
	sort.Strings(cps)
	port := strconv.Itoa(o.KubeAPIServerPort)
	var want, unknown []string
	for _, h := range cps {
		ip := o.KubeControlPlaneAccessIPs[h]
		if ip == "" {
			unknown = append(unknown, h)
			continue
		}
		want = append(want, net.JoinHostPort(ip, port))
	}
	r := verify.Result{Check: "localhost_lb:upstreams", Actual: f.Upstreams}
	switch {
	case len(addrs) == 0:
		r.Status = verify.StatusFail
		r.Msg = fmt.Sprintf("%s on %s lists no API server to balance over: %s answers nothing on %s", lb.config, host, lb.kind, wantListen)
		r.Remediation = rerun
	case len(cps) == 0:
		r.Status = verify.StatusOK
		r.Msg = fmt.Sprintf("%s balances over %s (the inventory's kube_control_plane addresses were not given, so not compared)", lb.config, strings.Join(addrs, ", "))
	default:
		var missing, extra []string
		for _, w := range want {
			if !slices.Contains(addrs, w) {
				missing = append(missing, w)
			}
		}
		if len(unknown) == 0 {
			for _, a := range addrs {
				if !slices.Contains(want, a) {
					extra = append(extra, a)
				}
			}
		}
		count := len(addrs) == len(cps)
		if len(missing) == 0 && len(extra) == 0 && count {
			r.Status = verify.StatusOK
			r.Msg = fmt.Sprintf("%s balances over the %s of kube_control_plane (%s)", lb.config, verify.Plural(len(cps), "host"), strings.Join(addrs, ", "))
			if len(unknown) > 0 {
				r.Msg += fmt.Sprintf("; the address of %s is not in the inventory (no access_ip or ip) and was not compared", strings.Join(unknown, ", "))
			}
			break
		}
		var what []string
		if len(missing) > 0 {
			what = append(what, "lacks "+strings.Join(missing, ", "))
		}
		if len(extra) > 0 {
			what = append(what, "lists "+strings.Join(extra, ", ")+", which no kube_control_plane host has")
		}
		if !count {
			what = append(what, fmt.Sprintf("lists %s for the %s of kube_control_plane", verify.Plural(len(addrs), "API server"), verify.Plural(len(cps), "host")))
		}
		r.Status = verify.StatusFail
		r.Msg = fmt.Sprintf("%s on %s %s (main_access_ip:kube_apiserver_port of %s): a stale config, written before the control plane changed",
			lb.config, host, strings.Join(what, "; "), strings.Join(cps, ", "))
		r.Expected = want
		r.Remediation = "re-run cluster.yml (or scale.yml) for this host so kubespray renders " + lb.config + " from the inventory's kube_control_plane again; " + lb.kind + " rereads it when its pod restarts (kubespray's manifest carries the config's checksum, so kubelet restarts it)"
	}
	return append(results, r)
}

// parseNginxConf reads what kubespray's nginx.conf.j2 renders: the listen
// addresses of the stream server and the servers of upstream
// kube_apiserver (addrs: host:port with IPv6 in brackets).
func parseNginxConf(data []byte) (listen, upstreams, addrs []string) {
	listen, upstreams, addrs = []string{}, []string{}, []string{}
	inStream, inUpstream, depth := false, false, 0
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		fields := strings.Fields(strings.TrimSuffix(line, ";"))
		switch {
		case len(fields) >= 2 && fields[0] == "stream" && fields[1] == "{" && depth == 0:
			inStream = true
		case inStream && len(fields) >= 3 && fields[0] == "upstream" && fields[2] == "{":
			inUpstream = fields[1] == "kube_apiserver"
		case inUpstream && len(fields) >= 2 && fields[0] == "server":
			upstreams = append(upstreams, fields[1])
			addrs = append(addrs, fields[1])
		case inStream && !inUpstream && len(fields) >= 2 && fields[0] == "listen":
			listen = append(listen, fields[1])
		}
		depth += strings.Count(line, "{") - strings.Count(line, "}")
		if strings.Contains(line, "}") {
			if inUpstream && depth == 1 {
				inUpstream = false
			}
			if depth == 0 {
				inStream = false
			}
		}
	}
	return listen, upstreams, addrs
}

// parseHaproxyCfg reads what kubespray's haproxy.cfg.j2 renders: the binds
// of frontend kube_api_frontend and the servers of backend
// kube_api_backend ("name addr:port").
func parseHaproxyCfg(data []byte) (listen, upstreams, addrs []string) {
	listen, upstreams, addrs = []string{}, []string{}, []string{}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		raw := sc.Text()
		if i := strings.IndexByte(raw, '#'); i >= 0 {
			raw = raw[:i]
		}
		fields := strings.Fields(raw)
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "global", "defaults", "frontend", "backend", "listen", "resolvers", "peers", "userlist":
			section = fields[0]
			if len(fields) > 1 {
				section += " " + fields[1]
			}
			continue
		}
		switch {
		case section == "frontend kube_api_frontend" && fields[0] == "bind" && len(fields) >= 2:
			listen = append(listen, fields[1])
		case section == "backend kube_api_backend" && fields[0] == "server" && len(fields) >= 3:
			upstreams = append(upstreams, fields[1]+" "+fields[2])
			addrs = append(addrs, fields[2])
		}
	}
	return listen, upstreams, addrs
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ", ")
}

// lbKubeletConf checks that kubelet.conf sends kubelet to the load
// balancer: server https://localhost:loadbalancer_apiserver_port
// (kube_apiserver_endpoint for a host outside kube_control_plane).
func lbKubeletConf(env *Env, lb localhostLB, f *LocalhostLBFacts) verify.Result {
	host := hostName(env)
	file := path.Join(env.Options.KubeConfigDir, "kubelet.conf")
	want := "https://localhost:" + strconv.Itoa(lb.port)
	r := verify.Result{Check: "localhost_lb:kubelet_conf", Expected: want}
	servers, _, err := kubeconfigServers(env, file)
	if err != nil {
		r.Status = verify.StatusFail
		r.Msg = fmt.Sprintf("%s on %s: %v", file, host, err)
		r.Remediation = "re-run cluster.yml for this host (roles/kubernetes/kubeadm joins it and sets kubelet.conf's server)"
		return r
	}
	f.KubeletServer = strings.Join(servers, ", ")
	r.Actual = servers
	if len(servers) > 0 && !slices.ContainsFunc(servers, func(s string) bool { return strings.TrimSuffix(s, "/") != want }) {
		r.Status = verify.StatusOK
		r.Msg = fmt.Sprintf("%s sends kubelet to %s, through %s", file, want, lb.kind)
		return r
	}
	r.Status = verify.StatusFail
	r.Msg = fmt.Sprintf("%s on %s names server %s, not %s (kube_apiserver_endpoint of a host outside kube_control_plane with loadbalancer_apiserver_localhost): kubelet bypasses %s, so it depends on one control-plane host",
		file, host, orNone(servers), want, lb.kind)
	r.Remediation = "re-run cluster.yml for this host: roles/kubernetes/kubeadm (\"Update server field in kubelet kubeconfig\") sets it and restarts kubelet"
	return r
}

// kubeconfigServers reads the servers of a kubeconfig's clusters and the
// CAs they trust (certificate-authority-data, or the file
// certificate-authority names).
func kubeconfigServers(env *Env, file string) ([]string, *x509.CertPool, error) {
	data, err := env.Read(file)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot be read: %v", verify.PathErr(err))
	}
	var kc struct {
		Clusters []struct {
			Cluster struct {
				Server string `yaml:"server"`
				CAData string `yaml:"certificate-authority-data"`
				CA     string `yaml:"certificate-authority"`
			} `yaml:"cluster"`
		} `yaml:"clusters"`
	}
	if err := yaml.Unmarshal(data, &kc); err != nil {
		return nil, nil, fmt.Errorf("is not a kubeconfig: %v", err)
	}
	servers := []string{}
	pool := x509.NewCertPool()
	cas := 0
	for _, c := range kc.Clusters {
		servers = append(servers, c.Cluster.Server)
		var pemData []byte
		switch {
		case c.Cluster.CAData != "":
			pemData, _ = base64.StdEncoding.DecodeString(c.Cluster.CAData)
		case c.Cluster.CA != "":
			pemData, _ = env.Read(c.Cluster.CA)
		}
		if len(pemData) > 0 && pool.AppendCertsFromPEM(pemData) {
			cas++
		}
	}
	if cas == 0 {
		pool = nil
	}
	return servers, pool, nil
}

// lbConnect proves the path kubelet takes: a TLS connection to
// 127.0.0.1:loadbalancer_apiserver_port from the node, answered by an API
// server whose certificate kubelet.conf's CA (else kube_cert_dir/ca.crt)
// trusts for "localhost", within net_timeout.
func lbConnect(ctx context.Context, env *Env, lb localhostLB, f *LocalhostLBFacts) verify.Result {
	host := hostName(env)
	target := net.JoinHostPort("127.0.0.1", strconv.Itoa(lb.port))
	f.Dialed = env.Addr(target)
	timeout := env.NetTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	_, pool, _ := kubeconfigServers(env, path.Join(env.Options.KubeConfigDir, "kubelet.conf"))
	caFrom := "kubelet.conf's certificate-authority-data"
	if pool == nil {
		ca := path.Join(env.Options.KubeCertDir, "ca.crt")
		if b, err := env.Read(ca); err == nil {
			pool = x509.NewCertPool()
			if pool.AppendCertsFromPEM(b) {
				caFrom = ca
			} else {
				pool = nil
			}
		}
	}
	cfg := &tls.Config{ServerName: "localhost", RootCAs: pool, MinVersion: tls.VersionTLS12}
	if !env.Now.IsZero() {
		// certificates are judged at the layers' time (tests pass it)
		now := env.Now
		cfg.Time = func() time.Time { return now }
	}
	if pool == nil {
		// No CA to judge by (reported by the certificates layer): that
		// something answers TLS is still the path kubelet takes.
		cfg.InsecureSkipVerify = true
		caFrom = ""
	}
	start := time.Now()
	conn, err := env.dialTLS(ctx, f.Dialed, cfg, timeout)
	took := time.Since(start).Round(time.Millisecond)
	if err != nil {
		var certErr *tls.CertificateVerificationError
		if errors.As(err, &certErr) {
			return verify.Result{Check: "localhost_lb:connect", Status: verify.StatusFail,
				Msg: fmt.Sprintf("%s on %s answers TLS with a certificate %s does not trust for localhost: %v", target, host, caFrom, err),
				Remediation: fmt.Sprintf("something other than %s's API servers answers on %s (ss -ltnp 'sport = :%d' on %s), or the API server's certificate lacks localhost (kubespray adds it to apiserver_sans)",
					lb.kind, target, lb.port, host)}
		}
		return verify.Result{Check: "localhost_lb:connect", Status: verify.StatusFail,
			Msg: fmt.Sprintf("no API server answers on %s on %s within %s, where kubelet.conf sends kubelet: %v", target, host, timeout, err),
			Remediation: fmt.Sprintf("is %s running on %s? crictl ps -a --name %s, crictl logs <its id>, journalctl -u kubelet (kubelet starts the static pod from %s); %s's upstreams must reach the API servers on kube_apiserver_port",
				lb.kind, host, lb.kind, lb.manifest, lb.kind)}
	}
	defer conn.Close()
	msg := fmt.Sprintf("%s answered TLS in %s", target, took)
	if tc, ok := conn.(*tls.Conn); ok {
		if pc := tc.ConnectionState().PeerCertificates; len(pc) > 0 {
			msg += fmt.Sprintf(" with certificate %s (issuer %s)", pc[0].Subject.CommonName, pc[0].Issuer.CommonName)
		}
	}
	if caFrom != "" {
		msg += ", trusted by " + caFrom
	} else {
		msg += " (no CA on the node to verify it by)"
	}
	return verify.Result{Check: "localhost_lb:connect", Status: verify.StatusOK, Msg: msg}
}
