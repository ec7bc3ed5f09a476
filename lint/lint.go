// Package lint checks a kubespray inventory before cluster.yml, the way
// ansible-core 2.19 and kubespray will read it.
//
// Values are resolved per host with Ansible's precedence
// (parser.Inventory.HostVars, after kubespray.ApplyDynamicGroups) and each
// problem is reported once per defining location, with the hosts where that
// value wins. Locations (Finding.Where) are file:line:col relative to the
// inventory directory (the -i directory, or the directory of an -i file),
// or "-e" for extra vars. Templated (Jinja) and vault values are never
// judged; vault text never appears in a finding. The value of a variable
// whose name looks secret (SecretName: kube_encrypt_token,
// kubeadm_certificate_key, ansible_password ...) is shown as Hidden in
// every field of a finding.
//
// Each rule file registers its rules in init, and may register steps too,
// which Run calls by phase around the checks (rules.go): the inventory
// Ansible makes of the sources, the release the rules judge against and
// what follows from it, the fold of every rule's findings. Run itself
// names no rule.
//
// Rules (one file each, registered in init; `layercheck lint --rules`):
//
//	string-as-bool         error    a kubespray boolean written as "true"/"no"/INI x=true/-e x=true, or 0/1
//	not-a-bool             error    a kubespray boolean set to a word, number, list or null
//	choice                 error    a value outside what kubespray asserts (kube_network_plugin, dns_mode, ...)
//	kubespray-assert       error    a combination a kubespray assert rejects (etcd in docker without docker, ...)
//	kubespray-preflight    error    any other of the release's own inventory asserts (generated; folded into the rule that explains it)
//	variable-shape         error    a list/dict variable in another structure than kubespray reads (warning: fields it does not read)
//	network-cidr           error    kube_service_addresses / kube_pods_subnet not a CIDR network, host bits set
//	network-overlap        error    kube_pods_subnet overlapping kube_service_addresses
//	nodelocaldns-ip        error    nodelocaldns_ip not an IP or inside the pod range (warning: service range)
//	control-plane-empty    error    no kube_control_plane hosts
//	etcd-empty             error    no etcd hosts while etcd_deployment_type is not kubeadm
//	etcd-even              error    an even number of etcd members (warning with ignore_assert_errors)
//	calico-rr              warning  calico_rr outside k8s_cluster as written (error: calico_rr without calico)
//	group-vars-unused      warning  group_vars reaching no host (old group names, file shadowed by a directory)
//	unknown-variable       warning  a name one or two edits from a kubespray variable (helm_enable)
//	removed-variable       error    a variable kubespray removed (warning when kubespray only warns)
//	metrics-server-tls     warning  metrics-server without kubelet TLS verification (error: verification that cannot work)
//	local-path-provisioner warning  volumes on one node's disk
//	certificates-duration  warning  changes only the etcd/calico script certificates, never kubeadm's
//	inventory-unparsed     error    a file inside an inventory directory no plugin can parse (Ansible only warns)
//	network-plugin-none    warning  kube_network_plugin: none (kubespray installs no pod network)
//	no-effect              warning  a variable kubespray reads only under conditions the inventory makes false (containerd_registry_auth with containerd 2)
//	pod-address-space      error    pods subnet too small for the nodes at the node prefix (IPv4/IPv6), or kubelet_max_pods too big
//	hostname               error    a host name kubespray's "Stop if bad hostname" rejects
//	cilium-kube-owner      error    cilium with kube_owner other than root (releases that assert it: master)
//	calico-settings        error    calico_rr without a valid IPv4 cluster_id, an invalid calico_pool_name
//	upgrade-path           error    --upgrade-from: a skip of more than one kubespray minor release
//	upgrade-removed        warning  --upgrade-from: a variable set that the target release no longer defines
//	upgrade-default-changed warning --upgrade-from: a default the inventory relies on changes (info: component versions)
//	upgrade-ansible        info     --upgrade-from: the ansible-core range to move to
//	version                error    kube_version/etcd/containerd/calico version the release has no checksums for, below its minimum, or v-prefix mismatch
//	ansible-type-mismatch  info     Ansible's resolved type differs from ours (module only)
//	cluster-version        error    with the live cluster (Input.Cluster): kube_version skipping a minor or downgrading, kubelet skew, container runtime, etcd downgrade
//	cluster-network        error    with the live cluster: pods/service ranges, node prefix, cluster_name, kube-proxy mode, CNI, calico pool, flannel backend, DNS
//	upgrade-from           info     with the live cluster and no --upgrade-from: the release inferred from the control plane's version, or why not
//	known-bug              warning  the chosen release has a bug the inventory meets (knownbugs.yaml: issue, fixing release, fix; error when the run fails)
//	cluster-membership     warning  with the live cluster: hosts scale.yml adds (info), Nodes the inventory lost, control plane not Ready (error), taints, etcd_deployment_type (error), stale etcd members, learners
package lint

import (
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/clusterstate"
	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
)

// Severity of a finding: "error" fails the lint, "warning" and "info" do not.
type Severity string

// Severities, from most to least severe.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

func (s Severity) rank() int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

// Finding is one problem, reported once per location that defines the value.
type Finding struct {
	Rule     string   `json:"rule"` // stable id, e.g. "string-as-bool"
	Severity Severity `json:"severity"`
	Variable string   `json:"variable,omitempty"`
	Value    string   `json:"value,omitempty"` // parser.Value.Display(): never vault text
	Where    string   `json:"where,omitempty"` // "group_vars/all/all.yml:12:15" or "-e"
	// Location is Where split into file, line and column (ParseWhere), for
	// JSON readers; Run leaves it unset, layercheck lint sets it.
	Location *Location `json:"location,omitempty"`
	Hosts    []string  `json:"hosts,omitempty"` // hosts the setting affects (where it wins)
	Message  string    `json:"message"`         // one line: what is wrong
	Why      string    `json:"why,omitempty"`
	Fix      string    `json:"fix,omitempty"`
	// SuppressedBy says what silenced a finding listed in
	// Report.Suppressed: "comment file:line", "config FILE" or
	// "baseline FILE". Empty for a reported finding.
	SuppressedBy string `json:"suppressed_by,omitempty"`

	// assertTask is kubespray's inventory assert a kubespray-preflight
	// finding stands for (foldAssertTasks).
	assertTask *assertTaskRef
}

// Location is a finding's Where as its parts: File relative like Where
// ("-e" for extra vars), Line and Column from 1 (0: not known).
type Location struct {
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// ParseWhere splits a Where ("file:line:col", "file:line", "file", "-e")
// into a Location; nil for "".
func ParseWhere(where string) *Location {
	if where == "" {
		return nil
	}
	f, l, c := splitWhere(where)
	return &Location{File: f, Line: l, Column: c}
}

// Report is the result of Run.
type Report struct {
	Catalogue string `json:"catalogue"` // which kubespray catalogue was used
	// CatalogueWhy says why that catalogue (kubespray.Catalogue.Why): the
	// checkout the inventory lives in, --kubespray-version, or the
	// bundled default.
	CatalogueWhy string `json:"catalogue_why,omitempty"`
	// CatalogueNote, when a branch snapshot stands in for a release
	// (kubespray.Catalogue.Note), says that the release itself was not read
	// and which snapshot was: its date and commit.
	CatalogueNote string `json:"catalogue_note,omitempty"`
	// AnsibleCore is the ansible-core series string booleans were judged
	// under ("2.18"), AnsibleCoreWhy why that one (JudgedAnsibleCore).
	AnsibleCore    string `json:"ansible_core,omitempty"`
	AnsibleCoreWhy string `json:"ansible_core_why,omitempty"`
	// LocationsRelativeTo is set when the sources lie in different
	// directories: then every Where is relative to this common directory
	// (absolute when they share only the root). Unset, Where is relative
	// to the one inventory directory. The CLI sets it to the current
	// directory when it relocates the findings there, and in its JSON
	// output always (an absolute path).
	LocationsRelativeTo string    `json:"locations_relative_to,omitempty"`
	Errors              int       `json:"errors"`
	Warnings            int       `json:"warnings"`
	Findings            []Finding `json:"findings"`
	// Suppressed are the findings a suppression silenced (see
	// lint/report): not counted in Errors and Warnings, not in Findings.
	Suppressed []Finding `json:"suppressed,omitempty"`
}

// CatalogueUsed is the catalogue's name with why it was chosen, e.g.
// "bundled kubespray v2.31.0 abc1234, chosen with --kubespray-version v2.31,
// the newest bundled v2.31.x".
func (r *Report) CatalogueUsed() string {
	if r.CatalogueWhy == "" {
		return r.Catalogue
	}
	return r.Catalogue + ", " + r.CatalogueWhy
}

// Input is what Run checks.
type Input struct {
	Inventory *parser.Inventory
	Extra     *parser.Map // -e values (nil if none)
	// Catalogue is kubespray's catalogue. The bundled default (Default,
	// perhaps Deferred: kubespray.SelectDeferred) gives way to the release
	// the inventory was written for, when what it pins tells (release.go).
	Catalogue *kubespray.Catalogue
	// Resolved, when set, holds per host the values Ansible itself resolved
	// (handed to the module by the play/action plugin, Origin ansible): the
	// types there are Ansible's and win for judging a value; our own
	// resolution still gives the location. A type disagreement between the
	// two is reported as an "info" finding.
	Resolved map[string]*parser.Map
	// UpgradeFrom, when set, is the catalogue of the kubespray release the
	// cluster runs today: the upgrade-* rules then say what moving to
	// Catalogue's release changes for this inventory (see upgrade.go).
	UpgradeFrom *kubespray.Catalogue
	// AnsibleCore is the ansible-core series the playbooks will run under
	// ("2.18"); "" means the series the chosen release pins (the newest its
	// playbooks/ansible_version.yml accepts), or 2.19, the first that fails
	// a `when:` on a string, for the default catalogue (see
	// JudgedAnsibleCore). Below 2.19 a string boolean is not an error in
	// Ansible: string-as-bool then says what kubespray really does with it,
	// and what 2.19 and later will do (see ansibleVerdict).
	AnsibleCore string
	// Cluster, when set, is the running cluster (read by
	// verify/cluster.ReadState): the cluster-* rules compare the inventory
	// and the target release with it (see cluster.go).
	Cluster *clusterstate.State
}

// Run applies every rule and returns the findings sorted by severity, then
// where, then variable. It calls the rules only through the registry (see
// rules.go): each phase's steps, then every rule's check, then the
// findings' fold; what it does itself applies to every finding alike.
func Run(in Input) *Report {
	r := &Report{Findings: []Finding{}}
	c := &checkCtx{in: in}
	runSteps(phaseView, c, r)
	runSteps(phaseAsWritten, c, r)
	if c.in.Inventory != nil {
		kubespray.ApplyDynamicGroups(c.in.Inventory)
	}
	c.build()
	runSteps(phaseRelease, c, r)
	if cat := c.in.Catalogue; cat != nil {
		r.Catalogue, r.CatalogueWhy, r.CatalogueNote = cat.Name, cat.Why, cat.Note
		if c.catalogueNote != "" {
			r.CatalogueWhy += "; " + c.catalogueNote
		}
	}
	runSteps(phasePrepare, c, r)
	r.LocationsRelativeTo = c.multiBase
	r.Findings = append(r.Findings, runRules(c)...)
	runSteps(phaseFold, c, r)
	for i := range r.Findings {
		maskSecrets(&r.Findings[i])
		if r.Findings[i].Where == "" {
			r.Findings[i].Where = c.inventoryWhere(r.Findings[i].Hosts)
		}
	}
	r.Findings = mergeHosts(r.Findings, c.hosts, func(h string) int {
		i, _ := c.indexOfName(h)
		return i
	})
	r.finish()
	return r
}

// inventoryWhere is the location of a finding that no one value caused
// (a default the inventory relies on, the upgrade itself): where its first
// host is defined, else the inventory file, so that every finding names a
// file (code scanning shows no result without one). "" only for an
// inventory with no file at all.
func (c *checkCtx) inventoryWhere(hosts []string) string {
	inv := c.in.Inventory
	if inv == nil {
		return ""
	}
	for _, name := range hosts {
		if h := inv.Host(name); h != nil && h.Pos.File != "" {
			return c.where(h.Pos)
		}
	}
	if len(inv.Sources) > 0 && inv.Sources[0] != "" && !isDir(inv.Sources[0]) {
		return c.relPath(inv.Sources[0])
	}
	for _, h := range inv.Hosts {
		if h.Pos.File != "" {
			return c.relPath(h.Pos.File)
		}
	}
	return ""
}

// mergeHosts makes findings that say the same (rule, severity, variable,
// value, location, message, why and fix) and differ only in their hosts
// one finding for all of them, hosts in inventory order. Rules group hosts
// by every value a check reads, so hosts that differ in a variable that
// does not change the finding (e.g. kube_pods_subnet under a warning about
// kube_service_addresses) would otherwise get the same warning twice.
// pos is a host's index in the inventory (0 for a name it does not have).
// A finding alone in its group keeps its hosts when they are in inventory
// order already, as a rule's are: a list of a million hosts is neither
// copied nor sorted again.
func mergeHosts(fs []Finding, hosts []string, pos func(string) int) []Finding {
	type key struct {
		rule, variable, value, where, message, why, fix string
		sev                                             Severity
	}
	var groups byFirstSeen[key, []int] // the findings of each group
	for i, f := range fs {
		g := groups.get(key{f.Rule, f.Variable, f.Value, f.Where, f.Message, f.Why, f.Fix, f.Severity}, func() *[]int { return new([]int) })
		*g = append(*g, i)
	}
	out := make([]Finding, 0, len(groups.order))
	for _, k := range groups.order {
		idx := *groups.m[k]
		m := fs[idx[0]]
		if len(idx) == 1 && inOrder(m.Hosts, hosts, pos) {
			if len(m.Hosts) == 0 {
				m.Hosts = nil
			}
			out = append(out, m)
			continue
		}
		var hs []string
		for _, i := range idx {
			hs = append(hs, fs[i].Hosts...)
		}
		if len(hs) >= 2 {
			sort.SliceStable(hs, func(a, b int) bool { return pos(hs[a]) < pos(hs[b]) })
			uniq := hs[:1]
			for _, h := range hs[1:] {
				if h != uniq[len(uniq)-1] {
					uniq = append(uniq, h)
				}
			}
			hs = uniq
		}
		m.Hosts = hs
		out = append(out, m)
	}
	return out
}

// inOrder reports whether hs are distinct hosts in inventory order
// (strictly increasing pos), which sorting and deduplicating keeps as
// they are. A run of the inventory's hosts (a rule's list sharing hosts)
// is found so without looking each host up.
func inOrder(hs, hosts []string, pos func(string) int) bool {
	if len(hs) < 2 {
		return true
	}
	if k := pos(hs[0]); k+len(hs) <= len(hosts) && hosts[k] == hs[0] {
		run := true
		for i, h := range hs {
			if hosts[k+i] != h {
				run = false
				break
			}
		}
		if run {
			return true
		}
	}
	last := pos(hs[0])
	if len(hosts) == 0 || hosts[last] != hs[0] {
		return false // not a host of the inventory
	}
	for _, h := range hs[1:] {
		p := pos(h)
		if p <= last || hosts[p] != h {
			return false
		}
		last = p
	}
	return true
}

// ForHost returns the findings affecting host: those naming it in Hosts,
// plus the global ones (no Hosts).
func (r *Report) ForHost(host string) *Report {
	out := &Report{Catalogue: r.Catalogue, CatalogueWhy: r.CatalogueWhy, CatalogueNote: r.CatalogueNote, AnsibleCore: r.AnsibleCore, AnsibleCoreWhy: r.AnsibleCoreWhy, LocationsRelativeTo: r.LocationsRelativeTo, Findings: []Finding{}}
	for _, f := range r.Findings {
		if len(f.Hosts) == 0 {
			out.Findings = append(out.Findings, f)
			continue
		}
		for _, h := range f.Hosts {
			if h == host {
				out.Findings = append(out.Findings, f)
				break
			}
		}
	}
	out.finish()
	return out
}

// Recount sorts the findings and counts errors and warnings again, after
// findings were moved to Suppressed.
func (r *Report) Recount() { r.finish() }

// finish sorts the findings and counts errors and warnings.
func (r *Report) finish() {
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i], r.Findings[j]
		if a.Severity.rank() != b.Severity.rank() {
			return a.Severity.rank() < b.Severity.rank()
		}
		if a.Where != b.Where {
			return whereLess(a.Where, b.Where)
		}
		if a.Variable != b.Variable {
			return a.Variable < b.Variable
		}
		return a.Rule < b.Rule
	})
	r.Errors, r.Warnings = 0, 0
	for _, f := range r.Findings {
		switch f.Severity {
		case SeverityError:
			r.Errors++
		case SeverityWarning:
			r.Warnings++
		}
	}
}

// whereLess orders locations by file, then line and column as numbers;
// "-e" (extra vars) last, as they win over every file.
func whereLess(a, b string) bool {
	fa, la, ca := splitWhere(a)
	fb, lb, cb := splitWhere(b)
	if (fa == "-e") != (fb == "-e") {
		return fb == "-e"
	}
	if fa != fb {
		return fa < fb
	}
	if la != lb {
		return la < lb
	}
	return ca < cb
}

func splitWhere(w string) (file string, line, col int) {
	file = w
	nums := []int{}
	for i := 0; i < 2; i++ {
		j := strings.LastIndexByte(file, ':')
		if j < 0 {
			break
		}
		n, err := strconv.Atoi(file[j+1:])
		if err != nil {
			break
		}
		nums = append([]int{n}, nums...)
		file = file[:j]
	}
	if len(nums) > 0 {
		line = nums[0]
	}
	if len(nums) > 1 {
		col = nums[1]
	}
	return file, line, col
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
