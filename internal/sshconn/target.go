// Package sshconn connects to inventory hosts the way ansible-playbook's
// ssh connection plugin would, from the same inventory variables, with
// golang.org/x/crypto/ssh: ansible_host, ansible_port, ansible_user,
// ansible_ssh_private_key_file, the ssh-agent at SSH_AUTH_SOCK,
// ansible_ssh_common_args / ansible_ssh_extra_args (-o UserKnownHostsFile,
// StrictHostKeyChecking, ProxyJump, ProxyCommand="ssh -W %h:%p ... bastion"
// as kubespray's bastion setup writes it, and -J), and ansible_become with
// sudo. Over a connection it gives the node's files (SFTP, pkg/sftp), its
// commands (an SSH session) and connections that start on the node
// (ssh.Client.Dial): the seams verify.Env reads a node through.
//
// Passwords are never used: ansible_password, ansible_ssh_pass and
// ansible_become_password are refused with a message saying to use keys and
// passwordless sudo.
package sshconn

import (
	"fmt"
	"math/big"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	shellquote "github.com/kballard/go-shellquote"

	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/parser/ansiblebool"
)

// Target is how to reach one inventory host.
type Target struct {
	// Name is the inventory_hostname.
	Name string
	// Host and Port are where to connect: ansible_host (default Name) and
	// ansible_port (default 22).
	Host string
	Port int
	// User is ansible_user (default: the current user, as ssh's).
	User string
	// KeyFiles are the private keys to offer: ansible_ssh_private_key_file,
	// then -i of the ssh args; when none is set, OpenSSH's default
	// identities (~/.ssh/id_ed25519, id_ecdsa, id_rsa) that exist.
	KeyFiles []string
	// KnownHostsFiles are UserKnownHostsFile (default ~/.ssh/known_hosts).
	KnownHostsFiles []string
	// StrictHostKeyChecking is the ssh option's value: "yes", "no",
	// "accept-new" or "" (ask, which without a terminal means refuse).
	StrictHostKeyChecking string
	// Jump is the host to connect through (ProxyJump, -J, or ProxyCommand
	// "ssh -W %h:%p bastion"); nil means connect directly.
	Jump *Target
	// Become is ansible_become with ansible_become_method sudo;
	// BecomeUser is ansible_become_user (default root).
	Become     bool
	BecomeUser string
	// Where says which variable set what, for messages ("ansible_port
	// from inventory/hosts.yaml:12").
	Where map[string]string
}

// sudo reports whether commands and SFTP go through sudo: when becoming
// another user than the login user (Ansible does not need sudo to become
// the user it is).
func (t *Target) sudo() bool { return t.Become && t.User != t.BecomeUser }

// Addr is host:port.
func (t *Target) Addr() string {
	return netJoin(t.Host, t.Port)
}

func netJoin(h string, p int) string {
	if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
		return "[" + h + "]:" + strconv.Itoa(p)
	}
	return h + ":" + strconv.Itoa(p)
}

// Lookup returns the hostvars of an inventory host, or nil when the
// inventory has no such host; a bastion named in ProxyCommand or ProxyJump
// that is an inventory host is reached with its own variables.
type Lookup func(name string) *parser.Map

// FromHostVars builds the Target of inventory host name from its hostvars
// (parser.Inventory.HostVars with the extra vars). Errors name the
// variable and where it was set.
func FromHostVars(name string, vars *parser.Map, lookup Lookup) (*Target, error) {
	return fromHostVars(name, vars, lookup, 0)
}

func fromHostVars(name string, vars *parser.Map, lookup Lookup, depth int) (*Target, error) {
	if depth > 4 {
		return nil, fmt.Errorf("host %s: more than 4 jump hosts (ProxyJump/ProxyCommand loop?)", name)
	}
	t := &Target{Name: name, Host: name, Port: 22, Where: map[string]string{}}
	v := func(keys ...string) *parser.Value {
		for _, k := range keys {
			if x := vars.Get(k); x != nil && x.Kind != parser.KindNull {
				t.Where[keys[0]] = k + " from " + where(x)
				return x
			}
		}
		return nil
	}
	for _, k := range []string{"ansible_password", "ansible_ssh_pass", "ansible_ssh_password"} {
		if x := vars.Get(k); x != nil && x.Kind != parser.KindNull {
			return nil, fmt.Errorf("host %s: %s is set (%s): layercheck verify does not log in with passwords; authorise a key (ansible_ssh_private_key_file or ssh-agent) instead", name, k, where(x))
		}
	}
	for _, k := range []string{"ansible_become_password", "ansible_become_pass", "ansible_sudo_pass", "ansible_sudo_password"} {
		if x := vars.Get(k); x != nil && x.Kind != parser.KindNull {
			return nil, fmt.Errorf("host %s: %s is set (%s): layercheck verify runs sudo non-interactively (sudo -n) and never sends a become password; give the login user passwordless sudo (NOPASSWD) or log in as root", name, k, where(x))
		}
	}
	if x := v("ansible_connection"); x != nil {
		s, err := str(x)
		if err != nil || (s != "ssh" && s != "smart" && s != "paramiko" && s != "ansible.builtin.ssh" && s != "ansible.builtin.paramiko_ssh") {
			return nil, fmt.Errorf("host %s: ansible_connection %s (%s): layercheck verify connects over SSH only", name, x.Display(), where(x))
		}
	}
	var err error
	if x := v("ansible_host", "ansible_ssh_host"); x != nil {
		if t.Host, err = str(x); err != nil || t.Host == "" {
			return nil, varErr(name, "ansible_host", x, "a host name or address")
		}
	}
	if x := v("ansible_port", "ansible_ssh_port"); x != nil {
		if t.Port, err = port(x); err != nil {
			return nil, varErr(name, "ansible_port", x, "a port number 1-65535")
		}
	}
	if x := v("ansible_user", "ansible_ssh_user"); x != nil {
		if t.User, err = str(x); err != nil || t.User == "" {
			return nil, varErr(name, "ansible_user", x, "a user name")
		}
	}
	if x := v("ansible_ssh_private_key_file", "ansible_private_key_file"); x != nil {
		s, err := str(x)
		if err != nil || s == "" {
			return nil, varErr(name, "ansible_ssh_private_key_file", x, "a file name")
		}
		t.KeyFiles = append(t.KeyFiles, expandHome(s))
	}
	if x := v("ansible_become"); x != nil {
		// ansible_become sets the become keyword, which ansible-core reads
		// with boolean() (strict) in every series: y and t are true, "1.0"
		// and "" fail the task.
		if t.Become, err = ansiblebool.Boolean(x.Scalar()); err != nil {
			return nil, varErr(name, "ansible_become", x, "a boolean")
		}
	}
	if x := v("ansible_become_method"); x != nil && t.Become {
		if s, _ := str(x); s != "sudo" && s != "ansible.builtin.sudo" {
			return nil, fmt.Errorf("host %s: ansible_become_method %s (%s): layercheck verify becomes root with sudo only", name, x.Display(), where(x))
		}
	}
	t.BecomeUser = "root"
	if x := v("ansible_become_user"); x != nil {
		if t.BecomeUser, err = str(x); err != nil || t.BecomeUser == "" {
			return nil, varErr(name, "ansible_become_user", x, "a user name")
		}
	}
	// Ansible passes ssh_common_args, then ssh_extra_args.
	var args []string
	for _, k := range []string{"ansible_ssh_common_args", "ansible_ssh_extra_args"} {
		x := vars.Get(k)
		if x == nil || x.Kind == parser.KindNull {
			continue
		}
		s, err := str(x)
		if err != nil {
			return nil, varErr(name, k, x, "a string of ssh options")
		}
		if x.Templated() {
			return nil, fmt.Errorf("host %s: %s (%s) holds Jinja, which layercheck verify does not render: write the options out, e.g. -o ProxyCommand=\"ssh -W %%h:%%p -q user@bastion\"", name, k, where(x))
		}
		words, err := shellquote.Split(s)
		if err != nil {
			return nil, fmt.Errorf("host %s: %s (%s): %v", name, k, where(x), err)
		}
		args = append(args, words...)
	}
	opts, err := parseSSHArgs(args)
	if err != nil {
		return nil, fmt.Errorf("host %s: ansible_ssh_common_args/ansible_ssh_extra_args: %v", name, err)
	}
	if u, ok := opts["user"]; ok && t.User == "" {
		t.User = u
	}
	if p, ok := opts["port"]; ok && vars.Get("ansible_port") == nil {
		if t.Port, err = strconv.Atoi(p); err != nil || t.Port < 1 || t.Port > 65535 {
			return nil, fmt.Errorf("host %s: ssh option Port %q is not a port number", name, p)
		}
	}
	if ids, ok := opts["identityfile"]; ok {
		for _, f := range strings.Split(ids, "\x00") {
			t.KeyFiles = append(t.KeyFiles, expandHome(f))
		}
	}
	if kh, ok := opts["userknownhostsfile"]; ok {
		for _, f := range strings.Fields(kh) {
			t.KnownHostsFiles = append(t.KnownHostsFiles, expandHome(f))
		}
	}
	t.StrictHostKeyChecking = strings.ToLower(opts["stricthostkeychecking"])
	switch t.StrictHostKeyChecking {
	case "", "yes", "no", "accept-new", "ask", "off":
	default:
		return nil, fmt.Errorf("host %s: StrictHostKeyChecking %q: want yes, no, accept-new or ask", name, t.StrictHostKeyChecking)
	}
	if t.StrictHostKeyChecking == "off" {
		t.StrictHostKeyChecking = "no"
	}
	if t.User == "" {
		if t.User, err = currentUser(); err != nil {
			return nil, fmt.Errorf("host %s: ansible_user is not set and the current user is unknown: %v", name, err)
		}
	}
	if len(t.KnownHostsFiles) == 0 {
		if home, err := os.UserHomeDir(); err == nil {
			t.KnownHostsFiles = []string{filepath.Join(home, ".ssh", "known_hosts")}
		}
	}
	jump, err := jumpSpec(opts)
	if err != nil {
		return nil, fmt.Errorf("host %s: %v", name, err)
	}
	if jump != nil {
		if t.Jump, err = jump.target(t, lookup, depth); err != nil {
			return nil, fmt.Errorf("host %s: jump host: %v", name, err)
		}
	}
	return t, nil
}

// parseSSHArgs reads the ssh(1) command-line options layercheck follows
// (-o Key=Value / -o "Key Value", -i, -p, -l, -J); keys are lower-cased as
// ssh_config keywords are case-insensitive. The first value of an option
// wins, as in ssh, except IdentityFile which accumulates. Options that do
// not change where or how to connect (-q, -v, -T, -C, ControlMaster...)
// are ignored.
func parseSSHArgs(args []string) (map[string]string, error) {
	opts := map[string]string{}
	set := func(k, v string) {
		k = strings.ToLower(k)
		if k == "identityfile" {
			if old, ok := opts[k]; ok {
				v = old + "\x00" + v
			}
			opts[k] = v
			return
		}
		if _, ok := opts[k]; !ok {
			opts[k] = v
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			return nil, fmt.Errorf("unexpected argument %q (want ssh options such as -o Key=Value)", a)
		}
		flag := a[1]
		val := a[2:]
		switch flag {
		case 'o', 'i', 'p', 'l', 'J', 'F', 'E', 'c', 'm', 'b', 'S', 'L', 'R', 'D', 'W', 'O', 'Q', 'B', 'w', 'e', 'I':
			if val == "" {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("ssh option %s needs a value", a)
				}
				i++
				val = args[i]
			}
		default:
			continue // flags without a value (-q, -T, -C, -4, -v ...)
		}
		switch flag {
		case 'o':
			// "Key=Value" or "Key Value": the key ends at the first '=' or blank.
			val = strings.TrimSpace(val)
			i := strings.IndexAny(val, "= \t")
			if i <= 0 {
				return nil, fmt.Errorf("-o %q: want Key=Value", val)
			}
			k, v := val[:i], strings.TrimLeft(val[i:], " \t")
			v = strings.TrimPrefix(v, "=")
			// ssh splits a -o value as a config line: quotes group words.
			v = strings.TrimSpace(v)
			if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
				v = v[1 : len(v)-1]
			}
			set(strings.TrimSpace(k), v)
		case 'i':
			set("identityfile", val)
		case 'p':
			set("port", val)
		case 'l':
			set("user", val)
		case 'J':
			set("proxyjump", val)
		}
	}
	return opts, nil
}

// jump is a jump host as ProxyJump or a ProxyCommand running ssh -W gives it.
type jump struct {
	user, host string
	port       int
	opts       map[string]string // the ProxyCommand ssh's own options
	what       string            // for messages
}

// jumpSpec reads ProxyJump (first hop only: "user@host:port") or a
// ProxyCommand of the form kubespray's bastion setup writes:
// ssh [options] -W %h:%p [user@]bastion. Any other ProxyCommand is an
// error: layercheck does not run local commands to connect.
func jumpSpec(opts map[string]string) (*jump, error) {
	if pj, ok := opts["proxyjump"]; ok && strings.ToLower(pj) != "none" {
		first, _, _ := strings.Cut(pj, ",")
		j := &jump{port: 0, what: "ProxyJump " + pj}
		first = strings.TrimPrefix(first, "ssh://")
		if u, h, ok := strings.Cut(first, "@"); ok {
			j.user, first = u, h
		}
		j.host = first
		if h, p, ok := cutPort(first); ok {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("ProxyJump %q: bad port", pj)
			}
			j.host, j.port = h, n
		}
		return j, nil
	}
	pc, ok := opts["proxycommand"]
	if !ok || strings.ToLower(pc) == "none" {
		return nil, nil
	}
	words, err := shellquote.Split(pc)
	if err != nil {
		return nil, fmt.Errorf("ProxyCommand %q: %v", pc, err)
	}
	if len(words) == 0 || filepath.Base(words[0]) != "ssh" {
		return nil, fmt.Errorf("ProxyCommand %q: only \"ssh -W %%h:%%p [user@]bastion\" is supported (layercheck verify dials through the bastion's SSH connection; it runs no local command)", pc)
	}
	// The destination is the one argument that is not an option or its value.
	var rest, dest []string
	for i := 1; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, "-") {
			rest = append(rest, w)
			if len(w) == 2 && strings.ContainsRune("oiplJFEcmbSLRDWOQBwe", rune(w[1])) && i+1 < len(words) {
				i++
				rest = append(rest, words[i])
			}
			continue
		}
		dest = append(dest, w)
	}
	if len(dest) != 1 {
		return nil, fmt.Errorf("ProxyCommand %q: want one destination host, got %q", pc, dest)
	}
	po, err := parseSSHArgs(rest)
	if err != nil {
		return nil, fmt.Errorf("ProxyCommand %q: %v", pc, err)
	}
	if w := po["w"]; w != "" && w != "%h:%p" {
		return nil, fmt.Errorf("ProxyCommand %q: -W %s: only -W %%h:%%p is supported", pc, w)
	}
	if !containsW(rest) {
		return nil, fmt.Errorf("ProxyCommand %q: no -W %%h:%%p (only \"ssh -W %%h:%%p bastion\" is supported)", pc)
	}
	j := &jump{host: dest[0], opts: po, what: "ProxyCommand " + pc}
	if u, h, ok := strings.Cut(j.host, "@"); ok {
		j.user, j.host = u, h
	}
	if p, ok := po["port"]; ok {
		if j.port, err = strconv.Atoi(p); err != nil || j.port < 1 || j.port > 65535 {
			return nil, fmt.Errorf("ProxyCommand %q: -p %q is not a port", pc, p)
		}
	}
	if u, ok := po["user"]; ok && j.user == "" {
		j.user = u
	}
	return j, nil
}

func containsW(args []string) bool {
	for i, a := range args {
		if a == "-W" && i+1 < len(args) && args[i+1] == "%h:%p" || a == "-W%h:%p" {
			return true
		}
	}
	return false
}

func cutPort(s string) (host, port string, ok bool) {
	if strings.HasPrefix(s, "[") {
		if i := strings.Index(s, "]:"); i > 0 {
			return s[1:i], s[i+2:], true
		}
		return strings.Trim(s, "[]"), "", false
	}
	if strings.Count(s, ":") == 1 {
		h, p, _ := strings.Cut(s, ":")
		return h, p, true
	}
	return s, "", false
}

// target resolves the jump host: an inventory host by that name (matched
// by inventory_hostname, then ansible_host) is reached with its own
// variables; otherwise the address is used with the options of the jump
// spec, and the user, keys and known_hosts of the host behind it.
func (j *jump) target(behind *Target, lookup Lookup, depth int) (*Target, error) {
	if lookup != nil {
		if hv := lookup(j.host); hv != nil {
			jt, err := fromHostVars(j.host, hv, lookup, depth+1)
			if err != nil {
				return nil, err
			}
			if j.user != "" {
				jt.User = j.user
			}
			if j.port != 0 {
				jt.Port = j.port
			}
			return jt, nil
		}
	}
	jt := &Target{Name: j.host, Host: j.host, Port: 22, User: behind.User, Where: map[string]string{"ansible_host": j.what}}
	if j.port != 0 {
		jt.Port = j.port
	}
	if j.user != "" {
		jt.User = j.user
	}
	if ids, ok := j.opts["identityfile"]; ok {
		for _, f := range strings.Split(ids, "\x00") {
			jt.KeyFiles = append(jt.KeyFiles, expandHome(f))
		}
	} else {
		jt.KeyFiles = behind.KeyFiles
	}
	if kh, ok := j.opts["userknownhostsfile"]; ok {
		jt.KnownHostsFiles = strings.Fields(kh)
	} else {
		jt.KnownHostsFiles = behind.KnownHostsFiles
	}
	jt.StrictHostKeyChecking = behind.StrictHostKeyChecking
	if s, ok := j.opts["stricthostkeychecking"]; ok {
		jt.StrictHostKeyChecking = strings.ToLower(s)
	}
	return jt, nil
}

func where(v *parser.Value) string {
	if s := v.Pos.String(); s != "" {
		return s
	}
	return "the inventory"
}

func varErr(host, name string, v *parser.Value, want string) error {
	return fmt.Errorf("host %s: %s = %s (%s) is not %s", host, name, v.Display(), where(v), want)
}

func str(v *parser.Value) (string, error) {
	switch v.Kind {
	case parser.KindString:
		return v.Str, nil
	case parser.KindInt:
		return v.Int.String(), nil
	case parser.KindVault:
		return "", fmt.Errorf("vault-encrypted")
	}
	return "", fmt.Errorf("not a string")
}

func port(v *parser.Value) (int, error) {
	var n int64
	switch v.Kind {
	case parser.KindInt:
		if !v.Int.IsInt64() {
			return 0, fmt.Errorf("out of range")
		}
		n = v.Int.Int64()
	case parser.KindString:
		b, ok := new(big.Int).SetString(strings.TrimSpace(v.Str), 10)
		if !ok || !b.IsInt64() {
			return 0, fmt.Errorf("not a number")
		}
		n = b.Int64()
	default:
		return 0, fmt.Errorf("not a number")
	}
	if n < 1 || n > 65535 {
		return 0, fmt.Errorf("out of range")
	}
	return int(n), nil
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}

func currentUser() (string, error) {
	if u, err := user.Current(); err == nil {
		return u.Username, nil
	}
	if u := os.Getenv("USER"); u != "" {
		return u, nil
	}
	return "", fmt.Errorf("no user name")
}
