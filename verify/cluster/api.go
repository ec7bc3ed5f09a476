package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
)

// API is every call the cluster layers make to the API server with typed
// objects: the lists the Snapshot shares, and the gets, creates and
// deletes of the probes. The dynamic and metadata clients do the rest
// (calico's IPPool, the APIService, helm's release Secrets).
//
// It stands in for client-go's kubernetes.Interface, whose scheme
// registers every API group of k8s.io/api and would weigh more than the
// rest of cluster_facts: NewAPI implements it on rest.RESTClients that
// know only core/v1, apps/v1 and storage/v1. Errors are client-go's (API
// status errors, *url.Error), as kubernetes.Interface returns them.
type API interface {
	// ServerVersion is GET /version: the server's version.Info.
	ServerVersion(ctx context.Context) (*version.Info, error)
	// RawGet GETs an absolute path and returns the body; Accept is JSON.
	RawGet(ctx context.Context, path string) ([]byte, error)

	// ListNodes lists the Nodes. A protobuf answer keeps only the fields
	// the layers read (decodeNodeList); others are empty.
	ListNodes(ctx context.Context) (*corev1.NodeList, error)
	// ListPods lists the pods of namespace ns matching opts' selectors.
	ListPods(ctx context.Context, ns string, opts metav1.ListOptions) (*corev1.PodList, error)
	CreatePod(ctx context.Context, ns string, p *corev1.Pod) (*corev1.Pod, error)
	// ListSecrets lists the Secrets of ns ("" for all) matching opts.
	ListSecrets(ctx context.Context, ns string, opts metav1.ListOptions) (*corev1.SecretList, error)
	CreateService(ctx context.Context, ns string, s *corev1.Service) (*corev1.Service, error)
	// ServiceProxyGet is GET .../services/<scheme>:<name>:<port>/proxy/<path>
	// with query params through the API server's service proxy; on an
	// error status the body comes with the error, as rest.Request.DoRaw
	// returns it.
	ServiceProxyGet(ctx context.Context, ns, scheme, name, port, path string, params map[string]string) ([]byte, error)
	CreateNamespace(ctx context.Context, n *corev1.Namespace) (*corev1.Namespace, error)
	GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error)
	ListNamespaces(ctx context.Context, opts metav1.ListOptions) (*corev1.NamespaceList, error)
	// DeleteNamespace deletes with default DeleteOptions (no propagation
	// policy).
	DeleteNamespace(ctx context.Context, name string) error
	CreatePVC(ctx context.Context, ns string, c *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error)
	GetPVC(ctx context.Context, ns, name string) (*corev1.PersistentVolumeClaim, error)

	// ListDaemonSets and ListDeployments list namespace ns ("" for all).
	ListDaemonSets(ctx context.Context, ns string) (*appsv1.DaemonSetList, error)
	ListDeployments(ctx context.Context, ns string) (*appsv1.DeploymentList, error)
	GetDeployment(ctx context.Context, ns, name string) (*appsv1.Deployment, error)
	CreateDeployment(ctx context.Context, ns string, d *appsv1.Deployment) (*appsv1.Deployment, error)

	GetStorageClass(ctx context.Context, name string) (*storagev1.StorageClass, error)
	// GetConfigMap gets ConfigMap ns/name (kubeadm-config, kube-proxy,
	// calico-config for the preflight).
	GetConfigMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error)

	// ListNetworkPolicies lists the metadata of the NetworkPolicies of ns
	// ("" for all) matching opts: a Limit returns the first page and, from
	// a real API server, the count of the rest. Metadata only, so that
	// networking/v1's types are not linked for a count and a name.
	ListNetworkPolicies(ctx context.Context, ns string, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error)
}

// scheme registers only the groups API uses (and meta/v1's options and
// Status, unversioned as client-go's kubernetes scheme has them).
var (
	scheme         = runtime.NewScheme()
	codecs         = serializer.NewCodecFactory(scheme)
	parameterCodec = runtime.NewParameterCodec(scheme)
)

func init() {
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	utilruntime.Must(corev1.AddToScheme(scheme))
	utilruntime.Must(appsv1.AddToScheme(scheme))
	utilruntime.Must(storagev1.AddToScheme(scheme))
}

// restAPI is API on one REST client per group version, all sharing one
// HTTP client (one connection pool), as a kubernetes.Clientset does.
type restAPI struct {
	core, apps, storage *rest.RESTClient
}

// NewAPI builds the API client for cfg as client-go's typed clients do
// for these groups (cfg's content type, default: JSON; the user agent of
// kubectl-like clients).
func NewAPI(cfg *rest.Config) (API, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	client := func(gv schema.GroupVersion, apiPath string) (*rest.RESTClient, error) {
		c := *cfg
		c.GroupVersion = &gv
		c.APIPath = apiPath
		c.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(scheme, codecs).WithoutConversion()
		if c.UserAgent == "" {
			c.UserAgent = rest.DefaultKubernetesUserAgent()
		}
		return rest.RESTClientForConfigAndClient(&c, hc)
	}
	a := &restAPI{}
	if a.core, err = client(corev1.SchemeGroupVersion, "/api"); err != nil {
		return nil, err
	}
	if a.apps, err = client(appsv1.SchemeGroupVersion, "/apis"); err != nil {
		return nil, err
	}
	if a.storage, err = client(storagev1.SchemeGroupVersion, "/apis"); err != nil {
		return nil, err
	}
	return a, nil
}

func get[T runtime.Object](ctx context.Context, rc *rest.RESTClient, resource, ns, name string, into T) (T, error) {
	err := rc.Get().NamespaceIfScoped(ns, ns != "").Resource(resource).Name(name).Do(ctx).Into(into)
	return into, err
}

func list[T runtime.Object](ctx context.Context, rc *rest.RESTClient, resource, ns string, opts metav1.ListOptions, into T) (T, error) {
	err := rc.Get().NamespaceIfScoped(ns, ns != "").Resource(resource).VersionedParams(&opts, parameterCodec).Do(ctx).Into(into)
	return into, err
}

func create[T runtime.Object](ctx context.Context, rc *rest.RESTClient, resource, ns string, obj, into T) (T, error) {
	err := rc.Post().NamespaceIfScoped(ns, ns != "").Resource(resource).Body(obj).Do(ctx).Into(into)
	return into, err
}

func (a *restAPI) ServerVersion(ctx context.Context) (*version.Info, error) {
	body, err := a.core.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("unable to parse the server version: %v", err)
	}
	return &info, nil
}

func (a *restAPI) RawGet(ctx context.Context, path string) ([]byte, error) {
	// Aggregated APIs (metrics.k8s.io) answer protobuf when asked for it;
	// the callers decode JSON.
	return a.core.Get().AbsPath(path).SetHeader("Accept", "application/json").Do(ctx).Raw()
}

// ListNodes decodes a protobuf answer with decodeNodeList (the fields the
// layers read, see there), any other as client-go would.
func (a *restAPI) ListNodes(ctx context.Context) (*corev1.NodeList, error) {
	res := a.core.Get().Resource("nodes").Do(ctx)
	if err := res.Error(); err != nil {
		return nil, err
	}
	body, _ := res.Raw()
	items, err := decodeNodeList(body)
	if errors.Is(err, errNotNodeList) {
		l := &corev1.NodeList{}
		return l, res.Into(l)
	}
	if err != nil {
		return nil, err
	}
	return &corev1.NodeList{Items: items}, nil
}

func (a *restAPI) ListPods(ctx context.Context, ns string, opts metav1.ListOptions) (*corev1.PodList, error) {
	return list(ctx, a.core, "pods", ns, opts, &corev1.PodList{})
}

func (a *restAPI) CreatePod(ctx context.Context, ns string, p *corev1.Pod) (*corev1.Pod, error) {
	return create(ctx, a.core, "pods", ns, p, &corev1.Pod{})
}

func (a *restAPI) ListSecrets(ctx context.Context, ns string, opts metav1.ListOptions) (*corev1.SecretList, error) {
	return list(ctx, a.core, "secrets", ns, opts, &corev1.SecretList{})
}

func (a *restAPI) CreateService(ctx context.Context, ns string, s *corev1.Service) (*corev1.Service, error) {
	return create(ctx, a.core, "services", ns, s, &corev1.Service{})
}

func (a *restAPI) ServiceProxyGet(ctx context.Context, ns, scheme, name, port, path string, params map[string]string) ([]byte, error) {
	req := a.core.Get().Namespace(ns).Resource("services").SubResource("proxy").
		Name(utilnet.JoinSchemeNamePort(scheme, name, port)).Suffix(path)
	for k, v := range params {
		req = req.Param(k, v)
	}
	return req.DoRaw(ctx)
}

func (a *restAPI) CreateNamespace(ctx context.Context, n *corev1.Namespace) (*corev1.Namespace, error) {
	return create(ctx, a.core, "namespaces", "", n, &corev1.Namespace{})
}

func (a *restAPI) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	return get(ctx, a.core, "namespaces", "", name, &corev1.Namespace{})
}

func (a *restAPI) ListNamespaces(ctx context.Context, opts metav1.ListOptions) (*corev1.NamespaceList, error) {
	return list(ctx, a.core, "namespaces", "", opts, &corev1.NamespaceList{})
}

func (a *restAPI) DeleteNamespace(ctx context.Context, name string) error {
	return a.core.Delete().Resource("namespaces").Name(name).Body(&metav1.DeleteOptions{}).Do(ctx).Error()
}

func (a *restAPI) CreatePVC(ctx context.Context, ns string, c *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error) {
	return create(ctx, a.core, "persistentvolumeclaims", ns, c, &corev1.PersistentVolumeClaim{})
}

func (a *restAPI) GetPVC(ctx context.Context, ns, name string) (*corev1.PersistentVolumeClaim, error) {
	return get(ctx, a.core, "persistentvolumeclaims", ns, name, &corev1.PersistentVolumeClaim{})
}

func (a *restAPI) ListDaemonSets(ctx context.Context, ns string) (*appsv1.DaemonSetList, error) {
	return list(ctx, a.apps, "daemonsets", ns, metav1.ListOptions{}, &appsv1.DaemonSetList{})
}

func (a *restAPI) ListDeployments(ctx context.Context, ns string) (*appsv1.DeploymentList, error) {
	return list(ctx, a.apps, "deployments", ns, metav1.ListOptions{}, &appsv1.DeploymentList{})
}

func (a *restAPI) GetDeployment(ctx context.Context, ns, name string) (*appsv1.Deployment, error) {
	return get(ctx, a.apps, "deployments", ns, name, &appsv1.Deployment{})
}

func (a *restAPI) CreateDeployment(ctx context.Context, ns string, d *appsv1.Deployment) (*appsv1.Deployment, error) {
	return create(ctx, a.apps, "deployments", ns, d, &appsv1.Deployment{})
}

func (a *restAPI) GetStorageClass(ctx context.Context, name string) (*storagev1.StorageClass, error) {
	return get(ctx, a.storage, "storageclasses", "", name, &storagev1.StorageClass{})
}

func (a *restAPI) GetConfigMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	return get(ctx, a.core, "configmaps", ns, name, &corev1.ConfigMap{})
}

// ListNetworkPolicies asks for a PartialObjectMetadataList as client-go's
// metadata client does; a server that answers the whole list instead
// decodes as well (each item has its metadata).
func (a *restAPI) ListNetworkPolicies(ctx context.Context, ns string, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	path := "/apis/networking.k8s.io/v1/networkpolicies"
	if ns != "" {
		path = "/apis/networking.k8s.io/v1/namespaces/" + ns + "/networkpolicies"
	}
	body, err := a.core.Get().AbsPath(path).VersionedParams(&opts, parameterCodec).
		SetHeader("Accept", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var l metav1.PartialObjectMetadataList
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, fmt.Errorf("GET %s: unable to decode the list: %v", path, err)
	}
	return &l, nil
}
