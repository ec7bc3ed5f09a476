package boollint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/test/testutil"
)

// olderSeries are the ansible-core series every released kubespray pins
// (v2.24-v2.28: 2.16, v2.29-v2.30: 2.17, v2.31: 2.18), with the venv the
// test setup builds for each (scripts/venv-series.sh, scripts/venv-pinned.sh).
var olderSeries = []struct{ series, venv string }{
	{"2.16", ".venv-core-2.16"},
	{"2.17", ".venv-core-2.17"},
	{"2.18", ".venv-ansible-11.13.0"},
}

// bareSample is the catalogue booleans kubespray itself tests bare
// (`when: x`, Release.Uses), sorted, at most sampleSize: for them the
// test's `when: <var>` is kubespray's own condition.
func bareSample(t *testing.T, cat *kubespray.Catalogue) []string {
	t.Helper()
	var out []string
	for name, uses := range cat.Release.Uses {
		if uses[kubespray.FormBare] != nil && cat.Lookup(name).IsBool() && !cat.Lookup(name).StringBool {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	if len(out) < 60 {
		t.Fatalf("catalogue %s: only %d booleans tested bare", cat.Name, len(out))
	}
	if len(out) > sampleSize {
		out = out[:sampleSize]
	}
	return out
}

// ran reads, per task and host, whether the task ran (ok) rather than
// being skipped; a failed task fails the test (below 2.19 nothing fails).
func ran(t *testing.T, out string) map[string]map[string]bool {
	t.Helper()
	res := map[string]map[string]bool{}
	for task, hosts := range statuses(out) {
		res[task] = map[string]bool{}
		for h, st := range hosts {
			if st == "fatal" {
				t.Errorf("task check %s failed on %s: nothing fails a condition below ansible-core 2.19", task, h)
			}
			res[task][h] = st == "ok"
		}
	}
	return res
}

// Under each ansible-core kubespray releases pin, a boolean written as a
// string or int does not fail `when:`; the task runs by the value's Python
// truth. For every (variable, form, series) the lint's verdict must say
// what really happened: "TRUE although you wrote" exactly where the task
// ran although false was meant, "works ... only because" where it did what
// was meant, and no string-as-bool finding for real booleans.
func TestVerdictsMatchOlderAnsible(t *testing.T) {
	work := t.TempDir()
	cli := testutil.BuildCLI(t, work)
	cat, err := kubespray.Bundled("")
	if err != nil {
		t.Fatal(err)
	}
	vars := bareSample(t, cat)
	pb := filepath.Join(work, "check.yml")
	writeFiles(work, map[string]string{"check.yml": playbook(vars, nil)})

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
	for _, s := range olderSeries {
		bin := filepath.Join(testutil.RepoRoot(), s.venv, "bin")
		if _, err := os.Stat(filepath.Join(bin, "ansible-playbook")); err != nil {
			t.Fatalf("%s missing: run `make venv` (or `make test`): %v", s.venv, err)
		}
		testutil.RequireAnsibleCoreSeries(t, filepath.Join(bin, "python"), s.series)
		env := testutil.AnsibleEnv("ANSIBLE_STDOUT_CALLBACK=default", "ANSIBLE_FORKS=10",
			"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		n := 0
		for _, r := range runs {
			t.Run(s.series+"/"+r.name, func(t *testing.T) {
				n += r.compareVerdicts(t, cli, filepath.Join(bin, "ansible-playbook"), pb, env, vars, s.series)
			})
		}
		t.Logf("ansible-core %s: %d variable/form pairs compared", s.series, n)
		if n < len(forms)*len(vars) {
			t.Errorf("ansible-core %s: compared %d pairs, want %d", s.series, n, len(forms)*len(vars))
		}
		total += n
	}
	t.Logf("%d (variable, form, series) verdicts compared with ansible-core", total)
}

func (r run) compareVerdicts(t *testing.T, cli, playbookBin, pb string, env, vars []string, series string) int {
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
	verdict := map[string]map[string]string{} // var -> host -> message
	for _, f := range rep.Findings {
		if f.Rule != "string-as-bool" && f.Rule != "not-a-bool" {
			continue
		}
		if verdict[f.Variable] == nil {
			verdict[f.Variable] = map[string]string{}
		}
		for _, h := range f.Hosts {
			verdict[f.Variable][h] = string(f.Severity) + ": " + f.Message
		}
	}
	pc := exec.CommandContext(ctx, playbookBin, pbArgs...)
	pc.Env, pc.Dir = env, r.dir
	out, err := pc.CombinedOutput()
	if err != nil {
		t.Fatalf("ansible-playbook %v: %v\n%s", pbArgs, err, out)
	}
	if !strings.Contains(string(out), "PLAY RECAP") {
		t.Fatalf("no play ran:\n%s", out)
	}
	did := ran(t, string(out))
	n := 0
	for _, fm := range r.forms {
		h := hostOf(fm)
		for i, v := range vars {
			got, ok := did[v][h]
			if !ok {
				t.Fatalf("ansible-core %s ran no task check %s on %s:\n%s", series, v, h, out)
			}
			meant := i%2 == 0
			msg := verdict[v][h]
			switch {
			case !fm.notBool:
				if msg != "" || got != meant {
					t.Errorf("%s as %s: ran=%v meant=%v, lint %q", v, fm.name, got, meant, msg)
				}
			case strings.Contains(msg, "TRUE although you wrote"):
				if !got || meant || !strings.HasPrefix(msg, "error: ") {
					t.Errorf("%s as %s: lint says TRUE against what was meant, but ansible-core %s ran=%v meant=%v (%q)", v, fm.name, series, got, meant, msg)
				}
			case strings.Contains(msg, "works under ansible-core "+series+" only because"):
				if got != meant {
					t.Errorf("%s as %s: lint says it works, but ansible-core %s ran=%v meant=%v", v, fm.name, series, got, meant)
				}
			default:
				t.Errorf("%s as %s under %s: no verdict (%q); ansible-core ran=%v meant=%v", v, fm.name, series, msg, got, meant)
			}
			n++
		}
	}
	return n
}
