package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/layercheck/layercheck/clusterstate"
	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/cluster/clustertest"
)

// flannelThreeNode is threeNode with kubespray's flannel (vxlan backend,
// kubespray's defaults).
func flannelThreeNode() cluster.Options {
	o := threeNode()
	o.KubeNetworkPlugin = "flannel"
	return o
}

// withNetConf is a healthy flannel world whose kube-flannel-cfg is the one
// kubespray renders for rendered instead of o.
func withNetConf(o, rendered cluster.Options) *clustertest.World {
	w := clustertest.Healthy(o, 4)
	w.ConfigMaps = []*corev1.ConfigMap{clustertest.FlannelConfigMap(rendered)}
	return w
}

func TestFlannelHealthy(t *testing.T) {
	o := flannelThreeNode()
	rep := run(t, o, clustertest.Healthy(o, 4), nil)
	for _, n := range []string{"nodes", "kube_system", "cni"} {
		if rep.Layers[n].Status != verify.StatusOK {
			t.Errorf("layer %s: %s: %+v", n, rep.Layers[n].Status, rep.Layers[n].Results)
		}
	}
	for check, want := range map[string]string{
		"kube-flannel":            "",
		"flannel_backend":         "flannel Backend vxlan, VNI 1, port 8472, DirectRouting false as the inventory says",
		"flannel_network":         "flannel Network is 10.233.64.0/18, kube_pods_subnet",
		"network_policy":          "no NetworkPolicy objects; flannel would not enforce any",
		"flannel_running_backend": "flannel on 3 Node(s) runs the vxlan backend kube-flannel-cfg says",
	} {
		if r := clustertest.Result(t, rep, "cni", check); r.Status != verify.StatusOK || !strings.Contains(r.Msg, want) {
			t.Errorf("%s: %+v", check, r)
		}
	}

	// Another backend in both the inventory and the ConfigMap is as healthy.
	o.FlannelBackendType = "host-gw"
	r := clustertest.Result(t, run(t, o, clustertest.Healthy(o, 4), nil), "cni", "flannel_backend")
	if r.Status != verify.StatusOK || r.Msg != "flannel Backend.Type host-gw as the inventory says (flannel_backend_type host-gw)" {
		t.Errorf("host-gw in both: %+v", r)
	}
}

func TestFlannelBackendChanged(t *testing.T) {
	o := flannelThreeNode()
	edited := o
	edited.FlannelBackendType = "host-gw"
	r := clustertest.Result(t, run(t, o, withNetConf(o, edited), nil), "cni", "flannel_backend")
	if r.Status != verify.StatusFail ||
		r.Msg != "ConfigMap kube-system/kube-flannel-cfg net-conf.json Backend.Type is host-gw, the inventory says vxlan (flannel_backend_type, kubespray's default vxlan)" ||
		r.Expected != "vxlan" || r.Actual != "host-gw" {
		t.Errorf("host-gw against vxlan: %+v", r)
	}
	for _, fix := range []string{"set flannel_backend_type in the inventory", "ansible-playbook cluster.yml --tags network", "roles/network_plugin/flannel/templates/cni-flannel.yml.j2",
		"kubectl -n kube-system rollout restart daemonset kube-flannel"} {
		if !strings.Contains(r.Remediation, fix) {
			t.Errorf("remediation lacks %q: %s", fix, r.Remediation)
		}
	}

	// The vxlan fields, each against its variable; port 0 is the kernel's 8472.
	edited = o
	edited.FlannelVXLANVNI, edited.FlannelVXLANPort, edited.FlannelVXLANDirectRouting = intp(4096), intp(0), true
	r = clustertest.Result(t, run(t, o, withNetConf(o, edited), nil), "cni", "flannel_backend")
	if r.Status != verify.StatusFail || r.Msg != "ConfigMap kube-system/kube-flannel-cfg net-conf.json vxlan backend: "+
		"Backend.VNI is 4096, the inventory says 1 (flannel_vxlan_vni); Backend.DirectRouting is true, the inventory says false (flannel_vxlan_direct_routing)" ||
		!strings.Contains(r.Remediation, "set flannel_vxlan_vni, flannel_vxlan_direct_routing in the inventory") {
		t.Errorf("vxlan fields: %+v", r)
	}
}

func intp(v int) *int { return &v }

// What a v2.31.0 cluster showed after flannel_backend_type went from vxlan
// to host-gw in the inventory and cluster.yml ran (day 2, trap 3): the run
// ended failed=0, kube-flannel-cfg said host-gw, and every flanneld,
// started before, still ran vxlan (its Node annotations); the ConfigMap
// checks saw nothing.
func TestFlannelRunningBackendLagsTheConfigMap(t *testing.T) {
	o := flannelThreeNode()
	w := clustertest.Healthy(o, 4) // flanneld started on vxlan
	moved := o
	moved.FlannelBackendType = "host-gw"
	w.ConfigMaps = []*corev1.ConfigMap{clustertest.FlannelConfigMap(moved)}
	rep := run(t, moved, w, nil)
	if r := clustertest.Result(t, rep, "cni", "flannel_backend"); r.Status != verify.StatusOK {
		t.Errorf("the ConfigMap is the inventory's: %+v", r)
	}
	r := clustertest.Result(t, rep, "cni", "flannel_running_backend")
	if r.Status != verify.StatusFail ||
		r.Msg != "flannel runs vxlan on node1, node2, node3 (Node annotation flannel.alpha.coreos.com/backend-type), but kube-flannel-cfg net-conf.json says host-gw: "+
			"flannel reads it only at start, and kubespray re-renders it without restarting flannel" ||
		!strings.Contains(r.Remediation, "kubectl -n kube-system delete pod -l app=flannel") {
		t.Errorf("vxlan running under a host-gw ConfigMap: %+v", r)
	}
	if rep.Layers["cni"].Status != verify.StatusFail {
		t.Errorf("cni layer: %s", rep.Layers["cni"].Status)
	}

	// One flanneld restarted on the new VNI, the others not.
	w = clustertest.Healthy(o, 4)
	vni := o
	vni.FlannelVXLANVNI = intp(4096)
	w.ConfigMaps = []*corev1.ConfigMap{clustertest.FlannelConfigMap(vni)}
	w.Nodes[1].Annotations[cluster.FlannelBackendDataAnnotation] = `{"VNI":4096,"VtepMAC":"0a:58:0a:00:01:01"}`
	r = clustertest.Result(t, run(t, vni, w, nil), "cni", "flannel_running_backend")
	if r.Status != verify.StatusFail || !strings.HasPrefix(r.Msg, "flannel runs vxlan VNI 1 on node1, node3 (Node annotation") ||
		!strings.Contains(r.Msg, "net-conf.json says vxlan VNI 4096") {
		t.Errorf("VNI 1 running under VNI 4096: %+v", r)
	}

	// No flanneld has started: nothing to compare, and the DaemonSet
	// check says why.
	w = clustertest.Healthy(o, 4)
	for _, n := range w.Nodes {
		n.Annotations = nil
	}
	r = clustertest.Result(t, run(t, o, w, nil), "cni", "flannel_running_backend")
	if r.Status != verify.StatusSkipped || !strings.Contains(r.Msg, "no Node carries flannel.alpha.coreos.com/backend-type") {
		t.Errorf("no annotations: %+v", r)
	}
}

func TestFlannelNetworkChanged(t *testing.T) {
	o := flannelThreeNode()
	edited := o
	edited.KubePodsSubnet = "10.244.0.0/16"
	rep := run(t, o, withNetConf(o, edited), nil)
	r := clustertest.Result(t, rep, "cni", "flannel_network")
	if r.Status != verify.StatusFail ||
		r.Msg != "ConfigMap kube-system/kube-flannel-cfg net-conf.json Network is 10.244.0.0/16, the inventory says 10.233.64.0/18 (kube_pods_subnet)" ||
		!strings.Contains(r.Remediation, "ansible-playbook cluster.yml --tags network") || !strings.Contains(r.Remediation, "rollout restart daemonset kube-flannel") ||
		!strings.Contains(r.Remediation, "podSubnet") {
		t.Errorf("Network 10.244.0.0/16: %+v", r)
	}
	if r := clustertest.Result(t, rep, "cni", "flannel_backend"); r.Status != verify.StatusOK {
		t.Errorf("backend unchanged: %+v", r)
	}
	if rep.Layers["cni"].Status != verify.StatusFail {
		t.Errorf("cni layer: %s", rep.Layers["cni"].Status)
	}
}

func TestFlannelConfigMapMissingOrBroken(t *testing.T) {
	o := flannelThreeNode()
	w := clustertest.Healthy(o, 4)
	w.ConfigMaps = nil
	rep := run(t, o, w, nil)
	for _, check := range []string{"flannel_backend", "flannel_network"} {
		r := clustertest.Result(t, rep, "cni", check)
		if r.Status != verify.StatusFail || r.Msg != "ConfigMap kube-system/kube-flannel-cfg not found: flannel has no network configuration to start with" ||
			!strings.Contains(r.Remediation, "cluster.yml --tags network") {
			t.Errorf("%s, no ConfigMap: %+v", check, r)
		}
	}

	w = clustertest.Healthy(o, 4)
	w.ConfigMaps[0].Data["net-conf.json"] = `{"Network": "10.233.64.0/18", "Backend": {"Type": "vxlan",}}`
	r := clustertest.Result(t, run(t, o, w, nil), "cni", "flannel_backend")
	if r.Status != verify.StatusFail || !strings.HasPrefix(r.Msg, "ConfigMap kube-system/kube-flannel-cfg: net-conf.json is not JSON flannel can read (") {
		t.Errorf("broken JSON: %+v", r)
	}

	// Valid JSON of the wrong shape: flannel's vxlan backend wants a number.
	w = clustertest.Healthy(o, 4)
	w.ConfigMaps[0].Data["net-conf.json"] = `{"Network": "10.233.64.0/18", "Backend": {"Type": "vxlan", "VNI": "1"}}`
	r = clustertest.Result(t, run(t, o, w, nil), "cni", "flannel_network")
	if r.Status != verify.StatusFail || !strings.Contains(r.Msg, "net-conf.json is not JSON flannel can read (") || !strings.Contains(r.Msg, "Backend.VNI") {
		t.Errorf("VNI a string: %+v", r)
	}

	w = clustertest.Healthy(o, 4)
	delete(w.ConfigMaps[0].Data, "net-conf.json")
	r = clustertest.Result(t, run(t, o, w, nil), "cni", "flannel_network")
	if r.Status != verify.StatusFail || r.Msg != "ConfigMap kube-system/kube-flannel-cfg has no net-conf.json key: flannel cannot start" {
		t.Errorf("no net-conf.json: %+v", r)
	}
}

func networkPolicy(ns, name string) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}}
}

func TestFlannelNetworkPolicies(t *testing.T) {
	o := flannelThreeNode()
	w := clustertest.Healthy(o, 4)
	w.NetworkPolicies = append(w.NetworkPolicies, networkPolicy("team-a", "deny-all"))
	rep := run(t, o, w, nil)
	r := clustertest.Result(t, rep, "cni", "network_policy")
	if r.Status != verify.StatusWarn || r.Msg != "1 NetworkPolicy (team-a/deny-all) is accepted by the API server and not enforced by flannel" ||
		!strings.Contains(r.Remediation, "kube_network_plugin: calico or cilium") {
		t.Errorf("one policy: %+v", r)
	}
	if rep.Layers["cni"].Status != verify.StatusWarn {
		t.Errorf("cni layer: %s", rep.Layers["cni"].Status)
	}

	w.NetworkPolicies = append(w.NetworkPolicies, networkPolicy("team-b", "allow-dns"))
	r = clustertest.Result(t, run(t, o, w, nil), "cni", "network_policy")
	if r.Status != verify.StatusWarn || !strings.HasPrefix(r.Msg, "2 NetworkPolicies (first: team-") ||
		!strings.HasSuffix(r.Msg, ") are accepted by the API server and not enforced by flannel") {
		t.Errorf("two policies: %+v", r)
	}

	// Calico enforces them: no such check.
	c := threeNode()
	cw := clustertest.Healthy(c, 4)
	cw.NetworkPolicies = w.NetworkPolicies
	for _, res := range run(t, c, cw, ippool("10.233.64.0/18", "Never", "Always")).Layers["cni"].Results {
		if res.Check == "network_policy" || strings.HasPrefix(res.Check, "flannel_") {
			t.Errorf("calico cluster: %+v", res)
		}
	}
}

func TestFlannelNetworkPoliciesUnlistable(t *testing.T) {
	o := flannelThreeNode()
	rep, _ := runFakeWith(t, o, clustertest.Healthy(o, 4), nil, func(k *fake.Clientset) {
		k.PrependReactor("list", "networkpolicies", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "networking.k8s.io", Resource: "networkpolicies"}, "", nil)
		})
	})
	r := clustertest.Result(t, rep, "cni", "network_policy")
	if r.Status != verify.StatusFail || !strings.HasPrefix(r.Msg, "NetworkPolicies not listable: list networkpolicies at fake: ") || !strings.Contains(r.Msg, "forbidden") {
		t.Errorf("forbidden: %+v", r)
	}
}

// readState is ReadState on w applied to a fake clientset, with the
// clientset for the requests it saw.
func readState(t *testing.T, o cluster.Options, w *clustertest.World) (*clusterstate.State, *fake.Clientset) {
	t.Helper()
	ctx := context.Background()
	kube := fake.NewSimpleClientset()
	if err := w.Apply(ctx, kube, 4); err != nil {
		t.Fatal(err)
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		cluster.IPPoolGVR: "IPPoolList", cluster.APIServiceGVR: "APIServiceList"})
	o.Defaults()
	env := &cluster.Env{Kube: clustertest.Clientset(kube), Dynamic: dyn, Options: o, Server: "fake", Timeout: 5 * time.Second}
	st, err := cluster.ReadState(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	return st, kube
}

// configMapGets are the kube-system ConfigMaps the read asked for.
func configMapGets(kube *fake.Clientset) []string {
	var out []string
	for _, a := range kube.Actions() {
		if g, ok := a.(k8stesting.GetAction); ok && a.GetResource().Resource == "configmaps" {
			out = append(out, g.GetName())
		}
	}
	return out
}

// TestReadStateFlannel: the preflight reads kube-flannel-cfg's net-conf.json
// as the day-2 clusters have it (kubespray's defaults: vxlan, VNI 1, port
// 8472, no direct routing, kube_pods_subnet 10.233.64.0/18) when the
// inventory says flannel or the kube-flannel DaemonSet runs, says when it
// cannot, and does not ask for it on a calico cluster.
func TestReadStateFlannel(t *testing.T) {
	o := flannelThreeNode()
	st, _ := readState(t, o, clustertest.Healthy(o, 4))
	require.NotNil(t, st.Flannel, "Unread: %v", st.Unread)
	want := &clusterstate.FlannelNetConf{Network: "10.233.64.0/18", EnableIPv4: true}
	want.Backend.Type = "vxlan"
	want.Backend.VNI, want.Backend.Port, want.Backend.DirectRouting = ptrTo(1), ptrTo(8472), ptrTo(false)
	assert.Equal(t, want, st.Flannel)
	assert.True(t, st.HasDaemonSet("kube-flannel"))

	// the inventory now says calico: kube-flannel runs, so it is read
	other := o
	other.KubeNetworkPlugin = "calico"
	st, _ = readState(t, other, clustertest.Healthy(o, 4))
	assert.Equal(t, want, st.Flannel)

	// a host-gw ConfigMap has no vxlan fields
	hostGW := o
	hostGW.FlannelBackendType = "host-gw"
	st, _ = readState(t, o, withNetConf(o, hostGW))
	require.NotNil(t, st.Flannel)
	assert.Equal(t, "host-gw", st.Flannel.Backend.Type)
	assert.Nil(t, st.Flannel.Backend.VNI)

	// no ConfigMap: said, and nothing compared
	w := clustertest.Healthy(o, 4)
	w.ConfigMaps = nil
	st, _ = readState(t, o, w)
	assert.Nil(t, st.Flannel)
	assert.Contains(t, st.Unread, "ConfigMap kube-system/kube-flannel-cfg: not found")

	// a ConfigMap without net-conf.json
	w = clustertest.Healthy(o, 4)
	delete(w.ConfigMaps[0].Data, cluster.FlannelNetConfKey)
	st, _ = readState(t, o, w)
	assert.Nil(t, st.Flannel)
	assert.Contains(t, st.Unread, "ConfigMap kube-system/kube-flannel-cfg: has no net-conf.json key")

	// calico: not asked for
	c := threeNode()
	_, kube := readState(t, c, clustertest.Healthy(c, 4))
	assert.NotContains(t, configMapGets(kube), cluster.FlannelConfigMap)
}

func ptrTo[T any](v T) *T { return &v }
