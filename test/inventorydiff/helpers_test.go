// Package inventorydiff_test checks `layercheck inventory --list` against
// `ansible-inventory --list` from ansible-core 2.19 on the same inventories:
// hosts, group membership and every host variable must be equal.
package inventorydiff_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/layercheck/layercheck/test/testutil"
)

var (
	buildOnce sync.Once
	cliPath   string
	cliDir    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if cliDir != "" {
		os.RemoveAll(cliDir)
	}
	os.Exit(code)
}

// cli builds cmd/layercheck once for the whole package.
func cli(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "inventorydiff-cli-")
		if err != nil {
			t.Fatalf("temp dir: %v", err)
		}
		cliDir = dir
		cliPath = testutil.BuildCLI(t, dir)
	})
	if cliPath == "" {
		t.Fatal("building the layercheck CLI failed in an earlier test")
	}
	return cliPath
}

type result struct {
	stdout []byte
	stderr string
	code   int
}

func run(t *testing.T, dir string, env []string, timeout time.Duration, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: timed out after %s\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), timeout, errb.String())
	}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s: %v", name, err)
		}
		code = ee.ExitCode()
	}
	return result{out.Bytes(), errb.String(), code}
}

// ansibleInventory runs the venv's ansible-inventory with args in an empty
// working directory (so no ansible.cfg or playbook-adjacent group_vars is
// picked up) and testutil.AnsibleEnv's empty configuration file.
func ansibleInventory(t *testing.T, args ...string) result {
	t.Helper()
	bin := testutil.Ansible(t, "ansible-inventory")
	cwd := t.TempDir()
	env := testutil.AnsibleEnv("HOME=" + cwd)
	return run(t, cwd, env, 3*time.Minute, bin, args...)
}

func layercheck(t *testing.T, args ...string) result {
	t.Helper()
	return run(t, t.TempDir(), os.Environ(), time.Minute, cli(t), append([]string{"inventory"}, args...)...)
}

// decodePy decodes Python's json.dumps output: NaN and ±Infinity become the
// strings "<NaN>", "<Infinity>", "<-Infinity>"; numbers stay json.Number so
// that 1 and 1.0 differ.
func decodePy(b []byte) (any, error) {
	var sb bytes.Buffer
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			sb.WriteByte(c)
			if c == '\\' && i+1 < len(b) {
				i++
				sb.WriteByte(b[i])
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
			sb.WriteByte(c)
			continue
		}
		matched := false
		for _, tok := range []string{"-Infinity", "Infinity", "NaN"} {
			if bytes.HasPrefix(b[i:], []byte(tok)) {
				sb.WriteString(`"<` + tok + `>"`)
				i += len(tok) - 1
				matched = true
				break
			}
		}
		if !matched {
			sb.WriteByte(c)
		}
	}
	dec := json.NewDecoder(&sb)
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// diff lists the paths where got differs from want (at most max).
func diff(want, got any, path string, out *[]string, max int) {
	if len(*out) >= max {
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: ansible has a dict, layercheck has %s", path, show(got)))
			return
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			p := path + "." + k
			wv, inW := w[k]
			gv, inG := g[k]
			switch {
			case !inW:
				*out = append(*out, fmt.Sprintf("%s: only layercheck has it: %s", p, show(gv)))
			case !inG:
				*out = append(*out, fmt.Sprintf("%s: only ansible has it: %s", p, show(wv)))
			default:
				diff(wv, gv, p, out, max)
			}
			if len(*out) >= max {
				return
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: ansible has a list, layercheck has %s", path, show(got)))
			return
		}
		if len(w) != len(g) {
			*out = append(*out, fmt.Sprintf("%s: ansible has %d items %s, layercheck %d %s", path, len(w), show(w), len(g), show(g)))
			return
		}
		for i := range w {
			diff(w[i], g[i], fmt.Sprintf("%s[%d]", path, i), out, max)
		}
	default:
		if fmt.Sprintf("%T:%v", want, want) != fmt.Sprintf("%T:%v", got, got) {
			*out = append(*out, fmt.Sprintf("%s: ansible %s, layercheck %s", path, show(want), show(got)))
		}
	}
}

func show(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	if n, ok := v.(json.Number); ok {
		return "number " + n.String()
	}
	return s
}

// compareList runs both tools with args and fails on any difference in
// groups, hosts or host variables. It returns ansible's decoded output.
// wantHosts is the least number of hosts ansible must report, so that a
// case cannot pass by both sides loading nothing.
func compareList(t *testing.T, wantHosts int, args ...string) map[string]any {
	t.Helper()
	args = append(args, "--list")
	return compareWith(t, ansibleInventory(t, args...), wantHosts, args...)
}

// compareWith is compareList with ansible-inventory's result already at hand.
func compareWith(t *testing.T, a result, wantHosts int, args ...string) map[string]any {
	t.Helper()
	if a.code != 0 {
		t.Fatalf("ansible-inventory %s: exit %d\n%s", strings.Join(args, " "), a.code, a.stderr)
	}
	l := layercheck(t, args...)
	if l.code != 0 {
		t.Fatalf("layercheck inventory %s: exit %d\n%s", strings.Join(args, " "), l.code, l.stderr)
	}
	want, err := decodePy(a.stdout)
	if err != nil {
		t.Fatalf("decoding ansible-inventory output: %v\n%s", err, a.stdout)
	}
	got, err := decodePy(l.stdout)
	if err != nil {
		t.Fatalf("decoding layercheck output: %v\n%s", err, l.stdout)
	}
	var diffs []string
	diff(want, got, "", &diffs, 20)
	if len(diffs) > 0 {
		t.Fatalf("layercheck inventory differs from ansible-inventory for %s:\n  %s\nansible-inventory stderr:\n%s\nlayercheck stderr:\n%s",
			strings.Join(args, " "), strings.Join(diffs, "\n  "), a.stderr, l.stderr)
	}
	if !bytes.Equal(bytes.TrimSpace(a.stdout), bytes.TrimSpace(l.stdout)) {
		t.Errorf("same data but not the same text as ansible-inventory (first difference at line %d)", firstDiffLine(a.stdout, l.stdout))
	}
	m, _ := want.(map[string]any)
	if n := countHosts(m); n < wantHosts {
		t.Fatalf("ansible-inventory reports %d hosts, the case expects at least %d: the case does not test what it should\n%s", n, wantHosts, a.stderr)
	}
	return m
}

// countHosts counts the distinct hosts listed in groups.
func countHosts(m map[string]any) int {
	seen := map[string]bool{}
	for k, g := range m {
		if k == "_meta" {
			continue
		}
		gm, _ := g.(map[string]any)
		hs, _ := gm["hosts"].([]any)
		for _, h := range hs {
			seen[fmt.Sprint(h)] = true
		}
	}
	return len(seen)
}

func firstDiffLine(a, b []byte) int {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

// compareHost compares `--host name` output of both tools.
func compareHost(t *testing.T, host string, args ...string) {
	t.Helper()
	args = append(args, "--host", host)
	a := ansibleInventory(t, args...)
	if a.code != 0 {
		t.Fatalf("ansible-inventory %s: exit %d\n%s", strings.Join(args, " "), a.code, a.stderr)
	}
	l := layercheck(t, args...)
	if l.code != 0 {
		t.Fatalf("layercheck inventory %s: exit %d\n%s", strings.Join(args, " "), l.code, l.stderr)
	}
	if !bytes.Equal(bytes.TrimSpace(a.stdout), bytes.TrimSpace(l.stdout)) {
		t.Fatalf("--host %s differs (line %d):\nansible-inventory:\n%s\nlayercheck:\n%s", host, firstDiffLine(a.stdout, l.stdout), a.stdout, l.stdout)
	}
	if len(bytes.TrimSpace(a.stdout)) < 10 {
		t.Fatalf("--host %s: ansible-inventory printed no variables: %s", host, a.stdout)
	}
}
