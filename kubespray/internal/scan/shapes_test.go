package scan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A template rendered by a looping task reads fields of each item, and a
// template's loop over a field of each item reads fields of its elements:
// both are in the shape, with where each field is first read.
func TestReadShapesTemplateLoops(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		"roles/containerd/tasks/main.yml": "- name: Write hosts.toml file\n  template:\n    src: hosts.toml.j2\n    dest: \"/etc/containerd/certs.d/{{ item.prefix }}/hosts.toml\"\n  loop: \"{{ containerd_registries_mirrors }}\"\n",
		"roles/containerd/templates/hosts.toml.j2": "server = \"{{ item.server | default('https://' + item.prefix) }}\"\n" +
			"{% for mirror in item.mirrors %}\n[host.\"{{ mirror.host }}\"]\n  capabilities = {{ mirror.capabilities }}\n{% endfor %}\n",
		"roles/crio/templates/registries.conf.j2": "{% for reg in crio_registries %}\n[[registry]]\nprefix = \"{{ reg.prefix }}\"\n" +
			"{% for m in reg.mirrors %}\nlocation = \"{{ m.location }}\"\n{% endfor %}\n{% endfor %}\n",
	}
	for p, s := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(src, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(src, p), []byte(s), 0o644))
	}
	defs := map[string][]Def{
		"containerd_registries_mirrors": {{Type: TypeList, File: "roles/containerd/defaults/main.yml", Line: 3,
			Default: []any{map[string]any{"prefix": "docker.io", "mirrors": []any{map[string]any{"host": "https://registry-1.docker.io", "skip_verify": false}}}}}},
		"crio_registries": {{Type: TypeList, File: "roles/crio/defaults/main.yml", Line: 7, Default: []any{}}},
	}
	shapes, err := readShapes(src, src, defs, map[string]string{})
	require.NoError(t, err)

	c := shapes["containerd_registries_mirrors"]
	require.NotNil(t, c)
	assert.Equal(t, []string{"mirrors", "prefix", "server"}, c.Fields)
	assert.Equal(t, "roles/containerd/tasks/main.yml:5", c.Reads["prefix"])
	assert.Equal(t, "roles/containerd/templates/hosts.toml.j2:1", c.Reads["server"])
	assert.Equal(t, "roles/containerd/templates/hosts.toml.j2:2", c.Reads["mirrors"])
	m := c.Items["mirrors"]
	require.NotNil(t, m)
	assert.Equal(t, TypeDict, m.Elem)
	assert.Equal(t, []string{"capabilities", "host", "skip_verify"}, m.Fields)
	assert.Equal(t, "roles/containerd/templates/hosts.toml.j2:3", m.Reads["host"])

	r := shapes["crio_registries"]
	require.NotNil(t, r)
	assert.Equal(t, TypeDict, r.Elem)
	assert.Equal(t, []string{"mirrors", "prefix"}, r.Fields)
	assert.Equal(t, "roles/crio/templates/registries.conf.j2:1", r.Reads["prefix"])
	require.NotNil(t, r.Items["mirrors"])
	assert.Equal(t, []string{"location"}, r.Items["mirrors"].Fields)
	assert.Equal(t, "roles/crio/templates/registries.conf.j2:5", r.Items["mirrors"].Reads["location"])
}
