package scan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/layercheck/layercheck/parser"
)

// TaskFiles are the kubespray task files whose asserts ReadAsserts reads
// from a checkout, relative to the checkout.
var TaskFiles = []string{
	"roles/validate_inventory/tasks/main.yml",
	"roles/network_plugin/calico/tasks/check.yml",
	"roles/network_plugin/cilium/tasks/check.yml",
	// before kubespray v2.28, validate_inventory's checks lived here
	"roles/kubernetes/preinstall/tasks/0040-verify-settings.yml",
}

// ChoiceItem is one "VAR in ['a', 'b']" item of an assert's that: list.
type ChoiceItem struct {
	Var    string
	Values []string
	Expr   string
	Task   string
	// Msg is the assert's msg when a plain string ("" otherwise).
	Msg string `json:",omitempty"`
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
		tasks, err := parser.LoadYAML(rel, data, nil)
		if err != nil {
			return nil, err
		}
		if tasks == nil || tasks.Kind == parser.KindNull {
			continue
		}
		if tasks.Kind != parser.KindList {
			return nil, fmt.Errorf("%s: a task file is a list of tasks", tasks.Pos)
		}
		for _, task := range tasks.List {
			readTask(rel, task, out, 0)
		}
	}
	return out, nil
}

// get is a mapping's value for key, or nil (also for a non-mapping).
func get(v *parser.Value, key string) *parser.Value {
	if v == nil || v.Kind != parser.KindMap {
		return nil
	}
	return v.Map.Get(key)
}

func readTask(rel string, task *parser.Value, out *Asserts, depth int) {
	if task == nil || task.Kind != parser.KindMap || depth > 50 {
		return
	}
	// Blocks nest tasks.
	for _, k := range []string{"block", "rescue", "always"} {
		if b := get(task, k); b != nil && b.Kind == parser.KindList {
			for _, t := range b.List {
				readTask(rel, t, out, depth+1)
			}
		}
	}
	name := ""
	if n := get(task, "name"); n != nil && n.Kind == parser.KindString {
		name = n.Str
	}
	if rv := get(get(task, "vars"), "removed_vars"); rv != nil && rv.Kind == parser.KindList {
		out.RemovedFound = true
		for _, item := range rv.List {
			if item != nil && item.Kind == parser.KindString && item.Str != "" {
				out.Removed = append(out.Removed, RemovedItem{Name: item.Str, Source: fmt.Sprintf("%s:%d", rel, item.Pos.Line)})
			}
		}
	}
	a := get(task, "assert")
	if a == nil {
		a = get(task, "ansible.builtin.assert")
	}
	that := get(a, "that")
	if that == nil {
		return
	}
	msg := ""
	if m := get(a, "msg"); m != nil && m.Kind == parser.KindString {
		msg = m.Str
	}
	items := []*parser.Value{that}
	if that.Kind == parser.KindList {
		items = that.List
	}
	for _, it := range items {
		if it == nil || it.Kind != parser.KindString {
			continue
		}
		if v, vals, ok := ParseChoice(it.Str); ok {
			out.Choices = append(out.Choices, ChoiceItem{Var: v, Values: vals, Expr: strings.TrimSpace(it.Str), Task: name, Msg: msg,
				Source: fmt.Sprintf("%s:%d", rel, it.Pos.Line)})
		}
	}
}
