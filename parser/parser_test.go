package parser

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/test/testutil"
)

// The INI outcomes below are the ones ansible-inventory 2.19 prints (the
// differential tests in test/inventorydiff prove them against it).
func TestINIValueKinds(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteTree(t, dir, map[string]string{"hosts.ini": `[g]
h1 a=true b=yes c=True d="True" e='"True"' f=1 g=0x1F h=1e3 i="[1,'a']" j=None k=07 l=1j m=-True n={{x}} o=b'xy' p="b'xy'"
[g:vars]
v1=true
v2=True
v3="True"
v4 = 'x y'
v5=a # not a comment
`})
	inv, err := Load(filepath.Join(dir, "hosts.ini"))
	if err != nil {
		t.Fatal(err)
	}
	h := inv.Host("h1")
	if h == nil {
		t.Fatal("h1 missing")
	}
	hv := inv.HostVars(h, nil)
	for _, c := range []struct {
		key     string
		kind    Kind
		display string
		origin  Origin
	}{
		{"a", KindString, `"true"`, OriginINIHost},
		{"b", KindString, `"yes"`, OriginINIHost},
		{"c", KindBool, "true", OriginINIHost},
		{"d", KindBool, "true", OriginINIHost}, // shlex removes the quotes first
		{"e", KindString, `"True"`, OriginINIHost},
		{"f", KindInt, "1", OriginINIHost},
		{"g", KindInt, "31", OriginINIHost},
		{"h", KindFloat, "1000", OriginINIHost},
		{"i", KindList, "[list of 2]", OriginINIHost},
		{"j", KindNull, "null", OriginINIHost},
		{"k", KindString, `"07"`, OriginINIHost},
		{"l", KindString, `"1j"`, OriginINIHost},
		{"m", KindString, `"-True"`, OriginINIHost},
		{"n", KindString, `"{{x}}"`, OriginINIHost},
		{"o", KindString, `"bxy"`, OriginINIHost},
		{"p", KindString, `"xy"`, OriginINIHost},
		{"v1", KindString, `"true"`, OriginINIGroup},
		{"v2", KindBool, "true", OriginINIGroup},
		{"v3", KindString, `"True"`, OriginINIGroup}, // literal_eval of the quoted text
		{"v4", KindString, `"x y"`, OriginINIGroup},
		{"v5", KindString, `"a # not a comment"`, OriginINIGroup},
	} {
		v := hv.Get(c.key)
		if v == nil {
			t.Errorf("%s missing", c.key)
			continue
		}
		if v.Kind != c.kind || v.Display() != c.display || v.Origin != c.origin {
			t.Errorf("%s = %s %s (%s), want %s %s (%s)", c.key, v.Kind, v.Display(), v.Origin, c.kind, c.display, c.origin)
		}
	}
	if got := hv.Get("n").Templated(); !got {
		t.Error("n={{x}} is not Templated()")
	}
	if p := hv.Get("c").Pos; p.File != filepath.Join(dir, "hosts.ini") || p.Line != 2 || p.Col != 19 {
		t.Errorf("c Pos = %s, want hosts.ini:2:19", p)
	}
	if p := hv.Get("v3").Pos; p.Line != 6 || p.Col != 4 {
		t.Errorf("v3 Pos = %s, want line 6 col 4", p)
	}
	if !hv.Get("p").Unsafe {
		t.Error("a bytes literal becomes an untrusted (unsafe) str in ansible-core")
	}
}

func TestYAMLScalarKinds(t *testing.T) {
	src := `a: yes
b: "yes"
c: y
d: tRUE
e: 0o17
f: 017
g: 1:30
h: 1e3
i: 1.0e+3
j: .inf
k: ~
l:
m: 2001-12-14
n: !unsafe '{{ x }}'
o: !vault |
  $ANSIBLE_VAULT;1.1;AES256
  6162
p: 0x1F
q: 2001-12-14t21:59:43.10-05:00
r: [1, off]
s: {t: On}
u: &x {v: 1}
w:
  <<: *x
  z: 2
`
	v, err := LoadYAML("f.yml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := v.Map
	for _, c := range []struct {
		key     string
		kind    Kind
		display string
	}{
		{"a", KindBool, "true"}, {"b", KindString, `"yes"`}, {"c", KindString, `"y"`}, {"d", KindString, `"tRUE"`},
		{"e", KindString, `"0o17"`}, {"f", KindInt, "15"}, {"g", KindInt, "90"}, {"h", KindString, `"1e3"`},
		{"i", KindFloat, "1000"}, {"j", KindFloat, "+Inf"}, {"k", KindNull, "null"}, {"l", KindNull, "null"},
		{"m", KindString, `"2001-12-14"`}, {"n", KindString, `"{{ x }}"`}, {"o", KindVault, "<vault>"},
		{"p", KindInt, "31"}, {"q", KindString, `"2001-12-14T21:59:43.100000-05:00"`},
		{"r", KindList, "[list of 2]"}, {"s", KindMap, "{map of 1}"}, {"w", KindMap, "{map of 2}"},
	} {
		got := m.Get(c.key)
		if got == nil {
			t.Errorf("%s missing", c.key)
			continue
		}
		if got.Kind != c.kind || got.Display() != c.display {
			t.Errorf("%s = %s %s, want %s %s", c.key, got.Kind, got.Display(), c.kind, c.display)
		}
	}
	if !m.Get("n").Unsafe || m.Get("b").Quoted != true || m.Get("a").Quoted {
		t.Error("Unsafe/Quoted flags wrong")
	}
	if p := m.Get("c").Pos; p.String() != "f.yml:3:4" {
		t.Errorf("c at %s, want f.yml:3:4", p)
	}
	if p := m.KeyPos("c"); p.String() != "f.yml:3:1" {
		t.Errorf("key c at %s, want f.yml:3:1", p)
	}
	if got := m.Get("o").Str; got != "$ANSIBLE_VAULT;1.1;AES256\n6162\n" {
		t.Errorf("vault ciphertext %q", got)
	}
	if r := m.Get("r").List[1]; r.Kind != KindBool || r.Bool {
		t.Errorf("r[1] = %s", r.Display())
	}
	if w := m.Get("w").Map; w.Keys[0] != "v" || w.Get("z").Display() != "2" {
		t.Errorf("merge key: %v", w.Keys)
	}
	if !math.IsInf(m.Get("j").Float, 1) {
		t.Error(".inf is not +Inf")
	}
}

func TestYAMLErrors(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for i := 0; i < 9; i++ {
		n := string(rune('b' + i))
		bomb += n + ": &" + n + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+", ", 10), ", ") + "]\n"
		prev = n
	}
	for _, c := range []struct{ name, src, want string }{
		{"syntax", "a: [1, 2\n", "bad.yml:"},
		{"bomb", bomb, "bad.yml:1:1: YAML aliases expand to more than"},
		{"two docs", "a: 1\n---\nb: 2\n", "expected a single document"},
		{"unknown tag", "a: !foo 1\n", `bad.yml:1:4: could not determine a constructor for the tag "!foo"`},
		{"vault not str", "a: !vault 1\n", "requires a string value"},
		{"unhashable key", "? [1]\n: 2\n", "found unhashable key"},
		{"bad merge", "a:\n  <<: 1\n", "expected a mapping or list of mappings for merging"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := LoadYAML("bad.yml", []byte(c.src), nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %s", d)
			}
		})
	}
}

func TestHostVarsPrecedence(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteTree(t, dir, map[string]string{
		"inventory.ini": `[all:vars]
p=all_inv
[parent:children]
child
[child]
h1 p=host_inv
[child:vars]
q=child_inv
[parent:vars]
q=parent_inv
r=parent_inv
[prio]
h1
[prio:vars]
ansible_group_priority=5
r=prio_inv
`,
		"group_vars/all.yml":   "p: gv_all\ns: gv_all\n",
		"group_vars/child.yml": "s: gv_child\nt: gv_child\n",
		"host_vars/h1.yml":     "t: host_vars\n",
	})
	inv, err := Load(filepath.Join(dir, "inventory.ini"))
	if err != nil {
		t.Fatal(err)
	}
	h := inv.Host("h1")
	extra, err := ParseExtraVars([]string{"t=extra"})
	if err != nil {
		t.Fatal(err)
	}
	hv := inv.HostVars(h, nil)
	for k, want := range map[string]string{
		"p": `"host_inv"`,  // host inventory vars beat every group var
		"q": `"child_inv"`, // deeper group wins
		"r": `"prio_inv"`,  // same depth: higher ansible_group_priority wins
		"s": `"gv_child"`,  // group_vars/<group> beats group_vars/all
		"t": `"host_vars"`, // host_vars beats group_vars
	} {
		if got := hv.Get(k).Display(); got != want {
			t.Errorf("%s = %s, want %s (from %s)", k, got, want, hv.Get(k).Pos)
		}
	}
	if hv.Get("ansible_group_priority") != nil {
		t.Error("ansible_group_priority from an inventory source is a priority, not a variable")
	}
	if g := inv.Group("prio"); g.Priority != 5 || g.Depth != 1 || inv.Group("child").Depth != 2 {
		t.Errorf("prio priority %d depth %d, child depth %d", g.Priority, g.Depth, inv.Group("child").Depth)
	}
	if p := hv.Get("t").Pos; !strings.HasSuffix(p.File, filepath.Join("host_vars", "h1.yml")) || p.Line != 1 {
		t.Errorf("t Pos %s", p)
	}
	hv = inv.HostVars(h, extra)
	if v := hv.Get("t"); v.Display() != `"extra"` || v.Pos.String() != "-e" || v.Origin != OriginExtraKV {
		t.Errorf("extra t = %s at %s (%s)", v.Display(), v.Pos, v.Origin)
	}
}

func TestParseExtraVars(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteTree(t, dir, map[string]string{"x.yml": "f: yes\nn: 1\n"})
	m, err := ParseExtraVars([]string{
		`a=1 b="x y" c={{ d }} e='q'`,
		`{"j": true, "k": [1]}`,
		"@" + filepath.Join(dir, "x.yml"),
		"n=2",
		"free words",
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"a": `"1"`, "b": `"x y"`, "c": `"{{ d }}"`, "e": `"q"`,
		"j": "true", "k": "[list of 1]", "f": "true", "n": `"2"`, "_raw_params": `"free words"`} {
		if v := m.Get(k); v == nil || v.Display() != want {
			t.Errorf("%s = %v, want %s", k, v.Display(), want)
		}
	}
	if p := m.Get("f").Pos; p.Line != 1 || p.Col != 4 || !strings.HasSuffix(p.File, "x.yml") {
		t.Errorf("f at %s", p)
	}
	if m.Get("j").Pos.String() != "-e" || m.Get("a").Origin != OriginExtraKV || m.Get("j").Origin != OriginJSON {
		t.Errorf("inline positions/origins wrong: %s %s %s", m.Get("j").Pos, m.Get("a").Origin, m.Get("j").Origin)
	}
	for _, bad := range []string{"/abs/path.yml", "@" + filepath.Join(dir, "missing.yml"), "[1, 2]", `a="unbalanced`} {
		if _, err := ParseExtraVars([]string{bad}); err == nil {
			t.Errorf("ParseExtraVars(%q) accepted", bad)
		}
	}
}

func TestWholeFileVault(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteTree(t, dir, map[string]string{
		"hosts.ini":              "[g]\nh1\n",
		"group_vars/g/vault.yml": "$ANSIBLE_VAULT;1.1;AES256\n616263\n",
		"group_vars/g/plain.yml": "x: 1\n",
		"group_vars/g/sops.yml":  "pw: ENC[AES256_GCM,data:abc,iv:x,tag:y,type:str]\nsops:\n  mac: ENC[x]\n  version: 3.8.1\n",
	})
	inv, err := Load(filepath.Join(dir, "hosts.ini"))
	if err != nil {
		t.Fatal(err)
	}
	files := inv.GroupVarsFiles["g"]
	if len(files) != 3 || !files[2].Vault || files[2].Vars.Len() != 0 || files[0].Vault || files[1].Vault {
		t.Fatalf("group_vars files: %+v", files)
	}
	if len(inv.Warnings) != 2 || !strings.Contains(inv.Warnings[0], "sops.yml: SOPS-encrypted") ||
		!strings.Contains(inv.Warnings[1], "vault.yml: whole-file ansible-vault") {
		t.Errorf("warnings: %q", inv.Warnings)
	}
	if v := inv.HostVars(inv.Host("h1"), nil).Get("pw"); v == nil || !strings.HasPrefix(v.Str, "ENC[") {
		t.Error("a SOPS file is read as YAML")
	}
	if strings.Contains(strings.Join(inv.Warnings, "\n"), "616263") {
		t.Error("a warning shows vault text")
	}
	if inv.HostVars(inv.Host("h1"), nil).Get("x") == nil {
		t.Error("the plain file beside the vault is not read")
	}
}

func TestAddGroupAndHost(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteTree(t, dir, map[string]string{"hosts.ini": "h0\n[g]\nh1\n", "group_vars/dyn.yml": "dyn_var: 1\n"})
	inv, err := Load(filepath.Join(dir, "hosts.ini"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.GroupVarsFiles["dyn"]) != 1 {
		t.Fatal("group_vars of a group that does not exist yet are not kept")
	}
	g := inv.AddGroup("dyn")
	if g == nil || g.Parents[0].Name != "all" || g.Depth != 1 || inv.AddGroup("dyn") != g {
		t.Fatalf("AddGroup: %+v", g)
	}
	h0 := inv.Host("h0")
	if h0.Groups[0].Name != "ungrouped" {
		t.Fatalf("h0 groups: %v", h0.Groups)
	}
	inv.AddHostToGroup(g, h0)
	inv.AddHostToGroup(g, h0)
	if len(g.Hosts) != 1 || inv.Group("ungrouped").Hosts != nil && len(inv.Group("ungrouped").Hosts) != 0 {
		t.Errorf("AddHostToGroup: dyn hosts %d, ungrouped %d", len(g.Hosts), len(inv.Group("ungrouped").Hosts))
	}
	if v := inv.HostVars(h0, nil).Get("dyn_var"); v == nil || v.Display() != "1" {
		t.Error("group_vars of a group added at run time do not apply")
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteTree(t, dir, map[string]string{
		"bad.ini":           "[g]\nh1\n[g:nope]\n",
		"dir/ok.ini":        "[g]\nh1\n",
		"dir/bad.ini":       "[g:nope]\n",
		"vars/hosts.ini":    "[g]\nh1\n",
		"vars/group_vars/g": "- a list\n",
		"range.ini":         "[g]\nh[0:99999999]\n",
	})
	for _, c := range []struct{ src, want string }{
		{"bad.ini", "bad.ini:3: Section [g:nope] has unknown type: nope"},
		{"missing", "missing: inventory source not found"},
		{"vars/hosts.ini", "group_vars/g: failed to combine variables, expected dicts but got a 'list'"},
		{"range.ini", "expands to more than"},
	} {
		_, err := Load(filepath.Join(dir, c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%s) = %v, want %q", c.src, err, c.want)
		}
	}
	// inside a directory source a bad file is skipped with a warning, as Ansible does
	inv, err := Load(filepath.Join(dir, "dir"))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Host("h1") == nil || len(inv.Warnings) == 0 || !strings.Contains(inv.Warnings[0], "bad.ini") {
		t.Errorf("directory source: host %v, warnings %q", inv.Host("h1"), inv.Warnings)
	}
}

func TestListJSONShape(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteTree(t, dir, map[string]string{"hosts.yml": "all:\n  hosts:\n    a: {f: 1.0, v: !vault '$ANSIBLE_VAULT;x', u: !unsafe 'x'}\n  children:\n    empty:\n"})
	inv, err := Load(filepath.Join(dir, "hosts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := inv.ListJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{
    "_meta": {
        "hostvars": {
            "a": {
                "f": 1.0,
                "u": {
                    "__ansible_unsafe": "x"
                },
                "v": {
                    "__ansible_vault": "$ANSIBLE_VAULT;x"
                }
            }
        },
        "profile": "inventory_legacy"
    },
    "all": {
        "children": [
            "ungrouped",
            "empty"
        ]
    },
    "ungrouped": {
        "hosts": [
            "a"
        ]
    }
}`
	if string(b) != want {
		t.Errorf("ListJSON:\n%s\nwant:\n%s", b, want)
	}
}

func TestPyFloatRepr(t *testing.T) {
	for f, want := range map[float64]string{1: "1.0", 1e16: "1e+16", 1e15: "1000000000000000.0", 0.0001: "0.0001",
		0.00001: "1e-05", 1.5e-7: "1.5e-07", 685230.15: "685230.15", -0.5: "-0.5", 0.1: "0.1", 1e22: "1e+22"} {
		if got := pyFloatRepr(f); got != want {
			t.Errorf("repr(%v) = %s, want %s", f, got, want)
		}
	}
}

// TestResolvePlain pins PyYAML's implicit resolution of plain scalars.
func TestResolvePlain(t *testing.T) {
	for v, want := range map[string]string{
		"yes": tagBool, "Yes": tagBool, "YES": tagBool, "yEs": tagStr, "y": tagStr, "n": tagStr, "on": tagBool,
		"OFF": tagBool, "True": tagBool, "tRUE": tagStr, "": tagNull, "~": tagNull, "null": tagNull,
		"Null": tagNull, "nULL": tagStr, "none": tagStr, "1": tagInt, "-1": tagInt, "+0x1F": tagInt,
		"0o17": tagStr, "017": tagInt, "08": tagStr, "1_000": tagInt, "1:30": tagInt, "1.5": tagFloat,
		"1e3": tagStr, "1.0e3": tagStr, "1.0e+3": tagFloat, ".5": tagFloat, ".inf": tagFloat, "-.Inf": tagFloat,
		".NaN": tagFloat, ".nan": tagFloat, "1:30.5": tagFloat, "2001-12-14": tagTime, "2002-1-1": tagStr,
		"2001-12-14 21:59:43.10 -5": tagTime, "2001-12-14T21:59:43Z": tagTime, "<<": tagMerge, "=": tagValue,
		"10.0.0.1": tagStr, "v1.33.4": tagStr, "0b101": tagInt, "0b": tagStr, "._": tagStr,
	} {
		if got := resolvePlain(v); got != want {
			t.Errorf("resolvePlain(%q) = %s, want %s", v, got, want)
		}
	}
}
