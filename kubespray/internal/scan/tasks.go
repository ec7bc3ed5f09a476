package scan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// TaskFiles are the kubespray task files whose asserts ReadAsserts reads
// from a checkout, relative to the checkout.
var TaskFiles = []string{
	"roles/validate_inventory/tasks/main.yml",
	"roles/network_plugin/calico/tasks/check.yml",
	"roles/network_plugin/cilium/tasks/check.yml",
}

// ChoiceItem is one "VAR in ['a', 'b']" item of an assert's that: list.
type ChoiceItem struct {
	Var    string
	Values []string
	Expr   string
	Task   string
	// Source is "file:line" of the item.
	Source string
}

// RemovedItem is one entry of validate_inventory's removed_vars list.
type RemovedItem struct {
	Name   string
	Source string
}

// Asserts is what ReadAsserts found in a checkout's tasks.
type Asserts struct {
	Choices []ChoiceItem
	Removed []RemovedItem
	// RemovedFound is true when the "Fail if removed variables are used"
	// task exists (an empty Removed then means kubespray removes nothing).
	RemovedFound bool
}

var choiceRE = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*)\s+in\s+\[([^\[\]]*)\]\s*$`)
var quotedRE = regexp.MustCompile(`^\s*(?:'([^']*)'|"([^"]*)")\s*$`)

// ParseChoice reads an assert item of the form VAR in ['a', "b"] (string
// literals only), as kubespray writes its allowed-values checks.
func ParseChoice(expr string) (name string, values []string, ok bool) {
	m := choiceRE.FindStringSubmatch(expr)
	if m == nil {
		return "", nil, false
	}
	for _, item := range strings.Split(m[2], ",") {
		q := quotedRE.FindStringSubmatch(item)
		if q == nil {
			return "", nil, false
		}
		values = append(values, q[1]+q[2])
	}
	return m[1], values, len(values) > 0
}

// ReadAsserts reads the simple allowed-values asserts and the removed
// variables list from the task files of a kubespray checkout. Missing files
// are not an error (older or trimmed checkouts); malformed YAML is, naming
// file:line.
func ReadAsserts(root string) (*Asserts, error) {
	out := &Asserts{}
	for _, rel := range TaskFiles {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%s: %v", rel, err)
		}
		if len(doc.Content) == 0 {
			continue
		}
		tasks := deref(doc.Content[0])
		if tasks.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("%s:%d: a task file is a list of tasks", rel, tasks.Line)
		}
		for _, task := range tasks.Content {
			readTask(rel, deref(task), out)
		}
	}
	return out, nil
}

func mapGet(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return deref(n.Content[i+1])
		}
	}
	return nil
}

func readTask(rel string, task *yaml.Node, out *Asserts) {
	if task.Kind != yaml.MappingNode {
		return
	}
	// Blocks nest tasks.
	for _, k := range []string{"block", "rescue", "always"} {
		if b := mapGet(task, k); b != nil && b.Kind == yaml.SequenceNode {
			for _, t := range b.Content {
				readTask(rel, deref(t), out)
			}
		}
	}
	name := ""
	if n := mapGet(task, "name"); n != nil {
		name = n.Value
	}
	if rv := mapGet(mapGet(task, "vars"), "removed_vars"); rv != nil && rv.Kind == yaml.SequenceNode {
		out.RemovedFound = true
		for _, item := range rv.Content {
			item = deref(item)
			if item.Kind == yaml.ScalarNode && item.Value != "" {
				out.Removed = append(out.Removed, RemovedItem{Name: item.Value, Source: fmt.Sprintf("%s:%d", rel, item.Line)})
			}
		}
	}
	a := mapGet(task, "assert")
	if a == nil {
		a = mapGet(task, "ansible.builtin.assert")
	}
	that := mapGet(a, "that")
	if that == nil {
		return
	}
	items := []*yaml.Node{that}
	if that.Kind == yaml.SequenceNode {
		items = that.Content
	}
	for _, it := range items {
		it = deref(it)
		if it.Kind != yaml.ScalarNode {
			continue
		}
		if v, vals, ok := ParseChoice(it.Value); ok {
			out.Choices = append(out.Choices, ChoiceItem{Var: v, Values: vals, Expr: strings.TrimSpace(it.Value), Task: name,
				Source: fmt.Sprintf("%s:%d", rel, it.Line)})
		}
	}
}

// deref follows YAML aliases to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}
