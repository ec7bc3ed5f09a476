package parser

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// DefaultInventoryIgnoreExts is ansible-core 2.19's default
// INVENTORY_IGNORE_EXTS (config/base.yml: constants.REJECT_EXTS plus
// .orig, .cfg and .retry).
var DefaultInventoryIgnoreExts = []string{".pyc", ".pyo", ".swp", ".bak", "~", ".rpm", ".md", ".txt", ".rst", ".orig", ".cfg", ".retry"}

// KubesprayInventoryIgnorePatterns are the [inventory] ignore_patterns of
// kubespray's own ansible.cfg (kubespray v2.31.0 ansible.cfg): kubespray
// writes credentials/ (kubeadm_certificate_key.creds, kube_encrypt_token.creds)
// and artifacts/ (admin.conf) into the inventory directory, and Ansible must
// not read them as inventory sources.
var KubesprayInventoryIgnorePatterns = []string{"artifacts", "credentials"}

// InventoryIgnore is what ansible-core skips in a directory inventory
// source: INVENTORY_IGNORE_EXTS (name suffixes, matched literally) and
// INVENTORY_IGNORE_PATTERNS (regular expressions searched anywhere in the
// entry's name). Nil Exts means Ansible's default; nil Patterns means none.
type InventoryIgnore struct {
	Exts     []string
	Patterns []string
	// Source says where the settings came from ("default", an environment
	// variable, or an ansible.cfg path with its section and key).
	Source string
}

// alwaysIgnoredParts are the part of IGNORED that no setting changes:
// hidden names and the variable directories, which are no inventory
// sources; alwaysIgnored matches them alone.
var (
	alwaysIgnoredParts = []string{`^\.`, `^host_vars$`, `^group_vars$`, `^vars_plugins$`}
	alwaysIgnored      = regexp.MustCompile(strings.Join(alwaysIgnoredParts, "|"))
)

// Regexp builds the IGNORED regex exactly as ansible-core 2.19's
// inventory/manager.py does: hidden names, host_vars, group_vars and
// vars_plugins always, then the patterns as given, then each extension
// escaped with "$" appended, all joined with "|". A pattern Go's regexp
// cannot compile (Python-only syntax such as look-arounds) is an error.
func (ig InventoryIgnore) Regexp() (*regexp.Regexp, error) {
	exts := ig.Exts
	if exts == nil {
		exts = DefaultInventoryIgnoreExts
	}
	parts := append(append([]string(nil), alwaysIgnoredParts...), ig.Patterns...)
	for _, e := range exts {
		parts = append(parts, regexp.QuoteMeta(e)+"$")
	}
	re, err := regexp.Compile(strings.Join(parts, "|"))
	if err != nil {
		return nil, fmt.Errorf("inventory ignore patterns %q (%s): %v", ig.Patterns, ig.sourceName(), err)
	}
	return re, nil
}

func (ig InventoryIgnore) sourceName() string {
	if ig.Source == "" {
		return "default"
	}
	return ig.Source
}

// AnsibleCfgEnv is what finding ansible.cfg depends on: the environment,
// the working directory and the home directory. OSAnsibleCfgEnv gives the
// process's own.
type AnsibleCfgEnv struct {
	LookupEnv func(string) (string, bool)
	Cwd       string
	Home      string
	// System is the system-wide ansible.cfg, /etc/ansible/ansible.cfg.
	System string
}

// OSAnsibleCfgEnv is the AnsibleCfgEnv of this process.
func OSAnsibleCfgEnv() AnsibleCfgEnv {
	cwd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	return AnsibleCfgEnv{LookupEnv: os.LookupEnv, Cwd: cwd, Home: home, System: "/etc/ansible/ansible.cfg"}
}

// FindAnsibleCfg is ansible-core 2.19's find_ini_config_file: the first
// existing, readable file of $ANSIBLE_CONFIG (a directory means its
// ansible.cfg), ansible.cfg in the working directory (skipped when the
// directory is world-writable), ~/.ansible.cfg, /etc/ansible/ansible.cfg.
// "" when there is none.
func FindAnsibleCfg(env AnsibleCfgEnv) string {
	var paths []string
	if p, ok := env.LookupEnv("ANSIBLE_CONFIG"); ok {
		p = expandHome(p, env.Home)
		if !filepath.IsAbs(p) && env.Cwd != "" {
			p = filepath.Join(env.Cwd, p)
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			p = filepath.Join(p, "ansible.cfg")
		}
		paths = append(paths, p)
	}
	if env.Cwd != "" {
		if st, err := os.Stat(env.Cwd); err == nil && st.Mode().Perm()&0o002 == 0 {
			paths = append(paths, filepath.Join(env.Cwd, "ansible.cfg"))
		}
	}
	if env.Home != "" {
		paths = append(paths, filepath.Join(env.Home, ".ansible.cfg"))
	}
	if env.System != "" {
		paths = append(paths, env.System)
	}
	for _, p := range paths {
		err := CheckRegular(p)
		var ke *FileKindError
		if errors.As(err, &ke) {
			// a FIFO or device: found (reading it is the error), never opened
			return p
		}
		if err != nil {
			continue
		}
		if f, err := os.Open(p); err == nil {
			f.Close()
			return p
		}
	}
	return ""
}

func expandHome(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return filepath.Join(home, p[1:])
	}
	return p
}

// AnsibleInventoryIgnore returns the INVENTORY_IGNORE_EXTS and
// INVENTORY_IGNORE_PATTERNS ansible-core 2.19 would use, with its
// precedence (config/base.yml, config/manager.py): the environment
// (ANSIBLE_INVENTORY_IGNORE, ANSIBLE_INVENTORY_IGNORE_REGEX; set but empty
// counts), else the ansible.cfg FindAnsibleCfg finds, where
// [inventory] ignore_extensions / ignore_patterns beat the older
// [defaults] inventory_ignore_extensions / inventory_ignore_patterns, else
// the defaults. Values are comma-separated lists, each item stripped and
// unquoted as Ansible's list type does. An unreadable or malformed
// ansible.cfg is an error naming the file and line.
func AnsibleInventoryIgnore(env AnsibleCfgEnv) (InventoryIgnore, error) {
	var ig InventoryIgnore
	var cfg map[string]map[string]string
	cfgPath := ""
	var srcs []string
	setting := func(envName string, keys [2][2]string) ([]string, error) {
		if v, ok := env.LookupEnv(envName); ok {
			srcs = append(srcs, "$"+envName)
			return ansibleList(v), nil
		}
		if cfg == nil && cfgPath == "" {
			cfgPath = FindAnsibleCfg(env)
			if cfgPath != "" {
				data, err := ReadFile(cfgPath, 0)
				if err != nil {
					var ke *FileKindError
					if errors.As(err, &ke) {
						return nil, err
					}
					return nil, fmt.Errorf("%s: %v", cfgPath, err)
				}
				if cfg, err = parseAnsibleCfg(cfgPath, data); err != nil {
					return nil, err
				}
			}
		}
		var out []string
		found := false
		for _, k := range keys { // later entries win, as in config/manager.py
			if v, ok := cfg[k[0]][k[1]]; ok {
				out, found = ansibleList(v), true
				srcs = append(srcs, fmt.Sprintf("%s [%s] %s", cfgPath, k[0], k[1]))
			}
		}
		if !found {
			return nil, nil
		}
		return out, nil
	}
	var err error
	if ig.Exts, err = setting("ANSIBLE_INVENTORY_IGNORE", [2][2]string{{"defaults", "inventory_ignore_extensions"}, {"inventory", "ignore_extensions"}}); err != nil {
		return ig, err
	}
	if ig.Patterns, err = setting("ANSIBLE_INVENTORY_IGNORE_REGEX", [2][2]string{{"defaults", "inventory_ignore_patterns"}, {"inventory", "ignore_patterns"}}); err != nil {
		return ig, err
	}
	ig.Source = strings.Join(srcs, ", ")
	return ig, nil
}

// ansibleList is ansible-core's ensure_type(value, 'list') for a string.
func ansibleList(s string) []string {
	parts := strings.Split(s, ",")
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if len(p) > 1 && p[0] == p[len(p)-1] && (p[0] == '"' || p[0] == '\'') && p[len(p)-2] != '\\' {
			p = p[1 : len(p)-1]
		}
		out = append(out, p)
	}
	return out
}

// parseAnsibleCfg reads an ansible.cfg as Python's
// configparser.ConfigParser(inline_comment_prefixes=(';',)) read with
// raw=True does for the values used here: [section] headers, "key = value"
// or "key: value" (keys lower-cased), full-line comments starting with # or
// ;, inline comments starting with whitespace and ;, indented continuation
// lines, [DEFAULT] values inherited by every section, duplicate sections or
// keys an error.
func parseAnsibleCfg(path string, data []byte) (map[string]map[string]string, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	out := map[string]map[string]string{}
	defaults := map[string]string{}
	var cur map[string]string
	curName, lastKey := "", ""
	seenKeys := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 10*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		raw := sc.Text()
		trimmed := strings.TrimSpace(raw)
		if i := inlineComment(raw); i >= 0 {
			trimmed = strings.TrimSpace(raw[:i])
		}
		if strings.HasPrefix(strings.TrimLeft(raw, " \t"), "#") || strings.HasPrefix(strings.TrimLeft(raw, " \t"), ";") {
			continue
		}
		if trimmed == "" {
			lastKey = ""
			continue
		}
		indented := raw[0] == ' ' || raw[0] == '\t'
		if indented && lastKey != "" && cur != nil {
			cur[lastKey] += "\n" + trimmed
			continue
		}
		if strings.HasPrefix(trimmed, "[") && strings.HasSuffix(trimmed, "]") {
			curName = trimmed[1 : len(trimmed)-1]
			lastKey = ""
			if curName == "DEFAULT" {
				cur = defaults
				continue
			}
			if _, dup := out[curName]; dup {
				return nil, fmt.Errorf("%s:%d: section %q already exists", path, line, curName)
			}
			cur = map[string]string{}
			out[curName] = cur
			continue
		}
		if cur == nil {
			return nil, fmt.Errorf("%s:%d: file contains no section headers", path, line)
		}
		i := strings.IndexAny(trimmed, "=:")
		if i < 0 {
			return nil, fmt.Errorf("%s:%d: not a key = value line", path, line)
		}
		key := strings.ToLower(strings.TrimSpace(trimmed[:i]))
		if key == "" {
			return nil, fmt.Errorf("%s:%d: empty option name", path, line)
		}
		if seenKeys[curName+"\x00"+key] {
			return nil, fmt.Errorf("%s:%d: option %q in section %q already exists", path, line, key, curName)
		}
		seenKeys[curName+"\x00"+key] = true
		cur[key] = strings.TrimSpace(trimmed[i+1:])
		lastKey = key
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %v", path, line+1, err)
	}
	for _, sec := range out {
		for k, v := range defaults {
			if _, ok := sec[k]; !ok {
				sec[k] = v
			}
		}
	}
	return out, nil
}

// inlineComment is the index of an inline ";" comment (a ";" after
// whitespace), or -1.
func inlineComment(s string) int {
	for i := 1; i < len(s); i++ {
		if s[i] == ';' && (s[i-1] == ' ' || s[i-1] == '\t') {
			return i
		}
	}
	return -1
}
