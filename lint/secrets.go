package lint

import (
	"regexp"
	"strconv"
	"strings"
)

// Hidden replaces a secret value in every field of a finding.
const Hidden = "<hidden>"

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

var identifier = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// maskSecrets replaces the value of a finding about a secret with Hidden in
// Value, Message, Why and Fix. A finding is about a secret when its
// variable's name looks secret (SecretName) or its message or fix names one
// (unknown-variable suggesting kube_encrypt_token for kube_encrypt_tokn).
//
// Findings of the boolean rules (string-as-bool, not-a-bool) are left as
// they are: a variable kubespray tests as a boolean is no secret
// (kube_encrypt_secret_data says whether to encrypt secrets).
func maskSecrets(f *Finding) {
	if f.Value == "" || f.Value == Hidden || f.Rule == "string-as-bool" || f.Rule == "not-a-bool" {
		return
	}
	secret := SecretName(f.Variable)
	for _, s := range []string{f.Message, f.Fix} {
		if secret {
			break
		}
		for _, id := range identifier.FindAllString(s, -1) {
			if strings.Contains(id, "_") && SecretName(id) {
				secret = true
				break
			}
		}
	}
	if !secret {
		return
	}
	forms := []string{f.Value}
	if u, err := strconv.Unquote(f.Value); err == nil && u != "" {
		forms = append(forms, u, strconv.Quote(u), "'"+u+"'")
	} else if len(f.Value) > 1 && (f.Value[0] == '\'' || f.Value[0] == '"') && f.Value[len(f.Value)-1] == f.Value[0] {
		forms = append(forms, f.Value[1:len(f.Value)-1])
	}
	// longest first, so a quoted form is replaced whole
	for i := range forms {
		for j := i + 1; j < len(forms); j++ {
			if len(forms[j]) > len(forms[i]) {
				forms[i], forms[j] = forms[j], forms[i]
			}
		}
	}
	for _, s := range []*string{&f.Message, &f.Why, &f.Fix} {
		for _, v := range forms {
			if v != "" {
				*s = strings.ReplaceAll(*s, v, Hidden)
			}
		}
	}
	f.Value = Hidden
}
