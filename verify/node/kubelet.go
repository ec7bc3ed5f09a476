package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/layercheck/layercheck/verify"
)

// The kubelet layer reads /etc/kubernetes/kubelet-config.yaml (kubespray
// v2.31.0 roles/kubernetes/node/templates/kubelet-config.v1beta1.yaml.j2)
// on every kube_control_plane / kube_node host: clusterDomain against
// dns_domain, the resolvConf file kubelet hands to pods (present, with no
// loopback nameserver a pod could not reach), cgroupDriver and the client
// CA. clusterDNS is reported; the dns layer judges it against nodelocaldns.
// On the workers it also checks their path to the API server through
// kubespray's localhost load balancer (kubelet_lb.go).
func init() { register("kubelet", nil, func() Layer { return kubeletLayer{} }) }

type kubeletLayer struct{}

func (kubeletLayer) Name() string { return "kubelet" }

// KubeletConfigPath is where kubespray writes the kubelet's config file.
const KubeletConfigPath = "/etc/kubernetes/kubelet-config.yaml"

// KubeletConfig is the part of a KubeletConfiguration
// (kubelet.config.k8s.io/v1beta1) the layers read.
type KubeletConfig struct {
	ClusterDNS         []string `yaml:"clusterDNS" json:"cluster_dns"`
	ClusterDomain      string   `yaml:"clusterDomain" json:"cluster_domain"`
	ResolvConf         string   `yaml:"resolvConf" json:"resolv_conf"`
	CgroupDriver       string   `yaml:"cgroupDriver" json:"cgroup_driver"`
	StaticPodPath      string   `yaml:"staticPodPath" json:"static_pod_path"`
	Address            string   `yaml:"address" json:"address"`
	RotateCertificates bool     `yaml:"rotateCertificates" json:"rotate_certificates"`
	MaxPods            int      `yaml:"maxPods" json:"max_pods"`
	Authentication     struct {
		X509 struct {
			ClientCAFile string `yaml:"clientCAFile" json:"client_ca_file"`
		} `yaml:"x509" json:"x509"`
	} `yaml:"authentication" json:"authentication"`
}

// ParseKubeletConfig parses a kubelet config file; errors name file and line.
func ParseKubeletConfig(file string, data []byte) (*KubeletConfig, error) {
	var kc KubeletConfig
	if err := yaml.Unmarshal(data, &kc); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return &kc, nil
}

// LoadKubeletConfig reads and parses the node's kubelet-config.yaml.
func LoadKubeletConfig(env *Env) (*KubeletConfig, error) {
	data, err := env.Read(KubeletConfigPath)
	if err != nil {
		return nil, err
	}
	return ParseKubeletConfig(KubeletConfigPath, data)
}

// KubeletFacts are the kubelet layer's facts.
type KubeletFacts struct {
	ConfigPath string         `json:"config_path"`
	Config     *KubeletConfig `json:"config,omitempty"`
	// ResolvConfNameservers are the nameservers of the resolvConf file.
	ResolvConfNameservers []string `json:"resolv_conf_nameservers"`
	// LocalhostLB is the workers' localhost load balancer (kubelet_lb.go),
	// on the hosts kubespray gives one.
	LocalhostLB *LocalhostLBFacts `json:"localhost_lb,omitempty"`
}

// ParseResolvConf returns the nameserver addresses of a resolv.conf.
func ParseResolvConf(data []byte) []string {
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		fs := strings.Fields(line)
		if len(fs) >= 2 && fs[0] == "nameserver" {
			out = append(out, fs[1])
		}
	}
	return out
}

func (kubeletLayer) Check(ctx context.Context, env *Env) ([]verify.Result, any, error) {
	o := env.Options
	host := hostName(env)
	if len(o.Groups) > 0 && !o.InGroup("kube_control_plane") && !o.InGroup("kube_node") {
		return nil, nil, fmt.Errorf("%w: %s is not a Kubernetes node (kube_control_plane / kube_node)", verify.ErrNotApplicable, host)
	}
	f := &KubeletFacts{ConfigPath: KubeletConfigPath, ResolvConfNameservers: []string{}}
	if !roleRan(env, roleNode) {
		return []verify.Result{roleNotRun(env, roleNode, "kubelet is not checked")}, f, nil
	}
	rerun := "re-run kubespray's cluster.yml for this host (roles/kubernetes/node renders " + KubeletConfigPath + ")"
	kc, err := LoadKubeletConfig(env)
	if errors.Is(err, fs.ErrNotExist) {
		return []verify.Result{{Check: "config", Status: verify.StatusFail,
			Msg: fmt.Sprintf("%s is missing on %s", KubeletConfigPath, host), Remediation: rerun}}, f, nil
	}
	if err != nil {
		msg := fmt.Sprintf("%v (on %s)", err, host)
		var pe *fs.PathError
		if errors.As(err, &pe) {
			msg = fmt.Sprintf("%s on %s cannot be read: %v", KubeletConfigPath, host, pe.Err)
		}
		return []verify.Result{{Check: "config", Status: verify.StatusFail, Msg: msg, Remediation: rerun}}, f, nil
	}
	f.Config = kc
	var results []verify.Result
	if o.DNSDomain != "" {
		if kc.ClusterDomain == o.DNSDomain {
			results = append(results, verify.Result{Check: "cluster_domain", Status: verify.StatusOK, Msg: "clusterDomain is dns_domain " + o.DNSDomain})
		} else {
			results = append(results, verify.Result{Check: "cluster_domain", Status: verify.StatusFail,
				Msg:      fmt.Sprintf("%s on %s has clusterDomain %q but dns_domain is %q", KubeletConfigPath, host, kc.ClusterDomain, o.DNSDomain),
				Expected: o.DNSDomain, Actual: kc.ClusterDomain,
				Remediation: "dns_domain cannot change after install: set it back to " + fmt.Sprintf("%q", kc.ClusterDomain) + " in the inventory, or re-run cluster.yml if the kubelet config is the stale one"})
		}
	}
	if kc.CgroupDriver == "" {
		results = append(results, verify.Result{Check: "cgroup_driver", Status: verify.StatusWarn,
			Msg: fmt.Sprintf("%s on %s sets no cgroupDriver (kubelet then uses cgroupfs, which must match the container runtime)", KubeletConfigPath, host), Remediation: rerun})
	} else {
		results = append(results, verify.Result{Check: "cgroup_driver", Status: verify.StatusOK, Msg: "cgroupDriver " + kc.CgroupDriver})
	}
	if ca := kc.Authentication.X509.ClientCAFile; ca != "" {
		if env.Exists(ca) {
			results = append(results, verify.Result{Check: "client_ca_file", Status: verify.StatusOK, Msg: "clientCAFile " + ca + " present"})
		} else {
			results = append(results, verify.Result{Check: "client_ca_file", Status: verify.StatusFail,
				Msg: fmt.Sprintf("kubelet's clientCAFile %s is missing on %s", ca, host), Remediation: rerun})
		}
	}
	// resolvConf: the file kubelet gives pods with dnsPolicy Default (and
	// the upstreams of nodelocaldns / CoreDNS). A loopback nameserver there
	// is the pod's own loopback, not the node's resolver.
	rc := kc.ResolvConf
	if rc == "" {
		rc = "/etc/resolv.conf"
	}
	data, err := env.Read(rc)
	switch {
	case err != nil:
		results = append(results, verify.Result{Check: "resolv_conf", Status: verify.StatusFail,
			Msg:         fmt.Sprintf("kubelet's resolvConf %s cannot be read on %s: %v", rc, host, verify.PathErr(err)),
			Remediation: "set kube_resolv_conf to a resolv.conf that exists (on systemd-resolved hosts /run/systemd/resolve/resolv.conf) and re-run cluster.yml"})
	default:
		f.ResolvConfNameservers = ParseResolvConf(data)
		var loop []string
		for _, ns := range f.ResolvConfNameservers {
			if a, err := netip.ParseAddr(ns); err == nil && a.IsLoopback() {
				loop = append(loop, ns)
			}
		}
		switch {
		case len(loop) > 0:
			results = append(results, verify.Result{Check: "resolv_conf", Status: verify.StatusFail,
				Msg: fmt.Sprintf("kubelet's resolvConf %s on %s lists loopback nameserver %s, which pods (and CoreDNS forwarding to it) cannot reach: DNS loops or times out",
					rc, host, strings.Join(loop, ", ")),
				Expected: "no loopback nameserver", Actual: f.ResolvConfNameservers,
				Remediation: "point kube_resolv_conf at the file with the real upstream servers (on systemd-resolved hosts /run/systemd/resolve/resolv.conf, not the 127.0.0.53 stub), or set upstream_dns_servers, then re-run cluster.yml"})
		case len(f.ResolvConfNameservers) == 0:
			results = append(results, verify.Result{Check: "resolv_conf", Status: verify.StatusWarn,
				Msg: fmt.Sprintf("kubelet's resolvConf %s on %s lists no nameserver", rc, host), Remediation: "set upstream_dns_servers or fix the host resolver, then re-run cluster.yml"})
		default:
			results = append(results, verify.Result{Check: "resolv_conf", Status: verify.StatusOK,
				Msg: fmt.Sprintf("resolvConf %s nameservers %s", rc, strings.Join(f.ResolvConfNameservers, ", "))})
		}
	}
	lb, lbf := localhostLBChecks(ctx, env)
	results = append(results, lb...)
	f.LocalhostLB = lbf
	return results, f, nil
}
