package kubespray

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/kubespray/internal/scan"
)

// Facts read from kubespray's tasks (not from its defaults, so not
// generated): the values it asserts, the variables it stops on, the
// booleans it checks the type of, and the groups its dynamic_groups role
// creates. Each carries the kubespray file and line per version it was read
// from (kubespray v2.31.0, commit 1c9add48975060f45396b34d8e022c30d7f80dab,
// and master at 46dbdd3994b32640bcd806b0097f50e8fdf1d514).

// CondOp is the operator of a Cond.
type CondOp string

// Operators of a Cond, as kubespray's Jinja writes them.
const (
	OpIn     CondOp = "in"     // var in Values (== for one value)
	OpNotIn  CondOp = "not in" // var not in Values (!= for one value)
	OpTrue   CondOp = "true"   // the var, a bool, is true (when: var)
	OpFalse  CondOp = "false"  // the var, a bool, is false (when: not var)
	OpUnset  CondOp = "undefined"
	OpIsBool CondOp = "is bool" // var | type_debug == 'bool'
)

// Cond is one test on a variable.
type Cond struct {
	Var    string `json:"var"`
	Op     CondOp `json:"op"`
	Values []any  `json:"values,omitempty"`
}

// Assert is one kubespray assert the lint can evaluate on inventory values
// alone: when every When condition holds, at least one That condition must
// hold, else kubespray stops with Msg.
type Assert struct {
	// ID is stable, e.g. "choice:kube_network_plugin", "etcd-docker-needs-docker".
	ID string `json:"id"`
	// Var is the variable a choice assert constrains; "" for a cross-variable rule.
	Var string `json:"var,omitempty"`
	// Choices are the allowed values of Var (choice asserts only).
	Choices []string `json:"choices,omitempty"`
	When    []Cond   `json:"when,omitempty"`
	That    []Cond   `json:"that"`
	// Expr is kubespray's assert expression verbatim; Msg its fail message
	// (Ansible's "Assertion failed" when kubespray gives none); Task the task name.
	Expr string `json:"expr"`
	Msg  string `json:"msg"`
	Task string `json:"task"`
	// Source is "file:line" of the expression in kubespray.
	Source string `json:"source"`
}

// Removed is a variable kubespray no longer reads.
type Removed struct {
	Name string `json:"name"`
	// Stops is true when kubespray fails a run that sets it; false when it
	// only warns or silently ignores it.
	Stops bool `json:"stops"`
	// Instead says what to do.
	Instead string `json:"instead"`
	// Msg is kubespray's own message, if any.
	Msg    string `json:"msg,omitempty"`
	Source string `json:"source"`
	// ReadBy, when kubespray's own defaults still template the variable in
	// (ipv6_stack: "{{ enable_dual_stack_networks | default(false) }}"),
	// names the first such default: "ipv6_stack (file:line)". Such a
	// variable is deprecated, not without effect.
	ReadBy string `json:"read_by,omitempty"`
}

// GroupMapping is one entry of kubespray's dynamic_groups role: a host in
// any of From (directly or through a child group) is added to Group.
type GroupMapping struct {
	Group string   `json:"group"`
	From  []string `json:"from"`
}

// Facts are the task-level facts of one kubespray version.
type Facts struct {
	Asserts []Assert
	Removed []Removed
	// KnownBooleans are the variables of validate_inventory's "Stop if
	// known booleans are set as strings" task (type_debug must be bool),
	// checked when ignore_assert_errors is false.
	KnownBooleans       []string
	KnownBooleansSource string
	// DynamicGroups in the role's order (roles/dynamic_groups/tasks/main.yml).
	DynamicGroups []GroupMapping
	// AnsibleMin and AnsibleMax are the ansible-core versions
	// playbooks/ansible_version.yml accepts: AnsibleMin <= version <
	// AnsibleMax (kubespray's minimal_ansible_version and
	// maximal_ansible_version); AnsibleSource is where.
	AnsibleMin, AnsibleMax, AnsibleSource string
	// Source names the kubespray commit the facts were read from.
	Source string
}

const (
	validateInventory = "roles/validate_inventory/tasks/main.yml"
	calicoCheck       = "roles/network_plugin/calico/tasks/check.yml"
	ciliumCheck       = "roles/network_plugin/cilium/tasks/check.yml"
	unsupportedTask   = "Stop if unsupported options selected"
	unsupportedMsg    = "The selected choice is not supported"
	calicoEncapMsg    = "calico inter host encapsulation mode is not 'Always', 'CrossSubnet' or 'Never'"
	calicoExclMsg     = "IP in IP and VXLAN mode is mutualy exclusive modes"
	calicoExclTask    = "Check ipip and vxlan mode if simultaneously enabled"
	removedMsgPrefix  = "Removed variables present: "
)

func at(file string, line int) string { return file + ":" + itoa(line) }

func itoa(i int) string { return strconv.Itoa(i) }

func anys(ss ...string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func choice(v string, values []string, when []Cond, expr, msg, task, src string) Assert {
	return Assert{ID: "choice:" + v, Var: v, Choices: values, When: when,
		That: []Cond{{Var: v, Op: OpIn, Values: anys(values...)}}, Expr: expr, Msg: msg, Task: task, Source: src}
}

var (
	notIgnoreAsserts = Cond{Var: "ignore_assert_errors", Op: OpFalse}
	// calico's check.yml runs from roles/kubernetes/preinstall/tasks/main.yml
	// (include_role network_plugin/calico, tasks_from: check) when
	// kube_network_plugin == 'calico' and not ignore_assert_errors.
	calicoPlugin = Cond{Var: "kube_network_plugin", Op: OpIn, Values: anys("calico")}
	// The cilium role runs for kube_network_plugin cilium or cilium_deploy_additionally;
	// the lint sees only the first (an "or" across variables is not a Cond list).
	ciliumPlugin = Cond{Var: "kube_network_plugin", Op: OpIn, Values: anys("cilium")}
)

// commonAsserts are the asserts identical in v2.31.0 and master (same
// expression, same line), given the validate_inventory lines that differ.
func commonAsserts() []Assert {
	vi := func(l int) string { return at(validateInventory, l) }
	encap := []string{"Always", "CrossSubnet", "Never"}
	return []Assert{
		choice("kube_network_plugin", []string{"calico", "flannel", "cloud", "cilium", "cni", "kube-ovn", "kube-router", "macvlan", "custom_cni", "none"}, nil,
			"kube_network_plugin in ['calico', 'flannel', 'cloud', 'cilium', 'cni', 'kube-ovn', 'kube-router', 'macvlan', 'custom_cni', 'none']", unsupportedMsg, unsupportedTask, vi(165)),
		choice("dns_mode", []string{"coredns", "coredns_dual", "manual", "none"}, nil,
			"dns_mode in ['coredns', 'coredns_dual', 'manual', 'none']", unsupportedMsg, unsupportedTask, vi(166)),
		choice("kube_proxy_mode", []string{"iptables", "ipvs", "nftables"}, nil,
			"kube_proxy_mode in ['iptables', 'ipvs', 'nftables']", unsupportedMsg, unsupportedTask, vi(167)),
		choice("cert_management", []string{"script", "none"}, nil,
			"cert_management in ['script', 'none']", unsupportedMsg, unsupportedTask, vi(168)),
		choice("resolvconf_mode", []string{"docker_dns", "host_resolvconf", "none"}, nil,
			"resolvconf_mode in ['docker_dns', 'host_resolvconf', 'none']", unsupportedMsg, unsupportedTask, vi(169)),
		choice("etcd_deployment_type", []string{"host", "docker", "kubeadm"}, nil,
			"etcd_deployment_type in ['host', 'docker', 'kubeadm']", unsupportedMsg, unsupportedTask, vi(170)),
		{ID: "etcd-docker-needs-docker",
			That: []Cond{{Var: "etcd_deployment_type", Op: OpIn, Values: anys("host", "kubeadm")}, {Var: "container_manager", Op: OpIn, Values: anys("docker")}},
			Expr: "etcd_deployment_type in ['host', 'kubeadm'] or container_manager == 'docker'", Msg: unsupportedMsg, Task: unsupportedTask, Source: vi(171)},
		choice("container_manager", []string{"docker", "crio", "containerd"}, nil,
			"container_manager in ['docker', 'crio', 'containerd']", unsupportedMsg, unsupportedTask, vi(172)),
		choice("external_cloud_provider", []string{"hcloud", "huaweicloud", "oci", "openstack", "vsphere", "manual"},
			[]Cond{{Var: "cloud_provider", Op: OpIn, Values: anys("external")}, notIgnoreAsserts},
			"external_cloud_provider in ['hcloud', 'huaweicloud', 'oci', 'openstack', 'vsphere', 'manual']", "Assertion failed", "Check external_cloud_provider value", vi(89)),
		{ID: "download-localhost-needs-run-once", When: []Cond{{Var: "download_localhost", Op: OpTrue}},
			That: []Cond{{Var: "download_run_once", Op: OpTrue}}, Expr: "download_run_once",
			Msg: "download_localhost requires enable download_run_once", Task: "Stop if download_localhost is enabled but download_run_once is not", Source: vi(184)},
		{ID: "kata-not-with-docker", When: []Cond{{Var: "kata_containers_enabled", Op: OpTrue}},
			That: []Cond{{Var: "container_manager", Op: OpNotIn, Values: anys("docker")}}, Expr: "container_manager != 'docker'",
			Msg:  "kata_containers_enabled support only for containerd and crio-o. See https://github.com/kata-containers/documentation/blob/1.11.4/how-to/run-kata-with-k8s.md#install-a-cri-implementation for details",
			Task: "Stop if kata_containers_enabled is enabled when container_manager is docker", Source: vi(190)},
		{ID: "gvisor-needs-containerd", When: []Cond{{Var: "gvisor_enabled", Op: OpTrue}},
			That: []Cond{{Var: "container_manager", Op: OpIn, Values: anys("containerd")}}, Expr: "container_manager == 'containerd'",
			Msg:  "gvisor_enabled support only compatible with containerd. See https://github.com/kubernetes-sigs/kubespray/issues/7650 for details",
			Task: "Stop if gvisor_enabled is enabled when container_manager is not containerd", Source: vi(196)},
		{ID: "external-ca-no-auto-renew", When: []Cond{{Var: "kube_external_ca_mode", Op: OpTrue}, notIgnoreAsserts},
			That: []Cond{{Var: "auto_renew_certificates", Op: OpFalse}}, Expr: "not auto_renew_certificates",
			Msg:  "Variable auto_renew_certificates must be disabled when CA are managed externally:  kube_external_ca_mode = true",
			Task: "Stop if auto_renew_certificates is enabled when certificates are managed externally (kube_external_ca_mode is true)", Source: vi(211)},
		choice("calico_network_backend", []string{"bird", "vxlan", "none"}, []Cond{calicoPlugin, notIgnoreAsserts},
			"calico_network_backend in ['bird', 'vxlan', 'none']", "calico network backend is not 'bird', 'vxlan' or 'none'",
			"Check calico network backend defined correctly", at(calicoCheck, 109)),
		choice("calico_ipip_mode", encap, []Cond{calicoPlugin, notIgnoreAsserts},
			"calico_ipip_mode in ['Always', 'CrossSubnet', 'Never']", calicoEncapMsg, "Check ipip and vxlan mode defined correctly", at(calicoCheck, 119)),
		choice("calico_vxlan_mode", encap, []Cond{calicoPlugin, notIgnoreAsserts},
			"calico_vxlan_mode in ['Always', 'CrossSubnet', 'Never']", calicoEncapMsg, "Check ipip and vxlan mode defined correctly", at(calicoCheck, 120)),
		{ID: "calico-ipip-excludes-vxlan", When: []Cond{calicoPlugin, notIgnoreAsserts, {Var: "calico_ipip_mode", Op: OpIn, Values: anys("Always", "CrossSubnet")}},
			That: []Cond{{Var: "calico_vxlan_mode", Op: OpIn, Values: anys("Never")}}, Expr: "calico_vxlan_mode in ['Never']",
			Msg: calicoExclMsg, Task: calicoExclTask, Source: at(calicoCheck, 126)},
		{ID: "calico-vxlan-excludes-ipip", When: []Cond{calicoPlugin, notIgnoreAsserts, {Var: "calico_vxlan_mode", Op: OpIn, Values: anys("Always", "CrossSubnet")}},
			That: []Cond{{Var: "calico_ipip_mode", Op: OpIn, Values: anys("Never")}}, Expr: "calico_ipip_mode in ['Never']",
			Msg: calicoExclMsg, Task: calicoExclTask, Source: at(calicoCheck, 136)},
		{ID: "calico-apiserver-needs-kdd", When: []Cond{calicoPlugin, notIgnoreAsserts, {Var: "calico_apiserver_enabled", Op: OpTrue}},
			That: []Cond{{Var: "calico_datastore", Op: OpIn, Values: anys("kdd")}}, Expr: `calico_datastore == "kdd"`,
			Msg: "When using calico apiserver you need to use the kubernetes datastore", Task: "Check kdd calico_datastore if calico_apiserver_enabled", Source: at(calicoCheck, 213)},
		{ID: "calico-typha-needs-kdd", When: []Cond{calicoPlugin, notIgnoreAsserts, {Var: "typha_enabled", Op: OpTrue}},
			That: []Cond{{Var: "calico_datastore", Op: OpIn, Values: anys("kdd")}}, Expr: `calico_datastore == "kdd"`,
			Msg: "When using typha you need to use the kubernetes datastore", Task: "Check kdd calico_datastore if typha_enabled", Source: at(calicoCheck, 222)},
		{ID: "calico-ipv6-no-ipip", When: []Cond{calicoPlugin, notIgnoreAsserts, {Var: "ipv6_stack", Op: OpTrue}},
			That: []Cond{{Var: "calico_ipip_mode_ipv6", Op: OpIn, Values: anys("Never")}}, Expr: "calico_ipip_mode_ipv6 in ['Never']",
			Msg: "Calico doesn't support ipip tunneling for the IPv6", Task: "Check ipip mode is Never for calico ipv6", Source: at(calicoCheck, 232)},
		choice("cilium_identity_allocation_mode", []string{"crd", "kvstore"}, []Cond{ciliumPlugin},
			"cilium_identity_allocation_mode in ['crd', 'kvstore']", "cilium_identity_allocation_mode must be either 'crd' or 'kvstore'",
			"Stop if bad Cilium identity allocation mode", at(ciliumCheck, 34)),
		choice("cilium_encryption_type", []string{"ipsec", "wireguard"}, []Cond{ciliumPlugin, {Var: "cilium_encryption_enabled", Op: OpTrue}},
			"cilium_encryption_type in ['ipsec', 'wireguard']", "cilium_encryption_type must be either 'ipsec' or 'wireguard'",
			"Stop if bad encryption type", at(ciliumCheck, 47)),
		choice("external_oracle_load_balancer_security_list_management_mode", []string{"All", "Frontend", "None"},
			[]Cond{{Var: "cloud_provider", Op: OpIn, Values: anys("external")}, {Var: "external_cloud_provider", Op: OpIn, Values: anys("oci")}},
			`external_oracle_load_balancer_security_list_management_mode in ["All", "Frontend", "None"]`, "Assertion failed",
			"External OCI Cloud Controller Manager | Check settings", "roles/kubernetes-apps/external_cloud_controller/oci/tasks/main.yml:19"),
	}
}

// commonRemoved are the variables both versions stop on or ignore;
// metallbLine is the line of "matallb_auto_assign is defined".
func commonRemoved(metallbLine int) []Removed {
	return []Removed{
		{Name: "matallb_auto_assign", Stops: true, Instead: "rename it to metallb_auto_assign (the old name was a typo)",
			Msg:    "'matallb_auto_assign' configuration variable is deprecated, please use 'metallb_auto_assign' instead",
			Source: at("roles/kubernetes-apps/metallb/tasks/main.yml", metallbLine)},
		{Name: "kubelet_static_pod_path", Stops: true,
			Instead: "delete it: since kubespray 2.31.0 the kubelet's staticPodPath is always kube_manifest_dir",
			Msg:     removedMsgPrefix + "kubelet_static_pod_path", Source: at(validateInventory, 13)},
		{Name: "ipip", Stops: true, Instead: "set calico_ipip_mode (Always, CrossSubnet or Never)",
			Msg:    "'ipip' configuration variable is deprecated, please configure your inventory with 'calico_ipip_mode' set to 'Always' or 'CrossSubnet' according to your specific needs",
			Source: at(calicoCheck, 5)},
		{Name: "ipip_mode", Stops: true, Instead: "set calico_ipip_mode (Always, CrossSubnet or Never)",
			Msg:    "'ipip_mode' configuration variable is deprecated, please configure your inventory with 'calico_ipip_mode' set to 'Always' or 'CrossSubnet' according to your specific needs",
			Source: at(calicoCheck, 13)},
		{Name: "calcio_ipam_autoallocateblocks", Stops: true, Instead: "rename it to calico_ipam_autoallocateblocks (a bool)",
			Msg:    "'calcio_ipam_autoallocateblocks' configuration variable is deprecated, it's a typo, please configure your inventory with 'calico_ipam_autoallocateblocks' set to 'true' or 'false' according to your specific needs",
			Source: at(calicoCheck, 21)},
		{Name: "enable_dual_stack_networks", Stops: false, Instead: "set ipv4_stack and ipv6_stack (bools) instead",
			Msg:    "WARNING! => `enable_dual_stack_networks` deprecation. Please switch to using ipv4_stack and ipv6_stack.",
			Source: at(validateInventory, 180)},
		{Name: "cilium_ipsec_enabled", Stops: false,
			Instead: "set cilium_encryption_enabled: true and cilium_encryption_type: ipsec (kubespray still maps it, and stops if cilium_encryption_type is not ipsec)",
			Msg:     "It is not possible to use `cilium_ipsec_enabled` when `cilium_encryption_type` is set to ...",
			Source:  at(ciliumCheck, 12)},
	}
}

var knownBooleans = []string{"download_run_once", "download_always_pull", "helm_enabled", "openstack_lbaas_enabled"}

// dynamicGroups is roles/dynamic_groups/tasks/main.yml, identical in
// v2.31.0 and master: the legacy names kube-master, kube-node, calico-rr and
// no-floating are mapped; k8s-cluster is not (no mapping names it), and
// k8s_cluster is kube_node ∪ kube_control_plane ∪ calico_rr as the host's
// groups were when the task started.
var dynamicGroups = []GroupMapping{
	{Group: "kube_control_plane", From: []string{"kube-master"}},
	{Group: "kube_node", From: []string{"kube-node"}},
	{Group: "calico_rr", From: []string{"calico-rr"}},
	{Group: "no_floating", From: []string{"no-floating"}},
	{Group: "k8s_cluster", From: []string{"kube_node", "kube_control_plane", "calico_rr"}},
}

// facts per bundled version.
var facts = map[string]func() *Facts{
	"v2.31.0": func() *Facts {
		as := append(commonAsserts(),
			// v2.31.0: `when: cloud_provider` (a non-empty value) then cloud_provider == 'external'.
			Assert{ID: "choice:cloud_provider", Var: "cloud_provider", Choices: []string{"", "external"},
				When: []Cond{notIgnoreAsserts},
				That: []Cond{{Var: "cloud_provider", Op: OpIn, Values: anys("", "external")}},
				Expr: "cloud_provider == 'external' (when: cloud_provider)", Msg: "Assertion failed", Task: "Check cloud_provider value", Source: at(validateInventory, 82)},
		)
		as = append(as, knownBoolAsserts(51)...)
		return &Facts{
			Asserts: as, Removed: commonRemoved(12), KnownBooleans: knownBooleans,
			KnownBooleansSource: at(validateInventory, 48), DynamicGroups: dynamicGroups,
			AnsibleMin: "2.18.0", AnsibleMax: "2.19.0", AnsibleSource: "playbooks/ansible_version.yml:8",
			Source: "kubespray v2.31.0 (1c9add48975060f45396b34d8e022c30d7f80dab)",
		}
	},
	"master": func() *Facts {
		as := append(commonAsserts(),
			Assert{ID: "choice:cloud_provider", Var: "cloud_provider", Choices: []string{"", "external"},
				When: []Cond{notIgnoreAsserts},
				That: []Cond{{Var: "cloud_provider", Op: OpIn, Values: anys("", "external")}},
				Expr: `cloud_provider in ["", 'external']`, Msg: "Assertion failed", Task: "Check cloud_provider value", Source: at(validateInventory, 83)},
		)
		as = append(as, knownBoolAsserts(52)...)
		rm := append(commonRemoved(13), Removed{Name: "eviction_hard_control_plane", Stops: true,
			Instead: "set eviction_hard (the kubelet config no longer reads a control-plane-only value)",
			Msg:     removedMsgPrefix + "eviction_hard_control_plane", Source: at(validateInventory, 14)})
		return &Facts{
			Asserts: as, Removed: rm, KnownBooleans: knownBooleans,
			KnownBooleansSource: at(validateInventory, 49), DynamicGroups: dynamicGroups,
			AnsibleMin: "2.18.0", AnsibleMax: "2.19.0", AnsibleSource: "playbooks/ansible_version.yml:8",
			Source: "kubespray master (46dbdd3994b32640bcd806b0097f50e8fdf1d514)",
		}
	},
}

// knownBoolAsserts are validate_inventory's "Stop if known booleans are
// set as strings" checks, one per variable; first is the line of the first.
func knownBoolAsserts(first int) []Assert {
	var out []Assert
	for i, v := range knownBooleans {
		out = append(out, Assert{ID: "known-boolean:" + v, Var: v, When: []Cond{notIgnoreAsserts},
			That: []Cond{{Var: v, Op: OpIsBool}}, Expr: v + " | type_debug == 'bool'", Msg: "Assertion failed",
			Task:   "Stop if known booleans are set as strings (Use JSON format on CLI: -e \"{'key': true }\")",
			Source: at(validateInventory, first+i)})
	}
	return out
}

// releaseFacts gives a bundled release without hand-written facts (the
// releases before v2.31.0) the facts its own files support: DefaultVersion's
// asserts, each placed at its file:line in the release (a choice assert
// takes the release's allowed values; an assert whose expression the
// release does not have is dropped), the release's own choice asserts
// besides, the removed variables it stops on, and its ansible-core range.
func releaseFacts(version, commit string, r *scan.Release) *Facts {
	f := facts[DefaultVersion]()
	f.Source = fmt.Sprintf("kubespray %s (%s)", version, commit)
	if r == nil || r.Asserts == nil {
		return f
	}
	byVar := map[string][]scan.ChoiceItem{}
	for _, ch := range r.Asserts.Choices {
		byVar[ch.Var] = append(byVar[ch.Var], ch)
	}
	used := map[string]bool{}
	loopSrc := r.Exprs["item.value | type_debug == 'bool'"]
	var out []Assert
	for _, a := range f.Asserts {
		if ch, ok := releaseChoice(byVar[a.Var], a); ok && strings.HasPrefix(a.ID, "choice:") {
			a.Choices, a.That = ch.Values, []Cond{{Var: ch.Var, Op: OpIn, Values: anys(ch.Values...)}}
			a.Expr, a.Source, a.Task = ch.Expr, ch.Source, ch.Task
			if ch.Msg != "" && !strings.Contains(ch.Msg, "{{") {
				a.Msg = ch.Msg
			}
			used[ch.Source] = true
			out = append(out, a)
			continue
		}
		src, ok := r.Exprs[a.Expr]
		if !ok && strings.HasPrefix(a.ID, "known-boolean:") && loopSrc != "" {
			src, ok = loopSrc, true
		}
		if ok {
			a.Source = src
			used[src] = true
			out = append(out, a)
		}
	}
	// The release's own unconditional allowed-values checks ("Stop if
	// unknown network plugin", ...) that master's table does not have.
	for _, ch := range r.Asserts.Choices {
		if used[ch.Source] || len(byVar[ch.Var]) != 1 || !(ch.Task == unsupportedTask || strings.HasPrefix(ch.Task, "Stop if unknown")) {
			continue
		}
		if hasChoice(out, ch.Var) {
			continue
		}
		msg := ch.Msg
		if msg == "" || strings.Contains(msg, "{{") {
			msg = "Assertion failed"
		}
		out = append(out, choice(ch.Var, ch.Values, nil, ch.Expr, msg, ch.Task, ch.Source))
	}
	f.Asserts = out
	if src := r.Exprs[knownBooleans[0]+" | type_debug == 'bool'"]; src != "" {
		f.KnownBooleansSource = src
	} else if loopSrc != "" {
		f.KnownBooleansSource = loopSrc
	}
	listed := map[string]string{}
	for _, it := range r.Asserts.Removed {
		listed[it.Name] = it.Source
	}
	var rm []Removed
	for _, x := range f.Removed {
		switch {
		case strings.HasPrefix(x.Msg, removedMsgPrefix):
			src, ok := listed[x.Name]
			if !ok {
				continue // this release does not stop on it
			}
			x.Source = src
			delete(listed, x.Name)
		default:
			src, ok := r.Exprs[x.Name+" is not defined"]
			if !ok {
				src, ok = r.Exprs["when:"+x.Name+" is defined"]
			}
			if !ok {
				continue // no check for it in this release
			}
			x.Source = src
		}
		rm = append(rm, x)
	}
	for _, it := range r.Asserts.Removed {
		if _, ok := listed[it.Name]; ok {
			rm = append(rm, Removed{Name: it.Name, Stops: true,
				Instead: "delete it: kubespray " + version + " no longer reads it",
				Msg:     removedMsgPrefix + it.Name, Source: it.Source})
		}
	}
	f.Removed = rm
	if r.AnsibleMin != "" {
		f.AnsibleMin, f.AnsibleMax, f.AnsibleSource = r.AnsibleMin, r.AnsibleMax, r.AnsibleSource
	}
	return f
}

// releaseChoice picks the release's allowed-values item for a template
// assert: the one in the task of the same name, else the only one for the
// variable.
func releaseChoice(items []scan.ChoiceItem, a Assert) (scan.ChoiceItem, bool) {
	for _, it := range items {
		if it.Task == a.Task {
			return it, true
		}
	}
	if len(items) == 1 {
		return items[0], true
	}
	return scan.ChoiceItem{}, false
}

func hasChoice(as []Assert, v string) bool {
	for _, a := range as {
		if a.ID == "choice:"+v {
			return true
		}
	}
	return false
}
