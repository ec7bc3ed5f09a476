package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/node"
)

// Certificate families as the family label names them, and who renews
// each (the renewer label).
const (
	FamilyKubeadm        = "kubeadm"
	FamilyEtcd           = "etcd"
	FamilyKubelet        = "kubelet"
	FamilyTrustStoreCopy = "trust_store_copy"

	RenewerKubeadm  = "kubeadm certs renew"
	RenewerEtcd     = "make-ssl-etcd.sh"
	RenewerKubelet  = "kubelet rotation"
	renewerFallback = "unknown"
)

// certFamily maps the certificates layer's family to the family label and
// its renewer.
func certFamily(f string) (family, renewer string) {
	switch f {
	case node.FamilyKubeadm:
		return FamilyKubeadm, RenewerKubeadm
	case node.FamilyEtcdScript:
		return FamilyEtcd, RenewerEtcd
	case node.FamilyKubelet:
		return FamilyKubelet, RenewerKubelet
	}
	return f, renewerFallback
}

var (
	descCertNotAfter = prometheus.NewDesc("layercheck_certificate_not_after_timestamp_seconds",
		"Time a certificate on this node expires (its not_after), in seconds since the Unix epoch; family kubeadm, etcd (make-ssl-etcd.sh), kubelet or trust_store_copy (the etcd CA in the system trust store), renewer the tool that renews it.",
		[]string{"family", "path", "subject_cn", "issuer_cn", "renewer"}, nil)
	descEtcdEndpointHealthy = prometheus.NewDesc("layercheck_etcd_endpoint_healthy",
		"Whether an etcd endpoint of etcd.env answered its status request from this node without alarms (1) or not (0).",
		[]string{"endpoint", "member"}, nil)
	descEtcdHasLeader = prometheus.NewDesc("layercheck_etcd_has_leader",
		"Whether the etcd endpoints this node asked agree on a leader that is in the member list (1) or not (0).",
		nil, nil)
	descEtcdMembers = prometheus.NewDesc("layercheck_etcd_members",
		"Number of members in the etcd member list as this node sees it (0 when no endpoint answered).",
		nil, nil)
	descDNSTierUp = prometheus.NewDesc("layercheck_dns_tier_up",
		"Whether a DNS tier (nodelocaldns, coredns, coredns_secondary, manual) answered kubernetes.default.svc with kube_apiserver_ip from this node (1) or not (0).",
		[]string{"tier", "server"}, nil)
	descDNSTierLatency = prometheus.NewDesc("layercheck_dns_tier_latency_seconds",
		"Time a DNS tier took to answer the query from this node.",
		[]string{"tier", "server"}, nil)
	descDNSLoop = prometheus.NewDesc("layercheck_dns_resolver_loop_hazard",
		"Whether the resolv.conf kubelet hands CoreDNS and nodelocaldns makes them forward names back to themselves (1) or not (0): kind loopback (a loopback nameserver), total (only cluster DNS, every outside name loops) or partial (cluster DNS beside real resolvers).",
		[]string{"kind"}, nil)
)

// NodeCollector collects the metrics of a `layercheck node` run.
type NodeCollector struct {
	Report *node.Report
	Run    Run
}

// Describe sends the descriptors of what Collect sends.
func (c *NodeCollector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

// Collect sends the layers' statuses and the run's, then what the
// certificates, etcd and dns layers found.
func (c *NodeCollector) Collect(ch chan<- prometheus.Metric) {
	collectRun(ch, ScopeNode, c.Report.Layers, c.Run)
	if lr := c.Report.Layers["certificates"]; lr != nil {
		if f, ok := lr.Facts.(*node.CertificatesFacts); ok && f != nil {
			collectCerts(ch, f)
		}
	}
	if lr := c.Report.Layers["etcd"]; lr != nil {
		if f, ok := lr.Facts.(*node.EtcdFacts); ok && f != nil {
			collectEtcd(ch, lr, f)
		}
	}
	if lr := c.Report.Layers["dns"]; lr != nil {
		if f, ok := lr.Facts.(*node.DNSFacts); ok && f != nil {
			collectDNS(ch, lr, f)
		}
	}
}

func collectCerts(ch chan<- prometheus.Metric, f *node.CertificatesFacts) {
	for _, ci := range f.Certificates {
		if ci.NotAfter.IsZero() {
			continue
		}
		fam, renewer := certFamily(ci.Family)
		ch <- prometheus.MustNewConstMetric(descCertNotAfter, prometheus.GaugeValue, float64(ci.NotAfter.Unix()),
			fam, ci.Path, ci.SubjectCN, ci.IssuerCN, renewer)
	}
	for _, cp := range f.TrustStoreCopies {
		if cp.NotAfter.IsZero() {
			continue
		}
		ch <- prometheus.MustNewConstMetric(descCertNotAfter, prometheus.GaugeValue, float64(cp.NotAfter.Unix()),
			FamilyTrustStoreCopy, cp.Path, cp.SubjectCN, cp.IssuerCN, RenewerEtcd)
	}
}

// collectEtcd sends etcd's health as the node sees it, only when the
// layer asked etcd (a host outside the etcd group, or etcd run by kubeadm
// as a static pod, has no endpoints here).
func collectEtcd(ch chan<- prometheus.Metric, lr *verify.LayerReport, f *node.EtcdFacts) {
	if len(f.Endpoints) == 0 {
		return
	}
	names := map[string]string{}
	for _, m := range f.Members {
		names[m.ID] = m.Name
	}
	seen := map[string]bool{}
	for _, e := range f.Endpoints {
		if seen[e.Endpoint] {
			continue
		}
		seen[e.Endpoint] = true
		ch <- prometheus.MustNewConstMetric(descEtcdEndpointHealthy, prometheus.GaugeValue,
			boolValue(e.Healthy && e.Error == "" && len(e.Alarms) == 0), e.Endpoint, names[e.MemberID])
	}
	ch <- prometheus.MustNewConstMetric(descEtcdHasLeader, prometheus.GaugeValue, boolValue(checkStatus(lr, "leader") == verify.StatusOK))
	ch <- prometheus.MustNewConstMetric(descEtcdMembers, prometheus.GaugeValue, float64(len(f.Members)))
}

func collectDNS(ch chan<- prometheus.Metric, lr *verify.LayerReport, f *node.DNSFacts) {
	for _, t := range f.Tiers {
		up := checkStatus(lr, "query_"+t.Tier) == verify.StatusOK
		ch <- prometheus.MustNewConstMetric(descDNSTierUp, prometheus.GaugeValue, boolValue(up), t.Tier, t.Server)
		if t.Error == "" {
			ch <- prometheus.MustNewConstMetric(descDNSTierLatency, prometheus.GaugeValue, t.LatencyMS/1000, t.Tier, t.Server)
		}
	}
	if f.LoopHazard == "" {
		return // the layer stopped before reading the resolver files
	}
	for _, k := range node.DNSLoopHazards {
		ch <- prometheus.MustNewConstMetric(descDNSLoop, prometheus.GaugeValue, boolValue(f.LoopHazard == k), k)
	}
}

// checkStatus is the status of the layer's first result named check
// ("" when there is none): a check's verdict that the facts do not hold.
func checkStatus(lr *verify.LayerReport, check string) verify.Status {
	for _, r := range lr.Results {
		if r.Check == check {
			return r.Status
		}
	}
	return ""
}
