package scan

import (
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
)

// A template chosen by a condition, a role run for one plugin, an {% if %}
// block: each read keeps its conditions; a variable also read
// unconditionally is left out.
func TestReadGuards(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteTree(t, dir, map[string]string{
		"playbooks/cluster.yml":           "- hosts: all\n  roles:\n    - role: engine\n    - role: net\n",
		"roles/net/meta/main.yml":         "dependencies:\n  - role: net/calico\n    when: kube_network_plugin == 'calico'\n",
		"roles/net/calico/tasks/main.yml": "- name: x\n  debug:\n    msg: \"{{ calico_x }}\"\n",
		"roles/engine/tasks/main.yml": "- name: config\n  template:\n    src: \"{{ 'new.j2' if ver is version('2.0.0', '>=') else 'old.j2' }}\"\n    dest: /etc/x\n" +
			"- name: plain\n  debug:\n    msg: \"{{ both }}\"\n",
		"roles/engine/templates/old.j2": "{{ auth }}\n{{ both }}\n",
		"roles/engine/templates/new.j2": "{% if tracing %}\n{{ endpoint }}\n{% else %}\n{{ other }}\n{% endif %}\n",
	})
	defs := map[string][]Def{}
	for _, n := range []string{"calico_x", "auth", "both", "endpoint", "other", "tracing", "ver", "kube_network_plugin"} {
		defs[n] = []Def{{}}
	}
	g, err := ReadGuards(dir, defs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"calico_x": {"kube_network_plugin == 'calico'"},
		"auth":     {"not (ver is version('2.0.0', '>='))"},
		"endpoint": {"ver is version('2.0.0', '>=')", "tracing"},
		"other":    {"ver is version('2.0.0', '>=')", "not (tracing)"},
		"tracing":  {"ver is version('2.0.0', '>=')"}, // the if's own condition
	}
	for n, exprs := range want {
		reads := g[n]
		if len(reads) != 1 || len(reads[0].Guards) != len(exprs) {
			t.Fatalf("%s: %+v, want one read under %q", n, reads, exprs)
		}
		for i, e := range exprs {
			if reads[0].Guards[i].Expr != e {
				t.Errorf("%s guard %d = %q, want %q", n, i, reads[0].Guards[i].Expr, e)
			}
		}
	}
	if g["auth"][0].Guards[0].Else != "new.j2" || g["auth"][0].Guards[0].Source != "roles/engine/tasks/main.yml:1" {
		t.Errorf("auth guard %+v", g["auth"][0].Guards[0])
	}
	for _, n := range []string{"both", "ver", "kube_network_plugin"} {
		if g[n] != nil {
			t.Errorf("%s is read unconditionally, got %+v", n, g[n])
		}
	}
}
