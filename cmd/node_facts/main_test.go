package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/layercheck/layercheck/module"
	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/test/testutil"
	"github.com/layercheck/layercheck/verify/node"
)

var (
	binOnce sync.Once
	binPath string
	binDir  string
)

func TestMain(m *testing.M) {
	binDir, _ = os.MkdirTemp("", "node-facts-bin-")
	code := m.Run()
	os.RemoveAll(binDir)
	os.Exit(code)
}

func moduleBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() { binPath = testutil.Build(t, "./cmd/node_facts", filepath.Join(binDir, "node_facts")) })
	if _, err := os.Stat(binPath); err != nil {
		t.Fatalf("node_facts binary: %v", err)
	}
	return binPath
}

// runModule runs the binary as Ansible does: one argument, the path of a
// JSON file with the options and Ansible's internal keys.
func runModule(t *testing.T, args any) (map[string]any, int) {
	t.Helper()
	return testutil.RunModule(t, moduleBinary(t), nil, args)
}

func nodeArgs(root string) map[string]any {
	return map[string]any{
		"root": root, "inventory_hostname": "node1", "now": "2026-11-30T15:22:06Z",
		"group_names": []string{"etcd", "kube_control_plane", "kube_node", "k8s_cluster"}, "etcd_members": []string{"node1", "node2", "node3"},
		"layers":               []string{"certificates", "install", "kubelet", "cni", "addons"},
		"kube_version":         "1.35.4",
		"_ansible_module_name": "layercheck.kubespray.node_facts", "_ansible_verbosity": 0,
	}
}

func stripDurations(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != "duration_ms" {
				out[k] = stripDurations(e)
			}
		}
		return out
	case []any:
		for i := range x {
			x[i] = stripDurations(x[i])
		}
	}
	return v
}

func TestModuleFactsAndCheckMode(t *testing.T) {
	tr, err := harness.Build(t.TempDir(), harness.Config{Now: time.Date(2026, 11, 30, 14, 22, 6, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	args := nodeArgs(tr.Root)
	res, code := runModule(t, args)
	if code != 0 || res["failed"] != false || res["changed"] != false {
		t.Fatalf("module: code %d result %v", code, res)
	}
	facts := res["ansible_facts"].(map[string]any)["layercheck_node"].(map[string]any)
	if facts["status"] != "ok" || facts["host"] != "node1" {
		t.Fatalf("facts: status %v host %v: %v", facts["status"], facts["host"], facts["layers"])
	}
	certs := facts["layers"].(map[string]any)["certificates"].(map[string]any)["facts"].(map[string]any)
	if n := len(certs["certificates"].([]any)); n != 21 {
		t.Errorf("%d certificates, want 21", n)
	}
	if !strings.HasPrefix(res["msg"].(string), "ok: ") {
		t.Errorf("msg %q", res["msg"])
	}
	args["_ansible_check_mode"] = true
	chk, code := runModule(t, args)
	if code != 0 {
		t.Fatalf("check mode: %v", chk)
	}
	if !reflect.DeepEqual(stripDurations(res["ansible_facts"]), stripDurations(chk["ansible_facts"])) {
		t.Errorf("check mode gives other facts")
	}
	out, _ := json.Marshal(res)
	if strings.Contains(string(out), "PRIVATE KEY") {
		t.Error("module output holds key material")
	}

	// A failing layer is a fact, not a failed task.
	if err := tr.ReissueLeaf("/etc/kubernetes/ssl/apiserver.crt", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), nil); err != nil {
		t.Fatal(err)
	}
	delete(args, "_ansible_check_mode")
	res, code = runModule(t, args)
	facts = res["ansible_facts"].(map[string]any)["layercheck_node"].(map[string]any)
	if code != 0 || res["failed"] != false || facts["status"] != "fail" {
		t.Errorf("broken node: code %d failed %v status %v", code, res["failed"], facts["status"])
	}
}

func TestModuleBadInput(t *testing.T) {
	root := t.TempDir()
	cases := []struct {
		args any
		want string
	}{
		{`not json`, "module arguments are not a JSON object"},
		{map[string]any{"root": root, "kube_cert_dri": "/x"}, "Unsupported parameters for (this) module: kube_cert_dri"},
		{map[string]any{"root": "relative/dir"}, "option root: \"relative/dir\" is not an absolute path"},
		{map[string]any{"root": filepath.Join(root, "missing")}, "option root:"},
		{map[string]any{"root": root, "now": "yesterday"}, "option now: \"yesterday\" is not an RFC 3339 time"},
		{map[string]any{"root": root, "cert_warn_days": "thirty"}, "cert_warn_days"},
		{map[string]any{"root": root, "cert_warn_days": 3, "cert_fail_days": 7}, "need 0 <= fail <= warn"},
		{map[string]any{"root": root, "addr_map": map[string]string{"169.254.25.10": "127.0.0.1:53"}}, "option addr_map: \"169.254.25.10\" is not host:port"},
		{map[string]any{"root": root, "layers": []string{"etc"}}, "unknown layer \"etc\""},
		{map[string]any{"root": root, "net_timeout": -1}, "option net_timeout"},
	}
	for _, c := range cases {
		res, code := runModule(t, c.args)
		if code == 0 || res["failed"] != true || !strings.Contains(res["msg"].(string), c.want) {
			t.Errorf("%v: code %d msg %q, want %q", c.args, code, res["msg"], c.want)
		}
	}
	// An empty root is no error: every layer reports what is missing.
	res, code := runModule(t, map[string]any{"root": root, "inventory_hostname": "node1", "group_names": []string{"kube_control_plane", "etcd"}})
	if code != 0 {
		t.Fatalf("empty root: %v", res)
	}
	facts := res["ansible_facts"].(map[string]any)["layercheck_node"].(map[string]any)
	if facts["status"] != "fail" && facts["status"] != "error" {
		t.Errorf("empty root status %v", facts["status"])
	}
}

// The sidecar documentation lists exactly the module's options.
func TestDocumentationMatchesOptions(t *testing.T) {
	name, options, documented := testutil.ModuleDoc(t, "node_facts")
	fields := module.OptionNames(reflect.TypeOf(node.Request{}))
	sort.Strings(fields)
	if name != "node_facts" || !reflect.DeepEqual(documented, fields) {
		t.Errorf("documented options %v\nmodule options %v", documented, fields)
	}
	// Documented defaults are the ones the module applies.
	var o node.Options
	o.Defaults()
	ob, _ := json.Marshal(o)
	var applied map[string]any
	_ = json.Unmarshal(ob, &applied)
	for name, spec := range options {
		d, ok := spec["default"]
		if !ok {
			continue
		}
		if a, ok := applied[name]; ok {
			if a != d && !(isNum(a) && isNum(d) && toF(a) == toF(d)) {
				t.Errorf("option %s: documented default %v, applied %v", name, d, a)
			}
		}
	}
}

func isNum(v any) bool {
	switch v.(type) {
	case int, float64:
		return true
	}
	return false
}

func toF(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

// The verify role hands node_facts every option, and the monitor role
// writes every kubespray value the options hold (group_names and
// etcd_members it writes itself; the thresholds are layercheck's own), so
// an option added to node.Options reaches the layers from an inventory by
// each of them (`layercheck verify` reads node.Options' names itself).
func TestRolesPassEveryOption(t *testing.T) {
	var tasks []map[string]any
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "roles", "verify", "tasks", "main.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &tasks); err != nil {
		t.Fatal(err)
	}
	args, _ := tasks[0]["layercheck.kubespray.node_facts"].(map[string]any)
	var passed []string
	for k := range args {
		passed = append(passed, k)
	}
	sort.Strings(passed)
	fields := module.OptionNames(reflect.TypeOf(node.Request{}))
	sort.Strings(fields)
	if !reflect.DeepEqual(passed, fields) {
		t.Errorf("roles/verify/tasks/main.yml passes %v\nnode_facts takes %v", passed, fields)
	}

	var vars struct {
		Kubespray []string `yaml:"_layercheck_monitor_kubespray_vars"`
	}
	data, err = os.ReadFile(filepath.Join(testutil.RepoRoot(), "roles", "monitor", "vars", "main.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &vars); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range module.OptionNames(reflect.TypeOf(node.Options{})) {
		switch n {
		case "group_names", "etcd_members", "kube_control_plane_access_ips", "cert_warn_days", "cert_fail_days":
			continue
		case "kubespray_version":
			// the role's own layercheck_kubespray_version, not a kubespray value
			continue
		}
		want = append(want, n)
	}
	sort.Strings(want)
	sort.Strings(vars.Kubespray)
	if !reflect.DeepEqual(vars.Kubespray, want) {
		t.Errorf("roles/monitor/vars/main.yml writes %v\nnode.Options holds %v", vars.Kubespray, want)
	}
	present, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "roles", "monitor", "tasks", "present.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(present), "'kube_control_plane_access_ips': _access_ips") {
		t.Error("roles/monitor/tasks/present.yml does not write kube_control_plane_access_ips")
	}
	if !strings.Contains(string(present), "{'kubespray_version': layercheck_kubespray_version}") {
		t.Error("roles/monitor/tasks/present.yml does not write layercheck_kubespray_version as kubespray_version")
	}
}
