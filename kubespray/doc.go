// Package kubespray knows kubespray: its variable catalogue (generated from
// kubespray's role defaults and vars, or read at run time from the kubespray
// checkout an inventory lives in), the asserts its tasks make on inventory
// values, the variables it has removed, and the groups its playbooks create.
//
// # Catalogue
//
// The bundled catalogues (catalogue_<version>.json, embedded) are generated
// by `make generate` (go generate ./kubespray/...) from kubespray's own data
// files: roles/*/defaults/**, roles/*/vars/** (roles nest, e.g.
// roles/kubernetes/node/defaults/main.yml) and
// inventory/sample/group_vars/** of kubespray v2.31.0 (commit 1c9add48) and
// master (commit 46dbdd39). Each file is loaded with the parser package's
// YAML loader, which follows ansible-core's AnsibleLoader (YAML 1.1:
// unquoted yes/no/on/off/true/false are bool, quoted are str). Commented-out
// sample variables do not exist. A file that only names a sibling file (a
// git symlink stored as text) is skipped and listed in Catalogue.Skipped.
//
// Each definition keeps its Python type, default, file and line. A str
// default spelling a boolean (true/false/yes/no/on/off, any case) is a
// string-boolean (StringBool): kubespray deliberately keeps
// docker_iptables_enabled: "false", local_path_provisioner_is_default_storageclass:
// "true" or openstack_lbaas_create_monitor: "yes" as strings. A Jinja
// default is "templated", or "bool" with Inferred when the expression is
// boolean at its top level (a comparison, in/not in, an is-test, not, a
// filter chain ending in | bool, | ternary(true, false), and/or of
// boolean operands, a conditional with boolean branches, "{{ other }}"
// where other is a boolean, or "x | default(false)" where x is a boolean
// or undefined). A template that always renders a boolean-spelling str
// ("{{ 'true' if c else 'false' }}", "{{ (a == b) | lower }}") stays
// "templated" with StringBool and Inferred.
//
// A variable defined in several places keeps every definition (Var.Defs);
// the primary one, which gives Default/File/Line, is the first in the order
// roles/kubespray_defaults/defaults, other roles' defaults, role vars,
// inventory sample, then by file and line. Var.Type is "bool" when any
// definition is a bool, literal or inferred: the lint's question "is this a
// boolean?" must not depend on which role a default came from.
//
// Counts (variables / booleans, of which inferred / string-booleans):
// v2.31.0: 1540 / 294 (16) / 11; master: 1545 / 298 (16) / 11.
//
// # Facts
//
// What kubespray's tasks assert is not in its data files; Facts holds it as
// a table read from roles/validate_inventory/tasks/main.yml,
// roles/network_plugin/calico/tasks/check.yml,
// roles/network_plugin/cilium/tasks/check.yml,
// roles/kubernetes-apps/metallb/tasks/main.yml,
// roles/kubernetes-apps/external_cloud_controller/oci/tasks/main.yml and
// roles/dynamic_groups/tasks/main.yml of each bundled version, every entry
// with its kubespray file:line. For a checkout, the allowed values and
// removed_vars are re-read from the checkout's own task files.
package kubespray
