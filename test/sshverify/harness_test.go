// Package sshverify tests `layercheck verify` against real OpenSSH sshd
// servers on loopback ports, one per simulated node, each node a tree made
// by test/harness in its own directory (layercheck_verify_root
// points the layers there), its etcd and DNS servers on loopback reached
// through the SSH connection.
package sshverify

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/internal/app"
	"github.com/layercheck/layercheck/test/harness"
)

// The trees are made at treeNow and judged an hour later.
var treeNow = time.Date(2026, 11, 30, 14, 22, 6, 0, time.UTC)

// simNode is one simulated node: its tree, its sshd, its host vars.
type simNode struct {
	Name string
	Tree *harness.Tree
	SSHD *harness.SSHD
	Vars map[string]any
}

// simFleet is N nodes: node1 is control plane + etcd + node (its etcd
// runs on loopback), the others are kube_node workers behind kubespray's
// nginx-proxy (an API server answering on their 127.0.0.1:6443); one DNS server
// answers as nodelocaldns and CoreDNS for all of them (over TCP too).
type simFleet struct {
	Dir        string
	Key        *harness.KeyPair
	AuthKeys   string
	KnownHosts string
	Nodes      []*simNode
	AllVars    map[string]any
}

type fleetOpts struct {
	etcdDown bool
	// breakIt changes a node's tree before the run.
	breakIt map[string]func(t *testing.T, tr *harness.Tree)
}

func newFleet(t *testing.T, n int, o fleetOpts) *simFleet {
	t.Helper()
	harness.RequireSSHD(t)
	t.Setenv("SSH_AUTH_SOCK", "") // only the key the inventory names
	f := &simFleet{Dir: t.TempDir()}
	f.Key = harness.NewKeyPair(t, filepath.Join(f.Dir, "id_ed25519"))
	f.AuthKeys = harness.AuthorizedKeysDir(t, f.Key.Public)
	f.KnownHosts = filepath.Join(f.Dir, "known_hosts")
	dns := harness.StartDNS(t, "127.0.0.1", "kubernetes.default.svc.cluster.local", "10.233.0.1", true)
	var kh strings.Builder
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("node%d", i)
		ip := fmt.Sprintf("10.10.0.%d", 10+i)
		tr, err := harness.Build(filepath.Join(f.Dir, name), harness.Config{Now: treeNow, Host: name, Hosts: []string{name}, IPs: []string{ip}})
		require.NoError(t, err)
		addr := map[string]string{"169.254.25.10:53": dns.Addr, "10.233.0.3:53": dns.Addr}
		if i == 1 {
			ca, cert, key := tr.EtcdFiles()
			srv := t.TempDir()
			for _, p := range []string{ca, cert, key} {
				data, err := os.ReadFile(tr.Path(p))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(srv, filepath.Base(p)), data, 0o600))
			}
			cp, pp := harness.FreePort(t), harness.FreePort(t)
			if !o.etcdDown {
				harness.StartEtcd(t, filepath.Join(srv, "ca.pem"), []harness.EtcdMember{{
					Name: "etcd1", ClientPort: cp, PeerPort: pp, AdvertisePeer: "https://" + ip + ":2380",
					CertFile: filepath.Join(srv, filepath.Base(cert)), KeyFile: filepath.Join(srv, filepath.Base(key)),
				}})
			}
			addr["127.0.0.1:2379"] = fmt.Sprintf("127.0.0.1:%d", cp)
			addr[ip+":2379"] = fmt.Sprintf("127.0.0.1:%d", cp)
			addr[ip+":2380"] = fmt.Sprintf("127.0.0.1:%d", pp)
		}
		if i > 1 {
			// a worker: kubespray's nginx-proxy in front of node1's API server
			require.NoError(t, tr.LocalhostLB("10.10.0.11:6443"))
			addr["127.0.0.1:6443"] = tr.ServeAPIServerTLS(t)
		}
		if fn := o.breakIt[name]; fn != nil {
			fn(t, tr)
		}
		s := harness.StartSSHD(t, f.AuthKeys)
		kh.WriteString(s.KnownHostsLine() + "\n")
		f.Nodes = append(f.Nodes, &simNode{Name: name, Tree: tr, SSHD: s, Vars: map[string]any{
			"ansible_host":               "127.0.0.1",
			"ansible_port":               s.Port,
			"layercheck_verify_root":     tr.Root,
			"layercheck_verify_addr_map": addr,
		}})
	}
	require.NoError(t, os.WriteFile(f.KnownHosts, []byte(kh.String()), 0o600))
	f.AllVars = map[string]any{
		"ansible_user":                  "root",
		"ansible_ssh_private_key_file":  f.Key.File,
		"ansible_ssh_common_args":       "-o UserKnownHostsFile=" + f.KnownHosts + " -o StrictHostKeyChecking=yes",
		"layercheck_verify_now":         treeNow.Add(time.Hour).Format(time.RFC3339),
		"layercheck_verify_net_timeout": 3,
	}
	return f
}

func (f *simFleet) node(name string) *simNode {
	for _, n := range f.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// inventory writes a YAML inventory (JSON is YAML) of the fleet: node1 in
// kube_control_plane, etcd and kube_node, the others in kube_node.
func (f *simFleet) inventory(t *testing.T) string {
	t.Helper()
	hosts := map[string]any{}
	for _, n := range f.Nodes {
		hosts[n.Name] = n.Vars
	}
	workers := map[string]any{}
	for _, n := range f.Nodes {
		workers[n.Name] = nil
	}
	inv := map[string]any{"all": map[string]any{
		"vars":  f.AllVars,
		"hosts": hosts,
		"children": map[string]any{
			"kube_control_plane": map[string]any{"hosts": map[string]any{"node1": nil}},
			"etcd":               map[string]any{"hosts": map[string]any{"node1": nil}},
			"kube_node":          map[string]any{"hosts": workers},
		},
	}}
	data, err := json.MarshalIndent(inv, "", "  ")
	require.NoError(t, err)
	dir := filepath.Join(f.Dir, "inventory")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	p := filepath.Join(dir, "hosts.yml")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

type runResult struct {
	Out, Err string
	Code     int
}

// runVerify runs `layercheck verify` in this process.
func runVerify(t *testing.T, args ...string) runResult {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := app.Run(ctx, append([]string{"verify"}, args...), app.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	r := runResult{Out: out.String(), Err: errOut.String(), Code: app.ExitCode(err)}
	if err != nil && r.Code != 1 {
		r.Err += err.Error()
	}
	return r
}

type jsonReport struct {
	Status string `json:"status"`
	Hosts  []struct {
		Host   string `json:"host"`
		Status string `json:"status"`
		Msg    string `json:"msg"`
		Via    string `json:"via"`
		Report *struct {
			Status string `json:"status"`
			Layers map[string]struct {
				Status  string `json:"status"`
				Results []struct {
					Check, Status, Msg, Remediation string
				} `json:"results"`
				Facts any `json:"facts"`
			} `json:"layers"`
		} `json:"report"`
	} `json:"hosts"`
}

func parseJSON(t *testing.T, r runResult) jsonReport {
	t.Helper()
	var rep jsonReport
	require.NoError(t, json.Unmarshal([]byte(r.Out), &rep), "stdout is not the JSON report:\n%s\nstderr:\n%s", r.Out, r.Err)
	return rep
}

// noSecrets checks an output for the fleet's private keys (the SSH key and
// every tree's keys).
func (f *simFleet) noSecrets(t *testing.T, out string) {
	t.Helper()
	key, err := os.ReadFile(f.Key.File)
	require.NoError(t, err)
	require.NotContains(t, out, "PRIVATE KEY")
	body := strings.Join(strings.Split(string(key), "\n")[1:3], "")
	require.NotContains(t, out, body)
	for _, n := range f.Nodes {
		n.Tree.AssertNoSecrets(t, out)
	}
}

func base64Key(k *harness.KeyPair) string {
	return base64.StdEncoding.EncodeToString(k.Public.Marshal())
}
