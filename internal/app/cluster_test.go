package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/testutil"
	"github.com/layercheck/layercheck/verify/cluster"
)

func TestClusterOptionsFromSample(t *testing.T) {
	o, warnings, err := ClusterOptions([]string{filepath.Join(testutil.RepoRoot(), "inventory-samples", "kubespray-3node")}, []string{"kube_pods_subnet=10.200.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	hosts := []string{"node1", "node2", "node3"}
	if !reflect.DeepEqual(o.KubeControlPlane, hosts) || !reflect.DeepEqual(o.KubeNode, hosts) || !reflect.DeepEqual(o.Etcd, hosts) || len(o.CalicoRR) != 0 {
		t.Errorf("groups: %+v", o)
	}
	if o.KubeNetworkPlugin != "calico" || o.CalicoVXLANMode != "Always" || o.CalicoIPIPMode != "Never" || o.EtcdDeploymentType != "host" ||
		!o.HelmEnabled || !o.MetricsServerEnabled || o.LocalPathProvisionerEnabled || o.EnableNodelocaldns == nil || !*o.EnableNodelocaldns {
		t.Errorf("values from group_vars: %+v", o)
	}
	if o.KubePodsSubnet != "10.200.0.0/16" {
		t.Errorf("-e kube_pods_subnet: %q", o.KubePodsSubnet)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
}

// The release whose defaults judge the cluster is the role's
// layercheck_kubespray_version, as roles/verify/tasks/cluster.yml passes it.
func TestClusterOptionsKubesprayVersion(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hosts.ini"), []byte("[kube_control_plane]\ncp1\n[kube_node]\nw1\n[all:vars]\nlayercheck_kubespray_version=v2.27\nkubespray_version=v2.24.3\n"), 0o644)
	o, _, err := ClusterOptions([]string{filepath.Join(dir, "hosts.ini")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.KubesprayVersion != "v2.27" {
		t.Errorf("kubespray_version: %q", o.KubesprayVersion)
	}
}

func TestClusterOptionsTemplatedAndBadValues(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hosts.ini"), []byte("[kube_control_plane]\ncp1\n[kube_node]\nw1\n[all:vars]\nkube_pods_subnet=\"{{ my_subnet }}\"\nlocal_path_provisioner_is_default_storageclass=\"false\"\nenable_dns_autoscaler=perhaps\n"), 0o644)
	_, _, err := ClusterOptions([]string{filepath.Join(dir, "hosts.ini")}, nil)
	if err == nil || !strings.Contains(err.Error(), "enable_dns_autoscaler at "+filepath.Join(dir, "hosts.ini")+":8") || !strings.Contains(err.Error(), "not a boolean") {
		t.Fatalf("bad boolean: %v", err)
	}
	o, warnings, err := ClusterOptions([]string{filepath.Join(dir, "hosts.ini")}, []string{"enable_dns_autoscaler=false"})
	if err != nil {
		t.Fatal(err)
	}
	// The templated value, and -e enable_dns_autoscaler=false (a string, as
	// the lint says); local_path_provisioner_is_default_storageclass is one
	// kubespray keeps as a string itself, so "false" is no finding.
	if len(warnings) != 2 || !strings.Contains(warnings[1], "kube_pods_subnet at ") || !strings.Contains(warnings[1], "kubespray's default assumed") ||
		!strings.Contains(warnings[0], `enable_dns_autoscaler at -e is the str "false", not a boolean: read here as false`) {
		t.Errorf("warnings: %q", warnings)
	}
	if o.LocalPathProvisionerIsDefault == nil || *o.LocalPathProvisionerIsDefault || o.EnableDNSAutoscaler == nil || *o.EnableDNSAutoscaler {
		t.Errorf("string booleans: %+v", o)
	}
	if !reflect.DeepEqual(o.KubeControlPlane, []string{"cp1"}) || !reflect.DeepEqual(o.KubeNode, []string{"w1"}) {
		t.Errorf("groups: %+v", o)
	}
}

func TestClusterUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"cluster"}, {"cluster", "-i", "x", "--format", "xml"}, {"cluster", "-i", filepath.Join(testutil.RepoRoot(), "inventory-samples", "kubespray-3node"), "--kubeconfig", "/nonexistent"}} {
		var out, errOut bytes.Buffer
		err := Run(context.Background(), args, Streams{Out: &out, ErrOut: &errOut})
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != 2 {
			t.Errorf("%v: want exit 2, got %v", args, err)
		}
	}
}

// -e metrics_server_enabled=true is a string: read as true, as `| bool`
// does, and said so with the lint's verdict and the JSON fix; a JSON
// boolean is no finding.
func TestClusterOptionsStringBooleanWarns(t *testing.T) {
	sample := filepath.Join(testutil.RepoRoot(), "inventory-samples", "kubespray-3node")
	o, warnings, err := ClusterOptions([]string{sample}, []string{"metrics_server_enabled=true"})
	require.NoError(t, err)
	assert.True(t, o.MetricsServerEnabled)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "metrics_server_enabled at -e is the str \"true\", not a boolean: read here as true")
	assert.Contains(t, warnings[0], "string-as-bool")
	assert.Contains(t, warnings[0], `pass -e '{"metrics_server_enabled": true}'`)

	o, warnings, err = ClusterOptions([]string{sample}, []string{`{"metrics_server_enabled": true}`})
	require.NoError(t, err)
	assert.True(t, o.MetricsServerEnabled)
	assert.Empty(t, warnings)
}

// flannel's variables reach the cni layer through their json names: the
// integers, one of them behind a pointer (0 is a value, not unset), and the
// boolean as `| bool` reads it.
func TestClusterOptionsFlannel(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hosts.yml"), []byte("all:\n  vars:\n    kube_network_plugin: flannel\n"+
		"    flannel_backend_type: host-gw\n    flannel_vxlan_vni: 0\n    flannel_vxlan_port: 4789\n    flannel_vxlan_direct_routing: true\n"+
		"  children:\n    kube_control_plane:\n      hosts: {cp1: {}}\n    kube_node:\n      hosts: {w1: {}}\n"), 0o644))
	o, warnings, err := ClusterOptions([]string{filepath.Join(dir, "hosts.yml")}, nil)
	require.NoError(t, err)
	assert.Empty(t, warnings)
	assert.Equal(t, "flannel", o.KubeNetworkPlugin)
	assert.Equal(t, "host-gw", o.FlannelBackendType)
	require.NotNil(t, o.FlannelVXLANVNI)
	require.NotNil(t, o.FlannelVXLANPort)
	assert.Equal(t, 0, *o.FlannelVXLANVNI)
	assert.Equal(t, 4789, *o.FlannelVXLANPort)
	assert.True(t, o.FlannelVXLANDirectRouting)

	_, _, err = ClusterOptions([]string{filepath.Join(dir, "hosts.yml")}, []string{"flannel_vxlan_port=udp"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "flannel_vxlan_port at -e")
	assert.Contains(t, err.Error(), "want an integer")
}

// kube_override_hostname set in the inventory becomes node_names; the
// kubespray default "{{ inventory_hostname }}" is no override.
func TestClusterOptionsKubeOverrideHostname(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hosts.ini"), []byte("[kube_control_plane]\ncp1 kube_override_hostname=cp1.example.org\n[kube_node]\nw1 kube_override_hostname=\"{{ inventory_hostname }}\"\nw2\n"), 0o644))
	o, warnings, err := ClusterOptions([]string{filepath.Join(dir, "hosts.ini")}, nil)
	require.NoError(t, err)
	assert.Empty(t, warnings)
	assert.Equal(t, map[string]string{"cp1": "cp1.example.org"}, o.NodeNames)
}

// layercheck verify --cluster-from on the v2.31.0 e2e cluster ran its probe
// with the default registry.k8s.io image, which the offline nodes cannot
// pull, while verify.yml used the inventory's layercheck_cluster_probe_image
// and passed: the verdicts differed. The role's layercheck_cluster_*
// variables, read from the first control plane's hostvars, now reach both.
func TestClusterRoleVarsAsVerifyYMLHandsThem(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hosts.yml"), []byte("all:\n  vars:\n"+
		"    layercheck_cluster_probe_image: 192.0.2.1:5000/e2e-test-images/agnhost:2.53\n"+
		"    layercheck_cluster_probe_timeout: 90\n    layercheck_cluster_probe_port: 8081\n"+
		"    layercheck_cluster_layer_timeout: 45.5\n    layercheck_cluster_skip: [cni]\n"+
		"  children:\n    kube_control_plane:\n      hosts:\n        cp1: {layercheck_cluster_probe: \"false\"}\n    kube_node:\n      hosts: {w1: {layercheck_cluster_probe: true}}\n"), 0o644))
	_, vars, _, err := clusterOptions([]string{filepath.Join(dir, "hosts.yml")}, []string{"layercheck_cluster_probe_path=service_proxy"})
	require.NoError(t, err)
	var req cluster.Request
	warnings, err := clusterRoleVars(vars, &req)
	require.NoError(t, err)
	assert.Empty(t, warnings)
	assert.Equal(t, "192.0.2.1:5000/e2e-test-images/agnhost:2.53", req.Probe.Image)
	assert.Equal(t, 90.0, req.Probe.Timeout)
	assert.Equal(t, 8081, req.Probe.Port)
	assert.Equal(t, 45.5, req.LayerTimeout)
	assert.Equal(t, []string{"cni"}, req.Skip)
	assert.Equal(t, "service_proxy", req.Probe.Path)
	require.NotNil(t, req.Probe.Enabled)
	assert.False(t, *req.Probe.Enabled, "the first control plane's value, as `| bool` reads it")

	// Unset: the role's defaults, which are the request's.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hosts.yml"), []byte("all:\n  children:\n    kube_control_plane:\n      hosts: {cp1: {}}\n"), 0o644))
	_, vars, _, err = clusterOptions([]string{filepath.Join(dir, "hosts.yml")}, nil)
	require.NoError(t, err)
	req = cluster.Request{}
	_, err = clusterRoleVars(vars, &req)
	require.NoError(t, err)
	assert.Equal(t, cluster.Request{}, req)

	// A wrong type names the variable and where it is.
	_, vars, _, err = clusterOptions([]string{filepath.Join(dir, "hosts.yml")}, []string{"layercheck_cluster_probe_timeout=soon"})
	require.NoError(t, err)
	_, err = clusterRoleVars(vars, &req)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "layercheck_cluster_probe_timeout at -e")
	assert.Contains(t, err.Error(), "want a number")

	// verify.yml reads layercheck_cluster_probe with `| bool`, which
	// takes "y" and "1.0" as false, with a deprecation warning from
	// ansible-core 2.19 on: refused, naming where, not read as true.
	for _, e := range []string{"layercheck_cluster_probe=y", "layercheck_cluster_probe=1.0", "layercheck_cluster_probe=t"} {
		_, vars, _, err = clusterOptions([]string{filepath.Join(dir, "hosts.yml")}, []string{e})
		require.NoError(t, err)
		_, err = clusterRoleVars(vars, &cluster.Request{})
		require.Error(t, err, e)
		assert.Contains(t, err.Error(), "layercheck_cluster_probe at -e")
		assert.Contains(t, err.Error(), "not a boolean: `| bool` reads it as false")
	}
}
