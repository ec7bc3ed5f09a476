package node

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/verify"
)

func TestParseEtcdEnv(t *testing.T) {
	rendered := etcdTestEnvFile("node1", "etcd1", "10.10.0.11",
		"etcd1=https://10.10.0.11:2380,etcd2=https://10.10.0.12:2380,etcd3=https://10.10.0.13:2380")
	tests := []struct {
		name     string
		in       string
		wantErr  string
		check    func(t *testing.T, e *EtcdEnv)
		problems []string // substrings, in order
	}{
		{
			name: "kubespray v2.31.0 rendering",
			in:   rendered,
			check: func(t *testing.T, e *EtcdEnv) {
				want := &EtcdEnv{
					RenderedFor:              "3.6.10",
					Name:                     "etcd1",
					DataDir:                  "/var/lib/etcd",
					ListenClientURLs:         []string{"https://10.10.0.11:2379", "https://127.0.0.1:2379"},
					AdvertiseClientURLs:      []string{"https://10.10.0.11:2379"},
					ListenPeerURLs:           []string{"https://10.10.0.11:2380"},
					InitialAdvertisePeerURLs: []string{"https://10.10.0.11:2380"},
					InitialCluster: []EtcdPeer{
						{"etcd1", "https://10.10.0.11:2380"}, {"etcd2", "https://10.10.0.12:2380"}, {"etcd3", "https://10.10.0.13:2380"},
					},
					InitialClusterState: "existing",
					CertFile:            "/etc/ssl/etcd/ssl/member-node1.pem",
					KeyFile:             "/etc/ssl/etcd/ssl/member-node1-key.pem",
					TrustedCAFile:       "/etc/ssl/etcd/ssl/ca.pem",
					ClientCertAuth:      "true",
					PeerCertFile:        "/etc/ssl/etcd/ssl/member-node1.pem",
					PeerKeyFile:         "/etc/ssl/etcd/ssl/member-node1-key.pem",
					PeerTrustedCAFile:   "/etc/ssl/etcd/ssl/ca.pem",
					PeerClientCertAuth:  "True",
					CtlEndpoints:        []string{"https://127.0.0.1:2379"},
					CtlCACert:           "/etc/ssl/etcd/ssl/ca.pem",
					CtlCert:             "/etc/ssl/etcd/ssl/admin-node1.pem",
					CtlKey:              "/etc/ssl/etcd/ssl/admin-node1-key.pem",
				}
				got := *e
				got.Vars, got.Lines = nil, nil
				if !reflect.DeepEqual(&got, want) {
					gj, _ := json.MarshalIndent(got, "", " ")
					t.Errorf("parsed:\n%s", gj)
				}
				if e.Lines["ETCD_NAME"] != 12 {
					t.Errorf("ETCD_NAME line = %d, want 12", e.Lines["ETCD_NAME"])
				}
				if w := e.Where("/etc/etcd.env", "ETCD_INITIAL_CLUSTER"); w != "/etc/etcd.env:14" {
					t.Errorf("Where = %q", w)
				}
			},
		},
		{
			name: "systemd EnvironmentFile syntax: quotes, ; comments, continuation, spaces",
			in: "; comment\n  ETCD_NAME = \"etcd 1\"  \nETCD_DATA_DIR='/var/lib/etcd'\n" +
				"ETCD_INITIAL_CLUSTER=a=https://10.0.0.1:2380,\\\nb=https://10.0.0.2:2380\nETCDCTL_API=3\r\n",
			check: func(t *testing.T, e *EtcdEnv) {
				if e.Name != "etcd 1" || e.DataDir != "/var/lib/etcd" || e.CtlAPI != "3" {
					t.Errorf("got name %q dir %q api %q", e.Name, e.DataDir, e.CtlAPI)
				}
				if len(e.InitialCluster) != 2 || e.InitialCluster[1] != (EtcdPeer{"b", "https://10.0.0.2:2380"}) {
					t.Errorf("initial cluster %v", e.InitialCluster)
				}
				if e.Lines["ETCD_INITIAL_CLUSTER"] != 4 || e.Lines["ETCDCTL_API"] != 6 {
					t.Errorf("lines %v", e.Lines)
				}
			},
		},
		{
			name: "problems are reported, not fatal",
			in: "ETCD_NAME=etcd1\nthis is not an assignment\n9BAD=x\nETCD_NAME=etcd2\n" +
				"ETCD_ADVERTISE_CLIENT_URLS=10.0.0.1:2379\nETCD_INITIAL_CLUSTER=etcd1,etcd2=https://10.0.0.2:2380,etcd2=https://10.0.0.3:2380\n",
			problems: []string{
				"line 2: not KEY=VALUE",
				"line 3: invalid variable name",
				"line 4: ETCD_NAME set again (first on line 1)",
				"line 5: ETCD_ADVERTISE_CLIENT_URLS",
				"line 6: ETCD_INITIAL_CLUSTER: \"etcd1\" is not name=peerURL",
				"line 6: ETCD_INITIAL_CLUSTER names member \"etcd2\" twice",
			},
			check: func(t *testing.T, e *EtcdEnv) {
				if e.Name != "etcd2" {
					t.Errorf("last assignment must win, got %q", e.Name)
				}
			},
		},
		{name: "empty", in: "# nothing\n\n", wantErr: "no KEY=VALUE"},
		{name: "binary junk", in: "\x00\x01\x02", wantErr: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := ParseEtcdEnv([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if tc.name == "binary junk" {
				// Must not panic; either an error or problems.
				if err == nil && len(e.Problems) == 0 {
					t.Fatalf("junk parsed cleanly: %+v", e)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(e.Problems) != len(tc.problems) {
				t.Fatalf("problems = %q, want %d", e.Problems, len(tc.problems))
			}
			for i, p := range tc.problems {
				if !strings.Contains(e.Problems[i], p) {
					t.Errorf("problem %d = %q, want it to contain %q", i, e.Problems[i], p)
				}
			}
			if tc.check != nil {
				tc.check(t, e)
			}
		})
	}
}

// etcdTestNode writes a node tree for node1 (10.10.0.11, etcd1): the PKI
// and etc/etcd.env naming initialCluster.
func etcdTestNode(t *testing.T, initialCluster string) (root string, pki *etcdTestPKI) {
	t.Helper()
	root = t.TempDir()
	pki = newEtcdTestPKI(t, filepath.Join(root, "etc/ssl/etcd/ssl"), []string{"node1", "node2", "node3"}, []string{"10.10.0.11", "10.10.0.12", "10.10.0.13"})
	for _, h := range []string{"node1"} {
		pki.leaf(t, "member", h)
		pki.leaf(t, "admin", h)
	}
	etcdWriteEnv(t, root, etcdTestEnvFile("node1", "etcd1", "10.10.0.11", initialCluster))
	return root, pki
}

func etcdWriteEnv(t *testing.T, root, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/etcd.env"), []byte(content), 0o640); err != nil {
		t.Fatal(err)
	}
}

func etcdTestEnv(root string, members []string, addr map[string]string, timeout time.Duration) *Env {
	return &Env{
		FS: verify.FS{Root: root}, Host: "node1", Now: etcdTestNow, NetTimeout: timeout, LayerTimeout: 30 * time.Second,
		Options: Options{Groups: []string{"etcd", "kube_control_plane", "k8s_cluster"}, EtcdMembers: members},
		AddrMap: addr, Systemd: etcdRunning,
	}
}

// TestEtcdLayerLive runs the layer against a real etcd (embedded server,
// TLS with client certificate authentication) on loopback, reached through
// Env.AddrMap as 10.10.0.11:2379 and 127.0.0.1:2379.
func TestEtcdLayerLive(t *testing.T) {
	root, _ := etcdTestNode(t, "etcd1=https://10.10.0.11:2380")
	ssl := filepath.Join(root, "etc/ssl/etcd/ssl")
	cport, pport := harness.FreePort(t), harness.FreePort(t)
	stop := harness.StartEtcd(t, filepath.Join(ssl, "ca.pem"), []harness.EtcdMember{{
		Name: "etcd1", ClientPort: cport, PeerPort: pport, AdvertisePeer: "https://10.10.0.11:2380",
		CertFile: filepath.Join(ssl, "member-node1.pem"), KeyFile: filepath.Join(ssl, "member-node1-key.pem"),
	}})
	live := fmt.Sprintf("127.0.0.1:%d", cport)
	addr := map[string]string{"10.10.0.11:2379": live, "127.0.0.1:2379": live}
	env := etcdTestEnv(root, []string{"node1"}, addr, 3*time.Second)

	t.Run("healthy", func(t *testing.T) {
		res, facts, err := etcdLayer{}.Check(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Status != verify.StatusOK {
				t.Errorf("[%s] %s: %s", r.Status, r.Check, r.Msg)
			}
		}
		for _, c := range []string{"env_file", "member_name", "initial_cluster", "ca_certificate", "member_certificate", "admin_certificate", "service", "endpoint_status", "members", "leader"} {
			if len(etcdResults(res)[c]) == 0 {
				t.Errorf("no %s result:%s", c, etcdDump(res))
			}
		}
		f := facts.(*EtcdFacts)
		if f.Leader != "etcd1" || len(f.Members) != 1 || f.Members[0].Name != "etcd1" || f.Members[0].PeerURLs[0] != "https://10.10.0.11:2380" {
			t.Errorf("leader %q members %+v", f.Leader, f.Members)
		}
		if len(f.Endpoints) != 2 {
			t.Fatalf("endpoints %+v", f.Endpoints)
		}
		for _, ep := range f.Endpoints {
			if !ep.Healthy || ep.Version == "" || ep.Dialed != live || ep.Leader == "" || ep.Leader == "0" || ep.RaftIndex == 0 || ep.DBSize == 0 {
				t.Errorf("endpoint facts %+v", ep)
			}
		}
		if f.MemberName != "etcd1" || f.Env.Name != "etcd1" || f.Certificates["admin"].SubjectCN != "etcd-admin-node1" {
			t.Errorf("facts: member %q env %q admin %+v", f.MemberName, f.Env.Name, f.Certificates["admin"])
		}
		j, err := json.Marshal(facts)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(j), "PRIVATE KEY") || strings.Contains(string(j), "BEGIN") {
			t.Errorf("facts carry PEM material: %s", j)
		}
	})

	t.Run("etcd.env and inventory name members the cluster lacks", func(t *testing.T) {
		root3, _ := etcdTestNode(t, "etcd1=https://10.10.0.11:2380,etcd2=https://10.10.0.12:2380,etcd3=https://10.10.0.13:2380")
		// The server trusts the first tree's CA: use its certificates here too.
		for _, f := range []string{"ca.pem", "ca-key.pem", "admin-node1.pem", "admin-node1-key.pem", "member-node1.pem", "member-node1-key.pem"} {
			b, err := os.ReadFile(filepath.Join(ssl, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root3, "etc/ssl/etcd/ssl", f), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		env3 := etcdTestEnv(root3, []string{"node1", "node2", "node3"}, addr, 3*time.Second)
		res, _, err := etcdLayer{}.Check(context.Background(), env3)
		if err != nil {
			t.Fatal(err)
		}
		st, msg := etcdWorst(t, res, "members")
		if st != verify.StatusFail || !strings.Contains(msg, "etcd2 (https://10.10.0.12:2380) is in ETCD_INITIAL_CLUSTER but not a started member") ||
			!strings.Contains(msg, "the cluster has 1 member(s), the inventory's etcd group 3") {
			t.Errorf("members: [%s] %s", st, msg)
		}
		if st, msg := etcdWorst(t, res, "initial_cluster"); st != verify.StatusOK {
			t.Errorf("initial_cluster: [%s] %s", st, msg)
		}
		if st, _ := etcdWorst(t, res, "endpoint_status"); st != verify.StatusOK {
			t.Errorf("endpoint_status: %s", etcdDump(res))
		}
	})

	t.Run("server stopped", func(t *testing.T) {
		stop()
		env := *env
		env.NetTimeout = time.Second
		start := time.Now()
		res, _, err := etcdLayer{}.Check(context.Background(), &env)
		elapsed := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if elapsed > env.NetTimeout+15*time.Second {
			t.Errorf("layer took %s with NetTimeout %s", elapsed, env.NetTimeout)
		}
		eps := etcdResults(res)["endpoint_status"]
		if len(eps) != 2 {
			t.Fatalf("endpoint results:%s", etcdDump(res))
		}
		for i, want := range []string{"https://127.0.0.1:2379", "https://10.10.0.11:2379"} {
			r := eps[i]
			if r.Status != verify.StatusFail || !strings.Contains(r.Msg, "etcd endpoint "+want+" (dialed "+live+")") ||
				!strings.Contains(r.Msg, "connection refused") || !strings.Contains(r.Remediation, "systemctl status etcd") {
				t.Errorf("endpoint %s: [%s] %s (%s)", want, r.Status, r.Msg, r.Remediation)
			}
		}
		for _, c := range []string{"members", "leader"} {
			if st, msg := etcdWorst(t, res, c); st != verify.StatusFail {
				t.Errorf("%s: [%s] %s", c, st, msg)
			}
		}
		// Local checks still pass: the fault is the server, not the files.
		for _, c := range []string{"env_file", "member_certificate", "admin_certificate", "service"} {
			if st, msg := etcdWorst(t, res, c); st != verify.StatusOK {
				t.Errorf("%s: [%s] %s", c, st, msg)
			}
		}
	})
}

// TestEtcdLayerHang points the endpoints at a server that accepts TCP but
// never speaks TLS: the layer must give up within NetTimeout.
func TestEtcdLayerHang(t *testing.T) {
	root, _ := etcdTestNode(t, "etcd1=https://10.10.0.11:2380")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var mu sync.Mutex
	var conns []net.Conn
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // hold it open, say nothing
			mu.Unlock()
		}
	}()
	mute := l.Addr().String()
	env := etcdTestEnv(root, []string{"node1"}, map[string]string{"10.10.0.11:2379": mute, "127.0.0.1:2379": mute}, 700*time.Millisecond)
	start := time.Now()
	res, _, err := etcdLayer{}.Check(context.Background(), env)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed > env.NetTimeout+15*time.Second {
		t.Errorf("layer took %s with NetTimeout %s", elapsed, env.NetTimeout)
	}
	for _, r := range etcdResults(res)["endpoint_status"] {
		if r.Status != verify.StatusFail || !strings.Contains(r.Msg, "TLS connection failed within 700ms") {
			t.Errorf("[%s] %s", r.Status, r.Msg)
		}
	}
}

// TestEtcdLayerLocalFaults covers what the layer finds without a server:
// wrong certificates, a foreign etcd.env, systemd states.
func TestEtcdLayerLocalFaults(t *testing.T) {
	closed := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	addr := map[string]string{"10.10.0.11:2379": closed, "127.0.0.1:2379": closed}
	cluster := "etcd1=https://10.10.0.11:2380"

	t.Run("admin certificate of another host, member key swapped", func(t *testing.T) {
		root, pki := etcdTestNode(t, cluster)
		pki.leafCN(t, "admin-node1", "etcd-admin-node2")
		ssl := filepath.Join(root, "etc/ssl/etcd/ssl")
		b, _ := os.ReadFile(filepath.Join(ssl, "admin-node1-key.pem"))
		if err := os.WriteFile(filepath.Join(ssl, "member-node1-key.pem"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		res, _, err := etcdLayer{}.Check(context.Background(), etcdTestEnv(root, []string{"node1"}, addr, 300*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if st, msg := etcdWorst(t, res, "admin_certificate"); st != verify.StatusFail || !strings.Contains(msg, `CN is "etcd-admin-node2", this host's is "etcd-admin-node1"`) {
			t.Errorf("admin: [%s] %s", st, msg)
		}
		if st, msg := etcdWorst(t, res, "member_certificate"); st != verify.StatusFail || !strings.Contains(msg, "key /etc/ssl/etcd/ssl/member-node1-key.pem does not belong to this certificate") {
			t.Errorf("member: [%s] %s", st, msg)
		}
		for _, r := range res {
			if r.Status == verify.StatusFail && r.Remediation == "" {
				t.Errorf("fail without remediation: %s %s", r.Check, r.Msg)
			}
		}
	})

	t.Run("certificate from another CA, CA missing for etcdctl", func(t *testing.T) {
		root, _ := etcdTestNode(t, cluster)
		other := newEtcdTestPKI(t, filepath.Join(t.TempDir(), "other"), []string{"node1"}, []string{"10.10.0.11"})
		other.leaf(t, "member", "node1")
		ssl := filepath.Join(root, "etc/ssl/etcd/ssl")
		for _, f := range []string{"member-node1.pem", "member-node1-key.pem"} {
			b, _ := os.ReadFile(filepath.Join(other.dir, f))
			if err := os.WriteFile(filepath.Join(ssl, f), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		res, _, err := etcdLayer{}.Check(context.Background(), etcdTestEnv(root, []string{"node1"}, addr, 300*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if st, msg := etcdWorst(t, res, "member_certificate"); st != verify.StatusFail || !strings.Contains(msg, "not signed by the etcd CA") {
			t.Errorf("member: [%s] %s", st, msg)
		}
		if err := os.Remove(filepath.Join(ssl, "ca.pem")); err != nil {
			t.Fatal(err)
		}
		res, _, _ = etcdLayer{}.Check(context.Background(), etcdTestEnv(root, []string{"node1"}, addr, 300*time.Millisecond))
		if st, msg := etcdWorst(t, res, "ca_certificate"); st != verify.StatusFail || !strings.Contains(msg, "etcd CA /etc/ssl/etcd/ssl/ca.pem: no such file or directory") {
			t.Errorf("ca: [%s] %s", st, msg)
		}
		if st, msg := etcdWorst(t, res, "endpoint_status"); st != verify.StatusFail || !strings.Contains(msg, "live etcd checks skipped") {
			t.Errorf("endpoint_status: [%s] %s", st, msg)
		}
	})

	t.Run("etcd.env of another member", func(t *testing.T) {
		root, _ := etcdTestNode(t, "etcd1=https://10.10.0.11:2380,etcd2=https://10.10.0.12:2380,etcd3=https://10.10.0.13:2380")
		env := etcdTestEnv(root, []string{"node2", "node1", "node3"}, addr, 300*time.Millisecond)
		res, _, _ := etcdLayer{}.Check(context.Background(), env)
		if st, msg := etcdWorst(t, res, "member_name"); st != verify.StatusFail || !strings.Contains(msg, `/etc/etcd.env:12: ETCD_NAME is "etcd1" but node1 is etcd member "etcd2"`) {
			t.Errorf("member_name: [%s] %s", st, msg)
		}
		env.Options.EtcdMemberName = "etcd1"
		res, _, _ = etcdLayer{}.Check(context.Background(), env)
		if st, msg := etcdWorst(t, res, "member_name"); st != verify.StatusOK {
			t.Errorf("member_name with etcd_member_name: [%s] %s", st, msg)
		}
		env.Options.EtcdMembers = []string{"node1", "node2"}
		res, _, _ = etcdLayer{}.Check(context.Background(), env)
		if st, msg := etcdWorst(t, res, "initial_cluster"); st != verify.StatusFail || !strings.Contains(msg, "names 3 member(s) (etcd1, etcd2, etcd3) but the inventory's etcd group has 2 (node1, node2)") {
			t.Errorf("initial_cluster: [%s] %s", st, msg)
		}
	})

	t.Run("plain-text client URL is dialed without TLS", func(t *testing.T) {
		root, _ := etcdTestNode(t, cluster)
		env := etcdTestEnv(root, []string{"node1"}, addr, 300*time.Millisecond)
		b, _ := os.ReadFile(filepath.Join(root, "etc/etcd.env"))
		etcdWriteEnv(t, root, strings.ReplaceAll(string(b), "ETCDCTL_ENDPOINTS=https://", "ETCDCTL_ENDPOINTS=http://"))
		res, _, _ := etcdLayer{}.Check(context.Background(), env)
		r := etcdResults(res)["endpoint_status"][0]
		if r.Status != verify.StatusFail || !strings.HasPrefix(r.Msg, "etcd endpoint http://127.0.0.1:2379 (dialed "+closed+"): connection failed within 300ms") {
			t.Errorf("[%s] %s", r.Status, r.Msg)
		}
	})

	t.Run("env file missing", func(t *testing.T) {
		root := t.TempDir()
		res, _, _ := etcdLayer{}.Check(context.Background(), etcdTestEnv(root, []string{"node1"}, addr, 300*time.Millisecond))
		if st, msg := etcdWorst(t, res, "env_file"); st != verify.StatusFail || !strings.Contains(msg, "cannot read /etc/etcd.env: no such file or directory") {
			t.Errorf("env_file: [%s] %s", st, msg)
		}
	})

	t.Run("systemd states", func(t *testing.T) {
		root, _ := etcdTestNode(t, cluster)
		for _, tc := range []struct {
			name    string
			sd      verify.Systemd
			status  verify.Status
			msgPart string
		}{
			{"absent", nil, verify.StatusWarn, "systemd is absent on this host"},
			{"inactive", fakeSystemd{"etcd.service": {"LoadState": "loaded", "ActiveState": "failed", "SubState": "failed", "UnitFileState": "enabled"}}, verify.StatusFail, "ActiveState=failed (want active), SubState=failed (want running)"},
			{"disabled", fakeSystemd{"etcd.service": {"LoadState": "loaded", "ActiveState": "active", "SubState": "running", "UnitFileState": "disabled"}}, verify.StatusFail, "UnitFileState=disabled (want enabled)"},
			{"not installed", fakeSystemd{}, verify.StatusFail, "etcd.service is not installed (LoadState=not-found)"},
			{"running", etcdRunning, verify.StatusOK, "enabled, active and running (MainPID 4242)"},
		} {
			env := etcdTestEnv(root, []string{"node1"}, addr, 300*time.Millisecond)
			env.Systemd = tc.sd
			res, _, _ := etcdLayer{}.Check(context.Background(), env)
			if st, msg := etcdWorst(t, res, "service"); st != tc.status || !strings.Contains(msg, tc.msgPart) {
				t.Errorf("%s: [%s] %s", tc.name, st, msg)
			}
		}
	})
}

func TestEtcdLayerApplicability(t *testing.T) {
	env := &Env{FS: verify.FS{Root: t.TempDir()}, Host: "node4", Now: etcdTestNow, Options: Options{Groups: []string{"kube_node", "k8s_cluster"}}}
	rep, err := Run(context.Background(), env, []string{"etcd"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	lr := rep.Layers["etcd"]
	if lr.Status != verify.StatusSkipped || len(lr.Results) != 1 || !strings.Contains(lr.Results[0].Msg, "node4 is not in the etcd group") {
		t.Errorf("etcd layer on a worker: %+v", lr)
	}
}

func TestEtcdLayerKubeadm(t *testing.T) {
	root := t.TempDir()
	manifest := `apiVersion: v1
kind: Pod
metadata:
  name: etcd
  namespace: kube-system
spec:
  containers:
  - command:
    - etcd
    - --advertise-client-urls=https://10.10.0.11:2379
    - --cert-file=/etc/kubernetes/ssl/etcd/server.crt
    - --client-cert-auth=true
    - --data-dir=/var/lib/etcd
    - --key-file=/etc/kubernetes/ssl/etcd/server.key
    - --peer-cert-file=/etc/kubernetes/ssl/etcd/peer.crt
    - --peer-key-file=/etc/kubernetes/ssl/etcd/peer.key
    - --peer-trusted-ca-file=/etc/kubernetes/ssl/etcd/ca.crt
    - --trusted-ca-file=/etc/kubernetes/ssl/etcd/ca.crt
    image: registry.k8s.io/etcd:3.6.10-0
    name: etcd
`
	write := func(p, s string) {
		t.Helper()
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := &Env{FS: verify.FS{Root: root}, Host: "node1", Now: etcdTestNow, Options: Options{Groups: []string{"etcd"}, EtcdDeploymentType: "kubeadm"}}

	res, _, _ := etcdLayer{}.Check(context.Background(), env)
	if st, msg := etcdWorst(t, res, "static_pod_manifest"); st != verify.StatusFail || !strings.Contains(msg, "cannot read /etc/kubernetes/manifests/etcd.yaml") {
		t.Errorf("missing manifest: [%s] %s", st, msg)
	}

	write("etc/kubernetes/manifests/etcd.yaml", manifest)
	res, _, _ = etcdLayer{}.Check(context.Background(), env)
	if st, msg := etcdWorst(t, res, "static_pod_manifest"); st != verify.StatusFail || !strings.Contains(msg, "--cert-file=/etc/kubernetes/ssl/etcd/server.crt: no such file or directory") {
		t.Errorf("missing certs: [%s] %s", st, msg)
	}

	for _, f := range []string{"server.crt", "server.key", "peer.crt", "peer.key", "ca.crt"} {
		write("etc/kubernetes/ssl/etcd/"+f, "x")
	}
	res, facts, _ := etcdLayer{}.Check(context.Background(), env)
	if st, msg := etcdWorst(t, res, "static_pod_manifest"); st != verify.StatusOK || !strings.Contains(msg, "registry.k8s.io/etcd:3.6.10-0 with --data-dir=/var/lib/etcd") {
		t.Errorf("healthy manifest: [%s] %s", st, msg)
	}
	if st, msg := etcdWorst(t, res, "deployment_type"); st != verify.StatusOK || !strings.Contains(msg, "etcd_deployment_type is kubeadm") {
		t.Errorf("deployment_type: [%s] %s", st, msg)
	}
	if f := facts.(*EtcdFacts); f.Manifest.Flags["trusted-ca-file"] != "/etc/kubernetes/ssl/etcd/ca.crt" {
		t.Errorf("manifest facts %+v", f.Manifest)
	}

	write("etc/kubernetes/manifests/etcd.yaml", "spec: [unclosed\n")
	res, _, _ = etcdLayer{}.Check(context.Background(), env)
	if st, msg := etcdWorst(t, res, "static_pod_manifest"); st != verify.StatusFail || !strings.Contains(msg, "etcd.yaml: yaml:") {
		t.Errorf("bad yaml: [%s] %s", st, msg)
	}
}
