package lint

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/clusterstate"
	"github.com/layercheck/layercheck/parser"
)

// etcdJoinTask is where kubespray adds a new etcd host as a member.
const etcdJoinTask = `roles/etcd/tasks/join_etcd_member.yml ("Join Member | Add member to etcd cluster")`

// etcdSelectRE reads the bound of kubespray's etcd_supported_versions
// entries: "{{ (etcd_binary_checksums['amd64'].keys() | select('version', '3.7', '<'))[0] }}".
var etcdSelectRE = regexp.MustCompile(`select\('version',\s*'([0-9.]+)',\s*'<'\)`)

// defaultEtcdVersion is kubespray's etcd_version for Kubernetes minor
// kubeMinor ("1.36"): etcd_supported_versions[kube_major_version], the
// newest version with checksums below that entry's bound.
func (c *checkCtx) defaultEtcdVersion(kubeMinor string) string {
	comp := c.cat.Release.Components["etcd_version"]
	if comp == nil || len(comp.Versions) == 0 {
		return ""
	}
	sup := c.cat.Lookup("etcd_supported_versions")
	if sup == nil {
		return comp.Versions[0]
	}
	m, _ := sup.Default.(map[string]any)
	entry, _ := m[kubeMinor].(string)
	if entry == "" {
		entry, _ = m["v"+kubeMinor].(string)
	}
	if !strings.Contains(entry, "{{") && entry != "" {
		return entry
	}
	bound := etcdSelectRE.FindStringSubmatch(entry)
	if bound == nil {
		return comp.Versions[0]
	}
	bv, ok := parseKver(bound[1])
	if !ok {
		return comp.Versions[0]
	}
	for _, v := range comp.Versions {
		if pv, ok := parseKver(v); ok && pv.less(bv) {
			return v
		}
	}
	return ""
}

// etcdGateRE reads the version kubespray's etcd role requires of the
// running etcd before it moves it to 3.6 (v2.31.0's
// roles/etcd/tasks/clean_v2_store.yml, the fail task "Ensure etcd version
// is >=3.5.26", inside the block run when the running etcd is below 3.6.0
// and etcd_version is 3.6.0 or later), from the release's fail
// conditions (Release.Exprs).
var etcdGateRE = regexp.MustCompile(`^when:etcd_current_version is version\('([0-9.]+)', '<'\)$`)

// etcdMoveTo is the etcd minor whose move the gate guards.
var etcdMoveTo = kver{3, 6, 0}

// etcdMoveGate: the target etcd_version (tv, from t) is 3.6 or later, and a
// member runs an etcd below 3.6 and below the release's gate: kubespray's
// etcd role stops there mid-run, after preinstall and the downloads.
func (c *checkCtx) etcdMoveGate(st *clusterstate.State, t target, tv kver) []Finding {
	if tv.less(etcdMoveTo) {
		return nil
	}
	var gate kver
	var where string
	for expr, loc := range c.cat.Release.Exprs {
		if m := etcdGateRE.FindStringSubmatch(expr); m != nil {
			if v, ok := parseKver(m[1]); ok {
				gate, where = v, loc
			}
		}
	}
	if where == "" {
		return nil
	}
	var below []string
	low := ""
	for _, m := range st.Etcd.Members {
		mv, ok := parseKver(m.Version)
		if !ok || !mv.less(etcdMoveTo) || !mv.less(gate) {
			continue
		}
		below = append(below, fmt.Sprintf("%s (%s)", memberLabel(m), m.Version))
		if low == "" {
			low = m.Version
		}
	}
	if len(below) == 0 {
		return nil
	}
	sort.Strings(below)
	f := c.clusterFinding("cluster-version", SeverityError, t)
	f.Message = fmt.Sprintf("%s moves etcd to %d.%d, but member(s) %s run etcd below %s (etcd Maintenance.Status version at %s): kubespray %s stops at %s, \"Ensure etcd version is >=%s\"",
		c.inventoryValue(t), tv[0], tv[1], strings.Join(below, ", "), gate, st.Etcd.Endpoint, releaseName(c.cat), where, gate)
	f.Why = fmt.Sprintf("etcd %d.%d panics on a v2 store that etcd below %s leaves in its WAL (\"detected disallowed v2 WAL\"), so kubespray's etcd role refuses the move (%s); the run stops after preinstall and the downloads, with the cluster unchanged.", tv[0], tv[1], gate, where)
	from := "the kubespray release the cluster runs now"
	if c.in.UpgradeFrom != nil {
		from = "kubespray " + releaseName(c.in.UpgradeFrom)
	}
	f.Fix = fmt.Sprintf("first run cluster.yml of %s with etcd_version: \"%s\" (or a later %d.%d patch it has checksums for), then this release's upgrade-cluster.yml: etcd has to reach %s before the %d.%d move",
		from, gate, gate[0], gate[1], gate, tv[0], tv[1])
	return []Finding{f}
}

// etcdVersions compares the target etcd_version with the members'.
func (c *checkCtx) etcdVersions(st *clusterstate.State) []Finding {
	if st.Etcd == nil || c.cat.Release == nil {
		return nil
	}
	var out []Finding
	hosts := c.hostsWith("etcd_deployment_type", "host")
	if len(hosts) == 0 {
		return nil
	}
	kubeMinor := func(h string) string {
		for _, t := range c.targets("kube_version", []string{h}, c.defaultVersion("kube_version")) {
			if v, ok := parseKver(t.text); ok {
				return fmt.Sprintf("%d.%d", v[0], v[1])
			}
		}
		return ""
	}
	def := func() string { return c.defaultEtcdVersion(kubeMinor(hosts[0])) }
	for _, t := range c.targets("etcd_version", hosts, def) {
		tv, ok := parseKver(t.text)
		if !ok {
			continue
		}
		byVer := map[string][]string{}
		var vers []string
		for _, m := range st.Etcd.Members {
			mv, ok := parseKver(m.Version)
			if !ok || !tv.less(mv) {
				continue
			}
			if _, seen := byVer[m.Version]; !seen {
				vers = append(vers, m.Version)
			}
			byVer[m.Version] = append(byVer[m.Version], memberLabel(m))
		}
		out = append(out, c.etcdMoveGate(st, t, tv)...)
		for _, v := range vers {
			sort.Strings(byVer[v])
			mv, _ := parseKver(v)
			f := c.clusterFinding("cluster-version", SeverityError, t)
			f.Message = fmt.Sprintf("%s is older than etcd %s that member(s) %s run (etcd Maintenance.Status version at %s): an etcd downgrade",
				c.inventoryValue(t), v, strings.Join(byVer[v], ", "), st.Etcd.Endpoint)
			if mv[1] == tv[1] && mv[0] == tv[0] {
				f.Severity = SeverityWarning
				f.Why = "kubespray's etcd role installs etcd_version's binary and restarts the members one by one: an older patch of the same minor starts, but runs without the fixes the newer one has."
			} else {
				f.Why = "kubespray's etcd role (roles/etcd/tasks/install_host.yml) installs the older binary and restarts each member: etcd refuses to start on data of a newer minor (\"cluster cannot be downgraded\"), and the cluster loses quorum member by member."
			}
			f.Fix = c.setFix(t, strconv.Quote(strings.TrimPrefix(v, "v")))
			out = append(out, f)
		}
	}
	return out
}

func memberLabel(m clusterstate.Member) string {
	if m.Name != "" {
		return m.Name
	}
	if len(m.PeerURLs) > 0 {
		return "(unstarted) " + m.PeerURLs[0]
	}
	return "(unnamed)"
}

// etcdHost is an etcd group host as kubespray names and addresses its
// member: etcd_member_name (default etcd<index in the etcd group>) and
// etcd_access_address (access_ip, else ip); kubespray's last fallback is
// the address Ansible's facts show (fallback_ip), which the inventory does
// not hold, so without these the address is not compared.
type etcdHost struct {
	host, member, addr string
}

func (c *checkCtx) etcdHosts() []etcdHost {
	hosts, _ := c.groupHosts("etcd")
	str := func(h, name string) string {
		if v, set := c.value(h, name); set && judged(v) && v.Kind == parser.KindString {
			return strings.TrimSpace(v.Str)
		}
		return ""
	}
	out := make([]etcdHost, 0, len(hosts))
	for i, h := range hosts {
		eh := etcdHost{host: h, member: str(h, "etcd_member_name")}
		if eh.member == "" {
			eh.member = "etcd" + strconv.Itoa(i+1)
		}
		for _, n := range []string{"etcd_access_address", "access_ip", "etcd_address", "ip"} {
			if eh.addr = str(h, n); eh.addr != "" {
				break
			}
		}
		out = append(out, eh)
	}
	return out
}

// peerHost is the host part of a member's first peer URL.
func peerHost(m clusterstate.Member) string {
	for _, p := range m.PeerURLs {
		if u, err := url.Parse(p); err == nil {
			return u.Hostname()
		}
	}
	return ""
}

// etcdMembers compares the etcd group with the member list: a member
// holding the name or peer URL of a host being (re)added, members no
// etcd host accounts for, learners.
func (c *checkCtx) etcdMembers(st *clusterstate.State) []Finding {
	if st.Etcd == nil {
		return nil
	}
	hosts := c.etcdHosts()
	if len(hosts) == 0 {
		return nil
	}
	byMember := map[string]etcdHost{}
	for _, h := range hosts {
		byMember[h.member] = h
	}
	isMember := map[string]bool{}
	for _, m := range st.Etcd.Members {
		isMember[m.Name] = true
	}
	// the addresses of hosts being added: no member has their name
	byAddr := map[string]etcdHost{}
	for _, h := range hosts {
		if h.addr != "" && !isMember[h.member] {
			byAddr[h.addr] = h
		}
	}
	var out []Finding
	add := func(sev Severity, h string, msg, why, fix string) {
		f := Finding{Rule: "cluster-membership", Severity: sev, Message: msg, Why: why, Fix: fix}
		if h != "" {
			f.Hosts = []string{h}
		}
		out = append(out, f)
	}
	where := "etcd member list at " + st.Etcd.Endpoint
	for _, m := range st.Etcd.Members {
		ph := peerHost(m)
		h, named := byMember[m.Name]
		switch {
		case named && ph != "" && h.addr != "" && ph != h.addr:
			add(SeverityError, h.host,
				fmt.Sprintf("etcd member %s has peer URL %s (%s), but host %s, which runs as %s, is at %s: a stale member of a host being re-added", m.Name, strings.Join(m.PeerURLs, ","), where, h.host, m.Name, h.addr),
				fmt.Sprintf("kubespray sees the member name and does not add the host again (%s), so the new etcd on %s starts as a member the cluster does not know and never joins; with quorum at stake on the next restart.", etcdJoinTask, h.host),
				fmt.Sprintf("remove the stale member first (etcdctl member remove <id of %s>), then run cluster.yml (or scale.yml) for %s", m.Name, h.host))
		case !named && ph != "" && byAddr[ph].host != "":
			h := byAddr[ph]
			add(SeverityError, h.host,
				fmt.Sprintf("etcd member %s has the peer URL %s of host %s (%s), which would join as %s: a stale member of a host being (re)added", memberLabel(m), strings.Join(m.PeerURLs, ","), h.host, where, h.member),
				fmt.Sprintf("%s fails: etcd refuses a second member with a peer URL it knows (\"Peer URLs already exists\").", etcdJoinTask),
				staleFix(m, h))
		case !named && m.IsLearner:
			add(SeverityWarning, "",
				fmt.Sprintf("etcd member %s is a learner that no host of the etcd group accounts for (%s)", memberLabel(m), where),
				"a learner left by an interrupted member add counts against the member limit and blocks further adds until it is promoted or removed.",
				"remove it (etcdctl member remove <id>) or promote it (etcdctl member promote <id>) before the run")
		case !named:
			add(SeverityWarning, "",
				fmt.Sprintf("etcd member %s (peer %s) is not a host of the inventory's etcd group (%s)", memberLabel(m), strings.Join(m.PeerURLs, ","), where),
				"kubespray manages only the etcd group's hosts: the member still counts for quorum, and a member that is gone lowers the failures etcd survives; the certificates kubespray makes no longer name it.",
				"add its host back to the etcd group, or remove the member (etcdctl member remove <id>) after removing its host with remove-node.yml")
		case m.IsLearner:
			add(SeverityWarning, h.host,
				fmt.Sprintf("etcd member %s of host %s is a learner (%s)", m.Name, h.host, where),
				"a learner does not vote: the cluster has one voting member fewer than the etcd group says, and kubespray does not promote it.",
				"promote it (etcdctl member promote <id>) once it has caught up, before the run")
		}
	}
	return out
}

// staleFix is the fix for a member holding the peer URL of host h.
func staleFix(m clusterstate.Member, h etcdHost) string {
	fix := "remove the stale member first (etcdctl member remove <id>), then run cluster.yml (or scale.yml) for " + h.host
	if m.Name != "" {
		fix += fmt.Sprintf(", or set etcd_member_name for %s to %q if it is that member", h.host, m.Name)
	}
	return fix
}

// etcdDeploymentType compares etcd_deployment_type with what runs:
// kubeadm's etcd is a control-plane static pod (component=etcd), kubespray's
// host (or docker) etcd is not. kubespray has no move between the two.
func (c *checkCtx) etcdDeploymentType(st *clusterstate.State) []Finding {
	if unread(st, "control-plane pods") {
		return nil
	}
	var etcdPods, apiservers []string
	for _, p := range st.ControlPlane {
		switch p.Component {
		case "etcd":
			etcdPods = append(etcdPods, p.Pod)
		case "kube-apiserver":
			apiservers = append(apiservers, p.Pod)
		}
	}
	kubeadmRuns := len(etcdPods) > 0
	if !kubeadmRuns && len(apiservers) == 0 {
		return nil // no control plane seen: nothing to tell from
	}
	cp, _ := c.groupHosts("kube_control_plane")
	etcd, _ := c.groupHosts("etcd")
	hosts := append(append([]string{}, cp...), etcd...)
	var out []Finding
	for _, t := range c.targets("etcd_deployment_type", uniq(hosts), nil) {
		if (t.text == "kubeadm") == kubeadmRuns {
			continue
		}
		f := c.clusterFinding("cluster-membership", SeverityError, t)
		if kubeadmRuns {
			f.Message = fmt.Sprintf("%s but the cluster runs kubeadm's etcd: static pod(s) %s in kube-system (component=etcd)",
				c.inventoryValue(t), namesOf(etcdPods))
			f.Why = "kubespray has no move from kubeadm's etcd to etcd_deployment_type " + t.text + ": playbooks/install_etcd.yml runs the etcd role on the etcd group's hosts, which makes its own CA and certificates under etcd_cert_dir (/etc/ssl/etcd/ssl) and installs etcd as a service (roles/etcd/tasks/install_" + t.text + ".yml, configure.yml) on etcd_data_dir (/var/lib/etcd, where kubeadm's etcd runs) and the ports 2379/2380 its static pod holds; roles/kubernetes/control-plane writes kubeadm-config.yaml with etcd.external, kube-apiserver pointed at those endpoints with certificates the running etcd's CA did not sign (upgrade-cluster.yml rewrites the static pods from it): a second etcd fights the first for its data and the API server loses its store."
			f.Fix = c.setFix(t, `"kubeadm"`) + " (what runs); kubespray cannot move a running cluster's etcd out of kubeadm's static pods"
		} else {
			runs := "no etcd static pod in kube-system (control-plane pods " + namesOf(apiservers) + ")"
			if st.Etcd != nil && len(st.Etcd.Members) > 0 {
				var names []string
				for _, m := range st.Etcd.Members {
					names = append(names, memberLabel(m))
				}
				sort.Strings(names)
				runs += fmt.Sprintf("; etcd members answer at %s (%s)", st.Etcd.Endpoint, namesOf(names))
			}
			f.Message = fmt.Sprintf("%s but the cluster runs etcd outside kubeadm: %s", c.inventoryValue(t), runs)
			f.Why = `kubespray has no move from etcd as a host service to kubeadm's etcd: playbooks/install_etcd.yml skips the etcd role (when: etcd_deployment_type != "kubeadm"), so the running etcd is no longer upgraded nor its certificates renewed; roles/kubernetes/preinstall ("Set etcd vars if using kubeadm mode") points etcd_cert_dir at kube_cert_dir, and roles/kubernetes/control-plane writes kubeadm-config.yaml with etcd.local (dataDir etcd_data_dir, /var/lib/etcd: the running etcd's own) instead of etcd.external with the members' endpoints. upgrade-cluster.yml applies it: "Kubeadm | Upgrade first control plane node" (kubeadm upgrade apply, etcdUpgrade true), "Rewrite kubeadm managed etcd static pod manifests with updated configmap" (kubeadm init phase etcd local: an etcd static pod on the running etcd's ports and data directory) and "Rewrite kubernetes control plane static pod manifests with updated configmap" (kube-apiserver pointed at that local etcd with certificates under kube_cert_dir/etcd that this cluster does not have): the API server loses its store.`
			f.Fix = c.setFix(t, `"host"`) + " (what runs); kubespray cannot move a running etcd into kubeadm's static pods"
		}
		out = append(out, f)
	}
	return out
}

// uniq drops repeated names, keeping the first.
func uniq(l []string) []string {
	seen := make(map[string]bool, len(l))
	var out []string
	for _, s := range l {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
