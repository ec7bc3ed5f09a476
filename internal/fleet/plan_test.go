package fleet

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/parser"
)

const planINI = `[kube_control_plane]
cp1 ansible_host=10.0.0.1
[etcd]
cp1
etcd1 ansible_host=10.0.0.5 etcd_member_name=etcd9
[kube_node]
w1 ansible_host=10.0.0.11 layercheck_verify_become=false
w2 ansible_host=10.0.0.12 ansible_become=false layercheck_verify_become=true
[bastion]
bastion ansible_host=203.0.113.1
[all:vars]
kube_pods_subnet=10.244.0.0/16
enable_nodelocaldns=false
dns_domain="{{ cluster_name }}"
layercheck_verify_now=2026-11-30T15:22:06Z
layercheck_verify_net_timeout=3
`

func plan(t *testing.T, ini, limit string) ([]*Host, []string, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hosts.ini")
	require.NoError(t, os.WriteFile(p, []byte(ini), 0o644))
	inv, err := parser.Load(p)
	require.NoError(t, err)
	return Plan(inv, nil, limit)
}

func TestPlanHostsAndRequests(t *testing.T) {
	hosts, warnings, err := plan(t, planINI, "")
	require.NoError(t, err)
	var names []string
	for _, h := range hosts {
		require.NoError(t, h.Err, h.Name)
		names = append(names, h.Name)
	}
	// k8s_cluster (made by the dynamic groups), then etcd; not the bastion.
	assert.Equal(t, []string{"cp1", "etcd1", "w1", "w2"}, names)
	cp := hosts[0]
	assert.Equal(t, "10.0.0.1:22", cp.Target.Addr())
	assert.Equal(t, []string{"etcd", "k8s_cluster", "kube_control_plane"}, cp.Request.Groups, "group_names, sorted")
	assert.Equal(t, []string{"cp1", "etcd1"}, cp.Request.EtcdMembers)
	assert.Equal(t, "10.244.0.0/16", cp.Request.KubePodsSubnet)
	assert.False(t, cp.Request.EnableNodelocaldns, `"false" through | bool`)
	assert.Empty(t, cp.Request.DNSDomain, "templated: kubespray's default")
	assert.Equal(t, "2026-11-30T15:22:06Z", cp.Request.Now)
	assert.Equal(t, 3.0, cp.Request.NetTimeout)
	assert.Equal(t, "etcd9", hosts[1].Request.EtcdMemberName)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "dns_domain")
	// become: the role's default, its variable, and ansible_become winning.
	assert.True(t, cp.Target.Become)
	assert.False(t, hosts[2].Target.Become)
	assert.False(t, hosts[3].Target.Become)
}

func TestPlanLimit(t *testing.T) {
	hosts, _, err := plan(t, planINI, "w2,etcd")
	require.NoError(t, err)
	var names []string
	for _, h := range hosts {
		names = append(names, h.Name)
	}
	assert.Equal(t, []string{"cp1", "etcd1", "w2"}, names)
	_, _, err = plan(t, planINI, "nosuch")
	require.ErrorContains(t, err, `no host or group "nosuch"`)
	_, _, err = plan(t, "[bastion]\nb1\n", "")
	require.ErrorContains(t, err, "groups k8s_cluster and etcd are empty")
}

func TestPlanBadValues(t *testing.T) {
	hosts, _, err := plan(t, "[kube_node]\nw1 layercheck_verify_net_timeout=soon\nw2 enable_nodelocaldns=maybe\nw3 ansible_password=x\n", "")
	require.NoError(t, err)
	require.ErrorContains(t, hosts[0].Err, "layercheck_verify_net_timeout")
	require.ErrorContains(t, hosts[1].Err, "is not a boolean")
	require.ErrorContains(t, hosts[2].Err, "does not log in with passwords")

	// the role's `| bool` takes "y" and the float 1.0 only with a
	// deprecation warning from ansible-core 2.19 on (as false, and true):
	// refused, naming the variable and where
	hosts, _, err = plan(t, "[kube_node]\nw1 enable_nodelocaldns=y\nw2 enable_nodelocaldns=1.0\nw3 enable_nodelocaldns=1\n", "")
	require.NoError(t, err)
	require.ErrorContains(t, hosts[0].Err, `enable_nodelocaldns at `)
	require.ErrorContains(t, hosts[0].Err, "\"y\" is not a boolean: `| bool` reads it as false")
	require.ErrorContains(t, hosts[1].Err, "1 is not a boolean: `| bool` reads it as true")
	require.NoError(t, hosts[2].Err)
}

// auto_renew_certificates reaches node.Options from the inventory as the
// verify role's `| default(false) | bool` gives it: an INI group var
// "true" is true, unset is kubespray's false.
func TestPlanAutoRenewCertificates(t *testing.T) {
	hosts, _, err := plan(t, "[kube_control_plane]\ncp1\n[kube_node]\nw1\n[kube_control_plane:vars]\nauto_renew_certificates=true\n", "")
	require.NoError(t, err)
	require.Len(t, hosts, 2)
	require.NoError(t, hosts[0].Err)
	assert.Equal(t, "cp1", hosts[0].Name)
	assert.True(t, hosts[0].Request.AutoRenewCertificates)
	assert.False(t, hosts[1].Request.AutoRenewCertificates)
	hosts, _, err = plan(t, "[kube_control_plane]\ncp1 auto_renew_certificates=maybe\n", "")
	require.NoError(t, err)
	require.ErrorContains(t, hosts[0].Err, "auto_renew_certificates")
}

// The release whose defaults judge a host is the role's
// layercheck_kubespray_version, as the verify role passes it; a variable
// named kubespray_version, which is no kubespray value, is not read.
func TestPlanKubesprayVersion(t *testing.T) {
	hosts, _, err := plan(t, "[kube_node]\nw1 layercheck_kubespray_version=v2.27.1\nw2 kubespray_version=v2.27.1\n", "")
	require.NoError(t, err)
	require.Len(t, hosts, 2)
	assert.Equal(t, "v2.27.1", hosts[0].Request.KubesprayVersion)
	assert.Empty(t, hosts[1].Request.KubesprayVersion)
}

// What the verify role passes for the workers' localhost load balancer:
// every kube_control_plane host's access_ip, else ip (kubespray's
// main_access_ip), and loadbalancer_apiserver_localhost through | bool;
// unset, it stays for the defaults (true unless loadbalancer_apiserver).
func TestPlanLocalhostLoadBalancer(t *testing.T) {
	hosts, _, err := plan(t, `[kube_control_plane]
cp1 ansible_host=192.0.2.1 ip=10.0.0.1
cp2 ansible_host=192.0.2.2 ip=10.0.0.2 access_ip=192.0.2.2
cp3 ansible_host=192.0.2.3
[etcd]
cp1
[kube_node]
w1 ansible_host=10.0.0.11
w2 ansible_host=10.0.0.12 loadbalancer_apiserver_localhost=false loadbalancer_apiserver_type=haproxy
`, "")
	require.NoError(t, err)
	want := map[string]string{"cp1": "10.0.0.1", "cp2": "192.0.2.2", "cp3": ""}
	for _, h := range hosts {
		require.NoError(t, h.Err, h.Name)
		assert.Equal(t, want, h.Request.KubeControlPlaneAccessIPs, h.Name)
	}
	w1, w2 := hosts[3], hosts[4]
	require.Equal(t, "w2", w2.Name)
	assert.Nil(t, w1.Request.LoadbalancerAPIServerLocalhost, "unset: kubespray's default")
	require.NotNil(t, w2.Request.LoadbalancerAPIServerLocalhost)
	assert.False(t, *w2.Request.LoadbalancerAPIServerLocalhost, `INI "false" through | bool`)
	assert.Equal(t, "haproxy", w2.Request.LoadbalancerAPIServerType)
}
