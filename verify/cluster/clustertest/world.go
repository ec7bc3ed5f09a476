// Package clustertest builds the API objects of a kubespray cluster as its
// kubelets and controllers would leave them (Nodes Ready, kube-system pods
// Running and Ready, DaemonSet and Deployment status), for the cluster
// layers' tests: Apply writes them through any client (client-go's fake
// clientset or a real kube-apiserver), creating each object and then
// writing its status with UpdateStatus as a kubelet or controller does.
package clustertest

import (
	"context"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/layercheck/layercheck/verify/cluster"
)

// KubeVersion is the Kubernetes of the worlds built without kube_version
// (kubespray v2.31.0's default): their kubelets', and the fake API
// server's (Fake), as test/clusterverify's kube-apiserver is.
const KubeVersion = "1.35.4"

// World is a cluster's objects.
type World struct {
	Nodes       []*corev1.Node
	Pods        []*corev1.Pod
	DaemonSets  []*appsv1.DaemonSet
	Deployments []*appsv1.Deployment
	// StorageClasses are cluster-scoped (local-path when enabled).
	StorageClasses []*storagev1.StorageClass
	// ConfigMaps are the network plugin's (flannel's kube-flannel-cfg).
	ConfigMaps []*corev1.ConfigMap
	// NetworkPolicies are none in Healthy; tests add some.
	NetworkPolicies []*networkingv1.NetworkPolicy
}

func ready() []corev1.PodCondition {
	return []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.ContainersReady, Status: corev1.ConditionTrue}}
}

// Healthy is the cluster a correct cluster.yml leaves for o (Defaults
// applied): every k8s_cluster host a Ready Node with kube_version's
// kubelet and the taints its groups imply, the control plane's static
// pods, kube-proxy, calico-node (or kube-flannel and its kube-flannel-cfg
// ConfigMap) and nodelocaldns on every node, calico-kube-controllers,
// coredns (as many replicas as dns-autoscaler
// gives for cpus cores per node), dns-autoscaler and, when enabled,
// metrics-server and local-path-provisioner.
func Healthy(o cluster.Options, cpus int64) *World {
	o.Defaults()
	if o.KubeVersion == "" {
		o.KubeVersion = KubeVersion
	}
	w := &World{}
	for i, h := range o.K8sCluster() {
		n := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: h, Labels: map[string]string{"kubernetes.io/hostname": h, "kubernetes.io/os": "linux"}},
			Status: corev1.NodeStatus{
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"}},
				NodeInfo:    corev1.NodeSystemInfo{KubeletVersion: "v" + o.KubeVersion, KubeProxyVersion: "v" + o.KubeVersion},
				Capacity:    corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(cpus, resource.DecimalSI), corev1.ResourcePods: resource.MustParse("110")},
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(cpus, resource.DecimalSI), corev1.ResourcePods: resource.MustParse("110")},
				Addresses:   []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", i/250, i%250+1)}},
			},
		}
		inCP, inNode := contains(o.KubeControlPlane, h), contains(o.KubeNode, h)
		if inCP {
			n.Labels["node-role.kubernetes.io/control-plane"] = ""
			if !inNode {
				n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule})
			}
		}
		if o.KubeNetworkPlugin == "flannel" {
			// what flanneld writes on its Node at start (kube subnet manager)
			n.Annotations = map[string]string{cluster.FlannelBackendTypeAnnotation: o.FlannelBackendType, "flannel.alpha.coreos.com/kube-subnet-manager": "true"}
			if o.FlannelBackendType == "vxlan" {
				n.Annotations[cluster.FlannelBackendDataAnnotation] = fmt.Sprintf(`{"VNI":%d,"VtepMAC":"0a:58:0a:00:%02x:01"}`, *o.FlannelVXLANVNI, i%256)
			}
		}
		if contains(o.CalicoRR, h) && !inCP && !inNode {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "node-role.kubernetes.io/calico-rr", Effect: corev1.TaintEffectNoSchedule})
		}
		w.Nodes = append(w.Nodes, n)
	}
	for _, h := range o.KubeControlPlane {
		for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
			w.Pods = append(w.Pods, StaticPod(c, h))
		}
	}
	if o.EtcdDeploymentType == "kubeadm" {
		for _, h := range o.Etcd {
			w.Pods = append(w.Pods, StaticPod("etcd", h))
		}
	}
	dss := []string{"kube-proxy"}
	switch o.KubeNetworkPlugin {
	case "calico":
		dss = append(dss, "calico-node")
	case "flannel":
		dss = append(dss, "kube-flannel")
		w.ConfigMaps = append(w.ConfigMaps, FlannelConfigMap(o))
	}
	if (o.EnableNodelocaldns == nil || *o.EnableNodelocaldns) && (o.DNSMode == "coredns" || o.DNSMode == "coredns_dual" || o.DNSMode == "manual") {
		dss = append(dss, "nodelocaldns")
	}
	for _, name := range dss {
		w.AddDaemonSet(name, o.K8sCluster())
	}
	if o.KubeNetworkPlugin == "calico" {
		w.AddDeployment("kube-system", "calico-kube-controllers", 1)
	}
	if o.DNSMode == "coredns" || o.DNSMode == "coredns_dual" {
		replicas := o.CorednsReplicas
		if o.EnableDNSAutoscaler == nil || *o.EnableDNSAutoscaler {
			replicas = cluster.AutoscaledCoreDNS(&o, len(o.K8sCluster()), cpus*int64(len(o.K8sCluster())))
			w.AddDeployment("kube-system", "dns-autoscaler", 1)
		}
		w.AddDeployment("kube-system", "coredns", int32(replicas))
		if o.DNSMode == "coredns_dual" {
			w.AddDeployment("kube-system", "coredns-secondary", int32(replicas))
		}
	}
	if o.MetricsServerEnabled {
		w.AddDeployment("kube-system", "metrics-server", 1)
	}
	if o.LocalPathProvisionerEnabled {
		w.AddDeployment(o.LocalPathProvisionerNamespace, "local-path-provisioner", 1)
		// kubespray v2.31.0 roles/kubernetes-apps/external_provisioner/
		// local_path_provisioner/templates/local-path-storage-sc.yml.j2
		isDefault := "true"
		if o.LocalPathProvisionerIsDefault != nil && !*o.LocalPathProvisionerIsDefault {
			isDefault = "false"
		}
		wait := storagev1.VolumeBindingWaitForFirstConsumer
		reclaim := corev1.PersistentVolumeReclaimDelete
		w.StorageClasses = append(w.StorageClasses, &storagev1.StorageClass{
			ObjectMeta:  metav1.ObjectMeta{Name: o.LocalPathProvisionerStorageClass, Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": isDefault}},
			Provisioner: "rancher.io/local-path", VolumeBindingMode: &wait, ReclaimPolicy: &reclaim,
		})
	}
	return w
}

// FlannelConfigMap is kube-system/kube-flannel-cfg as kubespray v2.31.0
// renders it for o (Defaults applied) on an IPv4 cluster: roles/
// network_plugin/flannel/templates/cni-flannel.yml.j2.
func FlannelConfigMap(o cluster.Options) *corev1.ConfigMap {
	o.Defaults()
	// Byte for byte as Ansible renders it (trim_blocks): another backend
	// leaves the closing brace on the Type line.
	backend := fmt.Sprintf("\"Type\": %q    ", o.FlannelBackendType)
	if o.FlannelBackendType == "vxlan" {
		backend = fmt.Sprintf("\"Type\": \"vxlan\",\n    \"VNI\": %d,\n    \"Port\": %d,\n    \"DirectRouting\": %t\n", *o.FlannelVXLANVNI, *o.FlannelVXLANPort, o.FlannelVXLANDirectRouting)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: cluster.FlannelConfigMap, Namespace: "kube-system", Labels: map[string]string{"tier": "node", "app": "flannel"}},
		Data: map[string]string{
			"cni-conf.json": `{
  "name": "cbr0",
  "cniVersion": "0.3.1",
  "plugins": [
    {
      "type": "flannel",
      "delegate": {
        "hairpinMode": true,
        "isDefaultGateway": true
      }
    },
    {
      "type": "portmap",
      "capabilities": {
        "portMappings": true
      }
    }
  ]
}
`,
			cluster.FlannelNetConfKey: "{\n  \"Network\": \"" + o.KubePodsSubnet + "\",\n  \"EnableIPv4\": true,\n  \"Backend\": {\n    " + backend + "  }\n}\n",
		},
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// StaticPod is the mirror pod of a kubelet static pod <component>-<node>.
func StaticPod(component, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: component + "-" + node, Namespace: "kube-system",
			Labels: map[string]string{"component": component, "tier": "control-plane"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: component, Image: "registry.k8s.io/" + component}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: ready(), PodIP: "10.0.0.1",
			ContainerStatuses: []corev1.ContainerStatus{{Name: component, Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
	}
}

// AddDaemonSet adds kube-system DaemonSet name with a Running, Ready pod
// on each of nodes and its status counting them.
func (w *World) AddDaemonSet(name string, nodes []string) {
	labels := map[string]string{"k8s-app": name}
	n := int32(len(nodes))
	w.DaemonSets = append(w.DaemonSets, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: labels},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "example.invalid/" + name}}}}},
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: n, CurrentNumberScheduled: n, NumberReady: n, NumberAvailable: n, UpdatedNumberScheduled: n},
	})
	// The DaemonSet controller labels its pods with the revision of their
	// template (and the template's generation).
	podLabels := map[string]string{"k8s-app": name, "controller-revision-hash": "5d4b7c9f8", "pod-template-generation": "1"}
	for i, node := range nodes {
		w.Pods = append(w.Pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%05d", name, i), Namespace: "kube-system", Labels: podLabels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: name, UID: types.UID("ds-" + name)}}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: name, Image: "example.invalid/" + name}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: ready(), PodIP: "10.0.0.2",
				ContainerStatuses: []corev1.ContainerStatus{{Name: name, Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
		})
	}
}

// AddDeployment adds Deployment ns/name with replicas all ready.
func (w *World) AddDeployment(ns, name string, replicas int32) {
	labels := map[string]string{"k8s-app": name}
	w.Deployments = append(w.Deployments, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "example.invalid/" + name}}}}},
		Status: appsv1.DeploymentStatus{Replicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas, UpdatedReplicas: replicas, ObservedGeneration: 1},
	})
}

// Node returns the node named name (nil if none).
func (w *World) Node(name string) *corev1.Node {
	for _, n := range w.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Apply creates every object (namespaces as needed) and writes its status
// with UpdateStatus, with up to parallel requests in flight.
func (w *World) Apply(ctx context.Context, kube kubernetes.Interface, parallel int) error {
	if parallel < 1 {
		parallel = 1
	}
	nss := map[string]bool{}
	for _, d := range w.Deployments {
		nss[d.Namespace] = true
	}
	for _, c := range w.ConfigMaps {
		nss[c.Namespace] = true
	}
	for _, p := range w.NetworkPolicies {
		nss[p.Namespace] = true
	}
	for ns := range nss {
		if ns == "kube-system" || ns == "default" {
			continue
		}
		_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	var jobs []func() error
	for _, sc := range w.StorageClasses {
		jobs = append(jobs, func() error {
			_, err := kube.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{})
			return wrap(err, "storageclass "+sc.Name)
		})
	}
	for _, c := range w.ConfigMaps {
		jobs = append(jobs, func() error {
			_, err := kube.CoreV1().ConfigMaps(c.Namespace).Create(ctx, c, metav1.CreateOptions{})
			return wrap(err, "configmap "+c.Namespace+"/"+c.Name)
		})
	}
	for _, p := range w.NetworkPolicies {
		jobs = append(jobs, func() error {
			_, err := kube.NetworkingV1().NetworkPolicies(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
			return wrap(err, "networkpolicy "+p.Namespace+"/"+p.Name)
		})
	}
	for _, n := range w.Nodes {
		jobs = append(jobs, func() error {
			c, err := kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("create node %s: %w", n.Name, err)
			}
			c.Status = n.Status
			_, err = kube.CoreV1().Nodes().UpdateStatus(ctx, c, metav1.UpdateOptions{})
			return wrap(err, "node status "+n.Name)
		})
	}
	for _, p := range w.Pods {
		jobs = append(jobs, func() error {
			c, err := kube.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("create pod %s: %w", p.Name, err)
			}
			c.Status = p.Status
			_, err = kube.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{})
			return wrap(err, "pod status "+p.Name)
		})
	}
	for _, d := range w.DaemonSets {
		jobs = append(jobs, func() error {
			c, err := kube.AppsV1().DaemonSets(d.Namespace).Create(ctx, d, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("create daemonset %s: %w", d.Name, err)
			}
			c.Status = d.Status
			c.Status.ObservedGeneration = c.Generation
			_, err = kube.AppsV1().DaemonSets(d.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{})
			return wrap(err, "daemonset status "+d.Name)
		})
	}
	for _, d := range w.Deployments {
		jobs = append(jobs, func() error {
			c, err := kube.AppsV1().Deployments(d.Namespace).Create(ctx, d, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("create deployment %s/%s: %w", d.Namespace, d.Name, err)
			}
			c.Status = d.Status
			c.Status.ObservedGeneration = c.Generation
			_, err = kube.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{})
			return wrap(err, "deployment status "+d.Name)
		})
	}
	sem := make(chan struct{}, parallel)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for _, j := range jobs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := j(); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

func wrap(err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
