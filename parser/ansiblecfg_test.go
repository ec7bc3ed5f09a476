package parser

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestAnsibleInventoryIgnore(t *testing.T) {
	tests := []struct {
		name         string
		env          map[string]string
		cwdCfg       string // ansible.cfg in the working directory
		homeCfg      string // ~/.ansible.cfg
		envCfg       string // file ANSIBLE_CONFIG names
		wantExts     []string
		wantPatterns []string
		wantErr      string
	}{
		{name: "nothing set: defaults"},
		{name: "kubespray ansible.cfg", cwdCfg: "[defaults]\nforks = 5\n[inventory]\nignore_patterns = artifacts, credentials\n",
			wantPatterns: []string{"artifacts", "credentials"}},
		{name: "inventory section beats defaults section",
			cwdCfg:       "[defaults]\ninventory_ignore_patterns = old\ninventory_ignore_extensions = .a\n[inventory]\nignore_patterns = new ; comment\nignore_extensions: .b, '.c'\n",
			wantExts:     []string{".b", ".c"},
			wantPatterns: []string{"new"}},
		{name: "defaults section alone", cwdCfg: "[defaults]\ninventory_ignore_patterns = \"x\"\n", wantPatterns: []string{"x"}},
		{name: "env beats ansible.cfg", env: map[string]string{"ANSIBLE_INVENTORY_IGNORE_REGEX": "fromenv", "ANSIBLE_INVENTORY_IGNORE": ".z"},
			cwdCfg: "[inventory]\nignore_patterns = fromcfg\n", wantExts: []string{".z"}, wantPatterns: []string{"fromenv"}},
		{name: "empty env counts", env: map[string]string{"ANSIBLE_INVENTORY_IGNORE_REGEX": ""}, wantPatterns: []string{""}},
		{name: "ANSIBLE_CONFIG beats cwd", envCfg: "[inventory]\nignore_patterns = envcfg\n", cwdCfg: "[inventory]\nignore_patterns = cwd\n",
			wantPatterns: []string{"envcfg"}},
		{name: "home when no cwd file", homeCfg: "[inventory]\nignore_patterns = home\n", wantPatterns: []string{"home"}},
		{name: "DEFAULT section is inherited", cwdCfg: "[DEFAULT]\nignore_patterns = d\n[inventory]\nenable_plugins = ini\n", wantPatterns: []string{"d"}},
		{name: "continuation line", cwdCfg: "[inventory]\nignore_patterns = a,\n  b\n", wantPatterns: []string{"a", "b"}},
		{name: "duplicate key is an error", cwdCfg: "[inventory]\nignore_patterns = a\nignore_patterns = b\n", wantErr: "ansible.cfg:3: option"},
		{name: "no section header", cwdCfg: "ignore_patterns = a\n", wantErr: "ansible.cfg:1: file contains no section headers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cwd, home := t.TempDir(), t.TempDir()
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = v
			}
			if tt.cwdCfg != "" {
				writeFile(t, filepath.Join(cwd, "ansible.cfg"), tt.cwdCfg)
			}
			if tt.homeCfg != "" {
				writeFile(t, filepath.Join(home, ".ansible.cfg"), tt.homeCfg)
			}
			if tt.envCfg != "" {
				p := filepath.Join(t.TempDir(), "other.cfg")
				writeFile(t, p, tt.envCfg)
				env["ANSIBLE_CONFIG"] = p
			}
			ig, err := AnsibleInventoryIgnore(AnsibleCfgEnv{
				LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
				Cwd:       cwd, Home: home,
			})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ig.Exts, tt.wantExts) || !reflect.DeepEqual(ig.Patterns, tt.wantPatterns) {
				t.Fatalf("got exts %q patterns %q, want %q %q", ig.Exts, ig.Patterns, tt.wantExts, tt.wantPatterns)
			}
		})
	}
}

func TestInventoryIgnoreRegexp(t *testing.T) {
	re, err := InventoryIgnore{Patterns: KubesprayInventoryIgnorePatterns}.Regexp()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"credentials": true, "artifacts": true, "old-credentials": true, // searched, as Python's re.search
		"hosts.yaml": false, ".hidden": true, "group_vars": true, "notes.md": true, "x.cfg": true, "inventory.ini": false,
	} {
		if got := re.MatchString(name); got != want {
			t.Errorf("%q: ignored = %v, want %v", name, got, want)
		}
	}
	// an extension is literal: ".b" must not match "xab"
	re, _ = InventoryIgnore{Exts: []string{".b"}}.Regexp()
	if re.MatchString("xab") || !re.MatchString("x.b") || re.MatchString("x.md") {
		t.Fatal("extensions not matched literally or defaults not replaced")
	}
	if _, err := (InventoryIgnore{Patterns: []string{"(?=x)"}, Source: "$ANSIBLE_INVENTORY_IGNORE_REGEX"}).Regexp(); err == nil || !strings.Contains(err.Error(), "ANSIBLE_INVENTORY_IGNORE_REGEX") {
		t.Fatalf("bad pattern: err = %v", err)
	}
}

func TestLoadWithIgnorePatterns(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hosts.ini"), "[kube_control_plane]\nnode1\n")
	writeFile(t, filepath.Join(dir, "credentials", "kubeadm_certificate_key.creds"), "2d7a0fakekeyvalue\n")
	inv, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if inv.Host("2d7a0fakekeyvalue") == nil {
		t.Fatal("default settings: Ansible reads credentials/ as INI, so must we")
	}
	inv, err = LoadWith(LoadOptions{Ignore: InventoryIgnore{Patterns: KubesprayInventoryIgnorePatterns}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if inv.Host("2d7a0fakekeyvalue") != nil || inv.Host("node1") == nil {
		t.Fatalf("with ignore_patterns: hosts %v", inv.Hosts)
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
