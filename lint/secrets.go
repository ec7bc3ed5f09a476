package lint

import (
	"github.com/layercheck/layercheck/redact"
	"regexp"
	"strconv"
	"strings"
)

// Hidden replaces a secret value in every field of a finding.
const Hidden = "<hidden>"

// SecretName reports whether a variable name looks like it holds a secret;
// it is redact.SecretName, the one definition every output path uses.
func SecretName(name string) bool { return redact.SecretName(name) }

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
