// Package boollint compares `layercheck lint` with ansible-core itself:
// for a deterministic sample of kubespray's booleans, each written in the
// ways operators write them, ansible-playbook must fail `when: <var>`
// exactly where the lint reports string-as-bool, and pass everywhere else.
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

	"github.com/layercheck/layercheck/internal/testutil"
	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/lint"
)

// sampleSize is how many catalogue booleans the test writes in every form.
const sampleSize = 64

// form is one way of writing a boolean.
type form struct {
	name string
	// write returns the inventory files and extra-vars arguments setting
	// each variable to the spelling of its bool (alternating true/false).
	write func(vars []string) (files map[string]string, extra []string)
	// strBool: the form makes a str (or int) where a bool is expected.
	notBool bool
}

// spell alternates true and false over the sample, so both are covered.
func spell(i int, t, f string) string {
	if i%2 == 0 {
		return t
	}
	return f
}

const host = "localhost ansible_connection=local"

func ini(allVars, hostVars string) string {
	return "[kube_control_plane]\n" + host + hostVars + "\n[etcd:children]\nkube_control_plane\n[kube_node:children]\nkube_control_plane\n[all:vars]\n" + allVars
}

func yamlForm(name, t, f string, notBool bool) form {
	return form{name: name, notBool: notBool, write: func(vars []string) (map[string]string, []string) {
		var b strings.Builder
		for i, v := range vars {
			fmt.Fprintf(&b, "%s: %s\n", v, spell(i, t, f))
		}
		return map[string]string{"hosts.ini": ini("", ""), "group_vars/all/bools.yml": b.String()}, nil
	}}
}

func iniGroupForm(name, t, f string, notBool bool) form {
	return form{name: name, notBool: notBool, write: func(vars []string) (map[string]string, []string) {
		var b strings.Builder
		for i, v := range vars {
			fmt.Fprintf(&b, "%s=%s\n", v, spell(i, t, f))
		}
		return map[string]string{"hosts.ini": ini(b.String(), "")}, nil
	}}
}

var forms = []form{
	yamlForm("yaml-quoted", `"true"`, `"false"`, true),
	yamlForm("yaml-quoted-yes-no", `"yes"`, `"no"`, true),
	yamlForm("yaml-unquoted-yes-no", "yes", "no", false),
	yamlForm("yaml-unquoted-on-off", "On", "OFF", false),
	yamlForm("yaml-int", "1", "0", true),
	yamlForm("yaml-bool", "true", "false", false),
	iniGroupForm("ini-all-vars", "true", "false", true),
	iniGroupForm("ini-all-vars-True", "True", "False", false),
	iniGroupForm("ini-all-vars-yes", "yes", "no", true),
	iniGroupForm("ini-all-vars-int", "1", "0", true),
	{name: "ini-host-line", notBool: true, write: func(vars []string) (map[string]string, []string) {
		var b strings.Builder
		for i, v := range vars {
			fmt.Fprintf(&b, " %s=%s", v, spell(i, "true", "false"))
		}
		return map[string]string{"hosts.ini": ini("", b.String())}, nil
	}},
	{name: "ini-host-line-True", write: func(vars []string) (map[string]string, []string) {
		var b strings.Builder
		for i, v := range vars {
			fmt.Fprintf(&b, " %s=%s", v, spell(i, "True", "False"))
		}
		return map[string]string{"hosts.ini": ini("", b.String())}, nil
	}},
	{name: "extra-vars-kv", notBool: true, write: func(vars []string) (map[string]string, []string) {
		var kv []string
		for i, v := range vars {
			kv = append(kv, v+"="+spell(i, "true", "false"))
		}
		return map[string]string{"hosts.ini": ini("", "")}, []string{strings.Join(kv, " ")}
	}},
	{name: "extra-vars-json", write: func(vars []string) (map[string]string, []string) {
		m := map[string]bool{}
		for i, v := range vars {
			m[v] = i%2 == 0
		}
		b, _ := json.Marshal(m)
		return map[string]string{"hosts.ini": ini("", "")}, []string{string(b)}
	}},
	{name: "extra-vars-json-string", notBool: true, write: func(vars []string) (map[string]string, []string) {
		m := map[string]string{}
		for i, v := range vars {
			m[v] = spell(i, "true", "false")
		}
		b, _ := json.Marshal(m)
		return map[string]string{"hosts.ini": ini("", "")}, []string{string(b)}
	}},
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
var statusRe = regexp.MustCompile(`(?m)^(fatal|ok|skipping|changed): \[localhost\]`)

// outcomes reads ansible-playbook's default output: per task, whether it
// failed.
func outcomes(t *testing.T, out string) map[string]bool {
	t.Helper()
	failed := map[string]bool{}
	idx := taskRe.FindAllStringSubmatchIndex(out, -1)
	for i, m := range idx {
		end := len(out)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		name := out[m[2]:m[3]]
		st := statusRe.FindStringSubmatch(out[m[1]:end])
		if st == nil {
			t.Fatalf("no result for task check %s in ansible output:\n%s", name, out[m[0]:end])
		}
		failed[name] = st[1] == "fatal"
	}
	return failed
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStringAsBoolMatchesAnsible(t *testing.T) {
	playbookBin := testutil.Ansible(t, "ansible-playbook")
	work := t.TempDir()
	cli := testutil.BuildCLI(t, work)
	cat, err := kubespray.ForInventory([]string{work})
	if err != nil {
		t.Fatal(err)
	}
	bools, stringBools := sample(t, cat)
	vars := append(append([]string{}, bools...), stringBools...)
	t.Logf("catalogue %s: %d booleans, %d string-valued booleans, %d forms", cat.Name, len(bools), len(stringBools), len(forms))

	cfg := filepath.Join(work, "ansible.cfg")
	write(t, work, map[string]string{"ansible.cfg": "[defaults]\n", "check.yml": playbook(bools, stringBools)})
	env := testutil.AnsibleEnv("ANSIBLE_CONFIG="+cfg, "ANSIBLE_STDOUT_CALLBACK=default")

	compared := 0
	for _, fm := range forms {
		t.Run(fm.name, func(t *testing.T) {
			dir := filepath.Join(work, fm.name)
			files, extra := fm.write(vars)
			write(t, dir, files)

			args := []string{"lint", "-i", dir, "--format", "json"}
			pbArgs := []string{"-i", filepath.Join(dir, "hosts.ini"), filepath.Join(work, "check.yml")}
			for _, e := range extra {
				args = append(args, "-e", e)
				pbArgs = append(pbArgs, "-e", e)
			}
			args[2] = filepath.Join(dir, "hosts.ini")
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()

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
			reported := map[string]bool{}
			for _, f := range rep.Findings {
				if f.Rule == "string-as-bool" || f.Rule == "not-a-bool" {
					if f.Severity != lint.SeverityError {
						t.Errorf("%s: %s is %s, want error", f.Rule, f.Variable, f.Severity)
					}
					reported[f.Variable] = true
				}
			}

			pc := exec.CommandContext(ctx, playbookBin, pbArgs...)
			pc.Env = env
			pc.Dir = work
			out, err := pc.CombinedOutput()
			if err != nil && pc.ProcessState.ExitCode() != 0 {
				// ignore_errors: the play itself must still succeed.
				t.Fatalf("ansible-playbook: %v\n%s", err, out)
			}
			failed := outcomes(t, string(out))

			nFail := 0
			for _, v := range vars {
				got, ok := failed[v]
				if !ok {
					t.Fatalf("ansible ran no task for %s:\n%s", v, out)
				}
				if got != reported[v] {
					t.Errorf("%s written as %s: ansible-core failed=%v, lint reported=%v", v, fm.name, got, reported[v])
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
				want = len(bools)
			}
			if nFail != want {
				t.Errorf("%s: %d of %d booleans failed in ansible-core, want %d", fm.name, nFail, len(vars), want)
			}
		})
	}
	t.Logf("%d variable/form pairs compared with ansible-core", compared)
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
