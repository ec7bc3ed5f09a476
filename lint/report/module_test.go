package report

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/module"
	"github.com/layercheck/layercheck/parser"
)

func TestDecodeValueKeepsPythonTypes(t *testing.T) {
	v, err := decodeValue(json.RawMessage(`{"b": true, "i": 12345678901234567890123, "f": 1.0, "e": 1e+16, "s": "yes", "n": null,
		"l": [1, "x"], "v": {"__ansible_vault": ""}, "m": {"__ansible_vault": "", "other": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	m := v.Map
	if strings.Join(m.Keys, ",") != "b,i,f,e,s,n,l,v,m" {
		t.Errorf("key order lost: %v", m.Keys)
	}
	checks := map[string]parser.Kind{"b": parser.KindBool, "i": parser.KindInt, "f": parser.KindFloat, "e": parser.KindFloat,
		"s": parser.KindString, "n": parser.KindNull, "l": parser.KindList, "v": parser.KindVault, "m": parser.KindMap}
	for k, want := range checks {
		if got := m.Get(k).Kind; got != want {
			t.Errorf("%s: kind %s, want %s", k, got, want)
		}
	}
	if m.Get("i").Int.String() != "12345678901234567890123" || m.Get("f").Float != 1 || !m.Get("b").Bool || m.Get("s").Str != "yes" {
		t.Errorf("payloads wrong: %+v", m.Values)
	}
	if m.Get("v").Str != "" || m.Get("v").Display() != "<vault>" {
		t.Errorf("vault value carries text: %+v", m.Get("v"))
	}
	for _, bad := range []string{`{"a":`, `[1,]`, `1 2`, strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2)} {
		if _, err := decodeValue(json.RawMessage(bad)); err == nil {
			t.Errorf("decodeValue(%.20q) accepted bad JSON", bad)
		}
	}
}

func TestParsePos(t *testing.T) {
	for in, want := range map[string]parser.Pos{
		"/inv/group_vars/all.yml:3:15": {File: "/inv/group_vars/all.yml", Line: 3, Col: 15},
		"/inv/hosts.yml:7":             {File: "/inv/hosts.yml", Line: 7},
		"/inv/x:y.yml":                 {File: "/inv/x:y.yml"},
		"-e":                           {File: "-e"},
	} {
		if got := parsePos(in); got != want {
			t.Errorf("parsePos(%q) = %+v, want %+v", in, got, want)
		}
	}
}

// Ansible's type wins; our parse gives the location and syntax.
func TestExtraVarsMerge(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "extra.yml")
	if err := os.WriteFile(file, []byte("---\nfrom_file: \"yes\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ansible := map[string]json.RawMessage{
		"kv":        json.RawMessage(`"true"`),
		"js":        json.RawMessage(`true`),
		"from_file": json.RawMessage(`"yes"`),
		"only_ans":  json.RawMessage(`1.5`),
		"disagree":  json.RawMessage(`false`),
	}
	m, warns, err := extraVars(ansible, []string{"kv=true disagree=no", `{"js": true}`, "@" + file, "@" + filepath.Join(dir, "gone.yml")})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "gone.yml") {
		t.Errorf("an unreadable -e @file must be a warning naming it, got %q", warns)
	}
	if kv := m.Get("kv"); kv.Kind != parser.KindString || kv.Origin != parser.OriginExtraKV || kv.Pos.File != parser.ExtraVarsFile {
		t.Errorf("kv: %+v", kv)
	}
	if js := m.Get("js"); js.Kind != parser.KindBool || js.Origin != parser.OriginJSON {
		t.Errorf("js: %+v", js)
	}
	if ff := m.Get("from_file"); ff.Kind != parser.KindString || ff.Pos.File != file || ff.Pos.Line != 2 || ff.Pos.Col != 12 {
		t.Errorf("from_file: %+v", ff)
	}
	if oa := m.Get("only_ans"); oa.Kind != parser.KindFloat || oa.Origin != parser.OriginAnsible || oa.Pos.File != parser.ExtraVarsFile {
		t.Errorf("only_ans: %+v", oa)
	}
	if d := m.Get("disagree"); d.Kind != parser.KindBool || d.Bool || d.Origin != parser.OriginExtraKV {
		t.Errorf("disagree: Ansible's bool must win, with our origin: %+v", d)
	}
	if strings.Join(m.Keys, ",") != "kv,disagree,js,from_file,only_ans" {
		t.Errorf("order: %v", m.Keys)
	}
	// Without Ansible's values our parse is all there is.
	m, _, err = extraVars(nil, []string{"a=1"})
	if err != nil || m.Get("a").Str != "1" {
		t.Errorf("own parse: %v %+v", err, m)
	}
}

func TestResolvedValues(t *testing.T) {
	r := &resolvedOption{
		Values: [][]json.RawMessage{
			{json.RawMessage(`"helm_enabled"`), json.RawMessage(`"true"`), json.RawMessage(`"/inv/group_vars/all.yml:2:15"`)},
			{json.RawMessage(`"kube_proxy_strict_arp"`), json.RawMessage(`true`)},
		},
		Hosts: map[string][]int{"n1": {0, 1}, "n2": {0}},
	}
	got, err := resolvedValues(r)
	if err != nil {
		t.Fatal(err)
	}
	if got["n1"].Len() != 2 || got["n2"].Len() != 1 || got["n1"].Get("helm_enabled") != got["n2"].Get("helm_enabled") {
		t.Errorf("hosts must share their pairs: %+v", got)
	}
	if h := got["n1"].Get("helm_enabled"); h.Origin != parser.OriginAnsible || h.Pos.Line != 2 || h.Kind != parser.KindString {
		t.Errorf("helm_enabled: %+v", h)
	}
	for _, bad := range []*resolvedOption{
		{Values: [][]json.RawMessage{{json.RawMessage(`"x"`)}}},
		{Values: [][]json.RawMessage{{json.RawMessage(`1`), json.RawMessage(`1`)}}},
		{Values: [][]json.RawMessage{{json.RawMessage(`"x"`), json.RawMessage(`1`)}}, Hosts: map[string][]int{"h": {1}}},
	} {
		if _, err := resolvedValues(bad); err == nil {
			t.Errorf("resolvedValues accepted %+v", bad)
		}
	}
}

func TestForHostAbridgesHosts(t *testing.T) {
	hosts := []string{"a", "b", "c", "d"}
	rep := &lint.Report{Catalogue: "cat", Findings: []lint.Finding{
		{Rule: "string-as-bool", Severity: lint.SeverityError, Variable: "helm_enabled", Value: `"true"`, Where: "-e", Hosts: hosts, Message: "m", Fix: "f"},
		{Rule: "groups", Severity: lint.SeverityWarning, Message: "global"},
		{Rule: "x", Severity: lint.SeverityError, Variable: "y", Hosts: []string{"b"}, Message: "only b"},
	}}
	r := ForHost(rep, "a", 2)
	if r.Errors != 1 || r.Warnings != 1 || len(r.Findings) != 2 || r.Catalogue != "cat" {
		t.Fatalf("report for a: %+v", r)
	}
	f := r.Findings[0]
	if strings.Join(f.Hosts, ",") != "a,b" || f.HostsTotal != 4 {
		t.Errorf("hosts not abridged: %+v", f)
	}
	if f.Text != `error string-as-bool: helm_enabled = "true" at -e (hosts: a, b and 2 more): m Fix: f` {
		t.Errorf("text: %q", f.Text)
	}
	if len(rep.Findings[0].Hosts) != 4 {
		t.Error("abridging changed the full report")
	}
	if got := Line(rep.Findings[0], 0); !strings.Contains(got, "(4 hosts)") {
		t.Errorf("text with no names listed: %q", got)
	}
}

// The whole module through module.Run: arguments file in, one JSON answer out.
func TestModuleRun(t *testing.T) {
	dir := t.TempDir()
	for rel, content := range map[string]string{
		"inventory.ini":                     "[kube_control_plane]\nnode1\n[etcd]\nnode1\n[kube_node]\nnode2\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n",
		"group_vars/k8s_cluster/addons.yml": "---\nhelm_enabled: \"true\"\n",
	} {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args, _ := json.Marshal(map[string]any{
		"inventory": []string{dir}, "host": "node2", "hosts": []string{"node1", "node2"},
		"extra_vars": map[string]any{"download_run_once": "no", "secret": "s3cr3t"}, "extra_vars_args": []string{"download_run_once=no secret=s3cr3t"},
		"resolved":            map[string]any{"values": [][]any{{"helm_enabled", "true"}}, "hosts": map[string][]int{"node1": {0}, "node2": {0}}},
		"_ansible_check_mode": true, "_ansible_module_name": "layercheck.kubespray.inventory_lint",
	})
	// outside the inventory directory: a file there is an inventory source
	af := filepath.Join(t.TempDir(), "args")
	if err := os.WriteFile(af, args, 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var opts Options
	code := module.Run(context.Background(), []string{"inventory_lint", af}, &out, &opts, func(ctx context.Context, a *module.Args) (*module.Result, error) {
		return Run(ctx, &opts, a.Internals.Verbosity)
	})
	if strings.Contains(out.String(), "s3cr3t") {
		t.Errorf("an extra var's value is in the answer: %s", out.String())
	}
	var res struct {
		Failed       bool             `json:"failed"`
		Msg          string           `json:"msg"`
		Report       lint.Report      `json:"report"`
		HostReports  map[string]*Host `json:"host_reports"`
		AnsibleFacts struct {
			Lint *Host `json:"layercheck_lint"`
		} `json:"ansible_facts"`
		Lines []string `json:"lines"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("answer is not JSON: %v\n%s", err, out.String())
	}
	if code != 0 || res.Failed {
		t.Fatalf("module failed (exit %d): %s", code, res.Msg)
	}
	if res.Report.Errors != 2 || len(res.HostReports) != 2 || res.AnsibleFacts.Lint == nil || res.AnsibleFacts.Lint.Errors != 2 || len(res.Lines) != len(res.Report.Findings) {
		t.Fatalf("unexpected answer: %s", out.String())
	}
	var sawFile, sawE bool
	for _, f := range res.AnsibleFacts.Lint.Findings {
		sawFile = sawFile || (f.Variable == "helm_enabled" && f.Where == "group_vars/k8s_cluster/addons.yml:2:15")
		sawE = sawE || (f.Variable == "download_run_once" && f.Where == "-e")
	}
	if !sawFile || !sawE {
		t.Errorf("findings lack helm_enabled at its file:line or download_run_once at -e: %+v", res.AnsibleFacts.Lint.Findings)
	}
	if !strings.Contains(res.Msg, "2 errors") {
		t.Errorf("msg: %q", res.Msg)
	}
	// Which catalogue and why, in the message, the report and the facts.
	why := "the default, as the inventory lives in no kubespray checkout"
	if !strings.HasSuffix(res.Msg, ", "+why+")") || res.Report.CatalogueWhy != why || res.AnsibleFacts.Lint.CatalogueWhy != why || res.HostReports["node1"].CatalogueWhy != why {
		t.Errorf("catalogue and why: msg %q, report %q, facts %q", res.Msg, res.Report.CatalogueWhy, res.AnsibleFacts.Lint.CatalogueWhy)
	}
	// kubespray_version: the option and the release it resolved to, also in
	// the summary line the play prints.
	if err := os.WriteFile(af, []byte(`{"inventory": ["`+dir+`"], "kubespray_version": "v2.31"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	opts = Options{}
	module.Run(context.Background(), []string{"inventory_lint", af}, &out, &opts, func(ctx context.Context, a *module.Args) (*module.Result, error) {
		return Run(ctx, &opts, a.Internals.Verbosity)
	})
	var byVersion struct {
		Msg     string `json:"msg"`
		Summary string `json:"summary"`
	}
	if err := json.Unmarshal(out.Bytes(), &byVersion); err != nil {
		t.Fatalf("answer is not JSON: %v\n%s", err, out.String())
	}
	why = "chosen with kubespray_version v2.31, the newest bundled v2.31.x)"
	if !strings.Contains(byVersion.Msg, "(bundled kubespray v2.31.0 ") || !strings.HasSuffix(byVersion.Msg, why) || !strings.HasSuffix(byVersion.Summary, why) {
		t.Errorf("kubespray_version v2.31: msg %q, summary %q", byVersion.Msg, byVersion.Summary)
	}

	// Errors name what is wrong.
	for _, tc := range []struct{ args, want string }{
		{`{}`, "option inventory is empty"},
		{`{"inventory": ["` + filepath.Join(dir, "missing") + `"]}`, "missing"},
		{`{"inventory": ["` + dir + `"], "hosts_listed": -1}`, "hosts_listed must be 0 or more"},
		{`{"inventory": ["` + dir + `"], "resolved": {"values": [["x"]]}}`, "resolved.values[0]"},
		{`{"inventory": ["` + dir + `"], "kubespray_version": "v0.0.1"}`, "v0.0.1"},
	} {
		if err := os.WriteFile(af, []byte(tc.args), 0o600); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		opts = Options{}
		code := module.Run(context.Background(), []string{"inventory_lint", af}, &out, &opts, func(ctx context.Context, a *module.Args) (*module.Result, error) {
			return Run(ctx, &opts, a.Internals.Verbosity)
		})
		if code == 0 || !strings.Contains(out.String(), tc.want) {
			t.Errorf("args %s: want a failure naming %q, got (exit %d) %s", tc.args, tc.want, code, out.String())
		}
	}
}
