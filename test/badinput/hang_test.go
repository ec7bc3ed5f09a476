package badinput_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const kubesprayINI = `[kube_control_plane]
cp1 ansible_host=10.0.0.1

[etcd]
cp1

[kube_node]
cp1
w1 ansible_host=10.0.0.2

[k8s_cluster:children]
kube_control_plane
kube_node
`

// Why 1 (hangs): a FIFO wherever a file is read — group_vars/all.yml, a
// host_vars file, an inventory directory entry, -i FIFO, -e @FIFO,
// ./ansible.cfg — is an error naming the path and its kind for
// `layercheck inventory`, `layercheck lint` and the inventory_lint module,
// instead of blocking forever.
func TestFIFOsAreErrorsNotHangs(t *testing.T) {
	t.Parallel()
	type place struct {
		name string
		// setup makes the inventory in dir and returns the FIFO's path,
		// the -i sources, and the -e arguments
		setup func(dir string) (fifo string, inv []string, extra []string)
	}
	places := []place{
		{"group_vars/all.yml", func(dir string) (string, []string, []string) {
			write(t, dir, map[string]string{"inv/hosts.ini": kubesprayINI})
			f := filepath.Join(dir, "inv", "group_vars", "all.yml")
			mkfifo(t, f)
			return f, []string{filepath.Join(dir, "inv", "hosts.ini")}, nil
		}},
		{"host_vars file", func(dir string) (string, []string, []string) {
			write(t, dir, map[string]string{"inv/hosts.ini": kubesprayINI})
			f := filepath.Join(dir, "inv", "host_vars", "cp1.yml")
			mkfifo(t, f)
			return f, []string{filepath.Join(dir, "inv", "hosts.ini")}, nil
		}},
		{"inventory directory entry", func(dir string) (string, []string, []string) {
			write(t, dir, map[string]string{"inv/hosts.ini": kubesprayINI})
			f := filepath.Join(dir, "inv", "more.yml")
			mkfifo(t, f)
			return f, []string{filepath.Join(dir, "inv")}, nil
		}},
		{"-i FIFO", func(dir string) (string, []string, []string) {
			f := filepath.Join(dir, "hosts.ini")
			mkfifo(t, f)
			return f, []string{f}, nil
		}},
		{"-e @FIFO", func(dir string) (string, []string, []string) {
			write(t, dir, map[string]string{"inv/hosts.ini": kubesprayINI})
			f := filepath.Join(dir, "extra.yml")
			mkfifo(t, f)
			return f, []string{filepath.Join(dir, "inv", "hosts.ini")}, []string{"@" + f}
		}},
		{"./ansible.cfg", func(dir string) (string, []string, []string) {
			write(t, dir, map[string]string{"inv/hosts.ini": kubesprayINI})
			f := filepath.Join(dir, "ansible.cfg")
			mkfifo(t, f)
			return f, []string{filepath.Join(dir, "inv", "hosts.ini")}, nil
		}},
	}
	for _, p := range places {
		t.Run(p.name, func(t *testing.T) {
			dir := t.TempDir()
			fifo, inv, extra := p.setup(dir)
			want := fifo + ": is a FIFO, not a file"
			var args []string
			for _, i := range inv {
				args = append(args, "-i", i)
			}
			for _, e := range extra {
				args = append(args, "-e", e)
			}
			r := run(t, dir, nil, bin(t, "layercheck"), append([]string{"inventory", "--list"}, args...)...)
			assert.Equal(t, 1, r.code, "inventory --list:\n%s", r.all())
			assert.Contains(t, r.stderr, want, "inventory --list")

			r = run(t, dir, nil, bin(t, "layercheck"), append([]string{"lint", "--kubespray-version", "v2.31.0"}, args...)...)
			assert.Equal(t, 2, r.code, "lint:\n%s", r.all())
			assert.Contains(t, r.stderr, want, "lint")

			if p.name == "./ansible.cfg" {
				return // the module gets Ansible's settings from the action plugin, never reads ansible.cfg
			}
			margs := map[string]any{"inventory": inv, "kubespray_version": "v2.31.0"}
			if extra != nil {
				margs["extra_vars_args"] = extra
				margs["extra_vars"] = map[string]any{}
			}
			b, _ := json.Marshal(margs)
			r = module(t, dir, string(b))
			var res map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), "module output: %s", r.all())
			if extra != nil {
				// Ansible loaded the extra vars itself; the module reads
				// the file only for locations and warns that it cannot
				assert.Contains(t, fmt.Sprint(res["warnings"]), want, "module warnings: %s", r.stdout)
				return
			}
			assert.Equal(t, true, res["failed"], "module result: %s", r.stdout)
			assert.Contains(t, fmt.Sprint(res["msg"]), want, "module msg")
		})
	}
}

// Why 1 and 5 for the verify commands: a FIFO as /etc/etcd.env under
// `layercheck node --root`, and as the kubeconfig of `layercheck cluster`,
// is a clear error instead of a hang; an empty kubeconfig says so instead
// of client-go's "try setting KUBERNETES_MASTER".
func TestVerifyReadersDoNotHang(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{"inv/hosts.ini": kubesprayINI, "empty.conf": ""})
	mkfifo(t, filepath.Join(dir, "root", "etc", "etcd.env"))
	mkfifo(t, filepath.Join(dir, "admin.conf"))

	r := run(t, dir, nil, bin(t, "layercheck"), "node", "--root", filepath.Join(dir, "root"), "--host", "cp1",
		"--group", "etcd", "--etcd-member", "cp1", "--layer", "etcd")
	assert.Equal(t, 1, r.code, r.all())
	assert.Contains(t, r.stdout, "cannot read /etc/etcd.env: is a FIFO, not a file")

	inv := filepath.Join(dir, "inv", "hosts.ini")
	r = run(t, dir, nil, bin(t, "layercheck"), "cluster", "--kubeconfig", filepath.Join(dir, "admin.conf"), "-i", inv)
	assert.Equal(t, 2, r.code, r.all())
	assert.Contains(t, r.stderr, filepath.Join(dir, "admin.conf")+": is a FIFO, not a file")

	r = run(t, dir, nil, bin(t, "layercheck"), "cluster", "--kubeconfig", filepath.Join(dir, "empty.conf"), "-i", inv)
	assert.Equal(t, 2, r.code, r.all())
	assert.Contains(t, r.stderr, "no cluster, user or context to use (empty kubeconfig?)")
	assert.NotContains(t, r.stderr, "KUBERNETES_MASTER")

	// Why 5: an API server that refuses at once is reported as refusing,
	// not as "did not answer within 10s"
	port := closedPort(t)
	write(t, dir, map[string]string{"refused.conf": fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"+
		"    server: https://127.0.0.1:%d\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\n"+
		"contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n", port)})
	r = run(t, dir, nil, bin(t, "layercheck"), "cluster", "--kubeconfig", filepath.Join(dir, "refused.conf"), "-i", inv, "--no-probe", "--timeout", "3s")
	assert.Equal(t, 1, r.code, r.all())
	assert.Contains(t, r.all(), fmt.Sprintf("API server https://127.0.0.1:%d refused the connection", port))
	assert.NotContains(t, r.all(), "did not answer within")
}
