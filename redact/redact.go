// Package redact is the one place secrets are removed from what layercheck
// prints: every output path (lint and inventory text and JSON, node and
// cluster reports, module results, warnings and error messages) passes its
// text through a Redactor before it is written.
//
// A Redactor masks, wherever they appear in a string:
//   - the password of a URL's userinfo (https://admin:PW@host ->
//     https://admin:********@host), as Go's url.URL.Redacted does;
//   - PEM private key blocks (-----BEGIN ... PRIVATE KEY----- ...
//     -----END ... PRIVATE KEY-----), also JSON-escaped or cut short;
//   - bearer tokens (Authorization: Bearer <token>) and basic credentials;
//   - the value of a variable whose name looks secret (SecretName:
//     ansible_password, kube_oidc_client_secret, ...) written as
//     name=value, name: value, name = value or "name": "value", unless the
//     value is a boolean word (kubespray's kube_encrypt_secret_data: true is
//     no secret) or already masked;
//   - every value given to New (the values of no_log module options).
//
// It knows nothing of Ansible beyond names and never fails: text without a
// secret comes back unchanged.
package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Mask replaces a secret.
const Mask = "********"

// Redactor masks secrets in text; the zero value and nil mask the patterns
// only.
type Redactor struct {
	values []string // longest first
}

// New returns a Redactor that also masks each of values (the values of
// no_log options, as Ansible's remove_values does). Values shorter than 3
// bytes and boolean words are not masked: replacing every "1" or "true" in
// the output would hide no secret and garble everything.
func New(values ...string) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) < 3 || boolWord(v) || seen[v] {
			continue
		}
		seen[v] = true
		r.values = append(r.values, v)
		// the same value inside JSON output
		if b, err := json.Marshal(v); err == nil {
			if e := string(b[1 : len(b)-1]); e != v && !seen[e] {
				seen[e] = true
				r.values = append(r.values, e)
			}
		}
	}
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
	return r
}

var (
	// scheme://user:password@ — the password may not hold / @ or space.
	reURLUserinfo = regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@"'<>]*):([^\s/@"'<>]+)@`)
	// a private key block, possibly JSON-escaped ("\n") or without its end
	rePEM = regexp.MustCompile(`(?s)-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`)
	// Authorization: Bearer <token> / Basic <base64>
	reBearer = regexp.MustCompile(`(?i)\b(bearer)(\s+|%20)([A-Za-z0-9\-._~+/]{8,}=*)`)
	reBasic  = regexp.MustCompile(`(?i)\b(authorization["']?\s*[:=]\s*["']?basic)(\s+)([A-Za-z0-9+/]{4,}=*)`)
	// "name": "value" in JSON
	reJSONKV = regexp.MustCompile(`"([A-Za-z_][A-Za-z0-9_.\-]*)"(\s*:\s*)"((?:[^"\\]|\\.)*)"`)
	// \"name\": \"value\" in JSON quoted again (an -e argument in an error)
	reEscJSONKV = regexp.MustCompile(`\\"([A-Za-z_][A-Za-z0-9_.\-]*)\\"(\s*:\s*)\\"((?:[^"\\]|\\[^"])*)\\"`)
	// name=value, name: value, name = value, name is value in text
	// (not a file name: "/etc/kubernetes/ssl/ca.key: missing" is no secret)
	// (a value in JSON-escaped quotes, \"false\" inside a JSON string, is
	// one value: masking from its backslash on would break the JSON)
	reTextKV = regexp.MustCompile(`(^|[^A-Za-z0-9_/.\-])([A-Za-z_][A-Za-z0-9_.\-]*)([ \t]*=[ \t]*|:[ \t]+)('[^']*'|\\"(?:[^"\\]|\\[^"])*\\"|"(?:[^"\\]|\\.)*"|[^\s,;)}\]"'\\]+)`)
)

// String returns s with every secret masked.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	if r != nil {
		for _, v := range r.values {
			if strings.Contains(s, v) {
				s = strings.ReplaceAll(s, v, Mask)
			}
		}
	}
	s = rePEM.ReplaceAllString(s, "-----BEGIN $1-----"+Mask+"-----END $1-----")
	s = reURLUserinfo.ReplaceAllString(s, "$1:"+Mask+"@")
	s = reBearer.ReplaceAllString(s, "$1$2"+Mask)
	s = reBasic.ReplaceAllString(s, "$1$2"+Mask)
	s = reJSONKV.ReplaceAllStringFunc(s, func(m string) string {
		p := reJSONKV.FindStringSubmatch(m)
		if !SecretName(p[1]) || harmless(p[3]) {
			return m
		}
		return `"` + p[1] + `"` + p[2] + `"` + Mask + `"`
	})
	s = reEscJSONKV.ReplaceAllStringFunc(s, func(m string) string {
		p := reEscJSONKV.FindStringSubmatch(m)
		if !SecretName(p[1]) || harmless(p[3]) {
			return m
		}
		return `\"` + p[1] + `\"` + p[2] + `\"` + Mask + `\"`
	})
	s = reTextKV.ReplaceAllStringFunc(s, func(m string) string {
		p := reTextKV.FindStringSubmatch(m)
		if !SecretName(p[2]) || harmless(unquote(p[4])) {
			return m
		}
		return p[1] + p[2] + p[3] + Mask
	})
	return s
}

// Bytes is String for bytes.
func (r *Redactor) Bytes(b []byte) []byte { return []byte(r.String(string(b))) }

// String masks secrets with the patterns only (no no_log values).
func String(s string) string { return (*Redactor)(nil).String(s) }

func unquote(v string) string {
	if len(v) >= 4 && strings.HasPrefix(v, `\"`) && strings.HasSuffix(v, `\"`) {
		return v[2 : len(v)-2]
	}
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// harmless is a value that is no secret whatever its variable's name: empty,
// a boolean word, already masked, a Jinja2 template or a vault value.
func harmless(v string) bool {
	v = strings.TrimSpace(v)
	return v == "" || boolWord(v) || strings.Contains(v, Mask) || v == "<hidden>" ||
		v == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER" || strings.HasPrefix(v, "{{") || strings.HasPrefix(v, "!vault") ||
		strings.HasPrefix(v, "$ANSIBLE_VAULT") || strings.HasPrefix(v, "-----") || v == "null" || v == "None" || v == "~"
}

func boolWord(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "t", "f", "1", "0":
		return true
	}
	return false
}

// Writer returns a writer that masks secrets in what is written to w. It
// holds back an incomplete last line until a newline or Close, so a secret
// split across two writes is still masked; Close flushes the rest (and does
// not close w).
func (r *Redactor) Writer(w io.Writer) io.WriteCloser { return &writer{r: r, w: w} }

type writer struct {
	mu  sync.Mutex
	r   *Redactor
	w   io.Writer
	buf []byte
}

func (x *writer) Write(p []byte) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.buf = append(x.buf, p...)
	// a PEM block spans lines: hold until its end is in the buffer (or
	// at most 1 MiB, then mask what there is)
	if i := bytes.Index(x.buf, []byte("-----BEGIN ")); i >= 0 && !bytes.Contains(x.buf[i:], []byte("-----END ")) && len(x.buf) < 1<<20 {
		return len(p), nil
	}
	if i := bytes.LastIndexByte(x.buf, '\n'); i >= 0 {
		out := x.r.Bytes(x.buf[:i+1])
		x.buf = append(x.buf[:0], x.buf[i+1:]...)
		if _, err := x.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (x *writer) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.buf) == 0 {
		return nil
	}
	out := x.r.Bytes(x.buf)
	x.buf = nil
	_, err := x.w.Write(out)
	return err
}

// secretWords are the name parts that mark a variable as holding a secret:
// kubespray's kube_encrypt_token, kubeadm_certificate_key,
// kube_oidc_client_secret ..., Ansible's ansible_password,
// ansible_become_password, ansible_ssh_pass ...
var secretWords = map[string]bool{
	"password": true, "passwords": true, "passwd": true, "pass": true, "pwd": true, "passphrase": true,
	"secret": true, "secrets": true, "token": true, "tokens": true, "key": true, "keys": true,
	"credential": true, "credentials": true, "creds": true, "apikey": true, "privatekey": true, "htpasswd": true,
}

// secretTail are the parts that may follow a secret word and still name the
// secret itself (client_key_data); any other part after the last secret
// word names something about it (ssh_key_path, etcd_key_size,
// kubeadm_token_ttl, kube_token_auth, vault_password_file), not the secret.
var secretTail = map[string]bool{
	"data": true, "content": true, "contents": true, "value": true, "b64": true, "base64": true, "pem": true, "text": true,
}

var nameSplit = regexp.MustCompile(`[^a-z0-9]+`)

// SecretName reports whether a variable name looks like it holds a secret:
// its last part that is a secret word (password, passwd, pass, secret,
// token, key, credentials, ...; or a part ending in password, passwd,
// secret or token, as clientsecret) is followed only by parts such as data,
// content or value. Dots and brackets separate parts too, so a nested key
// (cloud.password) counts.
func SecretName(name string) bool {
	parts := nameSplit.Split(strings.ToLower(name), -1)
	if len(parts) == 1 && (parts[0] == "key" || parts[0] == "keys") {
		// a bare "key" is a label or toleration key in Kubernetes
		// structures (metallb_config's tolerations: [{key: ...}]), no secret
		return false
	}
	last := -1
	for i, p := range parts {
		if secretWords[p] || strings.HasSuffix(p, "password") || strings.HasSuffix(p, "passwd") ||
			strings.HasSuffix(p, "secret") || strings.HasSuffix(p, "token") {
			last = i
		}
	}
	if last < 0 {
		return false
	}
	for _, p := range parts[last+1:] {
		if p != "" && !secretTail[p] {
			return false
		}
	}
	return true
}
