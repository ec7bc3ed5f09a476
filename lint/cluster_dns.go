package lint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/clusterstate"
	"github.com/layercheck/layercheck/parser"
)

// appsRole is the role that deploys the cluster DNS on cluster.yml and
// upgrade-cluster.yml (the kubernetes-apps role, tags apps, depends on it;
// scale.yml does not run it).
const appsRole = "roles/kubernetes-apps/ansible"

// clusterDNS compares dns_mode and enable_nodelocaldns with the CoreDNS
// Deployments and the nodelocaldns DaemonSet. kubespray deploys what the
// inventory names and deletes nothing: a DNS the inventory asks for and
// the cluster lacks is recreated by the run (info); one the inventory
// turned off is left running (warning, through compare).
func (c *checkCtx) clusterDNS(st *clusterstate.State, compare func(string, liveField, func(string, string) bool, Severity, string)) []Finding {
	running := "none"
	switch {
	case st.HasDeployment("coredns") && st.HasDeployment("coredns-secondary"):
		running = "coredns_dual"
	case st.HasDeployment("coredns"):
		running = "coredns"
	}
	compare("dns_mode", liveField{running, "Deployments kube-system/coredns, coredns-secondary"},
		func(inv, live string) bool {
			return inv == live || inv == "manual" || len(coreDNSMissing(inv, live)) > 0
		}, SeverityWarning,
		appsRole+" deploys only the DNS dns_mode names and deletes none: the running CoreDNS Deployment is left as it is, behind the cluster DNS Service, no longer configured nor upgraded by kubespray.")
	nl := strconv.FormatBool(st.HasDaemonSet("nodelocaldns"))
	compare("enable_nodelocaldns", liveField{nl, "DaemonSet kube-system/nodelocaldns present: " + nl},
		func(inv, live string) bool { return inv == live || inv == "true" }, SeverityWarning,
		appsRole+" deploys nodelocaldns only when enable_nodelocaldns is true and deletes nothing: the DaemonSet is left running, no longer upgraded, while kubelets' clusterDNS moves from nodelocaldns_ip to dns_mode's server when kubespray rewrites their kubelet-config.")

	var out []Finding
	hosts := c.clusterHosts()
	for _, t := range c.targets("dns_mode", hosts, nil) {
		missing := coreDNSMissing(t.text, running)
		if len(missing) == 0 || !c.deploysCoreDNS(t.u.hosts) {
			continue
		}
		what := "no CoreDNS Deployment (Deployment kube-system/coredns)"
		tasks := `"Kubernetes Apps | CoreDNS"`
		fewer := `"none"`
		meant := "no cluster DNS"
		switch {
		case len(missing) == 2:
			what = "no CoreDNS Deployments (Deployments kube-system/coredns, coredns-secondary)"
			tasks = `"Kubernetes Apps | CoreDNS" and "Kubernetes Apps | CoreDNS Secondary"`
		case missing[0] == "coredns-secondary":
			what = "no coredns-secondary Deployment (Deployment kube-system/coredns-secondary)"
			tasks = `"Kubernetes Apps | CoreDNS Secondary"`
			fewer, meant = `"coredns"`, "one CoreDNS"
		}
		f := c.clusterFinding("cluster-network", SeverityInfo, t)
		f.Message = fmt.Sprintf("%s but the cluster has %s: cluster.yml and upgrade-cluster.yml deploy it again (%s %s)", c.inventoryValue(t), what, appsRole, tasks)
		f.Why = appsRole + " applies the manifests of the DNS dns_mode names on every cluster.yml and upgrade-cluster.yml run (scale.yml does not run it), so nothing conflicts; until it runs, cluster names do not resolve."
		f.Fix = fmt.Sprintf("re-run cluster.yml (it recreates kube-system/%s); %s only if the cluster is meant to have %s", strings.Join(missing, ", kube-system/"), c.setFix(t, fewer), meant)
		out = append(out, f)
	}
	if nl == "false" {
		for _, t := range c.targets("enable_nodelocaldns", hosts, nil) {
			if t.text != "true" {
				continue
			}
			f := c.clusterFinding("cluster-network", SeverityInfo, t)
			f.Message = fmt.Sprintf(`%s but the cluster has no nodelocaldns DaemonSet (DaemonSet kube-system/nodelocaldns): cluster.yml and upgrade-cluster.yml deploy it again (%s "Kubernetes Apps | nodelocalDNS")`, c.inventoryValue(t), appsRole)
			f.Why = appsRole + " applies nodelocaldns's manifests whenever enable_nodelocaldns is true, on every cluster.yml and upgrade-cluster.yml run (scale.yml does not run it), so nothing conflicts; kubelets whose clusterDNS is nodelocaldns_ip resolve nothing until it runs, and pods created before a kubelet moves to nodelocaldns_ip keep the old resolver."
			f.Fix = fmt.Sprintf("re-run cluster.yml (it recreates kube-system/nodelocaldns); %s only if the cluster is meant to run without it", c.setFix(t, "false"))
			out = append(out, f)
		}
	}
	return out
}

// coreDNSMissing are the CoreDNS Deployments dns_mode inv deploys that the
// cluster, running the DNS of mode running, lacks.
func coreDNSMissing(inv, running string) []string {
	var out []string
	if (inv == "coredns" || inv == "coredns_dual") && running == "none" {
		out = append(out, "coredns")
	}
	if inv == "coredns_dual" && running != "coredns_dual" {
		out = append(out, "coredns-secondary")
	}
	return out
}

// deploysCoreDNS: deploy_coredns (kubernetes-apps/ansible's default true)
// is not false on hosts.
func (c *checkCtx) deploysCoreDNS(hosts []string) bool {
	for _, h := range hosts {
		v, _ := c.value(h, "deploy_coredns")
		if v == nil || !judged(v) || v.Kind != parser.KindBool || v.Bool {
			return true
		}
	}
	return false
}
