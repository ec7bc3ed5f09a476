package node

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/verify"
)

func TestServiceSubnetAddress(t *testing.T) {
	tests := []struct {
		subnets string
		n       int
		want    string
		err     string
	}{
		{"10.233.0.0/18", 1, "10.233.0.1", ""},
		{"10.233.0.0/18", 3, "10.233.0.3", ""},
		{"10.233.0.0/18", 4, "10.233.0.4", ""},
		{"10.96.0.0/12,fd85:ee78:d8a6:8607::1000/116", 3, "10.96.0.3", ""},
		{" 172.16.0.0/24 ", 3, "172.16.0.3", ""},
		{"fd85:ee78:d8a6:8607::1000/116", 3, "fd85:ee78:d8a6:8607::1003", ""},
		{"10.0.0.0/30", 3, "10.0.0.3", ""},
		{"10.0.0.0/30", 4, "", "has no address with index 4"},
		{"10.233.0.5/18", 3, "", "is not a network address (its network is 10.233.0.0/18)"},
		{"10.233.0.1/32", 1, "", "single address"},
		{"10.233.0.0", 3, "", "is not an IP network"},
		{"", 3, "", "is not an IP network"},
	}
	for _, tc := range tests {
		got, err := ServiceSubnetAddress(tc.subnets, tc.n)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q[%d]: err = %v, want %q", tc.subnets, tc.n, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q[%d] = %q, %v; want %q", tc.subnets, tc.n, got, err, tc.want)
		}
	}
}

func TestParseDNSResolvConfAndResolved(t *testing.T) {
	rc := ParseDNSResolvConf([]byte("# comment\nnameserver 169.254.25.10 # nodelocaldns\nnameserver\t10.10.0.1\n; x\nsearch a b\ndomain c.local\noptions ndots:2 timeout:2\noptions attempts:2\nnameserver\n"))
	want := DNSResolvConf{Nameservers: []string{"169.254.25.10", "10.10.0.1"}, Search: []string{"c.local"}, Options: []string{"ndots:2", "timeout:2", "attempts:2"}}
	if !reflect.DeepEqual(rc, want) {
		t.Errorf("resolv.conf: %+v", rc)
	}
	r := ParseResolvedConf([]byte("[Resolve]\nDNS=169.254.25.10\nFallbackDNS=\nDomains=default.svc.cluster.local svc.cluster.local\n[Other]\nDNS=1.1.1.1\n"))
	if !reflect.DeepEqual(r.DNS, []string{"169.254.25.10"}) || len(r.FallbackDNS) != 0 || len(r.Domains) != 2 {
		t.Errorf("resolved: %+v", r)
	}
}

// TestDNSResolverChecks walks the resolver-loop rules over resolv.conf
// variants (see dns.go for the kubespray templates behind each rule).
func TestDNSResolverChecks(t *testing.T) {
	const (
		nl     = "169.254.25.10"
		coredn = "10.233.0.3"
		podRC  = "/run/systemd/resolve/resolv.conf"
	)
	rc := func(ns ...string) *DNSResolvConf { return &DNSResolvConf{Path: podRC, Nameservers: ns} }
	stub := &DNSResolvConf{Path: "/etc/resolv.conf", Nameservers: []string{"127.0.0.53"}}
	resolvedOK := &DNSResolved{Path: dnsResolvedDropIn, DNS: []string{nl}, FallbackDNS: []string{}}
	type want struct {
		check  string
		status verify.Status
		msg    string
	}
	tests := []struct {
		name      string
		nodelocal bool
		upstream  []string
		podPath   string
		pod       *DNSResolvConf
		podErr    error
		host      *DNSResolvConf
		resolved  *DNSResolved
		want      []want
		hazard    string // DNSFacts.LoopHazard; "" is none
	}{
		{
			name: "kubespray default on Ubuntu: nodelocaldns plus the DHCP resolver, no upstream -> loop risk (warn)", nodelocal: true,
			podPath: podRC, pod: rc(nl, "10.10.0.1"), host: stub, resolved: resolvedOK, hazard: DNSLoopPartial,
			want: []want{
				{"pod_resolv_conf", verify.StatusWarn, "loop risk: " + podRC + " (kubelet resolvConf"},
				{"pod_resolv_conf", verify.StatusWarn, "names cluster DNS 169.254.25.10 besides 10.10.0.1 and upstream_dns_servers is empty"},
				{"host_resolv_conf", verify.StatusOK, "the host resolves through the local resolver 127.0.0.53 (/etc/resolv.conf); kubelet hands " + podRC + " to pods instead, so this is not a loop; systemd-resolved forwards to DNS=169.254.25.10"},
				{"systemd_resolved", verify.StatusOK, "DNS=169.254.25.10 as resolved.conf.j2 renders it"},
			},
		},
		{
			name: "same node with upstream_dns_servers -> ok", nodelocal: true, upstream: []string{"10.10.0.1"},
			podPath: podRC, pod: rc(nl, "10.10.0.1"), host: stub, resolved: resolvedOK,
			want: []want{
				{"pod_resolv_conf", verify.StatusOK, "forward names outside the cluster to upstream_dns_servers 10.10.0.1, not to it: no loop"},
				{"host_resolv_conf", verify.StatusOK, "not a loop"},
			},
		},
		{
			name: "only nodelocaldns, no upstream -> loop (fail)", nodelocal: true,
			podPath: podRC, pod: rc(nl), hazard: DNSLoopTotal,
			want: []want{{"pod_resolv_conf", verify.StatusFail, "names only cluster DNS 169.254.25.10 and upstream_dns_servers is empty"}},
		},
		{
			name:    "only the CoreDNS IP without nodelocaldns -> loop (fail)",
			podPath: "/etc/resolv.conf", pod: &DNSResolvConf{Path: "/etc/resolv.conf", Nameservers: []string{coredn}}, hazard: DNSLoopTotal,
			want: []want{{"pod_resolv_conf", verify.StatusFail, "names only cluster DNS 10.233.0.3"}},
		},
		{
			name: "systemd-resolved stub handed to pods -> fail", nodelocal: true,
			podPath: "/etc/resolv.conf", pod: &DNSResolvConf{Path: "/etc/resolv.conf", Nameservers: []string{"127.0.0.53"}}, host: stub, hazard: DNSLoopLoopback,
			want: []want{{"pod_resolv_conf", verify.StatusFail, "names loopback nameserver 127.0.0.53: inside CoreDNS's pod that address is CoreDNS itself (a forwarding loop, kubespray#3979)"}},
		},
		{
			name: "loopback with upstream set is still a fail (other pods)", nodelocal: true, upstream: []string{"1.1.1.1"},
			podPath: podRC, pod: rc("127.0.0.1", "10.10.0.1"),
			want: []want{{"pod_resolv_conf", verify.StatusFail, "every other pod with dnsPolicy Default gets a nameserver that is not reachable"}},
		},
		{
			name: "IPv6 loopback", nodelocal: true,
			podPath: podRC, pod: rc("::1"), hazard: DNSLoopLoopback,
			want: []want{{"pod_resolv_conf", verify.StatusFail, "names loopback nameserver ::1"}},
		},
		{
			name: "real resolvers only -> ok", nodelocal: true,
			podPath: podRC, pod: rc("10.10.0.1", "10.10.0.2"),
			want: []want{{"pod_resolv_conf", verify.StatusOK, "names 10.10.0.1, 10.10.0.2, no cluster DNS and no loopback address; CoreDNS and nodelocaldns forward names outside the cluster to it"}},
		},
		{
			name: "no nameserver, no upstream -> fail", nodelocal: true,
			podPath: podRC, pod: rc(),
			want: []want{{"pod_resolv_conf", verify.StatusFail, "names no nameserver: with upstream_dns_servers empty"}},
		},
		{
			name: "no nameserver, upstream set -> warn", nodelocal: true, upstream: []string{"8.8.8.8"},
			podPath: podRC, pod: rc(),
			want: []want{{"pod_resolv_conf", verify.StatusWarn, "names no nameserver"}},
		},
		{
			name: "file missing -> fail", nodelocal: true,
			podPath: podRC, podErr: errors.New("no such file or directory"),
			want: []want{{"pod_resolv_conf", verify.StatusFail, "cannot read " + podRC}},
		},
		{
			name: "resolvConf empty -> fail", nodelocal: true, podPath: "",
			want: []want{{"pod_resolv_conf", verify.StatusFail, "kubelet resolvConf is empty"}},
		},
		{
			name: "host resolv.conf names nodelocaldns (RHEL-like host_resolvconf) -> ok", nodelocal: true,
			podPath: podRC, pod: rc("10.10.0.1"), host: &DNSResolvConf{Path: "/etc/resolv.conf", Nameservers: []string{nl, "10.10.0.1"}},
			want: []want{{"host_resolv_conf", verify.StatusOK, "names cluster DNS 169.254.25.10: kubespray's intended host setting"}},
		},
		{
			name: "resolved drop-in from the early stage -> warn", nodelocal: true,
			podPath: podRC, pod: rc("10.10.0.1"), resolved: &DNSResolved{Path: dnsResolvedDropIn, DNS: []string{}, FallbackDNS: []string{"10.10.0.1"}},
			want: []want{{"systemd_resolved", verify.StatusWarn, "writes DNS=169.254.25.10: the play did not run"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{EnableNodelocaldns: tc.nodelocal, UpstreamDNSServers: tc.upstream}
			cluster := []string{coredn}
			if tc.nodelocal {
				cluster = append(cluster, nl)
			}
			res := dnsResolverChecks(o, "coredns", cluster, nl, coredn, tc.podPath, tc.pod, tc.podErr, tc.host, tc.resolved)
			wantHazard := tc.hazard
			if wantHazard == "" {
				wantHazard = DNSLoopNone
			}
			if got := dnsLoopHazard(o, cluster, tc.pod); got != wantHazard {
				t.Errorf("loop hazard %q, want %q", got, wantHazard)
			}
			for _, w := range tc.want {
				found := false
				for _, r := range res {
					if r.Check == w.check && r.Status == w.status && strings.Contains(r.Msg, w.msg) {
						found = true
						if r.Status == verify.StatusFail && r.Remediation == "" {
							t.Errorf("%s fails without remediation", r.Check)
						}
					}
				}
				if !found {
					t.Errorf("want [%s] %s containing %q; got%s", w.status, w.check, w.msg, etcdDump(res))
				}
			}
		})
	}
}

// TestDNSLayerLive asks real DNS servers on loopback (127.0.0.1 standing in
// for nodelocaldns 169.254.25.10, 127.0.0.2 for CoreDNS 10.233.0.3).
func TestDNSLayerLive(t *testing.T) {
	name := "kubernetes.default.svc.cluster.local"
	nodelocal := harness.StartDNS(t, "127.0.0.1", name, "10.233.0.1", false)
	coredns := harness.StartDNS(t, "127.0.0.2", name, "10.233.0.1", false)
	root := dnsUbuntuNode(t)
	env := &Env{
		FS: verify.FS{Root: root}, Host: "node1", Now: etcdTestNow, NetTimeout: 500 * time.Millisecond,
		Options: Options{
			Groups: []string{"kube_control_plane", "etcd", "k8s_cluster"}, EnableNodelocaldns: true,
			NodelocaldnsIP: "169.254.25.10", KubeServiceAddresses: "10.233.0.0/18", DNSDomain: "cluster.local",
		},
		AddrMap: map[string]string{"169.254.25.10:53": nodelocal.Addr, "10.233.0.3:53": coredns.Addr},
	}
	run := func(t *testing.T) ([]verify.Result, *DNSFacts, time.Duration) {
		t.Helper()
		start := time.Now()
		res, facts, err := dnsLayer{}.Check(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		return res, facts.(*DNSFacts), time.Since(start)
	}

	t.Run("healthy", func(t *testing.T) {
		nodelocal.Set(harness.DNSAnswer, "10.233.0.1")
		coredns.Set(harness.DNSAnswer, "10.233.0.1")
		res, f, _ := run(t)
		for _, c := range []string{"query_nodelocaldns", "query_coredns", "kubelet_cluster_dns", "host_resolv_conf", "systemd_resolved"} {
			if st, msg := etcdWorst(t, res, c); st != verify.StatusOK {
				t.Errorf("%s: [%s] %s", c, st, msg)
			}
		}
		if st, msg := etcdWorst(t, res, "pod_resolv_conf"); st != verify.StatusWarn || !strings.Contains(msg, "loop risk") {
			t.Errorf("pod_resolv_conf: [%s] %s", st, msg)
		}
		if f.SkydnsServer != "10.233.0.3" || f.ExpectedIP != "10.233.0.1" || !strings.HasPrefix(f.SkydnsServerSource, "3rd address of kube_service_addresses") {
			t.Errorf("facts %+v", f)
		}
		if len(f.Tiers) != 2 || f.Tiers[0].Tier != "nodelocaldns" || f.Tiers[0].Dialed != nodelocal.Addr || f.Tiers[0].Rcode != "NOERROR" ||
			!reflect.DeepEqual(f.Tiers[1].Answers, []string{"10.233.0.1"}) || f.Tiers[1].Server != "10.233.0.3:53" {
			t.Errorf("tiers %+v", f.Tiers)
		}
		if got := nodelocal.LastName.Load(); got != name+"." {
			t.Errorf("asked %v", got)
		}
		if f.Kubelet.ResolvConf != "/run/systemd/resolve/resolv.conf" || f.PodResolvConf.Nameservers[0] != "169.254.25.10" || f.HostResolvConf.Nameservers[0] != "127.0.0.53" {
			t.Errorf("facts kubelet %+v pod %+v host %+v", f.Kubelet, f.PodResolvConf, f.HostResolvConf)
		}
		if _, err := json.Marshal(f); err != nil {
			t.Fatal(err)
		}
	})

	cases := []struct {
		name        string
		behave      harness.DNSBehaviour
		ip          string
		msg, remedy string
	}{
		{"missing answer", harness.DNSEmpty, "", "answered NOERROR without an A record for kubernetes.default.svc.cluster.local", "kubectl get svc kubernetes -n default"},
		{"NXDOMAIN", harness.DNSNXDomain, "", "answered NXDOMAIN for kubernetes.default.svc.cluster.local: it does not serve dns_domain cluster.local", "dns_domain must be the cluster's domain"},
		{"SERVFAIL", harness.DNSServFail, "", "answered SERVFAIL for kubernetes.default.svc.cluster.local", "kubectl -n kube-system"},
		{"wrong IP", harness.DNSAnswer, "10.233.0.99", "answered 10.233.0.99 for kubernetes.default.svc.cluster.local, expected 10.233.0.1 (kube_apiserver_ip, the 1st address of kube_service_addresses 10.233.0.0/18)", "must show clusterIP 10.233.0.1"},
		{"timeout", harness.DNSSilent, "", "no answer for kubernetes.default.svc.cluster.local within 500ms", "kubectl -n kube-system"},
	}
	for _, tc := range cases {
		for _, tier := range []string{"nodelocaldns", "coredns"} {
			t.Run(tc.name+" at "+tier, func(t *testing.T) {
				bad, good := nodelocal, coredns
				if tier == "coredns" {
					bad, good = coredns, nodelocal
				}
				good.Set(harness.DNSAnswer, "10.233.0.1")
				bad.Set(tc.behave, tc.ip)
				defer bad.Set(harness.DNSAnswer, "10.233.0.1")
				res, _, elapsed := run(t)
				st, msg := etcdWorst(t, res, "query_"+tier)
				r := etcdResults(res)["query_"+tier][0]
				if st != verify.StatusFail || !strings.Contains(msg, tc.msg) || !strings.Contains(r.Remediation, tc.remedy) {
					t.Errorf("query_%s: [%s] %s (remedy %q)", tier, st, msg, r.Remediation)
				}
				other := "query_coredns"
				if tier == "coredns" {
					other = "query_nodelocaldns"
				}
				if st, msg := etcdWorst(t, res, other); st != verify.StatusOK {
					t.Errorf("%s: [%s] %s", other, st, msg)
				}
				if elapsed > env.NetTimeout+15*time.Second {
					t.Errorf("layer took %s with NetTimeout %s", elapsed, env.NetTimeout)
				}
			})
		}
	}

	t.Run("kubelet clusterDNS and clusterDomain", func(t *testing.T) {
		dnsWrite(t, root, "etc/kubernetes/kubelet-config.yaml", dnsKubeletConfig([]string{"10.233.0.3"}, "cluster.example", "/run/systemd/resolve/resolv.conf"))
		defer dnsWrite(t, root, "etc/kubernetes/kubelet-config.yaml", dnsKubeletConfig([]string{"169.254.25.10"}, "cluster.local", "/run/systemd/resolve/resolv.conf"))
		res, _, _ := run(t)
		if st, msg := etcdWorst(t, res, "kubelet_cluster_dns"); st != verify.StatusFail || !strings.Contains(msg, "clusterDNS is [10.233.0.3], expected [169.254.25.10] (enable_nodelocaldns is true") {
			t.Errorf("kubelet_cluster_dns: [%s] %s", st, msg)
		}
		if st, msg := etcdWorst(t, res, "kubelet_cluster_domain"); st != verify.StatusFail || !strings.Contains(msg, `clusterDomain is "cluster.example", dns_domain is "cluster.local"`) {
			t.Errorf("kubelet_cluster_domain: [%s] %s", st, msg)
		}
	})

	t.Run("without nodelocaldns only CoreDNS is asked and is clusterDNS", func(t *testing.T) {
		env := *env
		env.Options.EnableNodelocaldns = false
		dnsWrite(t, root, "etc/kubernetes/kubelet-config.yaml", dnsKubeletConfig([]string{"10.233.0.3"}, "cluster.local", "/run/systemd/resolve/resolv.conf"))
		defer dnsWrite(t, root, "etc/kubernetes/kubelet-config.yaml", dnsKubeletConfig([]string{"169.254.25.10"}, "cluster.local", "/run/systemd/resolve/resolv.conf"))
		before := nodelocal.Queries.Load()
		res, facts, err := dnsLayer{}.Check(context.Background(), &env)
		if err != nil {
			t.Fatal(err)
		}
		if nodelocal.Queries.Load() != before || len(facts.(*DNSFacts).Tiers) != 1 {
			t.Errorf("nodelocaldns asked while disabled")
		}
		if st, msg := etcdWorst(t, res, "kubelet_cluster_dns"); st != verify.StatusOK {
			t.Errorf("kubelet_cluster_dns: [%s] %s", st, msg)
		}
	})
}

func TestDNSLayerApplicability(t *testing.T) {
	env := &Env{FS: verify.FS{Root: t.TempDir()}, Host: "etcd4", Now: etcdTestNow, Options: Options{Groups: []string{"etcd"}}}
	rep, err := Run(context.Background(), env, []string{"dns"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lr := rep.Layers["dns"]; lr.Status != verify.StatusSkipped || !strings.Contains(lr.Results[0].Msg, "etcd4 is not in k8s_cluster") {
		t.Errorf("dns on an etcd-only host: %+v", lr)
	}
	env.Options.Groups = []string{"kube_node"}
	env.Options.KubeServiceAddresses = "10.233.0.5/18"
	res, _, _ := dnsLayer{}.Check(context.Background(), env)
	if st, msg := etcdWorst(t, res, "service_addresses"); st != verify.StatusFail || !strings.Contains(msg, "is not a network address") {
		t.Errorf("bad kube_service_addresses: [%s] %s", st, msg)
	}
}
