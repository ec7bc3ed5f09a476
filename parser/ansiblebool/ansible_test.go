package ansiblebool

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/test/testutil"
)

// seriesVenvs are the venvs `make venv` builds, one per series:
// scripts/venv-series.sh (2.16, 2.17, 2.20), scripts/venv-pinned.sh
// (ansible 11.13.0: core 2.18) and scripts/venv.sh (2.19).
var seriesVenvs = map[string]string{
	"2.16": ".venv-core-2.16",
	"2.17": ".venv-core-2.17",
	"2.18": ".venv-ansible-11.13.0",
	"2.19": ".venv",
	"2.20": ".venv-core-2.20",
}

// table is the values run through ansible-core and through the package:
// the YAML as written in a vars file, and the Go value our parser gives
// it (YAML 1.1: unquoted yes/no/on/off are bools).
var table = []struct {
	yaml string
	v    any
}{
	{`"yes"`, "yes"}, {`"no"`, "no"}, {`"on"`, "on"}, {`"off"`, "off"},
	{`"1"`, "1"}, {`"0"`, "0"}, {`"1.0"`, "1.0"}, {`"0.0"`, "0.0"},
	{`"y"`, "y"}, {`"n"`, "n"}, {`"t"`, "t"}, {`"f"`, "f"},
	{`"true"`, "true"}, {`"false"`, "false"}, {`"True"`, "True"}, {`"FALSE"`, "FALSE"},
	{`"Yes"`, "Yes"}, {`"OFF"`, "OFF"},
	{`""`, ""}, {`" true"`, " true"}, {`"no "`, "no "}, {`"2"`, "2"}, {`"-1"`, "-1"},
	{`"none"`, "none"}, {`"null"`, "null"}, {`"None"`, "None"},
	{`0`, big.NewInt(0)}, {`1`, big.NewInt(1)}, {`2`, big.NewInt(2)}, {`-1`, big.NewInt(-1)},
	{`1.0`, 1.0}, {`0.0`, 0.0}, {`0.5`, 0.5},
	{`true`, true}, {`false`, false}, {`yes`, true}, {`no`, false}, {`On`, true}, {`OFF`, false}, {`True`, true},
	{`null`, nil},
	{`[a]`, []any{"a"}}, {`{a: 1}`, map[string]any{"a": 1}},
}

// The filter's value and deprecation, and boolean()'s verdict, for every
// value of the table, as each series of ansible-core computes them (one
// ansible-playbook and one python run per series) and as the package does.
func TestAgreesWithAnsibleCore(t *testing.T) {
	dir := t.TempDir()
	var vars strings.Builder
	vars.WriteString("cases:\n")
	for _, c := range table {
		fmt.Fprintf(&vars, "  - %s\n", c.yaml)
	}
	files := map[string]string{
		"vals.yml": vars.String(),
		// r: the filter's result; t: its Python type (None before 2.19);
		// vt: the value's own type, to check the table's Go value.
		"check.yml": `- hosts: localhost
  gather_facts: false
  connection: local
  vars: {ansible_python_interpreter: "{{ ansible_playbook_python }}"}
  vars_files: [vals.yml]
  tasks:
    - debug:
        msg: {r: "{{ item | bool }}", t: "{{ item | bool | type_debug }}", vt: "{{ item | type_debug }}"}
      loop: "{{ cases }}"
      loop_control: {index_var: i}
      register: out
    - copy:
        content: "{{ out.results | map(attribute='msg') | list | to_json }}"
        dest: "{{ playbook_dir }}/filter.json"
`,
		// boolean() as module_utils has it, on the same values loaded by
		// ansible-core's own YAML loader.
		"boolean.py": `import json, sys
from ansible.parsing.dataloader import DataLoader
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.module_utils.common.validation import check_type_bool
out = []
for v in DataLoader().load_from_file(sys.argv[1])["cases"]:
    r = {}
    try:
        r["boolean"] = boolean(v)
    except Exception as e:
        r["boolean_error"] = str(e)
    try:
        r["check_type_bool"] = check_type_bool(v)
    except Exception as e:
        r["check_type_bool_error"] = str(e)
    out.append(r)
json.dump(out, sys.stdout)
`,
	}
	testutil.WriteTree(t, dir, files)

	compared := 0
	for _, series := range Series {
		t.Run(series, func(t *testing.T) {
			bin := filepath.Join(testutil.RepoRoot(), seriesVenvs[series], "bin")
			if _, err := os.Stat(filepath.Join(bin, "ansible-playbook")); err != nil {
				t.Fatalf("%s missing: run `make venv` (or `make test`): %v", seriesVenvs[series], err)
			}
			testutil.RequireAnsibleCoreSeries(t, filepath.Join(bin, "python"), series)
			env := testutil.AnsibleEnv("PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
				"ANSIBLE_DEPRECATION_WARNINGS=1", "ANSIBLE_STDOUT_CALLBACK=default")
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()

			pb := exec.CommandContext(ctx, filepath.Join(bin, "ansible-playbook"), "-i", "localhost,", "check.yml")
			pb.Dir, pb.Env = dir, env
			out, err := pb.CombinedOutput()
			if err != nil {
				t.Fatalf("ansible-playbook: %v\n%s", err, out)
			}
			var got []struct {
				R  any    `json:"r"`
				T  string `json:"t"`
				VT string `json:"vt"`
			}
			readJSON(t, filepath.Join(dir, "filter.json"), &got)
			deprecated := deprecations(string(out))

			py := exec.CommandContext(ctx, filepath.Join(bin, "python"), "boolean.py", "vals.yml")
			py.Dir, py.Env = dir, env
			pout, err := py.Output()
			if err != nil {
				t.Fatalf("boolean.py: %v\n%s", err, pout)
			}
			var strict []map[string]any
			if err := json.Unmarshal(pout, &strict); err != nil {
				t.Fatalf("boolean.py output: %v\n%s", err, pout)
			}
			if len(got) != len(table) || len(strict) != len(table) {
				t.Fatalf("ansible-core gave %d filter and %d boolean() results for %d values", len(got), len(strict), len(table))
			}

			for i, c := range table {
				if want := pyType(c.v); got[i].VT != want {
					t.Errorf("%s: ansible-core loads a %s, the table's Go value is a %s", c.yaml, got[i].VT, want)
				}
				// the filter
				r := Filter(series, c.v)
				ansibleNone := got[i].T == "NoneType"
				ansibleVal := got[i].R == true
				if got[i].T != "bool" && !ansibleNone {
					t.Errorf("%s | bool: ansible-core %s gives a %s (%v)", c.yaml, series, got[i].T, got[i].R)
				}
				_, dep := deprecated[pyRepr(c.v)+" ("+got[i].VT+")"]
				if r.Value != ansibleVal || r.None != ansibleNone || r.Deprecated != dep {
					t.Errorf("%s | bool under ansible-core %s: ansible gives %v (None %v, deprecated %v), Filter %+v",
						c.yaml, series, ansibleVal, ansibleNone, dep, r)
				}
				// boolean(): check_type_bool refuses what boolean() does,
				// and lists and maps besides.
				b, berr := Boolean(c.v)
				want, ok := strict[i]["boolean"].(bool)
				if (berr == nil) != ok || b != want {
					t.Errorf("boolean(%s) under ansible-core %s: ansible %v, Boolean %v, %v", c.yaml, series, strict[i], b, berr)
				}
				if _, typed := strict[i]["check_type_bool"]; typed != (berr == nil) {
					t.Errorf("check_type_bool(%s) under ansible-core %s: ansible %v, Boolean %v", c.yaml, series, strict[i], berr)
				}
				compared++
			}
			// every deprecation ansible printed is one the table expects
			for d := range deprecated {
				found := false
				for _, c := range table {
					if strings.HasPrefix(d, pyRepr(c.v)+" (") && Filter(series, c.v).Deprecated {
						found = true
					}
				}
				if !found {
					t.Errorf("ansible-core %s deprecated %s, which Filter does not", series, d)
				}
			}
			if from219(series) && len(deprecated) == 0 {
				t.Errorf("ansible-core %s printed no deprecation of the filter:\n%s", series, out)
			}
		})
	}
	if compared != len(Series)*len(table) {
		t.Errorf("compared %d values, want %d", compared, len(Series)*len(table))
	}
}

var deprecationRe = regexp.MustCompile(`The ` + "`bool`" + ` filter coerced invalid value (.*) to (?:True|False)\.`)

// deprecations reads the filter's deprecation warnings: "repr (type)" each.
func deprecations(out string) map[string]bool {
	res := map[string]bool{}
	for _, m := range deprecationRe.FindAllStringSubmatch(out, -1) {
		res[m[1]] = true
	}
	return res
}

func readJSON(t *testing.T, p string, v any) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v\n%s", p, err, b)
	}
}

// pyRepr is Python's repr() of the table's values.
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return "'" + x + "'"
	case *big.Int:
		return x.String()
	case float64:
		s := strconv.FormatFloat(x, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	case []any:
		var items []string
		for _, it := range x {
			items = append(items, pyRepr(it))
		}
		return "[" + strings.Join(items, ", ") + "]"
	case map[string]any:
		var items []string
		for k, it := range x {
			items = append(items, pyRepr(k)+": "+pyRepr(it))
		}
		return "{" + strings.Join(items, ", ") + "}"
	case int:
		return strconv.Itoa(x)
	}
	return fmt.Sprint(v)
}

// pyType is the Python type name of the table's values, as type_debug says.
func pyType(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case *big.Int:
		return "int"
	case float64:
		return "float"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}
