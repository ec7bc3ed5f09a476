package testutil

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"gopkg.in/yaml.v3"
)

// RunModule runs the module binary bin as Ansible does: one argument, the
// path of a JSON file with args (the options and Ansible's internal keys;
// a string is written as it is), and env added to the test's environment.
// It returns the one JSON object the module printed and its exit code.
func RunModule(t testing.TB, bin string, env []string, args any) (map[string]any, int) {
	t.Helper()
	var data []byte
	switch a := args.(type) {
	case string:
		data = []byte(a)
	default:
		data, _ = json.Marshal(a)
	}
	f := filepath.Join(t.TempDir(), "args")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, f)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("module printed no single JSON object: %v\n%s", err, out)
	}
	return res, code
}

// ModuleDoc reads the sidecar documentation plugins/modules/<name>.yml of
// the checkout and returns its DOCUMENTATION module name, the option specs
// and the option names in sorted order.
func ModuleDoc(t testing.TB, name string) (module string, options map[string]map[string]any, names []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "plugins", "modules", name+".yml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Documentation struct {
			Module  string                    `yaml:"module"`
			Options map[string]map[string]any `yaml:"options"`
		} `yaml:"DOCUMENTATION"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for k := range doc.Documentation.Options {
		names = append(names, k)
	}
	sort.Strings(names)
	return doc.Documentation.Module, doc.Documentation.Options, names
}
