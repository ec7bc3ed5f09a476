package verifyplaybook

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/test/testutil"
)

var update = flag.Bool("update", false, "rewrite testdata/report/*.golden")

// reportCase is a fixture of testdata/report: the facts node_facts and
// cluster_facts would have left on a play's hosts, and the options of the
// verify role's two verify_report tasks.
type reportCase struct {
	// Inventory lists the hosts in the inventory's order, PlayHosts the
	// play's hosts as the role passes them (in the order the play filled
	// them, which the report does not follow).
	Inventory []string `json:"inventory"`
	PlayHosts []string `json:"play_hosts"`
	// Nodes is each host's ansible_facts.layercheck_node; a host missing
	// here has none (unreachable, or node_facts failed).
	Nodes map[string]json.RawMessage `json:"nodes"`
	// Cluster is ClusterHost's ansible_facts.layercheck_cluster (absent:
	// none), ClusterSkipped its layercheck_cluster_skipped.
	ClusterHost    string          `json:"cluster_host"`
	Cluster        json.RawMessage `json:"cluster"`
	ClusterSkipped string          `json:"cluster_skipped"`
	Order          []string        `json:"order"`
	FailOnWarn     bool            `json:"fail_on_warn"`
	Table          bool            `json:"table"`
	Verbose        bool            `json:"verbose"`
}

// fixtureFactsModule returns the JSON file at path as the host's
// ansible_facts, so the hosts carry the fixture's facts exactly as a
// module's result leaves them.
const fixtureFactsModule = `#!/usr/bin/python
import json
from ansible.module_utils.basic import AnsibleModule

module = AnsibleModule(argument_spec=dict(path=dict(type="path", required=True)), supports_check_mode=True)
with open(module.params["path"], encoding="utf-8") as f:
    facts = json.load(f)
module.exit_json(changed=False, ansible_facts=facts)
`

// reportPlaybook sets each host's fixture facts, then runs the verify
// role's two report tasks (as roles/verify/tasks/report.yml does) and
// saves every host's verdict.
const reportPlaybook = `- name: verify_report on fixture facts
  hosts: all
  gather_facts: false
  tasks:
    - name: facts
      fixture_facts:
        path: "{{ fixture_facts }}"
      when: fixture_facts is defined
    - name: report
      layercheck.kubespray.verify_report:
        scope: play
        hosts: "{{ report_hosts }}"
        cluster_host: "{{ report_cluster_host }}"
        order: "{{ report_order }}"
        fail_on_warn: "{{ report_fail_on_warn }}"
        table: "{{ report_table }}"
      run_once: true
      register: report
    - name: verdict
      layercheck.kubespray.verify_report:
        scope: host
        cluster_host: "{{ report_cluster_host }}"
        order: "{{ report_order }}"
        fail_on_warn: "{{ report_fail_on_warn }}"
      register: verdict
      ignore_errors: true
    - name: save
      ansible.builtin.copy:
        content: "{{ {'summary': report.msg, 'verdicts': dict(ansible_play_hosts_all | zip(ansible_play_hosts_all | map('extract', hostvars, 'verdict')))} | to_json }}"
        dest: "{{ out_file }}"
        mode: "0644"
      run_once: true
`

// reportStart is the header of the play-scope task; the report follows it
// up to the task's result line.
var (
	reportStart = regexp.MustCompile(`^TASK \[report\] `)
	resultLine  = regexp.MustCompile(`^(ok|changed|fatal|skipping): \[`)
)

// TestVerifyReportGolden runs the verify_report action on each fixture's
// facts with the real ansible-playbook and compares what it prints (the
// report, once), its summary and each host's verdict with
// testdata/report/<case>.golden.
func TestVerifyReportGolden(t *testing.T) {
	t.Parallel()
	cases, err := filepath.Glob(filepath.Join("testdata", "report", "*.json"))
	must(t, err)
	if len(cases) == 0 {
		t.Fatal("no fixtures in testdata/report")
	}
	for _, path := range cases {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(path)
			must(t, err)
			var c reportCase
			dec := json.NewDecoder(strings.NewReader(string(data)))
			dec.DisallowUnknownFields()
			must(t, dec.Decode(&c))
			out, verdicts, err := runReport(t, collection(t), c)
			if err != nil {
				t.Fatalf("ansible-playbook: %v\n%s", err, out)
			}
			got := reportOf(t, c, out, verdicts)
			testutil.Golden(t, filepath.Join("testdata", "report", name+".golden"), []byte(got), *update, "verify_report on "+name)
		})
	}
}

// TestVerifyReportWithoutBinary: on a controller without the layercheck
// binary for its platform the report fails, saying which binary it looked
// for and how to get it.
func TestVerifyReportWithoutBinary(t *testing.T) {
	t.Parallel()
	coll := filepath.Join(t.TempDir(), "collections")
	must(t, testutil.LayOutCollection(coll))
	data, err := os.ReadFile(filepath.Join("testdata", "report", "one-host-warn.json"))
	must(t, err)
	var c reportCase
	must(t, json.Unmarshal(data, &c))
	out, _, err := runReport(t, coll, c)
	if err == nil {
		t.Fatalf("the report passed without a binary:\n%s", out)
	}
	for _, w := range []string{"verify_report: no layercheck binary for linux/" + runtime.GOARCH + " on the controller (looked for ",
		filepath.Join("plugins", "bin", "layercheck_linux_"+runtime.GOARCH), "make modules"} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in the output:\n%s", w, out)
		}
	}
}

// runReport runs reportPlaybook on c's hosts (local connections) with the
// collection in coll, and returns ansible-playbook's output, the file the
// playbook saved the verdicts in, and its error.
func runReport(t *testing.T, coll string, c reportCase) (out, verdicts string, err error) {
	t.Helper()
	work := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(work, "library"), 0o755))
	must(t, os.WriteFile(filepath.Join(work, "library", "fixture_facts.py"), []byte(fixtureFactsModule), 0o644))
	must(t, os.WriteFile(filepath.Join(work, "report.yml"), []byte(reportPlaybook), 0o644))
	must(t, os.MkdirAll(filepath.Join(work, "facts"), 0o755))
	must(t, os.MkdirAll(filepath.Join(work, "host_vars"), 0o755))
	var ini strings.Builder
	ini.WriteString("[all]\n")
	for i, h := range c.Inventory {
		ini.WriteString(h + "\n")
		facts := map[string]json.RawMessage{}
		if n, ok := c.Nodes[h]; ok {
			facts["layercheck_node"] = n
		}
		vars := map[string]any{}
		if h == c.ClusterHost {
			if c.Cluster != nil {
				facts["layercheck_cluster"] = c.Cluster
			}
			if c.ClusterSkipped != "" {
				vars["layercheck_cluster_skipped"] = c.ClusterSkipped
			}
		}
		if len(facts) > 0 {
			f := filepath.Join(work, "facts", fmt.Sprintf("host%d.json", i))
			b, err := json.Marshal(facts)
			must(t, err)
			must(t, os.WriteFile(f, b, 0o644))
			vars["fixture_facts"] = f
		}
		b, err := json.Marshal(vars)
		must(t, err)
		must(t, os.WriteFile(filepath.Join(work, "host_vars", h+".json"), b, 0o644))
	}
	ini.WriteString("\n[all:vars]\nansible_connection=local\nansible_python_interpreter=\"{{ ansible_playbook_python }}\"\n")
	must(t, os.WriteFile(filepath.Join(work, "hosts.ini"), []byte(ini.String()), 0o644))
	verdicts = filepath.Join(work, "verdicts.json")
	extra, err := json.Marshal(map[string]any{
		"report_hosts": c.PlayHosts, "report_cluster_host": c.ClusterHost, "report_order": c.Order,
		"report_fail_on_warn": c.FailOnWarn, "report_table": c.Table, "out_file": verdicts,
	})
	must(t, err)
	must(t, os.WriteFile(filepath.Join(work, "extra.json"), extra, 0o644))
	args := []string{"-i", "hosts.ini", "report.yml", "-e", "@extra.json"}
	if c.Verbose {
		args = append(args, "-v")
	}
	out, err = testutil.RunPlaybook(t, work, testutil.AnsibleEnv(
		"ANSIBLE_COLLECTIONS_PATH="+coll,
		"ANSIBLE_LOCAL_TEMP="+filepath.Join(work, "tmp"),
		"ANSIBLE_REMOTE_TMP="+filepath.Join(work, "rtmp"),
		"ANSIBLE_STDOUT_CALLBACK=default",
	), 4*time.Minute, args...)
	return out, verdicts, err
}

// reportOf is the report of a run of reportPlaybook as printed, then
// "--- summary: <msg>" and a "--- <host> ok|failed: <msg>" line per host
// in inventory order.
func reportOf(t *testing.T, c reportCase, out, verdicts string) string {
	t.Helper()
	var report []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case reportStart.MatchString(l):
			if in || report != nil {
				t.Fatalf("the report task ran twice:\n%s", out)
			}
			in, report = true, []string{}
		case in && resultLine.MatchString(l):
			in = false
		case in:
			report = append(report, l)
		}
	}
	if report == nil {
		t.Fatalf("no report task in the output:\n%s", out)
	}
	data, err := os.ReadFile(verdicts)
	must(t, err)
	var saved struct {
		Summary  string `json:"summary"`
		Verdicts map[string]struct {
			Failed bool   `json:"failed"`
			Msg    string `json:"msg"`
		} `json:"verdicts"`
	}
	must(t, json.Unmarshal(data, &saved))
	var b strings.Builder
	b.WriteString(strings.Join(report, "\n") + "\n")
	fmt.Fprintf(&b, "--- summary: %s\n", saved.Summary)
	for _, h := range c.Inventory {
		v, ok := saved.Verdicts[h]
		if !ok {
			t.Fatalf("no verdict of %s in %s", h, data)
		}
		state := "ok"
		if v.Failed {
			state = "failed"
		}
		fmt.Fprintf(&b, "--- %s %s: %s\n", h, state, v.Msg)
	}
	return b.String()
}
