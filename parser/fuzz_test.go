package parser

import (
	"strings"
	"testing"
)

// FuzzINI feeds arbitrary text to the INI inventory plugin: it must return
// an inventory or an error naming file:line, never panic or hang.
func FuzzINI(f *testing.F) {
	for _, s := range []string{
		"[g]\nh1 a=1 b=\"x y\" c=[1,2] # c\n[g:vars]\nv=True\n[p:children]\ng\n",
		"web[01:10:2] x={'a': (1, 2)}\nn[a:c]:22\n[fe80::1]:2222\n",
		"[g:vars]\nx=1\n[g]\n",
		"h v=\"{{ 'a' }}\"\n",
		"h a=1+2j b=-1j c=b'x' d=... e=set() f={1,2,3} g=0x_1 h=1_0.5e-3\n",
		"[a:children]\nb\n[b:children]\na\n",
		"; c\n# c\n[x]\n\\\n",
		"h a='''\n",
		"node[0:3]-[a:b].example.com ansible_port=22\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		inv := newInventory()
		if err := inv.parseINI("fuzz.ini", []byte(s)); err != nil {
			if e, ok := err.(*INIError); ok && (e.Pos.File != "fuzz.ini" || e.Pos.Line < 1) {
				t.Fatalf("error without a place: %v", err)
			}
			return
		}
		inv.reconcile()
		for _, h := range inv.Hosts {
			inv.HostVars(h, nil)
		}
		if _, err := inv.ListJSON(); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzYAML feeds arbitrary text to the YAML loader and the YAML inventory
// plugin: never panic or hang, aliases bounded.
func FuzzYAML(f *testing.F) {
	for _, s := range []string{
		"all:\n  hosts:\n    h1: {a: yes, b: 1:30, c: !unsafe '{{x}}'}\n  children:\n    g: {hosts: h1}\n",
		"a: &a [1, 2]\nb: *a\nc:\n  <<: {x: 1}\n  y: !vault |\n    $ANSIBLE_VAULT;1.1;AES256\n    61\n",
		"{\"all\": {\"vars\": {\"n\": NaN, \"big\": 123456789012345678901234567890}}}",
		"a: 2001-12-14t21:59:43.10-05:00\nb: 0b1_0\nc: .NaN\nd: ~\n? [1]\n: 2\n",
		"a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n",
		"- 1\n- 2\n",
		"---\na: 1\n---\nb: 2\n",
		"\ufeffall:\n  hosts:\n    web[1:3]:2222:\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := LoadYAML("fuzz.yml", []byte(s), nil); err != nil {
			return
		}
		inv := newInventory()
		if err := inv.parseYAMLInventory("fuzz.yml", []byte(s)); err != nil {
			return
		}
		inv.reconcile()
		for _, h := range inv.Hosts {
			inv.HostVars(h, nil)
		}
		if _, err := inv.ListJSON(); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzJSONInventory feeds arbitrary text to the JSON loader and the
// inventory plugin as for hosts.json.
func FuzzJSONInventory(f *testing.F) {
	for _, s := range []string{
		`{"all": {"hosts": {"h1": {"a": 1}}, "children": {"g": {"hosts": {"h2": null}}}, "vars": {"x": [1, 2.5, true, null]}}}`,
		`{"all": {"vars": {"v": {"__ansible_vault": "$ANSIBLE_VAULT;1.1;AES256\n61"}, "u": {"__ansible_unsafe": "{{x}}"}}}}`,
		`{"a": NaN, "b": -Infinity, "c": 123456789012345678901234567890, "d": "\ud83d\ude00", "a": 2}`,
		`[[[[[[[[[[]]]]]]]]]]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		inv := newInventory()
		if err := inv.parseYAMLInventory("fuzz.json", []byte(s)); err != nil {
			return
		}
		inv.reconcile()
		for _, h := range inv.Hosts {
			inv.HostVars(h, nil)
		}
		if _, err := inv.ListJSON(); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzExtraVars feeds arbitrary -e arguments (k=v, inline JSON or YAML).
func FuzzExtraVars(f *testing.F) {
	for _, s := range []string{
		`a=1 b="x y" c='z' d=\n`,
		`{"a": [1, {"b": null}]}`,
		"[1, 2]",
		"a: {b: c}",
		`k=v=w _raw x="unterminated`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.HasPrefix(s, "@") {
			return // files: FuzzYAML and FuzzJSONInventory read their contents
		}
		m, err := ParseExtraVars([]string{s})
		if err == nil && m == nil {
			t.Fatal("no result and no error")
		}
	})
}

// FuzzAnsibleCfg feeds arbitrary text to the ansible.cfg (INI) reader.
func FuzzAnsibleCfg(f *testing.F) {
	for _, s := range []string{
		"[defaults]\ninventory = hosts.ini\n[inventory]\nignore_patterns = artifacts, credentials\nignore_extensions = .bak, ~\n",
		"[inventory]\nignore_extensions=\n  .a\n  .b\n; c\n# c\n",
		"no section = 1\n",
		"[a]\nk: v\n[a]\nk = w\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := parseAnsibleCfg("ansible.cfg", []byte(s))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "ansible.cfg") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		for sec, kv := range cfg {
			if kv == nil {
				t.Fatalf("section %q without its settings", sec)
			}
		}
	})
}
