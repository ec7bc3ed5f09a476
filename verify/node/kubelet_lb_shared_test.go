//go:build shared

package node

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
	"github.com/layercheck/layercheck/verify"
)

// renderLB renders a template of kubespray v2.31.0's roles/kubernetes/node
// with Jinja2 as Ansible's template module does (trim_blocks), the
// ansible.utils.ipwrap filter as it wraps IPv6 addresses, and vars.
func renderLB(t *testing.T, tmpl string, vars map[string]any) string {
	t.Helper()
	src := filepath.Join(testutil.Shared(t, "kubespray-full", "v2.31.0"), "roles", "kubernetes", "node", "templates", tmpl)
	const script = `import jinja2, json, sys
env = jinja2.Environment(trim_blocks=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
env.filters["ansible.utils.ipwrap"] = lambda v: "[%s]" % v if ":" in str(v) else v
sys.stdout.write(env.from_string(open(sys.argv[1]).read()).render(**json.load(sys.stdin)))
`
	in, err := json.Marshal(vars)
	must(t, err)
	cmd := exec.Command(testutil.Ansible(t, "python"), "-c", script, src)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("render %s: %v\n%s", tmpl, err, out)
	}
	return string(out)
}

// lbVars are kubespray v2.31.0's values for the templates with its sample
// inventory (group_vars/all/all.yml: loadbalancer_apiserver_port 6443,
// loadbalancer_apiserver_healthcheck_port 8081), for control planes cps
// (inventory hostname -> main_access_ip).
func lbVars(cps [][2]string) map[string]any {
	var names []string
	hv := map[string]any{}
	for _, cp := range cps {
		names = append(names, cp[0])
		hv[cp[0]] = map[string]any{"main_access_ip": cp[1]}
	}
	return map[string]any{
		"groups": map[string]any{"kube_control_plane": names}, "hostvars": hv,
		"kube_apiserver_port": 6443, "loadbalancer_apiserver_port": 6443, "loadbalancer_apiserver_healthcheck_port": 8081,
		"ipv6_stack": false, "loadbalancer_apiserver_keepalive_timeout": "5m",
		"nginx_conf": map[string]any{"checksum": "da39a3ee5e6b4b0d3255bfef95601890afd80709"}, "haproxy_conf": map[string]any{"checksum": "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
		"nginx_image_repo": "docker.io/library/nginx", "nginx_image_tag": "1.28.2-alpine",
		"haproxy_image_repo": "docker.io/library/haproxy", "haproxy_image_tag": "3.2.13-alpine",
		"k8s_image_pull_policy": "IfNotPresent", "loadbalancer_apiserver_cpu_requests": "25m", "loadbalancer_apiserver_memory_requests": "32M",
		"nginx_config_dir": "/etc/nginx", "haproxy_config_dir": "/etc/haproxy",
	}
}

// The unit tests' nginx.conf and manifest are what kubespray's templates
// render, and the kubelet layer passes a worker whose files kubespray's
// templates wrote for three control planes (one on IPv6), with nginx and
// with haproxy, and fails it when the inventory's control plane is not
// the one the files were rendered for.
func TestLocalhostLBFromKubesprayTemplates(t *testing.T) {
	one := lbVars([][2]string{{"node1", "10.10.0.11"}})
	one["loadbalancer_apiserver_pod_name"] = "nginx-proxy"
	if got := renderLB(t, "loadbalancer/nginx.conf.j2", one); got != nginxConfOneCP {
		t.Errorf("nginx.conf.j2 renders\n%s\nthe unit tests have\n%s", got, nginxConfOneCP)
	}
	if got := renderLB(t, "manifests/nginx-proxy.manifest.j2", one); got != nginxProxyManifest {
		t.Errorf("nginx-proxy.manifest.j2 renders\n%s\nthe unit tests have\n%s", got, nginxProxyManifest)
	}

	three := [][2]string{{"node1", "10.10.0.11"}, {"node2", "10.10.0.12"}, {"node3", "fd00::13"}}
	ips := map[string]string{"node1": "10.10.0.11", "node2": "10.10.0.12", "node3": "fd00::13"}
	for _, tc := range []struct{ typ, pod, conf, confTmpl, manifest string }{
		{"nginx", "nginx-proxy", "/etc/nginx/nginx.conf", "loadbalancer/nginx.conf.j2", "/etc/kubernetes/manifests/nginx-proxy.yml"},
		{"haproxy", "haproxy", "/etc/haproxy/haproxy.cfg", "loadbalancer/haproxy.cfg.j2", "/etc/kubernetes/manifests/haproxy.yml"},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			tr, env, _ := workerTree(t)
			must(t, os.Remove(tr.Path("/etc/nginx/nginx.conf")))
			must(t, os.Remove(tr.Path("/etc/kubernetes/manifests/nginx-proxy.yml")))
			vars := lbVars(three)
			vars["loadbalancer_apiserver_pod_name"] = tc.pod
			must(t, tr.WriteFile(tc.conf, []byte(renderLB(t, tc.confTmpl, vars)), 0o755))
			must(t, tr.WriteFile(tc.manifest, []byte(renderLB(t, "manifests/"+tc.pod+".manifest.j2", vars)), 0o640))
			env.Options.LoadbalancerAPIServerType = tc.typ
			env.Options.KubeControlPlaneAccessIPs = ips
			res := lbResults(t, env)
			if len(res) != 5 {
				t.Fatalf("%s: %+v", tc.typ, res)
			}
			for _, r := range res {
				if r.Status != verify.StatusOK {
					t.Errorf("%s %s: %+v", tc.typ, r.Check, r)
				}
			}
			env.Options.KubeControlPlaneAccessIPs = map[string]string{"node1": "10.10.0.11", "node2": "10.10.0.12"}
			if r := resultCheck(lbResults(t, env), "localhost_lb:upstreams"); r == nil || r.Status != verify.StatusFail || !strings.Contains(r.Msg, "[fd00::13]:6443, which no kube_control_plane host has") {
				t.Errorf("%s after node3 left the control plane: %+v", tc.typ, r)
			}
		})
	}
}
