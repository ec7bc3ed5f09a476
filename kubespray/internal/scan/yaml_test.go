package scan

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
)

// edgeYAML exercises YAML 1.1 resolution as PyYAML (ansible-core's loader) does it.
const edgeYAML = `---
b_yes: yes
b_No: No
b_ON: ON
b_off: off
b_true: true
b_False: False
s_y: y
s_n: n
s_quoted_true: "true"
s_quoted_yes: 'yes'
s_tagged: !!str true
i_dec: 42
i_neg: -7
i_oct: 0755
i_hex: 0x1F
i_bin: 0b101
i_under: 1_000
i_sexa: 1:30
i_big: 123456789012345678901234567890
f_dot: 1.5
f_exp: 1.0e+3
s_exp_nosign: 1e3
s_exp_nodot: 1.0e3x
f_lead: .5
f_inf: .inf
f_nan: .NaN
s_version: 1.28.3
f_version: "1.28"
f_short: 1.28
n_tilde: ~
n_null: null
n_empty:
d_date: 2001-12-14
s_0o: 0o17
s_unsafe: !unsafe "{{ not_templated }}"
u_int: !unsafe 5
v_vault: !vault |
  $ANSIBLE_VAULT;1.1;AES256
  6162
t_jinja: "{{ foo | bool }}"
l_list: [1, "a", yes]
m_dict: {a: 1, 1.5: x, true: y, null: z}
anchor: &a {k: v}
alias: *a
merged:
  <<: *a
  own: 1
dup: first
dup: second
literal: |
  yes
`

func TestLoadVarsYAMLTypes(t *testing.T) {
	entries, err := LoadVarsYAML("edge.yml", []byte(edgeYAML))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Value{}
	var order []string
	for _, e := range entries {
		got[e.Name] = e.Value
		order = append(order, e.Name)
	}
	want := map[string]string{
		"b_yes": "bool", "b_No": "bool", "b_ON": "bool", "b_off": "bool", "b_true": "bool", "b_False": "bool",
		"s_y": "str", "s_n": "str", "s_quoted_true": "str", "s_quoted_yes": "str", "s_tagged": "str",
		"i_dec": "int", "i_neg": "int", "i_oct": "int", "i_hex": "int", "i_bin": "int", "i_under": "int", "i_sexa": "int", "i_big": "int",
		"f_dot": "float", "f_exp": "float", "s_exp_nosign": "str", "s_exp_nodot": "str", "f_lead": "float", "f_inf": "float", "f_nan": "float",
		"s_version": "str", "f_version": "str", "f_short": "float",
		"n_tilde": "NoneType", "n_null": "NoneType", "n_empty": "NoneType", "d_date": "date", "s_0o": "str",
		"s_unsafe": "str", "u_int": "int", "v_vault": "vault", "t_jinja": "str", "l_list": "list", "m_dict": "dict",
		"anchor": "dict", "alias": "dict", "merged": "dict", "dup": "str", "literal": "str",
	}
	for k, typ := range want {
		v, ok := got[k]
		if !ok {
			t.Errorf("%s: missing", k)
			continue
		}
		if v.Type != typ {
			t.Errorf("%s: type %s, want %s", k, v.Type, typ)
		}
	}
	checks := map[string]any{
		"b_yes": true, "b_No": false, "i_oct": int64(493), "i_hex": int64(31), "i_bin": int64(5), "i_under": int64(1000),
		"i_sexa": int64(90), "i_big": "123456789012345678901234567890", "f_exp": 1000.0, "f_lead": 0.5, "f_inf": ".inf",
		"dup": "second", "literal": "yes\n", "v_vault": "<vault>",
	}
	for k, w := range checks {
		if got[k].Data != w {
			t.Errorf("%s = %#v, want %#v", k, got[k].Data, w)
		}
	}
	m := got["m_dict"].Data.(map[string]any)
	for _, k := range []string{"a", "1.5", "true", "null"} { // as json.dumps writes them
		if _, ok := m[k]; !ok {
			t.Errorf("m_dict key %q missing: %v", k, m)
		}
	}
	mg := got["merged"].Data.(map[string]any)
	if mg["k"] != "v" || mg["own"] != int64(1) {
		t.Errorf("merge key not applied: %v", mg)
	}
	// A repeated key keeps its first place, as a Python dict does.
	if i := indexOf(order, "dup"); i < 0 || order[i+1] != "literal" {
		t.Errorf("order %v", order)
	}
	if l := got["dup"]; l.Line == 0 {
		t.Errorf("dup line not recorded")
	}
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

func TestLoadVarsYAMLErrors(t *testing.T) {
	cases := map[string]string{
		"list.yml":   "- a\n- b\n",
		"broken.yml": "a: [1, 2\nb: 3\n",
		"tag.yml":    "a: !custom x\n",
		"two.yml":    "a: 1\n---\nb: 2\n",
	}
	for name, src := range cases {
		_, err := LoadVarsYAML(name, []byte(src))
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !strings.HasPrefix(err.Error(), name+":") {
			t.Errorf("%s: error does not name the file: %v", name, err)
		}
	}
	for _, src := range []string{"", "# only a comment\n", "---\n", "~\n"} {
		e, err := LoadVarsYAML("empty.yml", []byte(src))
		if err != nil || len(e) != 0 {
			t.Errorf("%q: %v %v, want no entries", src, e, err)
		}
	}
}

// TestLoadVarsYAMLAgreesWithAnsible loads the edge cases with ansible-core's
// own loader and compares every top-level type.
func TestLoadVarsYAMLAgreesWithAnsible(t *testing.T) {
	py := testutil.Ansible(t, "python")
	dir := t.TempDir()
	f := filepath.Join(dir, "edge.yml")
	if err := os.WriteFile(f, []byte(edgeYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	oracle := ansibleTypes(t, py, dir, []string{"edge.yml"})
	entries, err := LoadVarsYAML("edge.yml", []byte(edgeYAML))
	if err != nil {
		t.Fatal(err)
	}
	mine := map[string]string{}
	for _, e := range entries {
		mine[e.Name] = e.Value.Type
	}
	want := oracle["edge.yml"]
	if len(want) != len(mine) {
		t.Errorf("ansible-core loads %d keys, we load %d", len(want), len(mine))
	}
	for k, typ := range want {
		if mine[k] != typ {
			t.Errorf("%s: ansible-core says %s, we say %s", k, typ, mine[k])
		}
	}
}

// oracleScript prints, per file, each top-level key's Python type as
// ansible-core's DataLoader loads it (vault values as "vault").
const oracleScript = `
import sys, json, os, datetime
from ansible.parsing.dataloader import DataLoader
from ansible.parsing.vault import EncryptedString
dl = DataLoader()
root = sys.argv[1]
out = {}
for f in sys.argv[2:]:
    d = dl.load_from_file(os.path.join(root, f))
    r = {}
    if isinstance(d, dict):
        for k, v in d.items():
            name = type(v).__name__
            if isinstance(v, EncryptedString):
                name = "vault"
            else:
                for t in (bool, int, float, str, list, dict, datetime.datetime, datetime.date):
                    if isinstance(v, t):
                        name = t.__name__
                        break
            r[str(k)] = name
    out[f] = r
json.dump(out, sys.stdout)
`

func ansibleTypes(t *testing.T, py, root string, files []string) map[string]map[string]string {
	t.Helper()
	cmd := exec.Command(py, append([]string{"-c", oracleScript, root}, files...)...)
	cmd.Env = testutil.AnsibleEnv()
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("ansible-core loader: %v\n%s", err, stderr)
	}
	var res map[string]map[string]string
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestLoadVarsYAMLAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 12; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	_, err := LoadVarsYAML("bomb.yml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "bomb.yml:") {
		t.Fatalf("alias bomb: %v", err)
	}
}

func TestLoadVarsYAMLMergeBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("m0: &m0 {a: 1, b: 2}\n")
	for i := 1; i < 40; i++ {
		fmt.Fprintf(&b, "m%d: &m%d {<<: [*m%d, *m%d, *m%d], k%d: 1}\n", i, i, i-1, i-1, i-1, i)
	}
	_, err := LoadVarsYAML("merge.yml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "merge.yml:") {
		t.Fatalf("merge bomb: %v", err)
	}
}
