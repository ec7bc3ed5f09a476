package sshconn

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/parser"
)

func load(t *testing.T, ini string) (*parser.Inventory, Lookup) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hosts.ini")
	require.NoError(t, os.WriteFile(p, []byte(ini), 0o644))
	inv, err := parser.Load(p)
	require.NoError(t, err)
	return inv, func(name string) *parser.Map {
		if h := inv.Host(name); h != nil {
			return inv.HostVars(h, nil)
		}
		return nil
	}
}

func target(t *testing.T, ini, host string) (*Target, error) {
	t.Helper()
	inv, lookup := load(t, ini)
	return FromHostVars(host, inv.HostVars(inv.Host(host), nil), lookup)
}

func TestTargetFromInventory(t *testing.T) {
	tg, err := target(t, `node1 ansible_host=10.0.0.1 ansible_port="2222" ansible_user=ubuntu ansible_ssh_private_key_file=/keys/id ansible_become=yes
node2
`, "node1")
	require.NoError(t, err)
	assert.Equal(t, "10.0.0.1:2222", tg.Addr())
	assert.Equal(t, "ubuntu", tg.User)
	assert.Equal(t, []string{"/keys/id"}, tg.KeyFiles)
	assert.True(t, tg.Become)
	assert.Equal(t, "root", tg.BecomeUser)
	assert.Nil(t, tg.Jump)

	tg, err = target(t, "node2\n", "node2")
	require.NoError(t, err)
	assert.Equal(t, "node2:22", tg.Addr())
	assert.NotEmpty(t, tg.User, "default: the current user")
}

// kubespray's bastion: ansible_ssh_common_args with ProxyCommand ssh -W.
func TestTargetKubesprayBastionProxyCommand(t *testing.T) {
	tg, err := target(t, `[all:vars]
ansible_ssh_common_args='-o ProxyCommand="ssh -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -W %h:%p -q -p 2200 admin@203.0.113.7 -i /keys/bastion"' -o UserKnownHostsFile=/kh -o StrictHostKeyChecking=accept-new
[kube_node]
node1 ansible_host=10.0.0.1 ansible_user=ubuntu
`, "node1")
	require.NoError(t, err)
	require.NotNil(t, tg.Jump)
	assert.Equal(t, "203.0.113.7:2200", tg.Jump.Addr())
	assert.Equal(t, "admin", tg.Jump.User)
	assert.Equal(t, []string{"/keys/bastion"}, tg.Jump.KeyFiles)
	assert.Equal(t, []string{"/dev/null"}, tg.Jump.KnownHostsFiles)
	assert.Equal(t, "no", tg.Jump.StrictHostKeyChecking)
	assert.Equal(t, []string{"/kh"}, tg.KnownHostsFiles)
	assert.Equal(t, "accept-new", tg.StrictHostKeyChecking)
}

func TestTargetProxyJumpToInventoryHost(t *testing.T) {
	tg, err := target(t, `[bastion]
bastion ansible_host=198.51.100.1 ansible_port=2022 ansible_user=jump
[kube_node]
node1 ansible_host=10.0.0.1 ansible_ssh_common_args="-J bastion"
node2 ansible_ssh_common_args="-o ProxyJump=ops@198.51.100.9:2200,other"
`, "node1")
	require.NoError(t, err)
	require.NotNil(t, tg.Jump)
	assert.Equal(t, "bastion", tg.Jump.Name)
	assert.Equal(t, "198.51.100.1:2022", tg.Jump.Addr())
	assert.Equal(t, "jump", tg.Jump.User)
}

func TestTargetRefusesPasswordsAndUnsupported(t *testing.T) {
	for _, tc := range []struct{ ini, want string }{
		{"node1 ansible_password=s3cret-value", "hosts.ini:1:24): layercheck verify does not log in with passwords"},
		{"node1 ansible_ssh_pass=s3cret-value", "ansible_ssh_pass is set"},
		{"node1 ansible_become=true ansible_become_password=s3cret-value", "ansible_become_password is set"},
		{"node1 ansible_become=true ansible_become_method=su", "with sudo only"},
		{"node1 ansible_connection=local", "connects over SSH only"},
		{"node1 ansible_port=99999", "is not a port number 1-65535"},
		{`node1 ansible_ssh_common_args='-o ProxyCommand="nc %h %p"'`, `only "ssh -W %h:%p [user@]bastion" is supported`},
		{`node1 ansible_ssh_common_args='-o ProxyCommand="ssh -W %h:%p {{ bastion }}"'`, "holds Jinja"},
		{`node1 ansible_ssh_common_args='-o StrictHostKeyChecking=maybe'`, "StrictHostKeyChecking"},
		{`node1 ansible_ssh_common_args="-o ProxyJump=a -o ProxyJump=b" ansible_become=maybe`, "ansible_become"},
		// the become keyword's boolean() fails the task on these
		// (ansible-core 2.16: "could not be converted to an bool"; 2.20:
		// "could not be converted to 'bool'")
		// (shlex takes the outer quotes, literal_eval the inner)
		{`node1 ansible_become='"1.0"'`, `ansible_become = "1.0" (`},
		{`node1 ansible_become='""'`, `ansible_become = "" (`},
	} {
		_, err := target(t, tc.ini+"\n", "node1")
		require.Error(t, err, tc.ini)
		assert.Contains(t, err.Error(), tc.want)
		assert.NotContains(t, err.Error(), "s3cret-value")
	}
}

func TestParseSSHArgs(t *testing.T) {
	o, err := parseSSHArgs([]string{"-o", "Port=2200", "-oUser=first", "-o", "User second", "-i", "/a", "-i/b", "-q", "-C"})
	require.NoError(t, err)
	assert.Equal(t, "2200", o["port"])
	assert.Equal(t, "first", o["user"], "the first value wins, as in ssh")
	assert.Equal(t, "/a\x00/b", o["identityfile"])
	o, err = parseSSHArgs([]string{"-o", "ProxyCommand ssh -o StrictHostKeyChecking=no -W %h:%p b"})
	require.NoError(t, err)
	assert.Equal(t, "ssh -o StrictHostKeyChecking=no -W %h:%p b", o["proxycommand"])
	_, err = parseSSHArgs([]string{"bastion"})
	require.Error(t, err)
	_, err = parseSSHArgs([]string{"-o"})
	require.Error(t, err)
}
