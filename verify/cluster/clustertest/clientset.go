package clustertest

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/layercheck/layercheck/verify/cluster"
)

// Fake is client-go's fake clientset whose discovery answers GET /version
// with KubeVersion, as the kubelets of Healthy run.
func Fake() *fake.Clientset {
	k := fake.NewSimpleClientset() // the field-managed NewClientset costs seconds per test for nothing these tests need
	k.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v" + KubeVersion}
	return k
}

// Clientset is cluster.API on a client-go clientset (its fake, or a real
// one for the harness), so that tests keep client-go's fake while the
// shipped binaries link only the groups cluster.NewAPI knows.
func Clientset(k kubernetes.Interface) cluster.API { return clientset{k} }

type clientset struct{ k kubernetes.Interface }

func (c clientset) ServerVersion(context.Context) (*version.Info, error) {
	return c.k.Discovery().ServerVersion()
}

// RawGet goes through the discovery client's REST transport, which the
// fake clientset has not.
func (c clientset) RawGet(ctx context.Context, path string) ([]byte, error) {
	rc := c.k.Discovery().RESTClient()
	if rc == nil {
		return nil, fmt.Errorf("GET %s: this client has no REST transport", path)
	}
	return rc.Get().AbsPath(path).SetHeader("Accept", "application/json").Do(ctx).Raw()
}

func (c clientset) ListNodes(ctx context.Context) (*corev1.NodeList, error) {
	return c.k.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
}

func (c clientset) ListPods(ctx context.Context, ns string, opts metav1.ListOptions) (*corev1.PodList, error) {
	return c.k.CoreV1().Pods(ns).List(ctx, opts)
}

func (c clientset) CreatePod(ctx context.Context, ns string, p *corev1.Pod) (*corev1.Pod, error) {
	return c.k.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
}

func (c clientset) ListSecrets(ctx context.Context, ns string, opts metav1.ListOptions) (*corev1.SecretList, error) {
	return c.k.CoreV1().Secrets(ns).List(ctx, opts)
}

func (c clientset) CreateService(ctx context.Context, ns string, s *corev1.Service) (*corev1.Service, error) {
	return c.k.CoreV1().Services(ns).Create(ctx, s, metav1.CreateOptions{})
}

func (c clientset) ServiceProxyGet(ctx context.Context, ns, scheme, name, port, path string, params map[string]string) ([]byte, error) {
	return c.k.CoreV1().Services(ns).ProxyGet(scheme, name, port, path, params).DoRaw(ctx)
}

func (c clientset) CreateNamespace(ctx context.Context, n *corev1.Namespace) (*corev1.Namespace, error) {
	return c.k.CoreV1().Namespaces().Create(ctx, n, metav1.CreateOptions{})
}

func (c clientset) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	return c.k.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
}

func (c clientset) ListNamespaces(ctx context.Context, opts metav1.ListOptions) (*corev1.NamespaceList, error) {
	return c.k.CoreV1().Namespaces().List(ctx, opts)
}

func (c clientset) DeleteNamespace(ctx context.Context, name string) error {
	return c.k.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
}

func (c clientset) CreatePVC(ctx context.Context, ns string, p *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error) {
	return c.k.CoreV1().PersistentVolumeClaims(ns).Create(ctx, p, metav1.CreateOptions{})
}

func (c clientset) GetPVC(ctx context.Context, ns, name string) (*corev1.PersistentVolumeClaim, error) {
	return c.k.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
}

func (c clientset) ListDaemonSets(ctx context.Context, ns string) (*appsv1.DaemonSetList, error) {
	return c.k.AppsV1().DaemonSets(ns).List(ctx, metav1.ListOptions{})
}

func (c clientset) ListDeployments(ctx context.Context, ns string) (*appsv1.DeploymentList, error) {
	return c.k.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
}

func (c clientset) GetDeployment(ctx context.Context, ns, name string) (*appsv1.Deployment, error) {
	return c.k.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
}

func (c clientset) CreateDeployment(ctx context.Context, ns string, d *appsv1.Deployment) (*appsv1.Deployment, error) {
	return c.k.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
}

func (c clientset) GetStorageClass(ctx context.Context, name string) (*storagev1.StorageClass, error) {
	return c.k.StorageV1().StorageClasses().Get(ctx, name, metav1.GetOptions{})
}

func (c clientset) GetConfigMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	return c.k.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
}

// ListNetworkPolicies lists the typed objects (the fake clientset has no
// metadata-only lists) and keeps their metadata.
func (c clientset) ListNetworkPolicies(ctx context.Context, ns string, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	l, err := c.k.NetworkingV1().NetworkPolicies(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := &metav1.PartialObjectMetadataList{ListMeta: l.ListMeta}
	for _, p := range l.Items {
		out.Items = append(out.Items, metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}, ObjectMeta: p.ObjectMeta})
	}
	return out, nil
}
