package sshverify

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/redact"
	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/verify/node"
)

func TestVerifyHostKeys(t *testing.T) {
	f := newFleet(t, 2, fleetOpts{})
	inv := f.inventory(t)
	good, err := os.ReadFile(f.KnownHosts)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(good)), "\n")
	require.Len(t, lines, 2)

	// node2's key on file is another key: refused, node1 still checked.
	other := harness.NewKeyPair(t, filepath.Join(f.Dir, "other_host_key"))
	wrong := lines[0] + "\n" + strings.Fields(lines[1])[0] + " " + strings.TrimSpace(string(sshAuthorized(other))) + "\n"
	require.NoError(t, os.WriteFile(f.KnownHosts, []byte(wrong), 0o600))
	r := runVerify(t, "-i", inv, "--accept-new-host-keys")
	require.Equal(t, 1, r.Code, r.Out+r.Err)
	require.Contains(t, r.Out, "fatal: [node2]: UNREACHABLE! => ")
	require.Contains(t, r.Out, "REMOTE HOST IDENTIFICATION HAS CHANGED for [127.0.0.1]:")
	require.Contains(t, r.Out, f.KnownHosts+":2")
	require.Regexp(t, `node1\s+ok\s+.*WARN\n`, r.Out)

	// node2 not on file: refused unless --accept-new-host-keys, which adds it.
	require.NoError(t, os.WriteFile(f.KnownHosts, []byte(lines[0]+"\n"), 0o600))
	r = runVerify(t, "-i", inv)
	require.Equal(t, 1, r.Code, r.Out+r.Err)
	require.Contains(t, r.Out, "fatal: [node2]: UNREACHABLE! => ")
	require.Contains(t, r.Out, "host key of [127.0.0.1]:"+fmt.Sprint(f.node("node2").SSHD.Port)+" is not known")
	require.Contains(t, r.Out, "--accept-new-host-keys")
	r = runVerify(t, "-i", inv, "--accept-new-host-keys")
	require.Equal(t, 0, r.Code, r.Out+r.Err)
	now, err := os.ReadFile(f.KnownHosts)
	require.NoError(t, err)
	require.Contains(t, string(now), f.node("node2").SSHD.KnownHostsLine())
	r = runVerify(t, "-i", inv)
	require.Equal(t, 0, r.Code, "the accepted key is on file now:\n"+r.Out+r.Err)
}

func sshAuthorized(k *harness.KeyPair) []byte {
	return []byte(k.Public.Type() + " " + base64Key(k))
}

// TestVerifyBecome logs in as a non-root user made for the test, whose
// sudo needs no password: the node trees (in root's 0700 test
// directories, keys mode 0600) are read through `sudo -n sftp-server`.
func TestVerifyBecome(t *testing.T) {
	f := newFleet(t, 2, fleetOpts{})
	user := makeSudoUser(t)
	f.AllVars["ansible_user"] = user
	f.AllVars["layercheck_verify_become"] = false
	inv := f.inventory(t)

	r := runVerify(t, "-i", inv, "--format", "json")
	require.Equal(t, 1, r.Code, "without become the login user cannot read the trees:\n"+r.Out+r.Err)
	require.Contains(t, r.Out, "permission denied")

	// The verify role's default: layercheck_verify_become true.
	delete(f.AllVars, "layercheck_verify_become")
	inv = f.inventory(t)
	r = runVerify(t, "-i", inv, "--format", "json")
	require.Equal(t, 0, r.Code, r.Out+r.Err)
	rep := parseJSON(t, r)
	for _, h := range rep.Hosts {
		require.NotNil(t, h.Report, "%s: %s", h.Host, h.Msg)
		assert.Equal(t, "ok", h.Report.Layers["certificates"].Status, h.Host)
	}

	// A become password is refused before connecting.
	f.AllVars["ansible_become"] = true
	f.AllVars["ansible_become_password"] = "not-sent-anywhere-7731"
	inv = f.inventory(t)
	r = runVerify(t, "-i", inv)
	require.Equal(t, 1, r.Code)
	require.Contains(t, r.Out, "ansible_become_password is set")
	require.Contains(t, r.Out, "passwordless sudo")
	require.NotContains(t, r.Out+r.Err, "not-sent-anywhere-7731")
	delete(f.AllVars, "ansible_become_password")
	f.AllVars["ansible_password"] = "not-sent-anywhere-7732"
	inv = f.inventory(t)
	r = runVerify(t, "-i", inv)
	require.Equal(t, 1, r.Code)
	require.Contains(t, r.Out, "ansible_password is set")
	require.NotContains(t, r.Out+r.Err, "not-sent-anywhere-7732")
}

// makeSudoUser creates a login user with passwordless sudo, removed when
// the test ends. It needs root; the test fails (not skips) without it.
func makeSudoUser(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("TestVerifyBecome creates a user with useradd and a sudoers file: run it as root (CI does)")
	}
	if _, err := exec.LookPath("sudo"); err != nil {
		t.Fatal("sudo not found: make ssh-deps installs it")
	}
	user := fmt.Sprintf("lcv%d", os.Getpid()%100000)
	_ = exec.Command("userdel", user).Run()
	if out, err := exec.Command("useradd", "-M", "-d", "/nonexistent", "-s", "/bin/sh", user).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v: %s", user, err, out)
	}
	// A locked account (no password) may still log in with a key.
	_ = exec.Command("usermod", "-p", "*", user).Run()
	sudoers := "/etc/sudoers.d/layercheck-test-" + user
	require.NoError(t, os.WriteFile(sudoers, []byte(user+" ALL=(ALL) NOPASSWD: ALL\n"), 0o440))
	// -f: the sshd servers (stopped by cleanups that run after this one)
	// may still hold the user's sessions.
	t.Cleanup(func() {
		os.Remove(sudoers)
		if out, err := exec.Command("userdel", "-f", user).CombinedOutput(); err != nil {
			t.Errorf("userdel -f %s: %v: %s", user, err, out)
		}
	})
	return user
}

// TestVerifyThroughBastion reaches a node only through a second sshd: once
// with kubespray's ProxyCommand "ssh -W %h:%p ... bastion", once with
// ProxyJump naming the bastion's inventory host; the bastion's log shows
// the forwarded connection to the node's sshd each time.
func TestVerifyThroughBastion(t *testing.T) {
	f := newFleet(t, 1, fleetOpts{})
	bastion := harness.StartSSHD(t, f.AuthKeys)
	kh, err := os.ReadFile(f.KnownHosts)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(f.KnownHosts, append(kh, []byte(bastion.KnownHostsLine()+"\n")...), 0o600))
	node := f.node("node1")
	forwarded := regexp.MustCompile(`server_request_direct_tcpip: originator [^ ]+ port \d+, target 127\.0\.0\.1 port ` + fmt.Sprint(node.SSHD.Port))

	common := "-o UserKnownHostsFile=" + f.KnownHosts + " -o StrictHostKeyChecking=yes"
	f.AllVars["ansible_ssh_common_args"] = common + fmt.Sprintf(` -o ProxyCommand="ssh -o StrictHostKeyChecking=yes -W %%h:%%p -q -p %d -i %s root@127.0.0.1"`, bastion.Port, f.Key.File)
	inv := f.inventory(t)
	r := runVerify(t, "-i", inv, "--format", "json")
	require.Equal(t, 0, r.Code, r.Out+r.Err)
	rep := parseJSON(t, r)
	require.Equal(t, fmt.Sprintf("root@127.0.0.1:%d", bastion.Port), rep.Hosts[0].Via)
	log, err := os.ReadFile(bastion.Log)
	require.NoError(t, err)
	require.Regexp(t, forwarded, string(log), "the bastion forwarded no connection to node1's sshd")
	n := len(forwarded.FindAllIndex(log, -1))

	// ProxyJump to an inventory host (the bastion group kubespray uses).
	f.AllVars["ansible_ssh_common_args"] = common
	node.Vars["ansible_ssh_common_args"] = common + " -o ProxyJump=bastion"
	inv = f.inventory(t)
	data, err := os.ReadFile(inv)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	all := m["all"].(map[string]any)
	all["children"].(map[string]any)["bastion"] = map[string]any{"hosts": map[string]any{"bastion": map[string]any{"ansible_host": "127.0.0.1", "ansible_port": bastion.Port}}}
	data, _ = json.Marshal(m)
	require.NoError(t, os.WriteFile(inv, data, 0o644))
	r = runVerify(t, "-i", inv, "--format", "json")
	require.Equal(t, 0, r.Code, r.Out+r.Err)
	rep = parseJSON(t, r)
	require.Len(t, rep.Hosts, 1, "the bastion is not a node to verify")
	log, err = os.ReadFile(bastion.Log)
	require.NoError(t, err)
	require.Greater(t, len(forwarded.FindAllIndex(log, -1)), n, "ProxyJump: the bastion forwarded no new connection to node1's sshd")

	// Any other ProxyCommand is refused: layercheck runs no local command.
	node.Vars["ansible_ssh_common_args"] = common + ` -o ProxyCommand="nc %h %p"`
	inv = f.inventory(t)
	r = runVerify(t, "-i", inv)
	require.Equal(t, 1, r.Code)
	require.Contains(t, r.Out, `only "ssh -W %h:%p [user@]bastion" is supported`)
}

// TestSSHMatchesNodeModule runs the node layers on the same tree twice:
// as the node_facts module does (node.RunRequest, files read in place,
// DNS over UDP from this machine) and over SSH (SFTP, DNS over TCP and
// etcd through the tunnel); the facts and results must be the same.
func TestSSHMatchesNodeModule(t *testing.T) {
	f := newFleet(t, 1, fleetOpts{})
	n1 := f.node("node1")
	inv := f.inventory(t)
	r := runVerify(t, "-i", inv, "--format", "json")
	require.Equal(t, 0, r.Code, r.Out+r.Err)
	var viaSSH struct {
		Hosts []struct {
			Report map[string]any `json:"report"`
		} `json:"hosts"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &viaSSH))

	req := node.Request{Options: node.NewOptions(), Root: n1.Tree.Root, Host: "node1",
		Now: f.AllVars["layercheck_verify_now"].(string), NetTimeout: 3, LayerTimeout: 30,
		AddrMap: n1.Vars["layercheck_verify_addr_map"].(map[string]string)}
	req.Groups = []string{"etcd", "k8s_cluster", "kube_control_plane", "kube_node"}
	req.EtcdMembers = []string{"node1"}
	req.CertWarnDays, req.CertFailDays = 30, 7
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	local, err := node.RunRequest(ctx, &req)
	require.NoError(t, err)
	data, err := json.Marshal(local)
	require.NoError(t, err)
	// Every command's output passes through the redactor (names that look
	// secret, e.g. ETCDCTL_KEY, are masked): the local report too.
	var inPlace map[string]any
	require.NoError(t, json.Unmarshal([]byte(redact.String(string(data))), &inPlace))

	a, b := normalize(inPlace["layers"]), normalize(viaSSH.Hosts[0].Report["layers"])
	if !reflect.DeepEqual(a, b) {
		ja, _ := json.MarshalIndent(a, "", " ")
		jb, _ := json.MarshalIndent(b, "", " ")
		t.Fatalf("facts differ:\n--- node module\n%s\n--- over SSH\n%s", ja, jb)
	}
	layers := a.(map[string]any)
	require.Len(t, layers, len(node.LayerNames()))
}

// normalize drops what differs between two runs by nature: durations and
// latencies (also inside messages) and etcd's live counters.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch k {
			case "duration_ms", "latency_ms", "raft_index", "raft_applied_index", "revision", "db_size", "db_size_in_use", "raft_term":
				continue
			}
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case string:
		return msLatency.ReplaceAllString(x, " in N ms")
	}
	return v
}

var msLatency = regexp.MustCompile(` in [0-9.]+ ms`)
