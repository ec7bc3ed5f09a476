package cluster

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/layercheck/layercheck/clusterstate"
)

// ReadStateRequest loads the kubeconfig, connects as RunRequest does and
// reads what the lint's cluster rules compare with the inventory (see
// ReadState), and etcd's members with r.EtcdAccess (ReadEtcd). Errors are for bad options, an unreadable kubeconfig or an
// API server that does not answer /version.
func ReadStateRequest(ctx context.Context, r *Request) (*clusterstate.State, error) {
	env, requests, err := r.connect()
	if err != nil {
		return nil, err
	}
	st, err := ReadState(ctx, env)
	if err != nil {
		return nil, err
	}
	st.Requests = requests.Load()
	if len(r.Endpoints) > 0 {
		if st.Etcd, err = ReadEtcd(ctx, &r.EtcdAccess, env.Timeout); err != nil {
			st.Unread = append(st.Unread, "etcd members: "+err.Error())
		}
	}
	return st, nil
}

// ReadState reads the cluster once for the lint's preflight: /version, the
// Nodes, kube-system's control-plane static pods, DaemonSets and
// Deployments, the kubeadm-config, kube-proxy and calico-config
// ConfigMaps and calico's IPPool calico_pool_name (when kube_network_plugin
// is calico or calico-node runs), flannel's kube-flannel-cfg (when it is
// flannel or kube-flannel runs). The number of requests
// does not depend on the number of nodes. What cannot be read (a
// ConfigMap kubespray did not write, a forbidden list) is said in
// State.Unread; only an API server that does not answer is an error.
func ReadState(ctx context.Context, env *Env) (*clusterstate.State, error) {
	if env.Timeout <= 0 {
		env.Timeout = 10 * time.Second
	}
	env.snap.env = env
	st := &clusterstate.State{Server: env.Server, Nodes: []clusterstate.Node{}}
	vctx, cancel := context.WithTimeout(ctx, env.Timeout)
	ver, err := serverVersion(vctx, env)
	cancel()
	if err != nil {
		msg, remedy := serverFailure(env, err)
		return nil, fmt.Errorf("%s; %s", msg, remedy)
	}
	st.ServerVersion = ver
	unread := func(what string, err error) { st.Unread = append(st.Unread, what+": "+apiMessage(err)) }

	if nodes, err := env.snap.Nodes(ctx); err != nil {
		unread("Nodes", err)
	} else {
		for i := range nodes {
			st.Nodes = append(st.Nodes, liveNode(&nodes[i]))
		}
	}
	// kubeadm labels its static pods tier=control-plane and component=<name>
	if l, err := env.Kube.ListPods(ctx, "kube-system", metav1.ListOptions{LabelSelector: "tier=control-plane"}); err != nil {
		unread("control-plane pods in kube-system", err)
	} else {
		for _, p := range l.Items {
			st.ControlPlane = append(st.ControlPlane, staticPod(&p))
		}
		sort.Slice(st.ControlPlane, func(i, j int) bool { return st.ControlPlane[i].Pod < st.ControlPlane[j].Pod })
	}
	if dss, err := env.snap.DaemonSets(ctx); err != nil {
		unread("DaemonSets in kube-system", err)
	} else {
		for _, d := range dss {
			st.DaemonSets = append(st.DaemonSets, d.Name)
		}
	}
	if l, err := env.Kube.ListDeployments(ctx, "kube-system"); err != nil {
		unread("Deployments in kube-system", err)
	} else {
		for _, d := range l.Items {
			st.Deployments = append(st.Deployments, d.Name)
		}
	}
	if cm, err := configMap(ctx, env, "kubeadm-config"); err != nil {
		unread("ConfigMap kube-system/kubeadm-config", err)
	} else if kc, err := parseClusterConfiguration(cm.Data["ClusterConfiguration"]); err != nil {
		st.Unread = append(st.Unread, clusterstate.KubeadmConfigMap+": "+err.Error())
	} else {
		st.KubeadmConfig = kc
	}
	if cm, err := configMap(ctx, env, "kube-proxy"); err != nil {
		unread("ConfigMap kube-system/kube-proxy", err)
	} else {
		var kp struct {
			Mode string `yaml:"mode"`
		}
		if err := yaml.Unmarshal([]byte(cm.Data["config.conf"]), &kp); err != nil {
			st.Unread = append(st.Unread, clusterstate.KubeProxyMap+": "+err.Error())
		} else {
			st.KubeProxyMode = &kp.Mode
		}
	}
	if env.Options.KubeNetworkPlugin == "calico" || slices.Contains(st.DaemonSets, "calico-node") {
		if cm, err := configMap(ctx, env, "calico-config"); err != nil {
			unread("ConfigMap kube-system/calico-config", err)
		} else if b, ok := cm.Data["calico_backend"]; ok {
			st.CalicoBackend = &b
		}
		name := env.Options.CalicoPoolName
		if pool, err := env.Dynamic.Resource(IPPoolGVR).Get(ctx, name, metav1.GetOptions{}); err != nil {
			unread("IPPool "+name+" (crd.projectcalico.org/v1)", err)
		} else {
			p := &clusterstate.IPPool{Name: name}
			p.CIDR, _, _ = unstructured.NestedString(pool.Object, "spec", "cidr")
			p.IPIPMode, _, _ = unstructured.NestedString(pool.Object, "spec", "ipipMode")
			p.VXLANMode, _, _ = unstructured.NestedString(pool.Object, "spec", "vxlanMode")
			p.BlockSize = poolBlockSize(pool)
			st.IPPool = p
		}
	}
	if env.Options.KubeNetworkPlugin == "flannel" || slices.Contains(st.DaemonSets, cniDaemonSets["flannel"]) {
		if cm, err := configMap(ctx, env, FlannelConfigMap); err != nil {
			unread("ConfigMap kube-system/"+FlannelConfigMap, err)
		} else if nc, err := parseFlannelNetConf(cm.Data); err != nil {
			st.Unread = append(st.Unread, "ConfigMap kube-system/"+FlannelConfigMap+": "+err.Error())
		} else {
			st.Flannel = nc
		}
	}
	return st, nil
}

func configMap(ctx context.Context, env *Env, name string) (*corev1.ConfigMap, error) {
	rctx, cancel := context.WithTimeout(ctx, env.Timeout)
	defer cancel()
	return env.Kube.GetConfigMap(rctx, "kube-system", name)
}

// apiMessage is an API error for State.Unread: "not found" for a 404.
func apiMessage(err error) string {
	if apierrors.IsNotFound(err) {
		return "not found"
	}
	return err.Error()
}

func liveNode(n *corev1.Node) clusterstate.Node {
	ln := clusterstate.Node{Name: n.Name, KubeletVersion: n.Status.NodeInfo.KubeletVersion,
		ContainerRuntimeVersion: n.Status.NodeInfo.ContainerRuntimeVersion, PodCIDR: n.Spec.PodCIDR, Labels: n.Labels,
		Unschedulable: n.Spec.Unschedulable}
	ln.ReadyReason = "no Ready condition"
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ln.Ready = c.Status == corev1.ConditionTrue
			ln.ReadyReason = ""
			if !ln.Ready {
				ln.ReadyReason = fmt.Sprintf("Ready %s (%s)", c.Status, c.Reason)
			}
		}
	}
	for _, t := range n.Spec.Taints {
		ln.Taints = append(ln.Taints, TaintString(t))
	}
	return ln
}

// TaintString writes a taint as kubectl taint takes it: key[=value]:effect.
func TaintString(t corev1.Taint) string {
	s := t.Key
	if t.Value != "" {
		s += "=" + t.Value
	}
	return s + ":" + string(t.Effect)
}

func staticPod(p *corev1.Pod) clusterstate.StaticPod {
	sp := clusterstate.StaticPod{Component: p.Labels["component"], Node: p.Spec.NodeName, Pod: p.Name}
	for _, c := range p.Spec.Containers {
		if c.Name == sp.Component || sp.Image == "" {
			sp.Image = c.Image
		}
	}
	sp.Version = imageTag(sp.Image)
	return sp
}

// imageTag is the tag of an image reference ("v1.35.4" of
// registry.k8s.io/kube-apiserver:v1.35.4@sha256:...), "" without one.
func imageTag(image string) string {
	if i := strings.IndexByte(image, '@'); i >= 0 {
		image = image[:i]
	}
	slash := strings.LastIndexByte(image, '/')
	if i := strings.LastIndexByte(image, ':'); i > slash {
		return image[i+1:]
	}
	return ""
}

// parseClusterConfiguration reads the fields kubespray templates from the
// inventory out of kubeadm's ClusterConfiguration (v1beta3 or v1beta4:
// controllerManager.extraArgs is a map in v1beta3, a list of name/value in
// v1beta4).
func parseClusterConfiguration(text string) (*clusterstate.KubeadmConfig, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("no ClusterConfiguration key")
	}
	var cc struct {
		KubernetesVersion string `yaml:"kubernetesVersion"`
		ClusterName       string `yaml:"clusterName"`
		Networking        struct {
			PodSubnet     string `yaml:"podSubnet"`
			ServiceSubnet string `yaml:"serviceSubnet"`
			DNSDomain     string `yaml:"dnsDomain"`
		} `yaml:"networking"`
		ControllerManager struct {
			ExtraArgs yaml.Node `yaml:"extraArgs"`
		} `yaml:"controllerManager"`
	}
	if err := yaml.Unmarshal([]byte(text), &cc); err != nil {
		return nil, err
	}
	kc := &clusterstate.KubeadmConfig{KubernetesVersion: cc.KubernetesVersion, ClusterName: cc.ClusterName,
		PodSubnet: cc.Networking.PodSubnet, ServiceSubnet: cc.Networking.ServiceSubnet, DNSDomain: cc.Networking.DNSDomain}
	args := map[string]string{}
	switch ea := &cc.ControllerManager.ExtraArgs; ea.Kind {
	case yaml.MappingNode:
		_ = ea.Decode(&args)
	case yaml.SequenceNode:
		var l []struct{ Name, Value string }
		if ea.Decode(&l) == nil {
			for _, a := range l {
				args[a.Name] = a.Value
			}
		}
	}
	kc.NodeCIDRMaskSize = args["node-cidr-mask-size-ipv4"]
	if kc.NodeCIDRMaskSize == "" {
		kc.NodeCIDRMaskSize = args["node-cidr-mask-size"]
	}
	return kc, nil
}
