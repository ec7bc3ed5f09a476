package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/layercheck/layercheck/verify/cluster"
)

// richNode is a Node as a kubelet and the control plane leave it: every
// field the layers read, and the bulk they do not (managedFields, images,
// addresses, allocatable, the pressure conditions, daemon endpoints,
// volumes).
func richNode(name string) corev1.Node {
	t := metav1.NewTime(time.Unix(1796119200, 0)) // local, as decoded
	labels := map[string]string{"kubernetes.io/hostname": name, "node-role.kubernetes.io/control-plane": ""}
	for _, k := range []string{"beta.kubernetes.io/arch", "beta.kubernetes.io/os", "kubernetes.io/arch", "kubernetes.io/os", "node.kubernetes.io/exclude-from-external-load-balancers"} {
		labels[k] = "amd64"
	}
	var images []corev1.ContainerImage
	for i := range 30 {
		img := fmt.Sprintf("registry.k8s.io/image-%d", i)
		images = append(images, corev1.ContainerImage{Names: []string{img + "@sha256:" + strings.Repeat("0123456789abcdef", 4), img + ":v1.35.4"}, SizeBytes: int64(i+1) << 20})
	}
	managed := func(manager, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			Time: &t, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	condition := func(typ corev1.NodeConditionType, status corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: typ, Status: status, Reason: reason, Message: msg, LastHeartbeatTime: t, LastTransitionTime: t}
	}
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("0d6a1c1e-" + name), ResourceVersion: "4242", CreationTimestamp: t,
			Labels: labels,
			Annotations: map[string]string{"flannel.alpha.coreos.com/backend-type": "vxlan",
				"flannel.alpha.coreos.com/backend-data":                  `{"VNI":1,"VtepMAC":"aa:bb:cc:dd:ee:ff"}`,
				"kubeadm.alpha.kubernetes.io/cri-socket":                 "unix:///var/run/containerd/containerd.sock",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				managed("kubelet", `{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:lastHeartbeatTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}},"f:images":{},"f:nodeInfo":{"f:bootID":{}}}}`),
				managed("kube-controller-manager", `{"f:spec":{"f:podCIDR":{},"f:podCIDRs":{".":{},"v:\"10.233.64.0/24\"":{}}}}`),
				managed("kubeadm", `{"f:metadata":{"f:annotations":{"f:kubeadm.alpha.kubernetes.io/cri-socket":{}}}}`)},
			Finalizers: []string{"example.com/keep"}},
		Spec: corev1.NodeSpec{PodCIDR: "10.233.64.0/24", PodCIDRs: []string{"10.233.64.0/24"}, Unschedulable: true, ProviderID: "kind://" + name,
			Taints: []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &t}}},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
				corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3800m"), corev1.ResourceMemory: resource.MustParse("7Gi")},
			Phase:       corev1.NodeRunning,
			Conditions: []corev1.NodeCondition{
				condition("NetworkUnavailable", corev1.ConditionFalse, "CalicoIsUp", "Calico is running on this node"),
				condition(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				condition(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				condition(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				condition(corev1.NodeReady, corev1.ConditionFalse, "KubeletNotReady", "container runtime network not ready"),
			},
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.7"}, {Type: corev1.NodeHostName, Address: name}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.35.4", KubeProxyVersion: "v1.35.4", ContainerRuntimeVersion: "containerd://2.2.3",
				OSImage: "Ubuntu 24.04", KernelVersion: "6.8.0", Architecture: "amd64", OperatingSystem: "linux", MachineID: "m", SystemUUID: "s", BootID: "b"},
			Images:          images,
			VolumesInUse:    []corev1.UniqueVolumeName{"kubernetes.io/csi/x"},
			VolumesAttached: []corev1.AttachedVolume{{Name: "kubernetes.io/csi/x", DevicePath: "/dev/sdb"}},
		},
	}
}

// kept is n with only what ListNodes keeps from a protobuf answer.
func kept(n corev1.Node) corev1.Node {
	k := corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels},
		Spec:       n.Spec,
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: n.Status.NodeInfo.KubeletVersion,
			ContainerRuntimeVersion: n.Status.NodeInfo.ContainerRuntimeVersion}},
	}
	for _, a := range []string{cluster.FlannelBackendTypeAnnotation, cluster.FlannelBackendDataAnnotation} {
		if v, ok := n.Annotations[a]; ok {
			if k.Annotations == nil {
				k.Annotations = map[string]string{}
			}
			k.Annotations[a] = v
		}
	}
	if q, ok := n.Status.Capacity[corev1.ResourceCPU]; ok {
		k.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: q}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			k.Status.Conditions = append(k.Status.Conditions, c)
		}
	}
	return k
}

var nodeCodecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err)
	}
	metav1.AddToGroupVersion(s, corev1.SchemeGroupVersion)
	return serializer.NewCodecFactory(s)
}()

// encode writes obj in media type mt ("application/json" or
// "application/vnd.kubernetes.protobuf") as a v1 API server does.
func encode(t testing.TB, mt string, obj runtime.Object) []byte {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(nodeCodecs.SupportedMediaTypes(), mt)
	require.True(t, ok, mt)
	b, err := runtime.Encode(nodeCodecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion), obj)
	require.NoError(t, err)
	return b
}

// nodeServer answers GET /api/v1/nodes with body in media type mt and
// status code; it returns an API client that prefers protobuf, as
// RunRequest builds it.
func nodeServer(t *testing.T, code int, mt string, body []byte) cluster.API {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/nodes" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", mt)
		w.WriteHeader(code)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	api, err := cluster.NewAPI(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/vnd.kubernetes.protobuf",
		AcceptContentTypes: "application/vnd.kubernetes.protobuf,application/json"}})
	require.NoError(t, err)
	return api
}

func TestListNodesProtobufKeepsWhatTheLayersRead(t *testing.T) {
	list := &corev1.NodeList{ListMeta: metav1.ListMeta{ResourceVersion: "4242"}, Items: []corev1.Node{richNode("node1"), richNode("node2"), {}}}
	list.Items[2].Name = "bare"
	l, err := nodeServer(t, 200, "application/vnd.kubernetes.protobuf", encode(t, "application/vnd.kubernetes.protobuf", list)).ListNodes(context.Background())
	require.NoError(t, err)
	require.Len(t, l.Items, 3)
	for i, n := range list.Items {
		assert.Equal(t, kept(n), l.Items[i], n.Name)
	}
	// what the layers read, spelled out
	n := l.Items[0]
	assert.Equal(t, "node1", n.Name)
	assert.Equal(t, map[string]string{"flannel.alpha.coreos.com/backend-type": "vxlan",
		"flannel.alpha.coreos.com/backend-data": `{"VNI":1,"VtepMAC":"aa:bb:cc:dd:ee:ff"}`}, n.Annotations)
	assert.Equal(t, "10.233.64.0/24", n.Spec.PodCIDR)
	assert.True(t, n.Spec.Unschedulable)
	assert.Equal(t, "node-role.kubernetes.io/control-plane", n.Spec.Taints[0].Key)
	assert.Equal(t, int64(4), n.Status.Capacity.Cpu().Value())
	require.Len(t, n.Status.Conditions, 1)
	assert.Equal(t, "KubeletNotReady", n.Status.Conditions[0].Reason)
	assert.Equal(t, "container runtime network not ready", n.Status.Conditions[0].Message)
	assert.Equal(t, "v1.35.4", n.Status.NodeInfo.KubeletVersion)
	assert.Equal(t, "containerd://2.2.3", n.Status.NodeInfo.ContainerRuntimeVersion)
	// and the bulk they do not
	assert.Empty(t, n.ManagedFields)
	assert.Empty(t, n.Status.Images)
	assert.Empty(t, n.Status.Addresses)
	assert.Len(t, n.Status.Capacity, 1)
	assert.Empty(t, n.Status.NodeInfo.OSImage)
}

func TestListNodesJSONDecodedWhole(t *testing.T) {
	list := &corev1.NodeList{Items: []corev1.Node{richNode("node1")}}
	l, err := nodeServer(t, 200, "application/json", encode(t, "application/json", list)).ListNodes(context.Background())
	require.NoError(t, err)
	require.Len(t, l.Items, 1)
	assert.Equal(t, list.Items[0].Status.Images, l.Items[0].Status.Images)
	assert.Equal(t, kept(list.Items[0]), kept(l.Items[0]))
}

func TestListNodesErrorStatus(t *testing.T) {
	st := &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Reason: metav1.StatusReasonForbidden, Code: 403, Message: `nodes is forbidden: User "x" cannot list resource "nodes"`}
	b, err := json.Marshal(st)
	require.NoError(t, err)
	_, err = nodeServer(t, 403, "application/json", b).ListNodes(context.Background())
	require.True(t, apierrors.IsForbidden(err), "%v", err)
	assert.Contains(t, err.Error(), "cannot list resource")
}

// A body that is not a v1 NodeList (another kind) is left to client-go's
// decoder; a malformed or cut one is an error, never a panic.
func TestDecodeNodeListBadProtobuf(t *testing.T) {
	pods := encode(t, "application/vnd.kubernetes.protobuf", &corev1.PodList{Items: []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "p"}}}})
	_, err := cluster.DecodeNodeList(pods)
	assert.ErrorIs(t, err, cluster.ErrNotNodeList)
	_, err = cluster.DecodeNodeList(encode(t, "application/json", &corev1.NodeList{}))
	assert.ErrorIs(t, err, cluster.ErrNotNodeList)

	body := encode(t, "application/vnd.kubernetes.protobuf", &corev1.NodeList{Items: []corev1.Node{richNode("node1"), richNode("node2")}})
	for cut := 0; cut < len(body); cut++ {
		items, err := cluster.DecodeNodeList(body[:cut])
		if err == nil {
			assert.LessOrEqual(t, len(items), 2)
		}
	}
	bad := append([]byte{}, body...)
	bad[len(bad)-1] = 0xff // a varint that never ends
	_, err = cluster.DecodeNodeList(append(bad, 0xff, 0xff))
	assert.Error(t, err)
}

// BenchmarkDecodeNodeList decodes 1,000 Nodes as a kubelet leaves them
// (richNode: 30 images, managedFields, five conditions) whole, as
// client-go does, and as ListNodes keeps them.
func BenchmarkDecodeNodeList(b *testing.B) {
	l := &corev1.NodeList{}
	for i := range 1000 {
		l.Items = append(l.Items, richNode(fmt.Sprintf("node%d", i)))
	}
	body := encode(b, "application/vnd.kubernetes.protobuf", l)
	info, _ := runtime.SerializerInfoForMediaType(nodeCodecs.SupportedMediaTypes(), "application/vnd.kubernetes.protobuf")
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var out corev1.NodeList
			if _, _, err := info.Serializer.Decode(body, nil, &out); err != nil || len(out.Items) != 1000 {
				b.Fatal(len(out.Items), err)
			}
		}
	})
	b.Run("kept", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if items, err := cluster.DecodeNodeList(body); err != nil || len(items) != 1000 {
				b.Fatal(len(items), err)
			}
		}
	})
}
