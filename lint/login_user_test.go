package lint

import (
	"strings"
	"testing"
)

// On real nodes an inventory with ansible_user=kube locked the operator
// out after the first kubespray run: the adduser role gives kube the shell
// /sbin/nologin.
func TestSSHUserNologin(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"hosts.ini": "[all]\nnode1 ansible_host=10.0.0.1\nnode2 ansible_host=10.0.0.2\nbastion ansible_host=10.0.0.9\n\n" +
			"[kube_control_plane]\nnode1\n[etcd]\nnode1\n[kube_node]\nnode2\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n",
		"group_vars/all.yml": "ansible_user: kube\n",
	})
	r := lintTree(t, dir)
	f := one(t, r, "ssh-user-nologin", "ansible_user")
	if f.Where != "group_vars/all.yml:1:15" || strings.Join(f.Hosts, ",") != "node1,node2" ||
		!strings.Contains(f.Why, "addusers.kube") || !strings.Contains(f.Fix, "passwordless sudo") {
		t.Errorf("kube: %+v", f)
	}

	dir = writeTree(t, map[string]string{
		"hosts.ini": "[kube_control_plane]\nnode1 ansible_user=etcd\n[etcd]\nnode1\n[kube_node]\nnode2 ansible_user=etcd\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n",
	})
	r = lintTree(t, dir)
	f = one(t, r, "ssh-user-nologin", "ansible_user")
	if strings.Join(f.Hosts, ",") != "node1" {
		t.Errorf("etcd is made only on etcd and control-plane hosts: %+v", f)
	}

	for _, files := range []map[string]string{
		{"hosts.ini": "[kube_control_plane]\nnode1 ansible_user=ubuntu\n[etcd]\nnode1\n[kube_node]\nnode1\n"},
		{"hosts.ini": "[kube_control_plane]\nnode1 ansible_user=kube\n[etcd]\nnode1\n[kube_node]\nnode1\n", "group_vars/all.yml": "addusers: {}\n"},
	} {
		none(t, lintTree(t, writeTree(t, files)), "ssh-user-nologin", "ansible_user")
	}
}
