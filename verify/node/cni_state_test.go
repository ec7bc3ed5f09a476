package node

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/verify"
)

func cniResults(t *testing.T, env *Env) ([]verify.Result, *CNIFacts) {
	t.Helper()
	res, facts, err := cniLayer{}.Check(context.Background(), env)
	must(t, err)
	return res, facts.(*CNIFacts)
}

// vxlan.calico as the kernel shows an up vxlan device (flags 0x1003,
// operstate unknown), then set down (IFF_UP cleared: flags 0x1002, and
// sysfs's operstate "down" for a link that is not running).
func TestCNIInterfaceUp(t *testing.T) {
	tr := buildTree(t, harness.Config{})
	env := testEnv(tr, testNow)
	res, f := cniResults(t, env)
	r := resultCheck(res, "interface_up:vxlan.calico")
	if r == nil || r.Status != verify.StatusOK || r.Msg != "vxlan.calico is up (/sys/class/net/vxlan.calico/flags: flags 0x1003, operstate unknown)" {
		t.Fatalf("up vxlan.calico: %+v", r)
	}
	if st := f.Interfaces[0].State; st == nil || st.Up == nil || !*st.Up || st.Source != "/sys/class/net/vxlan.calico/flags" {
		t.Errorf("facts: %+v", f.Interfaces[0].State)
	}
	must(t, tr.WriteFile("/sys/class/net/vxlan.calico/flags", []byte("0x1002\n"), 0o444))
	must(t, tr.WriteFile("/sys/class/net/vxlan.calico/operstate", []byte("down\n"), 0o444))
	res, _ = cniResults(t, env)
	bad := failed(res)
	if len(bad) != 1 || bad[0].Check != "interface_up:vxlan.calico" ||
		!strings.Contains(bad[0].Msg, "interface vxlan.calico on node1 is down (/sys/class/net/vxlan.calico/flags: flags 0x1002, operstate down) although calico_vxlan_mode: Always") ||
		!strings.Contains(bad[0].Remediation, "ip link set vxlan.calico up") || !strings.Contains(bad[0].Remediation, "udp/4789") {
		t.Errorf("down vxlan.calico: %+v", bad)
	}
	// Without flags, operstate decides: "down" is a link not running.
	must(t, tr.Remove("/sys/class/net/vxlan.calico/flags"))
	res, _ = cniResults(t, env)
	if r := resultCheck(res, "interface_up:vxlan.calico"); r == nil || r.Status != verify.StatusFail || !strings.Contains(r.Msg, "/sys/class/net/vxlan.calico/operstate: operstate down") {
		t.Errorf("operstate down: %+v", r)
	}
	must(t, tr.WriteFile("/sys/class/net/vxlan.calico/operstate", []byte("unknown\n"), 0o444))
	res, _ = cniResults(t, env)
	if r := resultCheck(res, "interface_up:vxlan.calico"); r == nil || r.Status != verify.StatusOK {
		t.Errorf("operstate unknown (an up vxlan device): %+v", r)
	}
	// Up, but the device below it has no carrier.
	must(t, tr.WriteFile("/sys/class/net/vxlan.calico/flags", []byte("0x1003\n"), 0o444))
	must(t, tr.WriteFile("/sys/class/net/vxlan.calico/operstate", []byte("lowerlayerdown\n"), 0o444))
	res, _ = cniResults(t, env)
	if r := resultCheck(res, "interface_up:vxlan.calico"); r == nil || r.Status != verify.StatusFail || !strings.Contains(r.Msg, "is set up but its link is lowerlayerdown") {
		t.Errorf("lowerlayerdown: %+v", r)
	}
	// Neither file, no command on a tree: not read, said so.
	must(t, tr.Remove("/sys/class/net/vxlan.calico/operstate"))
	must(t, tr.Remove("/sys/class/net/vxlan.calico/flags"))
	res, _ = cniResults(t, env)
	if r := resultCheck(res, "interface_up:vxlan.calico"); r == nil || r.Status != verify.StatusSkipped ||
		r.Msg != "the state of vxlan.calico was not read: /sys/class/net/vxlan.calico has neither flags nor operstate, and no command runs on a node tree" {
		t.Errorf("no state: %+v", r)
	}
	// A missing interface has no state result: its absence is the one cause.
	must(t, tr.WriteFile("/sys/class/net/vxlan.calico/flags", []byte("0x1003\n"), 0o444))
	env.Options.CalicoIPIPMode = "Always"
	res, _ = cniResults(t, env)
	if resultCheck(res, "interface:tunl0") == nil || resultCheck(res, "interface_up:tunl0") != nil {
		t.Errorf("missing tunl0: %+v", res)
	}
}

// ipCmder answers `ip -o link show dev NAME` with out (or err) and
// records the command lines.
type ipCmder struct {
	out   string
	err   error
	calls []string
}

func (f *ipCmder) Command(_ context.Context, name string, args ...string) verify.Cmd {
	f.calls = append(f.calls, strings.Join(append([]string{name}, args...), " "))
	return ipCmd{f}
}

type ipCmd struct{ f *ipCmder }

func (c ipCmd) Output() ([]byte, error) { return []byte(c.f.out), c.f.err }

// The kubespray v2.31.0 flannel nodes (systemd-nspawn machines): sysfs is
// the host's, so it says nothing of flannel.1, which /proc/net/dev lists;
// on the node `ip -o link show` reads the node's own namespace.
func TestCNIInterfaceUpInAContainer(t *testing.T) {
	tr := buildTree(t, harness.Config{Interfaces: []string{"eth0", "ifb0", "ifb1", "lo"}})
	env := testEnv(tr, testNow)
	env.Options.Groups = []string{"kube_node", "k8s_cluster"}
	env.Options.KubeNetworkPlugin = "flannel"
	must(t, tr.WriteFile("/proc/net/dev", []byte(`Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:  912300    8121    0    0    0     0          0         0   912300    8121    0    0    0     0       0          0
  eth0: 48813371   31260    0    0    0     0          0         0  4122018   25410    0    0    0     0       0          0
flannel.1:  125436    1120    0    0    0     0          0         0   118020    1094    0   12    0     0       0          0
`), 0o444))
	res, _ := cniResults(t, env)
	r := resultCheck(res, "interface_up:flannel.1")
	if r == nil || r.Status != verify.StatusSkipped || !strings.Contains(r.Msg, "/sys/class/net lists other interfaces than /proc/net/dev (the node's sysfs belongs to another network namespace, as in a container), and no command runs on a node tree") {
		t.Fatalf("flannel.1 in a container, no command: %+v", r)
	}
	ip := &ipCmder{out: "7: flannel.1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 qdisc noqueue state UNKNOWN mode DEFAULT group default \\    link/ether 6e:2b:0f:5a:1c:90 brd ff:ff:ff:ff:ff:ff\n"}
	env.Cmder = ip
	res, f := cniResults(t, env)
	r = resultCheck(res, "interface_up:flannel.1")
	if r == nil || r.Status != verify.StatusOK || r.Msg != "flannel.1 is up (ip -o link show dev flannel.1: flags BROADCAST,MULTICAST,UP,LOWER_UP, operstate unknown)" {
		t.Errorf("flannel.1 up through ip: %+v", r)
	}
	if !slices.Equal(ip.calls, []string{"ip -o link show dev flannel.1"}) || f.Interfaces[0].State.Operstate != "unknown" {
		t.Errorf("calls %v, state %+v", ip.calls, f.Interfaces[0].State)
	}
	ip.out = "7: flannel.1: <BROADCAST,MULTICAST> mtu 1450 qdisc noqueue state DOWN mode DEFAULT group default \\    link/ether 6e:2b:0f:5a:1c:90\n"
	res, _ = cniResults(t, env)
	if r := resultCheck(res, "interface_up:flannel.1"); r == nil || r.Status != verify.StatusFail ||
		!strings.Contains(r.Msg, "interface flannel.1 on node1 is down (ip -o link show dev flannel.1: flags BROADCAST,MULTICAST, operstate down) although kube_network_plugin: flannel") ||
		!strings.Contains(r.Remediation, "udp/8472") {
		t.Errorf("flannel.1 down through ip: %+v", r)
	}
	ip.out, ip.err = "", &verify.RunError{Command: []string{"ip", "-o", "link", "show", "dev", "flannel.1"}, Output: []byte(`Device "flannel.1" does not exist.`), Inner: errors.New("exit status 1")}
	res, _ = cniResults(t, env)
	if r := resultCheck(res, "interface_up:flannel.1"); r == nil || r.Status != verify.StatusSkipped || !strings.Contains(r.Msg, `Device "flannel.1" does not exist.`) {
		t.Errorf("ip failed: %+v", r)
	}
}

func TestParseIPLink(t *testing.T) {
	for _, tc := range []struct {
		out, name, flags, oper string
		ok                     bool
	}{
		{"5: vxlan.calico: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 qdisc noqueue state UNKNOWN mode DEFAULT group default \\    link/ether 66:1f:ab:00:12:34 brd ff:ff:ff:ff:ff:ff", "vxlan.calico", "BROADCAST,MULTICAST,UP,LOWER_UP", "unknown", true},
		{"3: eth0@if12: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode DEFAULT", "eth0", "BROADCAST,MULTICAST,UP,LOWER_UP", "up", true},
		{"4: tunl0@NONE: <NOARP> mtu 1480 qdisc noop state DOWN mode DEFAULT", "tunl0", "NOARP", "down", true},
		{"5: vxlan.calico: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450", "flannel.1", "", "", false},
		{"", "flannel.1", "", "", false},
		{"garbage", "x", "", "", false},
		{"5: x: BROADCAST mtu", "x", "", "", false},
	} {
		flags, oper, ok := parseIPLink(tc.out, tc.name)
		if flags != tc.flags || oper != tc.oper || ok != tc.ok {
			t.Errorf("%q: %q %q %v", tc.out, flags, oper, ok)
		}
	}
}
