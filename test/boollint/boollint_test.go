// Package boollint compares `layercheck lint` with ansible-core itself
// (2.19 and 2.20, and the older series every kubespray release pins):
// for a deterministic sample of kubespray's booleans (the four that
// kubespray's validate_inventory checks, and an even spread over the
// catalogue's other booleans), each written in every way operators write
// them (quoted and unquoted YAML, yes/no/On/OFF, ints, INI [all:vars],
// [group:vars] and host lines with true/True/yes/on/1, -e key=value, -e
// JSON, -e @file), ansible-playbook must fail `when: <var>` for exactly the
// variables and hosts the lint reports as string-as-bool (or not-a-bool),
// and pass everywhere else.
//
// kubespray's string-valued booleans (StringBool in the catalogue, e.g.
// docker_iptables_enabled: "false") are str by kubespray's own choice and
// always read with `| bool`, never in a bare `when:`; the test reads them
// with `when: <var> | bool`, which passes in every form, and checks the lint
// reports none of them.
package boollint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/test/testutil"
)

// sampleSize is how many catalogue booleans the test writes in every form.
const sampleSize = 64

// runTimeout bounds one lint and ansible-playbook run (the inventory-forms
// run has 14 hosts x 70 tasks: minutes on a loaded 2-core machine).
const runTimeout = 10 * time.Minute

// form is one way of writing a boolean. Forms written in the inventory
// share one ansible-playbook run, one host each (h_<form>); each extra-vars
// form needs its own run, as extra vars apply to every host.
type form struct {
	name string
	// notBool: the form makes a str or int where a bool is expected.
	notBool bool
	// inventory forms: host line vars, an INI [group:vars] section, or a
	// group_vars/<group>.yml file for the form's group.
	hostLine, iniGroup, yamlFile func(vars []string) string
	// extra-vars forms: the -e arguments (and files they name).
	extra func(dir string, vars []string) []string
}

// spell alternates true and false over the sample, so both are covered.
func spell(i int, t, f string) string {
	if i%2 == 0 {
		return t
	}
	return f
}

func lines(sep string, t, f string) func(vars []string) string {
	return func(vars []string) string {
		var b strings.Builder
		for i, v := range vars {
			fmt.Fprintf(&b, "%s%s%s\n", v, sep, spell(i, t, f))
		}
		return b.String()
	}
}

func hostLine(t, f string) func(vars []string) string {
	return func(vars []string) string {
		var b strings.Builder
		for i, v := range vars {
			fmt.Fprintf(&b, " %s=%s", v, spell(i, t, f))
		}
		return b.String()
	}
}

// allVarsForm is written in [all:vars]: the lowest precedence, so only its
// own host (which no other form's group includes) keeps these values.
const allVarsForm = "ini-all-vars"

var forms = []form{
	{name: allVarsForm, notBool: true, iniGroup: lines("=", "true", "false")},
	{name: "ini-group-vars-True", iniGroup: lines("=", "True", "False")},
	{name: "ini-group-vars-yes", notBool: true, iniGroup: lines("=", "yes", "no")},
	{name: "ini-group-vars-int", notBool: true, iniGroup: lines("=", "1", "0")},
	{name: "ini-group-vars-quoted-True", notBool: true, iniGroup: lines("=", `"True"`, `"False"`)},
	{name: "ini-host-line", notBool: true, hostLine: hostLine("true", "false")},
	{name: "ini-host-line-True", hostLine: hostLine("True", "False")},
	{name: "ini-host-line-on", notBool: true, hostLine: hostLine("on", "off")},
	{name: "yaml-quoted", notBool: true, yamlFile: lines(": ", `"true"`, `"false"`)},
	{name: "yaml-quoted-yes-no", notBool: true, yamlFile: lines(": ", `'yes'`, `'no'`)},
	{name: "yaml-unquoted-yes-no", yamlFile: lines(": ", "yes", "no")},
	{name: "yaml-unquoted-On-OFF", yamlFile: lines(": ", "On", "OFF")},
	{name: "yaml-bool", yamlFile: lines(": ", "true", "false")},
	{name: "yaml-int", notBool: true, yamlFile: lines(": ", "1", "0")},
	{name: "extra-vars-kv", notBool: true, extra: func(_ string, vars []string) []string {
		var kv []string
		for i, v := range vars {
			kv = append(kv, v+"="+spell(i, "true", "false"))
		}
		return []string{strings.Join(kv, " ")}
	}},
	{name: "extra-vars-json", extra: func(_ string, vars []string) []string {
		m := map[string]bool{}
		for i, v := range vars {
			m[v] = i%2 == 0
		}
		b, _ := json.Marshal(m)
		return []string{string(b)}
	}},
	{name: "extra-vars-json-string", notBool: true, extra: func(_ string, vars []string) []string {
		m := map[string]string{}
		for i, v := range vars {
			m[v] = spell(i, "true", "false")
		}
		b, _ := json.Marshal(m)
		return []string{string(b)}
	}},
	{name: "extra-vars-file-quoted", notBool: true, extra: func(dir string, vars []string) []string {
		p := filepath.Join(dir, "extra.yml")
		if err := os.WriteFile(p, []byte(lines(": ", `"yes"`, `"no"`)(vars)), 0o644); err != nil {
			panic(err)
		}
		return []string{"@" + p}
	}},
}

func hostOf(f form) string { return "h_" + strings.NewReplacer("-", "_").Replace(f.name) }

// inventoryRun writes one inventory holding every inventory form, a host
// (and group) per form.
func inventoryRun(dir string, vars []string) {
	var hosts, sections strings.Builder
	files := map[string]string{}
	hosts.WriteString("[kube_control_plane]\n")
	for _, f := range forms {
		if f.extra != nil {
			continue
		}
		h := hostOf(f)
		hosts.WriteString(h + " ansible_connection=local")
		if f.hostLine != nil {
			hosts.WriteString(f.hostLine(vars))
		}
		hosts.WriteString("\n")
		switch {
		case f.name == allVarsForm:
			sections.WriteString("[all:vars]\n" + f.iniGroup(vars))
		case f.iniGroup != nil:
			fmt.Fprintf(&sections, "[g_%s]\n%s\n[g_%s:vars]\n%s", h, h, h, f.iniGroup(vars))
		case f.yamlFile != nil:
			fmt.Fprintf(&sections, "[g_%s]\n%s\n", h, h)
			files["group_vars/g_"+h+".yml"] = "---\n" + f.yamlFile(vars)
		}
	}
	files["hosts.ini"] = hosts.String() + "[etcd:children]\nkube_control_plane\n[kube_node:children]\nkube_control_plane\n" + sections.String()
	writeFiles(dir, files)
}

// extraRun writes a one-host inventory for an extra-vars form.
func extraRun(dir string, f form) {
	writeFiles(dir, map[string]string{"hosts.ini": "[kube_control_plane]\n" + hostOf(f) + " ansible_connection=local\n"})
}

// sample picks the booleans: the four validate_inventory checks, then an
// even spread over the catalogue's other booleans (sorted by name), and
// kubespray's string-valued booleans, which are compared with `| bool`.
func sample(t *testing.T, cat *kubespray.Catalogue) (bools, stringBools []string) {
	t.Helper()
	known := map[string]bool{}
	for _, k := range cat.Facts.KnownBooleans {
		known[k] = true
		bools = append(bools, k)
	}
	var all []string
	for _, n := range cat.Names() {
		v := cat.Lookup(n)
		switch {
		case v.StringBool:
			stringBools = append(stringBools, n)
		case v.IsBool() && !known[n]:
			all = append(all, n)
		}
	}
	want := sampleSize - len(bools)
	if len(all) < want {
		t.Fatalf("catalogue %s has only %d booleans", cat.Name, len(all))
	}
	for i := 0; i < want; i++ {
		bools = append(bools, all[i*len(all)/want])
	}
	if len(stringBools) == 0 {
		t.Fatalf("catalogue %s has no string-valued booleans", cat.Name)
	}
	if len(stringBools) > 6 {
		stringBools = stringBools[:6]
	}
	return bools, stringBools
}

// playbook has one task per variable; ignore_errors keeps one failure
// from hiding the rest.
func playbook(bools, stringBools []string) string {
	var b strings.Builder
	b.WriteString("- hosts: all\n  gather_facts: false\n  tasks:\n")
	for _, v := range bools {
		fmt.Fprintf(&b, "    - name: check %s\n      debug: {msg: \"set\"}\n      when: %s\n      ignore_errors: true\n", v, v)
	}
	for _, v := range stringBools {
		fmt.Fprintf(&b, "    - name: check %s\n      debug: {msg: \"set\"}\n      when: %s | bool\n      ignore_errors: true\n", v, v)
	}
	return b.String()
}

var taskRe = regexp.MustCompile(`(?m)^TASK \[check ([A-Za-z0-9_]+)\]`)
var statusRe = regexp.MustCompile(`(?m)^(fatal|ok|skipping|changed): \[([A-Za-z0-9_]+)\]`)

// statuses reads ansible-playbook's default output: per task and host,
// the status word (ok, skipping, fatal, changed).
func statuses(out string) map[string]map[string]string {
	res := map[string]map[string]string{}
	idx := taskRe.FindAllStringSubmatchIndex(out, -1)
	for i, m := range idx {
		end := len(out)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		name := out[m[2]:m[3]]
		res[name] = map[string]string{}
		for _, st := range statusRe.FindAllStringSubmatch(out[m[1]:end], -1) {
			res[name][st[2]] = st[1]
		}
	}
	return res
}

// outcomes says, per task and host, whether it failed.
func outcomes(t *testing.T, out string) map[string]map[string]bool {
	t.Helper()
	failed := map[string]map[string]bool{}
	for task, hosts := range statuses(out) {
		failed[task] = map[string]bool{}
		for h, st := range hosts {
			failed[task][h] = st == "fatal"
		}
	}
	return failed
}

// lintJSON runs `layercheck lint` with args and reads its JSON report.
func lintJSON(t *testing.T, ctx context.Context, cli string, args []string) *lint.Report {
	t.Helper()
	var lintOut, lintErr bytes.Buffer
	lc := exec.CommandContext(ctx, cli, args...)
	lc.Stdout, lc.Stderr = &lintOut, &lintErr
	lerr := lc.Run()
	if code := lc.ProcessState.ExitCode(); code != 0 && code != 1 {
		t.Fatalf("layercheck %v: %v\n%s", args, lerr, lintErr.String())
	}
	var rep lint.Report
	if err := json.Unmarshal(lintOut.Bytes(), &rep); err != nil {
		t.Fatalf("lint JSON: %v\n%s", err, lintOut.String())
	}
	return &rep
}

func writeFiles(dir string, files map[string]string) {
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			panic(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			panic(err)
		}
	}
}

// run is one lint and one ansible-playbook run over the same inventory
// and extra vars: which (variable, host) pairs each rejects.
type run struct {
	name  string
	dir   string
	extra []string
	forms []form
}

func (r run) compare(t *testing.T, cli, playbookBin, pb string, env []string, vars []string, nBools int, series string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	inv := filepath.Join(r.dir, "hosts.ini")

	// the catalogue the variables were sampled from, not the release the
	// inventory would be inferred to be written for
	args := []string{"lint", "-i", inv, "--format", "json", "--ansible-core", series, "--kubespray-version", kubespray.DefaultVersion}
	pbArgs := []string{"-i", inv, pb}
	for _, e := range r.extra {
		args = append(args, "-e", e)
		pbArgs = append(pbArgs, "-e", e)
	}
	rep := lintJSON(t, ctx, cli, args)
	reported := map[string]map[string]bool{}
	for _, f := range rep.Findings {
		if f.Rule != "string-as-bool" && f.Rule != "not-a-bool" {
			continue
		}
		if f.Severity != lint.SeverityError {
			t.Errorf("%s: %s is %s, want error", f.Rule, f.Variable, f.Severity)
		}
		if reported[f.Variable] == nil {
			reported[f.Variable] = map[string]bool{}
		}
		for _, h := range f.Hosts {
			reported[f.Variable][h] = true
		}
	}

	pc := exec.CommandContext(ctx, playbookBin, pbArgs...)
	pc.Env = env
	pc.Dir = r.dir
	out, err := pc.CombinedOutput()
	if err != nil {
		// ignore_errors: the play itself must succeed.
		t.Fatalf("ansible-playbook %v: %v\n%s", pbArgs, err, out)
	}
	failed := outcomes(t, string(out))

	compared := 0
	for _, fm := range r.forms {
		h := hostOf(fm)
		nFail := 0
		for _, v := range vars {
			got, ok := failed[v][h]
			if !ok {
				t.Fatalf("ansible ran no task check %s on %s:\n%s", v, h, out)
			}
			if got != reported[v][h] {
				t.Errorf("%s written as %s: ansible-core %s failed=%v, lint reported=%v", v, fm.name, series, got, reported[v][h])
			}
			if got {
				nFail++
			}
			compared++
		}
		// The form decides: every catalogue boolean fails or none does;
		// the string-valued ones (`| bool`) never do.
		want := 0
		if fm.notBool {
			want = nBools
		}
		if nFail != want {
			t.Errorf("%s: %d of %d variables failed in ansible-core %s, want %d", fm.name, nFail, len(vars), series, want)
		}
	}
	return compared
}

// failingSeries are the ansible-core series that fail a condition on a str
// or int, with the venv the test setup builds for each: 2.19 (kubespray
// v2.32's, scripts/venv.sh) and 2.20 (scripts/venv-series.sh, on Python
// 3.12 or later).
var failingSeries = []struct{ series, venv string }{
	{"2.19", ".venv"},
	{"2.20", ".venv-core-2.20"},
}

// Under each series that fails a non-boolean condition, ansible-playbook
// fails `when: <var>` for exactly the (variable, host) pairs the lint
// reports, judged for that series (--ansible-core).
func TestStringAsBoolMatchesAnsible(t *testing.T) {
	work := t.TempDir()
	cli := testutil.BuildCLI(t, work)
	cat, err := kubespray.ForInventory([]string{work})
	if err != nil {
		t.Fatal(err)
	}
	bools, stringBools := sample(t, cat)
	vars := append(append([]string{}, bools...), stringBools...)
	t.Logf("catalogue %s: %d booleans, %d string-valued booleans, %d forms", cat.Name, len(bools), len(stringBools), len(forms))

	pb := filepath.Join(work, "check.yml")
	writeFiles(work, map[string]string{"check.yml": playbook(bools, stringBools)})

	runs := []run{{name: "inventory-forms", dir: filepath.Join(work, "inventory-forms")}}
	inventoryRun(runs[0].dir, vars)
	for _, f := range forms {
		if f.extra == nil {
			runs[0].forms = append(runs[0].forms, f)
			continue
		}
		dir := filepath.Join(work, f.name)
		extraRun(dir, f)
		runs = append(runs, run{name: f.name, dir: dir, extra: f.extra(dir, vars), forms: []form{f}})
	}
	total := 0
	for _, s := range failingSeries {
		bin := filepath.Join(testutil.RepoRoot(), s.venv, "bin")
		playbookBin := filepath.Join(bin, "ansible-playbook")
		if _, err := os.Stat(playbookBin); err != nil {
			t.Fatalf("%s missing: run `make venv` (or `make test`): %v", s.venv, err)
		}
		testutil.RequireAnsibleCoreSeries(t, filepath.Join(bin, "python"), s.series)
		env := testutil.AnsibleEnv("ANSIBLE_STDOUT_CALLBACK=default", "ANSIBLE_FORKS=10",
			"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		compared := 0
		for _, r := range runs {
			t.Run(s.series+"/"+r.name, func(t *testing.T) {
				compared += r.compare(t, cli, playbookBin, pb, env, vars, len(bools), s.series)
			})
		}
		t.Logf("ansible-core %s: %d variable/form pairs compared", s.series, compared)
		if compared < len(forms)*len(vars) {
			t.Errorf("ansible-core %s: compared %d pairs, want %d", s.series, compared, len(forms)*len(vars))
		}
		total += compared
	}
	t.Logf("%d (variable, form, series) pairs compared with ansible-core", total)
}

// names of the sample, for the record in -v output.
func TestSampleIsDeterministic(t *testing.T) {
	cat, err := kubespray.Bundled("")
	if err != nil {
		t.Fatal(err)
	}
	a, sa := sample(t, cat)
	b, sb := sample(t, cat)
	if strings.Join(a, ",") != strings.Join(b, ",") || strings.Join(sa, ",") != strings.Join(sb, ",") {
		t.Fatal("sample differs between calls")
	}
	if len(a) < 60 {
		t.Fatalf("sample has %d booleans, want >= 60", len(a))
	}
	seen := map[string]bool{}
	for _, v := range a {
		if seen[v] {
			t.Errorf("%s sampled twice", v)
		}
		seen[v] = true
	}
	for _, k := range []string{"download_run_once", "download_always_pull", "helm_enabled", "openstack_lbaas_enabled"} {
		if !seen[k] {
			t.Errorf("validate_inventory boolean %s not sampled", k)
		}
	}
	s := append([]string{}, a...)
	sort.Strings(s)
	t.Logf("sample: %s; string-valued: %s", strings.Join(s, " "), strings.Join(sa, " "))
}
