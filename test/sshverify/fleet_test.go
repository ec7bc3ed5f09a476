package sshverify

import (
	"encoding/xml"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/harness"
)

func TestVerifyHealthyFleet(t *testing.T) {
	f := newFleet(t, 3, fleetOpts{})
	inv := f.inventory(t)
	r := runVerify(t, "-i", inv, "--format", "json", "--forks", "2")
	require.Equal(t, 0, r.Code, "healthy fleet: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	rep := parseJSON(t, r)
	// A healthy generated node warns only where kubespray's defaults do
	// (no systemd in a tree, the resolv.conf loop risk): nothing fails.
	require.Contains(t, []string{"ok", "warn"}, rep.Status)
	require.Len(t, rep.Hosts, 3)
	for _, h := range rep.Hosts {
		require.NotNil(t, h.Report, h.Host)
		for l, lr := range h.Report.Layers {
			for _, res := range lr.Results {
				assert.NotContains(t, []string{"fail", "error"}, res.Status, "%s %s %s: %s", h.Host, l, res.Check, res.Msg)
			}
		}
	}
	// The live servers were reached through each SSH connection.
	ok := func(host, layer, check string) {
		t.Helper()
		for _, h := range rep.Hosts {
			if h.Host != host {
				continue
			}
			for _, res := range h.Report.Layers[layer].Results {
				if res.Check == check {
					assert.Equal(t, "ok", res.Status, "%s %s %s: %s", host, layer, check, res.Msg)
					return
				}
			}
		}
		t.Errorf("%s: no %s check %s", host, layer, check)
	}
	for _, c := range [][2]string{{"etcd", "members"}, {"etcd", "leader"}, {"dns", "query_nodelocaldns"}, {"dns", "query_coredns"}, {"certificates", "family/kubeadm"}, {"install", "drift:kube_pods_subnet"}, {"kubelet", "resolv_conf"}, {"cni", "interface:vxlan.calico"}} {
		ok("node1", c[0], c[1])
	}
	ok("node3", "dns", "query_coredns")
	f.noSecrets(t, r.Out+r.Err)

	text := runVerify(t, "-i", inv)
	require.Equal(t, 0, text.Code, text.Out+text.Err)
	require.Contains(t, text.Out, "HOST")
	require.Regexp(t, `node2\s+ok\s+`, text.Out)
	require.Regexp(t, `node1\s+ok\s+ok\s+ok\s+warn\s+`, text.Out)
	require.Contains(t, text.Out, "3 hosts: 0 ok, 3 warn, 0 failed, 0 unreachable: WARN")
	f.noSecrets(t, text.Out+text.Err)
}

func TestVerifyBrokenVariants(t *testing.T) {
	cases := []struct {
		name     string
		host     string
		layer    string
		opts     fleetOpts
		hostVars map[string]any
		want     []string
	}{
		{name: "expired apiserver certificate", host: "node1", layer: "certificates",
			opts: fleetOpts{breakIt: map[string]func(*testing.T, *harness.Tree){"node1": func(t *testing.T, tr *harness.Tree) {
				require.NoError(t, tr.ReissueLeaf("/etc/kubernetes/ssl/apiserver.crt", treeNow.Add(-400*24*time.Hour), treeNow.Add(-24*time.Hour), nil))
			}}},
			want: []string{"/etc/kubernetes/ssl/apiserver.crt on node1: expired on", "fix: ", "kubeadm certs renew apiserver"}},
		{name: "loopback resolver", host: "node2", layer: "kubelet",
			opts: fleetOpts{breakIt: map[string]func(*testing.T, *harness.Tree){"node2": func(t *testing.T, tr *harness.Tree) {
				require.NoError(t, tr.SetResolvConf("127.0.0.53"))
			}}},
			want: []string{"loopback nameserver 127.0.0.53", "kube_resolv_conf"}},
		{name: "podSubnet drift", host: "node1", layer: "install",
			hostVars: map[string]any{"kube_pods_subnet": "10.244.0.0/16"},
			want:     []string{`kube_pods_subnet is "10.244.0.0/16" in the inventory but "10.233.64.0/18" on node1`, "set kube_pods_subnet: 10.233.64.0/18 back"}},
		{name: "etcd down", host: "node1", layer: "etcd", opts: fleetOpts{etcdDown: true},
			want: []string{"etcd endpoint https://127.0.0.1:2379", "systemctl status etcd"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleet(t, 3, tc.opts)
			for k, v := range tc.hostVars {
				f.node(tc.host).Vars[k] = v
			}
			inv := f.inventory(t)
			r := runVerify(t, "-i", inv)
			require.Equal(t, 1, r.Code, "broken fleet passed:\n%s\n%s", r.Out, r.Err)
			head := "[FAIL] " + tc.host + " " + tc.layer + " "
			require.Contains(t, r.Out, head, r.Out)
			for _, w := range tc.want {
				assert.Contains(t, r.Out, w)
			}
			// Only the broken host fails; the others are checked and ok.
			for _, n := range f.Nodes {
				if n.Name != tc.host {
					assert.Regexp(t, n.Name+`\s+.*(OK|WARN)\n`, r.Out)
				}
			}
			assert.Regexp(t, tc.host+`\s+.*FAIL\n`, r.Out)
			f.noSecrets(t, r.Out+r.Err)

			// junit: one testsuite per host, the failure carries the remedy.
			j := runVerify(t, "-i", inv, "--format", "junit")
			require.Equal(t, 1, j.Code)
			var suites struct {
				Suites []struct {
					Name     string `xml:"name,attr"`
					Failures int    `xml:"failures,attr"`
					Cases    []struct {
						Name    string `xml:"name,attr"`
						Failure *struct {
							Text string `xml:",chardata"`
						} `xml:"failure"`
					} `xml:"testcase"`
				} `xml:"testsuite"`
			}
			require.NoError(t, xml.Unmarshal([]byte(j.Out), &suites), j.Out)
			require.Len(t, suites.Suites, 3)
			var found bool
			for _, s := range suites.Suites {
				for _, c := range s.Cases {
					if c.Failure != nil {
						assert.Equal(t, tc.host, s.Name)
						if strings.HasPrefix(c.Name, tc.layer+": ") && strings.Contains(c.Failure.Text, "fix: ") {
							found = true
						}
					}
				}
			}
			assert.True(t, found, "no failed %s testcase with a remedy in:\n%s", tc.layer, j.Out)
			md := runVerify(t, "-i", inv, "--format", "markdown")
			assert.Contains(t, md.Out, "| host | ")
			assert.Contains(t, md.Out, "- **"+tc.host+"** `"+tc.layer+"`")
			f.noSecrets(t, j.Out+md.Out)
		})
	}
}

func TestVerifyUnreachableHost(t *testing.T) {
	f := newFleet(t, 3, fleetOpts{})
	f.node("node3").SSHD.Stop()
	inv := f.inventory(t)
	r := runVerify(t, "-i", inv)
	require.Equal(t, 1, r.Code, r.Out+r.Err)
	require.Contains(t, r.Out, "fatal: [node3]: UNREACHABLE! => connect to 127.0.0.1:")
	require.Contains(t, r.Out, "connection refused")
	require.Regexp(t, `node1\s+ok\s+.*WARN\n`, r.Out)
	require.Regexp(t, `node2\s+ok\s+.*WARN\n`, r.Out)
	require.Regexp(t, `node3\s+-\s+.*UNREACHABLE\n`, r.Out)
	require.Contains(t, r.Out, "3 hosts: 0 ok, 2 warn, 0 failed, 1 unreachable")
}

// A host whose port accepts connections but never speaks SSH is bounded
// by --connect-timeout and reported unreachable; the others are checked.
func TestVerifyHangingHost(t *testing.T) {
	f := newFleet(t, 2, fleetOpts{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	f.node("node2").Vars["ansible_port"] = l.Addr().(*net.TCPAddr).Port
	inv := f.inventory(t)
	r := runVerify(t, "-i", inv, "--connect-timeout", "2s")
	require.Equal(t, 1, r.Code, r.Out+r.Err)
	require.Contains(t, r.Out, "fatal: [node2]: UNREACHABLE! => ssh handshake with root@"+l.Addr().String())
	require.Contains(t, r.Out, "not done within 2s (is an SSH server listening there?)")
	require.Regexp(t, `node1\s+ok\s+.*WARN\n`, r.Out)
}

// --kubeconfig runs the cluster layers once after the nodes: here the API
// server is down, so each cluster layer is an error naming the server and
// the run fails; the kubeconfig's client key appears nowhere.
func TestVerifyClusterOnceWithKubeconfig(t *testing.T) {
	f := newFleet(t, 1, fleetOpts{})
	data, err := os.ReadFile(f.node("node1").Tree.Path("/etc/kubernetes/admin.conf"))
	require.NoError(t, err)
	server := fmt.Sprintf("https://127.0.0.1:%d", harness.FreePort(t))
	kc := filepath.Join(t.TempDir(), "admin.conf")
	require.NoError(t, os.WriteFile(kc, []byte(strings.Replace(string(data), "https://10.10.0.11:6443", server, 1)), 0o600))
	inv := f.inventory(t)
	r := runVerify(t, "-i", inv, "--kubeconfig", kc)
	require.Equal(t, 1, r.Code, r.Out+r.Err)
	require.Contains(t, r.Out, "cluster "+server+": ERROR")
	require.Contains(t, r.Out, "[ERROR] cluster nodes api_server: API server "+server+" refused the connection")
	require.Regexp(t, `node1\s+ok\s+.*WARN\n`, r.Out)
	f.noSecrets(t, r.Out+r.Err)
	j := runVerify(t, "-i", inv, "--kubeconfig", kc, "--format", "junit")
	require.Contains(t, j.Out, `<testsuite name="cluster"`)
	f.noSecrets(t, j.Out)
}
