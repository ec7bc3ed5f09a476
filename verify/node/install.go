package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"path"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/layercheck/layercheck/verify"
)

// The install layer reads the records kubespray leaves behind and reports
// drift against the inventory values the role passes in:
// /etc/kubernetes/kubeadm-config.yaml (control-plane hosts; kubespray
// v2.31.0 roles/kubernetes/control-plane/templates/
// kubeadm-config.v1beta4.yaml.j2), /etc/etcd.env (etcd hosts with
// etcd_deployment_type host) and the downloads in local_release_dir.
func init() { register("install", nil, func() Layer { return installLayer{} }) }

type installLayer struct{}

func (installLayer) Name() string { return "install" }

// KubeadmConfig is what the install layer reads of kubeadm-config.yaml, one
// typed struct per document kind.
type KubeadmConfig struct {
	Init      *InitConfiguration      `json:"init_configuration,omitempty"`
	Cluster   *ClusterConfiguration   `json:"cluster_configuration,omitempty"`
	KubeProxy *KubeProxyConfiguration `json:"kube_proxy_configuration,omitempty"`
	Kubelet   *KubeletConfig          `json:"kubelet_configuration,omitempty"`
	// Kinds lists every document's apiVersion/kind in file order.
	Kinds []string `json:"kinds"`
}

// InitConfiguration (kubeadm.k8s.io/v1beta3|v1beta4), the fields used.
type InitConfiguration struct {
	LocalAPIEndpoint struct {
		AdvertiseAddress string `yaml:"advertiseAddress" json:"advertise_address"`
		BindPort         int    `yaml:"bindPort" json:"bind_port"`
	} `yaml:"localAPIEndpoint" json:"local_api_endpoint"`
	NodeRegistration struct {
		Name      string `yaml:"name" json:"name"`
		CRISocket string `yaml:"criSocket" json:"cri_socket"`
	} `yaml:"nodeRegistration" json:"node_registration"`
}

// ClusterConfiguration (kubeadm.k8s.io/v1beta3|v1beta4), the fields used.
type ClusterConfiguration struct {
	KubernetesVersion    string `yaml:"kubernetesVersion" json:"kubernetes_version"`
	ClusterName          string `yaml:"clusterName" json:"cluster_name"`
	ControlPlaneEndpoint string `yaml:"controlPlaneEndpoint" json:"control_plane_endpoint"`
	CertificatesDir      string `yaml:"certificatesDir" json:"certificates_dir"`
	EncryptionAlgorithm  string `yaml:"encryptionAlgorithm" json:"encryption_algorithm,omitempty"`
	Networking           struct {
		DNSDomain     string `yaml:"dnsDomain" json:"dns_domain"`
		ServiceSubnet string `yaml:"serviceSubnet" json:"service_subnet"`
		PodSubnet     string `yaml:"podSubnet" json:"pod_subnet"`
	} `yaml:"networking" json:"networking"`
	Etcd struct {
		External *struct {
			Endpoints []string `yaml:"endpoints" json:"endpoints"`
			CAFile    string   `yaml:"caFile" json:"ca_file"`
			CertFile  string   `yaml:"certFile" json:"cert_file"`
			KeyFile   string   `yaml:"keyFile" json:"key_file"`
		} `yaml:"external" json:"external,omitempty"`
		Local *struct {
			DataDir string `yaml:"dataDir" json:"data_dir"`
		} `yaml:"local" json:"local,omitempty"`
	} `yaml:"etcd" json:"etcd"`
}

// KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1), the fields used.
type KubeProxyConfiguration struct {
	Mode        string `yaml:"mode" json:"mode"`
	ClusterCIDR string `yaml:"clusterCIDR" json:"cluster_cidr"`
}

type yamlHead struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
}

// ParseKubeadmConfig parses the multi-document kubeadm-config.yaml; errors
// name file and line.
func ParseKubeadmConfig(file string, data []byte) (*KubeadmConfig, error) {
	kc := &KubeadmConfig{Kinds: []string{}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for i := 1; ; i++ {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %v", file, i, err)
		}
		var h yamlHead
		if err := n.Decode(&h); err != nil {
			return nil, fmt.Errorf("%s:%d: document %d is not a mapping: %v", file, n.Line, i, err)
		}
		if h.Kind == "" {
			continue
		}
		kc.Kinds = append(kc.Kinds, h.APIVersion+"/"+h.Kind)
		var target any
		switch h.Kind {
		case "InitConfiguration":
			kc.Init = &InitConfiguration{}
			target = kc.Init
		case "ClusterConfiguration":
			kc.Cluster = &ClusterConfiguration{}
			target = kc.Cluster
		case "KubeProxyConfiguration":
			kc.KubeProxy = &KubeProxyConfiguration{}
			target = kc.KubeProxy
		case "KubeletConfiguration":
			kc.Kubelet = &KubeletConfig{}
			target = kc.Kubelet
		default:
			continue
		}
		if err := n.Decode(target); err != nil {
			return nil, fmt.Errorf("%s: %s (line %d): %v", file, h.Kind, n.Line, err)
		}
	}
	return kc, nil
}

// ReleaseFile is one download in local_release_dir.
type ReleaseFile struct {
	Name  string `json:"name"`
	Size  int64  `json:"size"`
	IsDir bool   `json:"is_dir,omitempty"`
}

// InstallFacts are the install layer's facts.
type InstallFacts struct {
	KubeadmConfigPath string         `json:"kubeadm_config_path"`
	KubeadmConfig     *KubeadmConfig `json:"kubeadm_config,omitempty"`
	// Drift lists inventory values that differ from what is installed.
	Drift           []Drift       `json:"drift"`
	EtcdEnvPath     string        `json:"etcd_env_path,omitempty"`
	EtcdEnvPresent  bool          `json:"etcd_env_present"`
	LocalReleaseDir string        `json:"local_release_dir"`
	Releases        []ReleaseFile `json:"releases"`
	Missing         []string      `json:"missing"`
}

// Drift is one inventory value that differs from the node's record.
type Drift struct {
	Variable  string `json:"variable"`
	Inventory string `json:"inventory"`
	Installed string `json:"installed"`
	Where     string `json:"where"`
}

func (installLayer) Check(ctx context.Context, env *Env) ([]verify.Result, any, error) {
	o := env.Options
	host := hostName(env)
	f := &InstallFacts{KubeadmConfigPath: path.Join(o.KubeConfigDir, "kubeadm-config.yaml"),
		LocalReleaseDir: o.LocalReleaseDir, Drift: []Drift{}, Releases: []ReleaseFile{}, Missing: []string{}}
	var results []verify.Result
	rerun := "re-run kubespray's cluster.yml for this host"

	if o.InGroup("kube_control_plane") {
		data, err := env.Read(f.KubeadmConfigPath)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !roleRan(env, roleControlPlane):
			results = append(results, roleNotRun(env, roleControlPlane, "the kubeadm configuration is not compared with the inventory"))
		case errors.Is(err, fs.ErrNotExist):
			f.Missing = append(f.Missing, f.KubeadmConfigPath)
			results = append(results, verify.Result{Check: "kubeadm_config", Status: verify.StatusFail,
				Msg:         fmt.Sprintf("%s is missing on control-plane host %s", f.KubeadmConfigPath, host),
				Remediation: rerun + " (roles/kubernetes/control-plane renders it before kubeadm init)"})
		case err != nil:
			results = append(results, verify.Result{Check: "kubeadm_config", Status: verify.StatusError, Msg: fmt.Sprintf("cannot read %s: %v", f.KubeadmConfigPath, verify.PathErr(err))})
		default:
			kc, err := ParseKubeadmConfig(f.KubeadmConfigPath, data)
			if err != nil {
				results = append(results, verify.Result{Check: "kubeadm_config", Status: verify.StatusFail, Msg: err.Error(),
					Remediation: rerun + " to render it again"})
				break
			}
			f.KubeadmConfig = kc
			results = append(results, kubeadmDrift(env, f, kc)...)
		}
	}

	if o.InGroup("etcd") && o.EtcdDeploymentType == "host" {
		f.EtcdEnvPath = "/etc/etcd.env"
		f.EtcdEnvPresent = env.Exists(f.EtcdEnvPath)
		if !f.EtcdEnvPresent {
			f.Missing = append(f.Missing, f.EtcdEnvPath)
			results = append(results, verify.Result{Check: "etcd_env", Status: verify.StatusFail,
				Msg:         fmt.Sprintf("/etc/etcd.env is missing on etcd host %s (etcd_deployment_type: host)", host),
				Remediation: "re-run kubespray's cluster.yml with --tags etcd (roles/etcd renders /etc/etcd.env)"})
		} else {
			results = append(results, verify.Result{Check: "etcd_env", Status: verify.StatusOK, Msg: "/etc/etcd.env present on " + host})
		}
	}

	// Downloads: information only.
	if o.LocalReleaseDir != "" {
		dir := o.LocalReleaseDir
		ents, err := env.Files().ReadDir(env.Path(dir))
		switch {
		case err == nil:
			for _, e := range ents {
				rf := ReleaseFile{Name: e.Name(), IsDir: e.IsDir()}
				if fi, err := e.Info(); err == nil && !e.IsDir() {
					rf.Size = fi.Size()
				}
				f.Releases = append(f.Releases, rf)
			}
			results = append(results, verify.Result{Check: "local_release_dir", Status: verify.StatusOK,
				Msg: fmt.Sprintf("%d entries in local_release_dir %s on %s", len(f.Releases), dir, host)})
		case errors.Is(err, fs.ErrNotExist):
			results = append(results, verify.Result{Check: "local_release_dir", Status: verify.StatusSkipped,
				Msg: fmt.Sprintf("local_release_dir %s does not exist on %s (it is only a download cache)", dir, host)})
		default:
			results = append(results, verify.Result{Check: "local_release_dir", Status: verify.StatusWarn, Msg: fmt.Sprintf("cannot list %s: %v", dir, verify.PathErr(err))})
		}
	}
	if len(results) == 0 {
		return nil, f, fmt.Errorf("%w: %s is in neither kube_control_plane nor etcd", verify.ErrNotApplicable, host)
	}
	return results, f, nil
}

func kubeadmDrift(env *Env, f *InstallFacts, kc *KubeadmConfig) []verify.Result {
	o := env.Options
	host := hostName(env)
	file := f.KubeadmConfigPath
	var results []verify.Result
	fix := func(v, installed string) string {
		switch v {
		case "kube_version":
			return fmt.Sprintf("set kube_version: %s in the inventory to match the cluster, or upgrade the cluster to the inventory's version with kubespray's upgrade-cluster.yml (cluster.yml does not upgrade)", strings.TrimPrefix(installed, "v"))
		case "kube_proxy_mode":
			return fmt.Sprintf("set kube_proxy_mode: %s in the inventory, or re-run cluster.yml to switch kube-proxy to the inventory's mode (kubespray rewrites the kube-proxy configuration)", installed)
		}
		return fmt.Sprintf("%s cannot change on an installed cluster: set %s: %s back in the inventory (group_vars/k8s_cluster), then re-run cluster.yml", v, v, installed)
	}
	cmp := func(variable, want, got, field string, equal func(a, b string) bool) {
		if want == "" {
			return
		}
		if equal == nil {
			equal = func(a, b string) bool { return a == b }
		}
		where := file + " " + field
		if equal(want, got) {
			results = append(results, verify.Result{Check: "drift:" + variable, Status: verify.StatusOK,
				Msg: fmt.Sprintf("%s %s matches %s", variable, want, where), Expected: want, Actual: got})
			return
		}
		f.Drift = append(f.Drift, Drift{Variable: variable, Inventory: want, Installed: got, Where: where})
		results = append(results, verify.Result{Check: "drift:" + variable, Status: verify.StatusFail,
			Msg:      fmt.Sprintf("%s is %q in the inventory but %q on %s (%s)", variable, want, got, host, where),
			Expected: want, Actual: got, Remediation: fix(variable, got)})
	}
	if kc.Cluster == nil {
		results = append(results, verify.Result{Check: "kubeadm_config", Status: verify.StatusFail,
			Msg:         fmt.Sprintf("%s on %s has no ClusterConfiguration document", file, host),
			Remediation: "re-run kubespray's cluster.yml for this host to render it again"})
	} else {
		c := kc.Cluster
		cmp("kube_version", o.KubeVersion, c.KubernetesVersion, "ClusterConfiguration.kubernetesVersion", func(a, b string) bool {
			return strings.TrimPrefix(a, "v") == strings.TrimPrefix(b, "v")
		})
		if o.KubeVersion == "" && c.KubernetesVersion != "" {
			// Nothing to compare, but the install record says which
			// Kubernetes kubespray last installed or upgraded to here.
			results = append(results, verify.Result{Check: "kubernetes_version", Status: verify.StatusOK,
				Msg:    fmt.Sprintf("%s on %s installs Kubernetes %s (ClusterConfiguration.kubernetesVersion; kube_version is not set in the inventory: the kubespray release's default)", file, host, c.KubernetesVersion),
				Actual: c.KubernetesVersion})
		}
		cmp("kube_pods_subnet", o.KubePodsSubnet, c.Networking.PodSubnet, "ClusterConfiguration.networking.podSubnet", sameCIDRs)
		cmp("kube_service_addresses", o.KubeServiceAddresses, c.Networking.ServiceSubnet, "ClusterConfiguration.networking.serviceSubnet", sameCIDRs)
		cmp("dns_domain", o.DNSDomain, c.Networking.DNSDomain, "ClusterConfiguration.networking.dnsDomain", nil)
		cmp("kube_cert_dir", o.KubeCertDir, c.CertificatesDir, "ClusterConfiguration.certificatesDir", func(a, b string) bool {
			return path.Clean(a) == path.Clean(b)
		})
		if o.EtcdDeploymentType != "kubeadm" && c.Etcd.External == nil {
			results = append(results, verify.Result{Check: "etcd_external", Status: verify.StatusFail,
				Msg:         fmt.Sprintf("etcd_deployment_type is %s but %s on %s has no etcd.external endpoints", o.EtcdDeploymentType, file, host),
				Remediation: "set etcd_deployment_type to match the installed cluster (kubeadm) or re-run cluster.yml"})
		}
	}
	if kc.KubeProxy != nil {
		cmp("kube_proxy_mode", o.KubeProxyMode, kc.KubeProxy.Mode, "KubeProxyConfiguration.mode", nil)
	}
	return results
}

// sameCIDRs compares comma-separated CIDR lists (kubespray's dual-stack
// values join IPv4 and IPv6 with a comma) by their masked prefixes.
func sameCIDRs(a, b string) bool {
	pa, pb := strings.Split(a, ","), strings.Split(b, ",")
	if len(pa) != len(pb) {
		return false
	}
	for i := range pa {
		x, err1 := netip.ParsePrefix(strings.TrimSpace(pa[i]))
		y, err2 := netip.ParsePrefix(strings.TrimSpace(pb[i]))
		if err1 != nil || err2 != nil {
			if strings.TrimSpace(pa[i]) != strings.TrimSpace(pb[i]) {
				return false
			}
			continue
		}
		if x.Masked() != y.Masked() {
			return false
		}
	}
	return true
}
