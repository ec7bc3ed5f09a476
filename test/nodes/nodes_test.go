//go:build nodes

// Package nodes tests the node machines of test/nodes/nodes.sh: up gives
// booted Debian machines reachable over ssh from the lab namespace, with
// passwordless sudo and what kubespray's preinstall needs of the kernel;
// up is idempotent; down leaves no process, namespace, mount or cgroup.
// Needs root; `make test-nodes` runs it.
package nodes

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func script(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "nodes.sh")
}

func sh(t *testing.T, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, script(t), args...)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func lines(s string, pred func(string) bool) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if pred(l) {
			out = append(out, l)
		}
	}
	return out
}

// leftovers lists what the harness owns that is still there.
func leftovers(t *testing.T) []string {
	t.Helper()
	// Only this lab's: nodes.sh lets two labs run side by side with
	// different LAYERCHECK_NODES_NETNS and LAYERCHECK_NODES_DIR.
	prefix := os.Getenv("LAYERCHECK_NODES_NETNS")
	if prefix == "" {
		prefix = "lc"
	}
	dir := os.Getenv("LAYERCHECK_NODES_DIR")
	if dir == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			cache = filepath.Join(os.Getenv("HOME"), ".cache")
		}
		dir = filepath.Join(cache, "layercheck", "nodes")
	}
	run := filepath.Join(dir, "run") + "/"
	var left []string
	if out, _ := exec.Command("pgrep", "-a", "-x", "systemd-nspawn").Output(); len(out) > 0 {
		left = append(left, lines(string(out), func(l string) bool { return strings.Contains(l, run) })...)
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	left = append(left, lines(string(out), func(l string) bool { return strings.HasPrefix(l, prefix+"-") })...)
	mounts, _ := os.ReadFile("/proc/self/mounts")
	left = append(left, lines(string(mounts), func(l string) bool { return strings.Contains(l, run) })...)
	cgs, _ := filepath.Glob("/sys/fs/cgroup/*/" + prefix + "-node*")
	left = append(left, cgs...)
	return left
}

func TestNodesUpDown(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the node machines need root (network namespaces, mounts, systemd-nspawn)")
	}
	t.Cleanup(func() { _, _ = sh(t, 5*time.Minute, "down") })
	out, err := sh(t, 20*time.Minute, "up", "2")
	require.NoError(t, err, out)

	for i, n := range []string{"node1", "node2"} {
		out, err := sh(t, time.Minute, "ssh", n, "hostname; ip -4 -o addr show eth0; sudo -n id -u; systemctl is-system-running; sudo -n modprobe overlay && echo modprobe-ok")
		require.NoError(t, err, out)
		assert.Contains(t, out, n+"\n")
		assert.Contains(t, out, "192.0.2.1"+string(rune('1'+i))+"/24")
		assert.Contains(t, out, "\n0\n", "passwordless sudo")
		assert.Contains(t, out, "running", "systemd reached its target")
		assert.Contains(t, out, "modprobe-ok", "modules.builtin lists the built-in overlay (br_netfilter is left out where the kernel has no /proc/modules)")
	}
	// The nodes reach each other; the inventory names them.
	out, err = sh(t, time.Minute, "ssh", "node1", "bash -c 'echo > /dev/tcp/192.0.2.12/22' && echo reach-ok")
	require.NoError(t, err, out)
	assert.Contains(t, out, "reach-ok")
	inv, err := sh(t, time.Minute, "inventory")
	require.NoError(t, err)
	data, err := os.ReadFile(strings.TrimSpace(inv))
	require.NoError(t, err)
	assert.Contains(t, string(data), "node2 ansible_host=192.0.2.12")
	assert.Contains(t, string(data), "StrictHostKeyChecking=yes")

	// What kubespray's nodelocaldns needs of the kernel: its dummy module
	// check passes; without the dummy link type a link named nodelocaldns
	// is there and comes back when node-cache, exiting, deletes it.
	out, err = sh(t, 2*time.Minute, "nodelocaldns")
	require.NoError(t, err, out)
	out, err = sh(t, time.Minute, "nodelocaldns")
	require.NoError(t, err, "nodelocaldns is idempotent: %s", out)
	for _, n := range []string{"node1", "node2"} {
		out, err = sh(t, time.Minute, "ssh", n, "if sudo -n ip link add lctry type dummy 2>/dev/null; then sudo -n ip link del lctry; echo has-dummy; "+
			"else ip -o link show nodelocaldns && sudo -n ip link del nodelocaldns && sleep 3 && ip -o link show nodelocaldns && echo link-back; fi; "+
			"sudo -n modprobe dummy numdummies=0 && echo dummy-ok; python3 -c 'open(\"/proc/modules\").read()' && echo proc-modules-ok")
		require.NoError(t, err, out)
		if !strings.Contains(out, "has-dummy") {
			assert.Contains(t, out, "link-back", "%s: the unit puts the link back", n)
		}
		assert.Contains(t, out, "dummy-ok", "%s: kubespray's Check dummy module runs modprobe dummy numdummies=0", n)
		assert.Contains(t, out, "proc-modules-ok", "%s: community.general.modprobe reads /proc/modules first", n)
	}

	// up again: the same machines, not new ones.
	before, _ := sh(t, time.Minute, "status")
	out, err = sh(t, 5*time.Minute, "up", "2")
	require.NoError(t, err, out)
	after, _ := sh(t, time.Minute, "status")
	assert.Equal(t, before, after)
	assert.Len(t, lines(after, func(l string) bool { return strings.HasSuffix(l, " running") }), 2)

	out, err = sh(t, 5*time.Minute, "down")
	require.NoError(t, err, out)
	assert.Empty(t, leftovers(t), "down leaves nothing behind")
	out, err = sh(t, 5*time.Minute, "down")
	require.NoError(t, err, "down is idempotent: %s", out)
}
