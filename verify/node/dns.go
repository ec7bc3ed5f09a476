package node

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
	"gopkg.in/yaml.v3"

	"github.com/layercheck/layercheck/verify"
)

// The dns layer checks cluster DNS from a node of k8s_cluster, the way
// kubespray v2.31.0 sets it up (the templates named below are unchanged on
// kubespray master as of this writing):
//
//   - kubernetes.default.svc.<dns_domain> A is asked of nodelocaldns at
//     nodelocaldns_ip:53 (when enable_nodelocaldns) and of CoreDNS at its
//     service IP skydns_server:53; both must answer kube_apiserver_ip. When
//     skydns_server is not given it is derived as kubespray does
//     (roles/kubespray_defaults/defaults/main/main.yml):
//     kube_service_subnets.split(',') | first | ansible.utils.ipaddr('net') |
//     ansible.utils.ipaddr(3) | ansible.utils.ipaddr('address'), and
//     kube_apiserver_ip the same with index 1 (10.233.0.3 and 10.233.0.1 for
//     the default 10.233.0.0/18).
//   - kubelet's clusterDNS (/etc/kubernetes/kubelet-config.yaml, from
//     roles/kubernetes/node/templates/kubelet-config.v1beta1.yaml.j2) is
//     [nodelocaldns_ip] when enable_nodelocaldns, else [skydns_server]
//     (dns_mode coredns; coredns_dual adds skydns_server_secondary).
//   - Resolver loops. CoreDNS (coredns-deployment.yml.j2, dnsPolicy
//     Default) forwards names outside the cluster with
//     `forward . {{ upstream_dns_servers | join(' ') if upstream_dns_servers
//     | length > 0 else '/etc/resolv.conf' }}` (coredns-config.yml.j2), and
//     nodelocaldns (nodelocaldns-daemonset.yml.j2, hostNetwork with dnsPolicy
//     Default) forwards zone "." to upstreamForwardTarget, which is
//     upstream_dns_servers or else /etc/resolv.conf
//     (roles/kubernetes-apps/ansible/tasks/main.yml). Both pods run with
//     dnsPolicy Default, so their /etc/resolv.conf is the file kubelet's
//     resolvConf names: kube_resolv_conf, /etc/resolv.conf by default and
//     /run/systemd/resolve/resolv.conf on Ubuntu and Fedora
//     (roles/kubernetes/node/vars/ubuntu-24.yml). At the end of cluster.yml
//     kubespray reruns kubernetes/preinstall with dns_late: true, which puts
//     nodelocaldns_ip (or the CoreDNS IP) first in the host's resolvers:
//     DNS= in /etc/systemd/resolved.conf.d/kubespray.conf (resolved.conf.j2)
//     on systemd-resolved hosts, the nameserver block of /etc/resolv.conf
//     (0060-resolvconf.yml, vars/main.yml nameserverentries) elsewhere. With
//     upstream_dns_servers empty the file handed to those pods therefore
//     names nodelocaldns_ip, i.e. nodelocaldns forwards "." partly to
//     itself: the CoreDNS loop plugin kills it whenever its probe comes back
//     (kubespray#9948, "Loop (169.254.25.10 -> 169.254.25.10:53) detected for
//     zone ."). That is reported as a warning when the file also names a real
//     upstream server (forward picks upstreams at random, so the loop is hit
//     now and then and names still resolve), and as a failure when it names
//     only cluster DNS addresses (every outside name loops). A loopback
//     nameserver (127.0.0.0/8, ::1, e.g. the systemd-resolved stub
//     127.0.0.53) in that file is a failure: in CoreDNS's network namespace
//     it is CoreDNS itself (kubespray#3979), and for nodelocaldns it is
//     systemd-resolved, which forwards back to nodelocaldns. The host's own
//     /etc/resolv.conf pointing at the stub or at nodelocaldns is kubespray's
//     intended setting and only reported.
func init() { register("dns", nil, func() Layer { return dnsLayer{} }) }

type dnsLayer struct{}

func (dnsLayer) Name() string { return "dns" }

// DNSFacts is the dns layer's part of ansible_facts.layercheck_node.
type DNSFacts struct {
	// Name is the name asked (fully qualified).
	Name string `json:"name"`
	// ExpectedIP is kube_apiserver_ip, the kubernetes service's cluster IP.
	ExpectedIP   string `json:"expected_ip"`
	SkydnsServer string `json:"skydns_server"`
	// SkydnsServerSecondary is the second CoreDNS address (dns_mode
	// coredns_dual); ManualDNSServer the cluster DNS of dns_mode manual.
	SkydnsServerSecondary string `json:"skydns_server_secondary,omitempty"`
	ManualDNSServer       string `json:"manual_dns_server,omitempty"`
	// SkydnsServerSource says whether skydns_server was given or derived.
	SkydnsServerSource string         `json:"skydns_server_source"`
	NodelocaldnsIP     string         `json:"nodelocaldns_ip,omitempty"`
	Tiers              []DNSTierFacts `json:"tiers"`
	Kubelet            *DNSKubelet    `json:"kubelet,omitempty"`
	// PodResolvConf is the file kubelet hands to pods with dnsPolicy Default
	// (CoreDNS, nodelocaldns); HostResolvConf is /etc/resolv.conf.
	PodResolvConf   *DNSResolvConf `json:"pod_resolv_conf,omitempty"`
	HostResolvConf  *DNSResolvConf `json:"host_resolv_conf,omitempty"`
	SystemdResolved *DNSResolved   `json:"systemd_resolved,omitempty"`
	// HostPath is the host's own resolution path: what writes
	// /etc/resolv.conf and which servers the host asks.
	HostPath *DNSHostPath `json:"host_path,omitempty"`
	// UpstreamDNSServers is upstream_dns_servers; ForwardTarget what
	// CoreDNS and nodelocaldns forward names outside the cluster to.
	UpstreamDNSServers []string `json:"upstream_dns_servers"`
	ForwardTarget      string   `json:"forward_target"`
	// LoopHazard is the resolver-loop hazard of PodResolvConf for CoreDNS
	// and nodelocaldns: none, loopback, total or partial (DNSLoop*).
	LoopHazard string `json:"loop_hazard,omitempty"`
}

// The dns layer's metrics: each tier's answer and latency, and the
// resolver loop hazard.
var (
	seriesDNSTierUp = &verify.Series{Name: "layercheck_dns_tier_up",
		Help:   "Whether a DNS tier (nodelocaldns, coredns, coredns_secondary, manual) answered kubernetes.default.svc with kube_apiserver_ip from this node (1) or not (0).",
		Labels: []string{"tier", "server"}}
	seriesDNSTierLatency = &verify.Series{Name: "layercheck_dns_tier_latency_seconds",
		Help:   "Time a DNS tier took to answer the query from this node.",
		Labels: []string{"tier", "server"}}
	seriesDNSLoop = &verify.Series{Name: "layercheck_dns_resolver_loop_hazard",
		Help:   "Whether the resolv.conf kubelet hands CoreDNS and nodelocaldns makes them forward names back to themselves (1) or not (0): kind loopback (a loopback nameserver), total (only cluster DNS, every outside name loops) or partial (cluster DNS beside real resolvers).",
		Labels: []string{"kind"}}
)

// Metrics sends each tier asked: up when its query check passed, its
// latency when it answered; then one series per loop hazard, 1 for the
// node's, when the layer read the resolver files.
func (f *DNSFacts) Metrics(lr *verify.LayerReport, send func(verify.Sample)) {
	if f == nil {
		return
	}
	for _, t := range f.Tiers {
		up := lr.CheckStatus("query_"+t.Tier) == verify.StatusOK
		send(verify.Sample{Series: seriesDNSTierUp, Value: verify.Gauge01(up), Labels: []string{t.Tier, t.Server}})
		if t.Error == "" {
			send(verify.Sample{Series: seriesDNSTierLatency, Value: t.LatencyMS / 1000, Labels: []string{t.Tier, t.Server}})
		}
	}
	if f.LoopHazard == "" {
		return // the layer stopped before reading the resolver files
	}
	for _, k := range DNSLoopHazards {
		send(verify.Sample{Series: seriesDNSLoop, Value: verify.Gauge01(f.LoopHazard == k), Labels: []string{k}})
	}
}

// DNSTierFacts is one query: tier "nodelocaldns" or "coredns"; Rcode as
// miekg/dns names it (NOERROR, NXDOMAIN, SERVFAIL...), Answers the A
// records, LatencyMS in milliseconds, Error/TimedOut when no answer came
// within Env.NetTimeout.
type DNSTierFacts struct {
	Tier string `json:"tier"`
	// Server is the address asked, Dialed the one contacted (Env.AddrMap).
	Server    string   `json:"server"`
	Dialed    string   `json:"dialed"`
	Rcode     string   `json:"rcode,omitempty"`
	Answers   []string `json:"answers"`
	LatencyMS float64  `json:"latency_ms"`
	Error     string   `json:"error,omitempty"`
	TimedOut  bool     `json:"timed_out,omitempty"`
}

// DNSKubelet is the DNS part of kubelet-config.yaml.
type DNSKubelet struct {
	Config        string   `json:"config"`
	ClusterDNS    []string `json:"cluster_dns"`
	ClusterDomain string   `json:"cluster_domain"`
	// ResolvConf is kubelet's resolvConf (kube_resolv_conf); kubelet's own
	// default /etc/resolv.conf when the key is absent.
	ResolvConf string `json:"resolv_conf"`
}

// DNSResolved is /etc/systemd/resolved.conf.d/kubespray.conf.
type DNSResolved struct {
	Path        string   `json:"path"`
	DNS         []string `json:"dns"`
	FallbackDNS []string `json:"fallback_dns"`
	Domains     []string `json:"domains,omitempty"`
}

// DNSResolvConf is a parsed resolv.conf.
type DNSResolvConf struct {
	Path        string   `json:"path"`
	Nameservers []string `json:"nameservers"`
	Search      []string `json:"search,omitempty"`
	Options     []string `json:"options,omitempty"`
}

// ParseDNSResolvConf reads resolv.conf(5): "nameserver", "search", "domain"
// and "options" lines, '#' and ';' comments; the last search or domain line
// wins, as in glibc.
func ParseDNSResolvConf(data []byte) DNSResolvConf {
	var rc DNSResolvConf
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "nameserver":
			rc.Nameservers = append(rc.Nameservers, f[1])
		case "search":
			rc.Search = slices.Clone(f[1:])
		case "domain":
			rc.Search = []string{f[1]}
		case "options":
			rc.Options = append(rc.Options, f[1:]...)
		}
	}
	return rc
}

// ServiceSubnetAddress is kubespray's
// `subnets.split(',') | first | ansible.utils.ipaddr('net') | ansible.utils.ipaddr(n) | ansible.utils.ipaddr('address')`:
// the n-th address of the first network in subnets. Like ipaddr('net') it
// refuses a prefix that is not a network address (10.233.0.5/18) or has a
// single address, and like ipaddr(n) an index outside the network.
func ServiceSubnetAddress(subnets string, n int) (string, error) {
	first := strings.TrimSpace(strings.Split(subnets, ",")[0])
	p, err := netip.ParsePrefix(first)
	if err != nil {
		return "", fmt.Errorf("%q is not an IP network: %v", first, err)
	}
	if p.Addr() != p.Masked().Addr() {
		return "", fmt.Errorf("%q is not a network address (its network is %s); ansible.utils.ipaddr('net') gives False", first, p.Masked())
	}
	hostBits := p.Addr().BitLen() - p.Bits()
	if hostBits == 0 {
		return "", fmt.Errorf("%q holds a single address; ansible.utils.ipaddr('net') gives False", first)
	}
	if n < 0 || (hostBits < 31 && n >= 1<<hostBits) {
		return "", fmt.Errorf("%q has no address with index %d", first, n)
	}
	a := p.Addr()
	for i := 0; i < n; i++ {
		a = a.Next()
	}
	return a.String(), nil
}

const (
	dnsDefaultTimeout   = 3 * time.Second
	dnsResolvedDropIn   = "/etc/systemd/resolved.conf.d/kubespray.conf"
	dnsRemedyNodelocal  = "kubectl -n kube-system get pods -l k8s-app=node-local-dns -o wide; kubectl -n kube-system logs -l k8s-app=node-local-dns --tail=50; `ip addr show nodelocaldns` must show %s; re-run cluster.yml --tags nodelocaldns"
	dnsRemedyCoreDNS    = "kubectl -n kube-system get pods -l k8s-app=kube-dns -o wide; kubectl -n kube-system get svc coredns (its clusterIP must be %s); check kube-proxy on this node (ipvs mode: ipvsadm -Ln -t %s:53); re-run cluster.yml --tags coredns"
	dnsRemedyNXDOMAIN   = "dns_domain must be the cluster's domain: compare `kubectl -n kube-system get cm coredns -o yaml` (kubernetes <dns_domain> plugin) and the nodelocaldns configmap with dns_domain, then re-run cluster.yml --tags coredns,nodelocaldns"
	dnsRemedyWrongIP    = "`kubectl get svc kubernetes -n default` must show clusterIP %s (kube_apiserver_ip); another answer means kube_service_addresses differs from the cluster's or another DNS server answers at this address"
	dnsRemedyKubelet    = "re-run cluster.yml --tags kubelet (kubespray renders kubelet-config.yaml from roles/kubernetes/node/templates/kubelet-config.v1beta1.yaml.j2) and check enable_nodelocaldns / dns_mode / dns_domain in the inventory"
	dnsRemedyLoop       = "set upstream_dns_servers to the real resolvers (CoreDNS and nodelocaldns then forward there instead of to /etc/resolv.conf) and re-run cluster.yml --tags coredns,nodelocaldns"
	dnsRemedyLoopback   = "point kube_resolv_conf at a file listing real resolvers (on systemd-resolved hosts kubespray uses /run/systemd/resolve/resolv.conf, not the 127.0.0.53 stub file) and re-run cluster.yml --tags kubelet, or set upstream_dns_servers"
	dnsRemedyResolvConf = "re-run cluster.yml; kubespray sets kube_resolv_conf per OS (roles/kubernetes/node/vars) and the host resolvers in kubernetes/preinstall (resolvconf_mode host_resolvconf)"
)

func dnsTimeout(env *Env) time.Duration {
	if env.NetTimeout > 0 {
		return env.NetTimeout
	}
	return dnsDefaultTimeout
}

func (dnsLayer) Check(ctx context.Context, env *Env) ([]verify.Result, any, error) {
	o := env.Options
	if !o.InGroup("k8s_cluster") && !o.InGroup("kube_control_plane") && !o.InGroup("kube_node") {
		return nil, nil, fmt.Errorf("%w: %s is not in k8s_cluster (group_names %v); kubespray configures cluster DNS only there", verify.ErrNotApplicable, env.Host, o.Groups)
	}
	var res []verify.Result
	add := func(r verify.Result) { r.Layer = "dns"; res = append(res, r) }

	mode := o.DNSMode
	if mode == "" {
		mode = "coredns"
	}
	domain := o.DNSDomain
	if domain == "" {
		domain = "cluster.local"
	}
	subnets := o.KubeServiceAddresses
	if subnets == "" {
		subnets = "10.233.0.0/18"
	}
	nodelocal := o.NodelocaldnsIP
	if nodelocal == "" {
		nodelocal = "169.254.25.10"
	}
	facts := &DNSFacts{Name: dns.Fqdn("kubernetes.default.svc." + domain), UpstreamDNSServers: dnsNonEmpty(o.UpstreamDNSServers)}
	if o.EnableNodelocaldns {
		facts.NodelocaldnsIP = nodelocal
	}
	if len(facts.UpstreamDNSServers) > 0 {
		facts.ForwardTarget = strings.Join(facts.UpstreamDNSServers, " ")
	} else {
		facts.ForwardTarget = "/etc/resolv.conf"
	}
	if mode == "none" {
		add(verify.Result{Check: "dns_mode", Status: verify.StatusWarn, Msg: "dns_mode is none: kubespray deploys no cluster DNS, service names do not resolve in pods",
			Remediation: "set dns_mode: coredns (the default) unless another cluster DNS is installed"})
		return res, facts, nil
	}

	expected, err := ServiceSubnetAddress(subnets, 1)
	if err != nil {
		add(verify.Result{Check: "service_addresses", Status: verify.StatusFail, Msg: "kube_service_addresses: " + err.Error(),
			Remediation: "kube_service_addresses must be a network such as 10.233.0.0/18"})
		return res, facts, nil
	}
	facts.ExpectedIP = expected
	skydns := o.SkydnsServer
	facts.SkydnsServerSource = "skydns_server"
	if skydns == "" {
		skydns, err = ServiceSubnetAddress(subnets, 3)
		if err != nil {
			add(verify.Result{Check: "service_addresses", Status: verify.StatusFail, Msg: "kube_service_addresses: " + err.Error()})
			return res, facts, nil
		}
		facts.SkydnsServerSource = "3rd address of kube_service_addresses " + subnets
	}
	facts.SkydnsServer = skydns
	clusterIPs := []string{skydns}
	secondary := o.SkydnsServerSecondary
	if mode == "coredns_dual" {
		if secondary == "" {
			secondary, _ = ServiceSubnetAddress(subnets, 4)
		}
		if secondary != "" {
			clusterIPs = append(clusterIPs, secondary)
			facts.SkydnsServerSecondary = secondary
		}
	}
	if mode == "manual" {
		// kube_dns_servers.manual: [manual_dns_server] (kubespray_defaults).
		if o.ManualDNSServer == "" {
			add(verify.Result{Check: "dns_mode", Status: verify.StatusFail,
				Msg:         "dns_mode is manual but manual_dns_server is empty: kubelet's clusterDNS gets an empty address and pods cannot resolve anything",
				Remediation: "set manual_dns_server to the cluster DNS service you run, or dns_mode: coredns, and re-run cluster.yml --tags kubelet"})
			return res, facts, nil
		}
		clusterIPs = []string{o.ManualDNSServer}
		facts.ManualDNSServer = o.ManualDNSServer
	}
	if o.EnableNodelocaldns {
		clusterIPs = append(clusterIPs, nodelocal)
	}

	// Where kubelet never ran, nothing of cluster DNS can answer here and
	// kubelet has no clusterDNS: one result says so; the host's resolver
	// files are still judged (kubespray points kubelet's resolvConf at them).
	kubeletDone := roleRan(env, roleNode)
	if !kubeletDone {
		add(roleNotRun(env, roleNode, "cluster DNS ("+strings.Join(clusterIPs, ", ")+") is not queried from this host and kubelet's clusterDNS is not checked"))
	}

	// Live queries, concurrently.
	type tier struct{ name, ip, remedy string }
	var tiers []tier
	if o.EnableNodelocaldns {
		tiers = append(tiers, tier{"nodelocaldns", nodelocal, fmt.Sprintf(dnsRemedyNodelocal, nodelocal)})
	}
	if mode == "coredns" || mode == "coredns_dual" {
		tiers = append(tiers, tier{"coredns", skydns, fmt.Sprintf(dnsRemedyCoreDNS, skydns, skydns)})
	}
	if mode == "coredns_dual" && secondary != "" {
		tiers = append(tiers, tier{"coredns_secondary", secondary,
			fmt.Sprintf("kubectl -n kube-system get svc coredns-secondary (its clusterIP must be skydns_server_secondary %s); check kube-proxy on this node (ipvs mode: ipvsadm -Ln -t %s:53); re-run cluster.yml --tags coredns", secondary, secondary)})
	}
	if mode == "manual" {
		tiers = append(tiers, tier{"manual", o.ManualDNSServer,
			fmt.Sprintf("dns_mode manual: kubespray deploys no cluster DNS; the DNS service you run must answer on manual_dns_server %s (kubectl get svc -A | grep %s)", o.ManualDNSServer, o.ManualDNSServer)})
	}
	if !kubeletDone {
		tiers = nil
	}
	facts.Tiers = make([]DNSTierFacts, len(tiers))
	var wg sync.WaitGroup
	for i, tr := range tiers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			facts.Tiers[i] = dnsQuery(ctx, env, tr.name, net.JoinHostPort(tr.ip, "53"), facts.Name)
		}()
	}
	wg.Wait()
	for i, tr := range tiers {
		add(dnsTierResult(facts.Tiers[i], expected, domain, subnets, tr.remedy, dnsTimeout(env)))
	}

	// kubelet-config.yaml.
	kcDir := o.KubeConfigDir
	if kcDir == "" {
		kcDir = "/etc/kubernetes"
	}
	var kc *DNSKubelet
	if kubeletDone {
		kc = dnsCheckKubelet(env, kcDir+"/kubelet-config.yaml", mode, o.EnableNodelocaldns, nodelocal, clusterIPs, domain, add)
	}
	facts.Kubelet = kc

	// Resolver files.
	var host *DNSResolvConf
	if data, err := env.Read("/etc/resolv.conf"); err == nil {
		rc := ParseDNSResolvConf(data)
		rc.Path = "/etc/resolv.conf"
		host = &rc
	}
	facts.HostResolvConf = host
	facts.HostPath = dnsHostPath(env, host)
	podPath := "/etc/resolv.conf"
	switch {
	case kc != nil:
		podPath = kc.ResolvConf
	case !kubeletDone && facts.HostPath.Origin == "systemd-resolved stub" && env.Exists(resolvedUpstream):
		// What kubelet will be given: kubespray's kube_resolv_conf is
		// systemd-resolved's own file on the hosts that use its stub
		// (roles/kubernetes/node/vars/ubuntu-*.yml, fedora.yml).
		podPath = resolvedUpstream
	}
	var pod *DNSResolvConf
	var podErr error
	if podPath != "" {
		if data, err := env.Read(podPath); err != nil {
			podErr = etcdPathErr(err)
		} else {
			rc := ParseDNSResolvConf(data)
			rc.Path = podPath
			pod = &rc
		}
	}
	facts.PodResolvConf = pod
	if data, err := env.Read(dnsResolvedDropIn); err == nil {
		facts.SystemdResolved = ParseResolvedConf(data)
		facts.SystemdResolved.Path = dnsResolvedDropIn
	}
	facts.LoopHazard = dnsLoopHazard(o, clusterIPs, pod)
	for _, r := range dnsResolverChecks(o, mode, clusterIPs, nodelocal, skydns, podPath, pod, podErr, host, facts.SystemdResolved) {
		if r.Check == "pod_resolv_conf" && r.Status == verify.StatusFail && r.Remediation == dnsRemedyLoopback {
			if why := loopbackOrigin(env, podPath, facts.HostPath); why != "" {
				r.Remediation = why + "; " + r.Remediation
			}
		}
		add(r)
	}
	add(dnsHostResult(o, facts.HostPath, clusterIPs))
	return res, facts, nil
}

func dnsNonEmpty(list []string) []string {
	out := []string{}
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// dnsQuery asks server (before Env.AddrMap) for name A over UDP, retrying
// over TCP when the answer is truncated, within Env.NetTimeout.
func dnsQuery(ctx context.Context, env *Env, tierName, server, name string) DNSTierFacts {
	tf := DNSTierFacts{Tier: tierName, Server: server, Dialed: env.Addr(server), Answers: []string{}}
	timeout := dnsTimeout(env)
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	m.RecursionDesired = true
	start := time.Now()
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := &dns.Client{Net: "udp", Timeout: timeout}
	var r *dns.Msg
	var err error
	if env.Dial != nil {
		// Through the node's connection only streams go: DNS over TCP,
		// which nodelocaldns and CoreDNS answer as they answer UDP.
		c.Net = "tcp"
		var conn net.Conn
		if conn, err = env.dial(qctx, "tcp", tf.Dialed, timeout); err == nil {
			r, _, err = c.ExchangeWithConnContext(qctx, m, &dns.Conn{Conn: conn})
			conn.Close()
		}
	} else {
		r, _, err = c.ExchangeContext(qctx, m, tf.Dialed)
	}
	if err == nil && r.Truncated && c.Net == "udp" {
		c.Net = "tcp"
		r, _, err = c.ExchangeContext(qctx, m, tf.Dialed)
	}
	tf.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		tf.Error = err.Error()
		var ne net.Error
		tf.TimedOut = errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
		return tf
	}
	tf.Rcode = dns.RcodeToString[r.Rcode]
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			tf.Answers = append(tf.Answers, a.A.String())
		}
	}
	return tf
}

func dnsTierResult(tf DNSTierFacts, expected, domain, subnets, remedy string, timeout time.Duration) verify.Result {
	label := fmt.Sprintf("%s %s", tf.Tier, tf.Server)
	if tf.Dialed != tf.Server {
		label += " (dialed " + tf.Dialed + ")"
	}
	name := "kubernetes.default.svc." + domain
	r := verify.Result{Check: "query_" + tf.Tier, Evidence: tf, Expected: expected}
	switch {
	case tf.Error != "":
		r.Status = verify.StatusFail
		if tf.TimedOut {
			r.Msg = fmt.Sprintf("%s: no answer for %s within %s", label, name, timeout)
		} else {
			r.Msg = fmt.Sprintf("%s: query for %s failed: %s", label, name, tf.Error)
		}
		r.Remediation = remedy
	case tf.Rcode == "NXDOMAIN":
		r.Status = verify.StatusFail
		r.Msg = fmt.Sprintf("%s answered NXDOMAIN for %s: it does not serve dns_domain %s", label, name, domain)
		r.Actual = tf.Rcode
		r.Remediation = dnsRemedyNXDOMAIN
	case tf.Rcode != "NOERROR":
		r.Status = verify.StatusFail
		r.Msg = fmt.Sprintf("%s answered %s for %s", label, tf.Rcode, name)
		r.Actual = tf.Rcode
		r.Remediation = remedy
	case len(tf.Answers) == 0:
		r.Status = verify.StatusFail
		r.Msg = fmt.Sprintf("%s answered NOERROR without an A record for %s", label, name)
		r.Remediation = remedy + "; `kubectl get svc kubernetes -n default` must exist"
	case !slices.Contains(tf.Answers, expected) || len(tf.Answers) > 1:
		r.Status = verify.StatusFail
		r.Msg = fmt.Sprintf("%s answered %s for %s, expected %s (kube_apiserver_ip, the 1st address of kube_service_addresses %s)", label, strings.Join(tf.Answers, ", "), name, expected, subnets)
		r.Actual = tf.Answers
		r.Remediation = fmt.Sprintf(dnsRemedyWrongIP, expected)
	default:
		r.Status = verify.StatusOK
		r.Msg = fmt.Sprintf("%s answered %s for %s in %.1f ms", label, expected, name, tf.LatencyMS)
		r.Expected = nil
	}
	return r
}

// dnsCheckKubelet reads kubelet-config.yaml and checks clusterDNS and
// clusterDomain; it returns the DNS facts (nil when unreadable).
func dnsCheckKubelet(env *Env, p, mode string, nodelocalOn bool, nodelocal string, clusterIPs []string, domain string, add func(verify.Result)) *DNSKubelet {
	data, err := env.Read(p)
	if err != nil {
		add(verify.Result{Check: "kubelet_cluster_dns", Status: verify.StatusFail, Msg: fmt.Sprintf("cannot read %s: %v", p, etcdPathErr(err)), Remediation: dnsRemedyKubelet})
		return nil
	}
	var kc struct {
		ClusterDNS    []string `yaml:"clusterDNS"`
		ClusterDomain string   `yaml:"clusterDomain"`
		ResolvConf    *string  `yaml:"resolvConf"`
	}
	if err := yaml.Unmarshal(data, &kc); err != nil {
		add(verify.Result{Check: "kubelet_cluster_dns", Status: verify.StatusFail, Msg: fmt.Sprintf("%s: %v", p, err), Remediation: dnsRemedyKubelet})
		return nil
	}
	facts := &DNSKubelet{Config: p, ClusterDNS: kc.ClusterDNS, ClusterDomain: kc.ClusterDomain, ResolvConf: "/etc/resolv.conf"}
	if kc.ResolvConf != nil {
		facts.ResolvConf = *kc.ResolvConf
	}
	if facts.ClusterDNS == nil {
		facts.ClusterDNS = []string{}
	}
	// kubelet-config.v1beta1.yaml.j2: nodelocaldns first, else by dns_mode.
	var want []string
	var why string
	switch {
	case nodelocalOn:
		want, why = []string{nodelocal}, "enable_nodelocaldns is true: pods ask nodelocaldns_ip"
	case mode == "coredns" || mode == "coredns_dual":
		want, why = clusterIPs, "enable_nodelocaldns is false: pods ask the CoreDNS service IP (skydns_server)"
		if mode == "coredns_dual" {
			why = "enable_nodelocaldns is false and dns_mode coredns_dual: pods ask both CoreDNS service IPs (skydns_server, skydns_server_secondary)"
		}
	case mode == "manual":
		want, why = clusterIPs, "enable_nodelocaldns is false and dns_mode manual: pods ask manual_dns_server"
	}
	switch {
	case want == nil:
		add(verify.Result{Check: "kubelet_cluster_dns", Status: verify.StatusOK, Msg: fmt.Sprintf("%s: clusterDNS %v (dns_mode %s, not compared)", p, facts.ClusterDNS, mode)})
	case !slices.Equal(facts.ClusterDNS, want):
		add(verify.Result{Check: "kubelet_cluster_dns", Status: verify.StatusFail,
			Msg:      fmt.Sprintf("%s: clusterDNS is %v, expected %v (%s)", p, facts.ClusterDNS, want, why),
			Expected: want, Actual: facts.ClusterDNS, Remediation: dnsRemedyKubelet})
	default:
		add(verify.Result{Check: "kubelet_cluster_dns", Status: verify.StatusOK, Msg: fmt.Sprintf("%s: clusterDNS %v (%s)", p, want, why)})
	}
	if kc.ClusterDomain != domain {
		add(verify.Result{Check: "kubelet_cluster_domain", Status: verify.StatusFail,
			Msg:      fmt.Sprintf("%s: clusterDomain is %q, dns_domain is %q: pods get search domains of another cluster domain", p, kc.ClusterDomain, domain),
			Expected: domain, Actual: kc.ClusterDomain, Remediation: dnsRemedyKubelet})
	}
	return facts
}

// ParseResolvedConf reads the [Resolve] section of a systemd-resolved
// configuration file (DNS=, FallbackDNS=, Domains=; the last one wins).
func ParseResolvedConf(data []byte) *DNSResolved {
	r := &DNSResolved{DNS: []string{}, FallbackDNS: []string{}}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = line[1 : len(line)-1]
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || section != "Resolve" {
			continue
		}
		f := strings.Fields(v)
		if f == nil {
			f = []string{}
		}
		switch strings.TrimSpace(k) {
		case "DNS":
			r.DNS = f
		case "FallbackDNS":
			r.FallbackDNS = f
		case "Domains":
			r.Domains = f
		}
	}
	return r
}

// dnsIsLoopback reports 127.0.0.0/8 and ::1 (a nameserver may carry a
// %zone or be unparsable; those are not loopback).
func dnsIsLoopback(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Unmap().IsLoopback()
}

// dnsNameserverKinds splits the nameservers of pod (nil: none) into
// loopback addresses, cluster DNS addresses and the others.
func dnsNameserverKinds(pod *DNSResolvConf, clusterIPs []string) (loop, cluster, other []string) {
	if pod == nil {
		return nil, nil, nil
	}
	for _, ns := range pod.Nameservers {
		switch {
		case dnsIsLoopback(ns):
			loop = append(loop, ns)
		case slices.Contains(clusterIPs, ns):
			cluster = append(cluster, ns)
		default:
			other = append(other, ns)
		}
	}
	return loop, cluster, other
}

// Resolver-loop hazards (DNSFacts.LoopHazard), as dnsResolverChecks judges
// the file kubelet hands CoreDNS and nodelocaldns when they forward names
// outside the cluster to it (upstream_dns_servers empty).
const (
	DNSLoopNone = "none"
	// DNSLoopLoopback: a loopback nameserver, CoreDNS itself inside its pod.
	DNSLoopLoopback = "loopback"
	// DNSLoopTotal: only cluster DNS addresses, every outside name loops.
	DNSLoopTotal = "total"
	// DNSLoopPartial: cluster DNS beside real resolvers, some names loop.
	DNSLoopPartial = "partial"
)

// DNSLoopHazards lists the hazards other than none.
var DNSLoopHazards = []string{DNSLoopLoopback, DNSLoopTotal, DNSLoopPartial}

// dnsLoopHazard is the resolver-loop hazard of pod for CoreDNS and
// nodelocaldns, in the order dnsResolverChecks tests the same cases.
func dnsLoopHazard(o Options, clusterIPs []string, pod *DNSResolvConf) string {
	if len(dnsNonEmpty(o.UpstreamDNSServers)) > 0 {
		return DNSLoopNone // they forward to upstream_dns_servers, not to the file
	}
	loop, cluster, other := dnsNameserverKinds(pod, clusterIPs)
	switch {
	case len(loop) > 0:
		return DNSLoopLoopback
	case len(cluster) > 0 && len(other) == 0:
		return DNSLoopTotal
	case len(cluster) > 0:
		return DNSLoopPartial
	}
	return DNSLoopNone
}

// dnsResolverChecks judges the resolver files for forwarding loops; it is
// pure so every variant can be table-tested. See the package comment of
// this file for the kubespray templates behind each rule.
func dnsResolverChecks(o Options, mode string, clusterIPs []string, nodelocal, skydns, podPath string, pod *DNSResolvConf, podErr error, host *DNSResolvConf, resolved *DNSResolved) []verify.Result {
	var res []verify.Result
	upstream := dnsNonEmpty(o.UpstreamDNSServers)
	forwardsToFile := len(upstream) == 0
	who := fmt.Sprintf("%s (kubelet resolvConf, the /etc/resolv.conf of CoreDNS and nodelocaldns, which run with dnsPolicy Default)", podPath)

	// The file handed to pods with dnsPolicy Default.
	r := verify.Result{Check: "pod_resolv_conf"}
	loop, cluster, other := dnsNameserverKinds(pod, clusterIPs)
	if pod != nil {
		r.Evidence = pod
	}
	switch {
	case podPath == "":
		r.Status, r.Msg = verify.StatusWarn, "kubelet resolvConf is empty: pods with dnsPolicy Default get no nameserver"
		if forwardsToFile {
			r.Status = verify.StatusFail
			r.Msg += ", and CoreDNS and nodelocaldns forward names outside the cluster to /etc/resolv.conf with upstream_dns_servers empty, so those names fail"
			r.Remediation = dnsRemedyLoop
		}
	case pod == nil:
		r.Status = verify.StatusWarn
		r.Msg = fmt.Sprintf("cannot read %s: %v", who, podErr)
		if forwardsToFile {
			r.Status = verify.StatusFail
			r.Msg += "; with upstream_dns_servers empty CoreDNS and nodelocaldns forward names outside the cluster to it"
		}
		r.Remediation = dnsRemedyResolvConf
	case len(loop) > 0:
		r.Status = verify.StatusFail
		r.Msg = fmt.Sprintf("%s names loopback nameserver %s: inside CoreDNS's pod that address is CoreDNS itself (a forwarding loop, kubespray#3979) and nodelocaldns reaches the host's local resolver, which forwards back to nodelocaldns (kubespray#9948)",
			who, strings.Join(loop, ", "))
		if !forwardsToFile {
			r.Msg = fmt.Sprintf("%s names loopback nameserver %s: CoreDNS and nodelocaldns forward to upstream_dns_servers, but every other pod with dnsPolicy Default gets a nameserver that is not reachable from its network namespace",
				who, strings.Join(loop, ", "))
		}
		r.Actual = pod.Nameservers
		r.Remediation = dnsRemedyLoopback
	case len(pod.Nameservers) == 0:
		r.Status, r.Msg = verify.StatusWarn, fmt.Sprintf("%s names no nameserver", who)
		if forwardsToFile {
			r.Status = verify.StatusFail
			r.Msg += ": with upstream_dns_servers empty CoreDNS and nodelocaldns have nowhere to forward names outside the cluster"
			r.Remediation = dnsRemedyLoop
		}
	case len(cluster) > 0 && !forwardsToFile:
		r.Status = verify.StatusOK
		r.Msg = fmt.Sprintf("%s names cluster DNS %s, but CoreDNS and nodelocaldns forward names outside the cluster to upstream_dns_servers %s, not to it: no loop",
			who, strings.Join(cluster, ", "), strings.Join(upstream, " "))
	case len(cluster) > 0 && len(other) == 0:
		r.Status = verify.StatusFail
		r.Msg = fmt.Sprintf("%s names only cluster DNS %s and upstream_dns_servers is empty: CoreDNS and nodelocaldns forward every name outside the cluster back to cluster DNS, a forwarding loop the CoreDNS loop plugin stops by exiting (kubespray#9948)",
			who, strings.Join(cluster, ", "))
		r.Actual = pod.Nameservers
		r.Remediation = dnsRemedyLoop
	case len(cluster) > 0:
		r.Status = verify.StatusWarn
		r.Msg = fmt.Sprintf("loop risk: %s names cluster DNS %s besides %s and upstream_dns_servers is empty, so nodelocaldns/CoreDNS forward part of the names outside the cluster back to cluster DNS; the CoreDNS loop plugin then exits at random restarts (\"Loop (%s -> %s:53) detected\", kubespray#9948). kubespray v2.31.0 leaves this state by default (dns_late puts %s first in the host's resolvers)",
			who, strings.Join(cluster, ", "), strings.Join(other, ", "), cluster[0], cluster[0], cluster[0])
		r.Actual = pod.Nameservers
		r.Remediation = dnsRemedyLoop
	default:
		r.Status = verify.StatusOK
		target := "it"
		if !forwardsToFile {
			target = "upstream_dns_servers " + strings.Join(upstream, " ")
		}
		r.Msg = fmt.Sprintf("%s names %s, no cluster DNS and no loopback address; CoreDNS and nodelocaldns forward names outside the cluster to %s", who, strings.Join(pod.Nameservers, ", "), target)
	}
	res = append(res, r)

	// The host's own /etc/resolv.conf, when kubelet hands pods another file.
	if host != nil && path.Clean(podPath) != "/etc/resolv.conf" {
		h := verify.Result{Check: "host_resolv_conf", Status: verify.StatusOK, Evidence: host}
		var stub, nl []string
		for _, ns := range host.Nameservers {
			if dnsIsLoopback(ns) {
				stub = append(stub, ns)
			}
			if ns == nodelocal || ns == skydns {
				nl = append(nl, ns)
			}
		}
		switch {
		case len(host.Nameservers) == 0:
			h.Status = verify.StatusWarn
			h.Msg = "/etc/resolv.conf names no nameserver: programs on the host cannot resolve names"
			h.Remediation = dnsRemedyResolvConf
		case len(stub) > 0:
			h.Msg = fmt.Sprintf("the host resolves through the local resolver %s (/etc/resolv.conf); kubelet hands %s to pods instead, so this is not a loop", strings.Join(stub, ", "), podPath)
			if resolved != nil {
				h.Msg += fmt.Sprintf("; systemd-resolved forwards to DNS=%s (%s)", strings.Join(resolved.DNS, " "), resolved.Path)
			}
		case len(nl) > 0:
			h.Msg = fmt.Sprintf("/etc/resolv.conf names cluster DNS %s: kubespray's intended host setting (resolvconf_mode host_resolvconf after dns_late)", strings.Join(nl, ", "))
		default:
			h.Msg = fmt.Sprintf("/etc/resolv.conf names %s", strings.Join(host.Nameservers, ", "))
		}
		res = append(res, h)
	}

	// systemd-resolved drop-in written by kubernetes/preinstall (resolved.conf.j2).
	rm := o.ResolvconfMode
	if rm == "" {
		rm = "host_resolvconf"
	}
	if resolved != nil && rm == "host_resolvconf" {
		want := []string{nodelocal}
		if !o.EnableNodelocaldns {
			want = slices.DeleteFunc(slices.Clone(clusterIPs), func(s string) bool { return s == nodelocal })
		}
		s := verify.Result{Check: "systemd_resolved", Evidence: resolved}
		if slices.Equal(resolved.DNS, want) {
			s.Status = verify.StatusOK
			s.Msg = fmt.Sprintf("%s: DNS=%s as resolved.conf.j2 renders it at the end of cluster.yml (dns_late)", resolved.Path, strings.Join(want, " "))
		} else {
			s.Status = verify.StatusWarn
			s.Msg = fmt.Sprintf("%s: DNS=%s, kubespray's last cluster.yml play (kubernetes/preinstall with dns_late: true) writes DNS=%s: the play did not run or the file was changed",
				resolved.Path, strings.Join(resolved.DNS, " "), strings.Join(want, " "))
			s.Expected, s.Actual = want, resolved.DNS
			s.Remediation = "re-run cluster.yml --tags resolvconf"
		}
		res = append(res, s)
	}
	return res
}
