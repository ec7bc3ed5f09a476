package scan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readUses records the Jinja in task arguments beside the conditions: a
// boolean whose truth an inline if, not, and/or takes is FormTemplate with
// the file:line of the line that holds it (also inside a block scalar); a
// `| bool` or a comparison inside Jinja is FormBoolCast or FormCompared; a
// value only rendered ({{ x }}), a string literal naming it and a
// templates/*.j2 file are no use.
func TestReadUsesJinjaInTasks(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		"roles/helm/tasks/main.yml": `---
- name: Install helm
  command: "helm {{ 'install' if helm_enabled else 'uninstall' }}"
- name: Pass the value on
  set_fact:
    x: "{{ helm_enabled }}"
    y: "{{ 'helm_enabled' }}"
- name: Block scalar
  shell: |
    echo start
    {% if not flag_b %}
    echo off
    {% endif %}
- name: Cast and compare
  debug:
    msg: "{{ flag_c | bool }} {{ flag_d == true }} {{ flag_e and other }}"
  when: flag_a
`,
		"roles/helm/templates/x.yml": "{% if flag_f %}x{% endif %}\n",
		"playbooks/p.yml": `- hosts: all
  vars:
    v: "{{ flag_a or flag_e }}"
  tasks: []
`,
	}
	for p, c := range files {
		full := filepath.Join(src, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	bools := map[string]bool{}
	for _, b := range []string{"helm_enabled", "flag_a", "flag_b", "flag_c", "flag_d", "flag_e", "flag_f"} {
		bools[b] = true
	}
	uses, err := readUses(src, bools)
	require.NoError(t, err)

	site := func(name, form string) *UseSite { return uses[name][form] }
	require.NotNil(t, site("helm_enabled", FormTemplate))
	assert.Equal(t, UseSite{Source: "roles/helm/tasks/main.yml:3", Expr: "{{ 'install' if helm_enabled else 'uninstall' }}", Count: 1}, *site("helm_enabled", FormTemplate))
	assert.Len(t, uses["helm_enabled"], 1, "{{ helm_enabled }} only renders it and 'helm_enabled' is a string: %v", uses["helm_enabled"])

	require.NotNil(t, site("flag_b", FormTemplate))
	assert.Equal(t, "roles/helm/tasks/main.yml:11", site("flag_b", FormTemplate).Source)
	assert.Equal(t, "{% if not flag_b %}", site("flag_b", FormTemplate).Expr)

	require.NotNil(t, site("flag_c", FormBoolCast))
	assert.Equal(t, "roles/helm/tasks/main.yml:16", site("flag_c", FormBoolCast).Source)
	assert.Nil(t, site("flag_c", FormTemplate))
	require.NotNil(t, site("flag_d", FormCompared))
	assert.Nil(t, site("flag_d", FormTemplate))

	// flag_e: inside `and` in a task, then inside `or` in a play's vars.
	require.NotNil(t, site("flag_e", FormTemplate))
	assert.Equal(t, "playbooks/p.yml:3", site("flag_e", FormTemplate).Source, "files are read in order")
	assert.Equal(t, 2, site("flag_e", FormTemplate).Count)

	// flag_a: a bare when: stays FormBare; its Jinja use is counted apart.
	require.NotNil(t, site("flag_a", FormBare))
	assert.Equal(t, "roles/helm/tasks/main.yml:17", site("flag_a", FormBare).Source)
	require.NotNil(t, site("flag_a", FormTemplate))

	assert.Nil(t, uses["flag_f"], "templates/ is not read")
}

func TestTemplateForm(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"'a' if x else 'b'", FormTemplate},
		{"if x", FormTemplate},
		{"elif (x)", FormTemplate},
		{"x and y", FormTemplate},
		{"y or x", FormTemplate},
		{"not x", FormTemplate},
		{"x | bool", FormBoolCast},
		{"x|ansible.builtin.bool", FormBoolCast},
		{"x == true", FormCompared},
		{"x | default(false)", FormCompared},
		{"x", ""},
		{"foo.x and y", ""},
		{"x_y and z", ""},
	} {
		assert.Equal(t, tc.want, templateForm(tc.expr, "x"), tc.expr)
	}
}
