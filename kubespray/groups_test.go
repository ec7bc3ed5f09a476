package kubespray

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/parser"
	"github.com/layercheck/layercheck/test/testutil"
)

// dynInventory has a host for every path through kubespray's
// dynamic_groups role: legacy names, direct groups, a child group of
// kube_node, and legacy k8s-cluster (which no version maps).
const dynInventory = `[kube-master]
a

[kube_node]
b

[kube-node]
c

[kube_control_plane]
c

[workers]
d

[kube_node:children]
workers

[calico-rr]
e

[no-floating]
f

[k8s-cluster]
g

[etcd]
h
a
`

// dynPlaybook renders DynamicGroups() as kubespray's dynamic_groups task
// (group_by over a dict of mappings, when the host's group_names intersect
// the sources), then writes the resulting groups as JSON.
func dynPlaybook(out string) string {
	var b strings.Builder
	b.WriteString("- hosts: all\n  gather_facts: false\n  tasks:\n    - name: Match needed groups by their old names or definition\n      vars:\n        group_mappings:\n")
	for _, m := range DynamicGroups() {
		fmt.Fprintf(&b, "          %s:\n", m.Group)
		for _, f := range m.From {
			fmt.Fprintf(&b, "            - %s\n", f)
		}
	}
	b.WriteString(`      group_by:
        key: "{{ item.key }}"
      when: group_names | intersect(item.value) | length > 0
      loop: "{{ group_mappings | dict2items }}"
- hosts: localhost
  gather_facts: false
  connection: local
  vars:
    ansible_python_interpreter: "{{ ansible_playbook_python }}"
  tasks:
    - copy:
        content: "{{ groups | to_json }}"
        dest: ` + out + "\n")
	return b.String()
}

// TestApplyDynamicGroupsMatchesAnsible runs the dynamic_groups task with
// ansible-core on a generated inventory and compares every group's hosts
// with ApplyDynamicGroups on the same inventory loaded by parser.Load.
func TestApplyDynamicGroupsMatchesAnsible(t *testing.T) {
	play := testutil.Ansible(t, "ansible-playbook")
	dir := t.TempDir()
	inv := filepath.Join(dir, "hosts.ini")
	out := filepath.Join(dir, "groups.json")
	pb := filepath.Join(dir, "dynamic_groups.yml")
	for p, c := range map[string]string{inv: dynInventory, pb: dynPlaybook(out)} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(play, "-i", inv, pb)
	cmd.Dir = dir
	cmd.Env = testutil.AnsibleEnv("ANSIBLE_LOCAL_TEMP=" + filepath.Join(dir, "tmp"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ansible-playbook: %v\n%s", err, b)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string][]string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}

	loaded, err := parser.Load(inv)
	if err != nil {
		t.Fatalf("parser.Load: %v", err)
	}
	ApplyDynamicGroups(loaded)
	got := map[string][]string{}
	for _, g := range loaded.Groups {
		for _, h := range loaded.HostsUnder(g.Name) {
			got[g.Name] = append(got[g.Name], h.Name)
		}
	}
	for _, m := range []map[string][]string{want, got} {
		for k, v := range m {
			sort.Strings(v)
			if len(v) == 0 {
				delete(m, k) // an empty group is the same as none here
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groups differ from ansible-core's\n got: %v\nwant: %v", got, want)
	}
	// The cases that matter, spelled out.
	for group, hosts := range map[string][]string{
		"kube_control_plane": {"a", "c"},
		"kube_node":          {"b", "c", "d"},
		"k8s_cluster":        {"b", "c", "d"}, // not a: its kube_control_plane came from kube-master in the same task
		"calico_rr":          {"e"},
		"no_floating":        {"f"},
	} {
		if !reflect.DeepEqual(want[group], hosts) {
			t.Errorf("ansible-core: %s = %v, expected %v", group, want[group], hosts)
		}
	}
}
