package module

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type testOpts struct {
	Path     string `json:"path"`
	Count    int    `json:"count"`
	Password string `json:"password" ansible:"no_log"`
}

func runWith(t *testing.T, args string, fn Func) (map[string]any, int, string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "args")
	if err := os.WriteFile(f, []byte(args), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var opts testOpts
	code := Run(context.Background(), []string{"mod", f}, &out, &opts, fn)
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out.String())
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON object: %s", out.String())
	}
	return m, code, out.String()
}

func TestRunSeparatesInternalsAndDecodesOptions(t *testing.T) {
	var seen *Args
	m, code, _ := runWith(t, `{"path":"/x","count":3,"_ansible_check_mode":true,"_ansible_verbosity":2,"_ansible_new_thing":1}`,
		func(ctx context.Context, a *Args) (*Result, error) {
			seen = a
			return &Result{Msg: "fine", AnsibleFacts: map[string]any{"k": 1}, Extra: map[string]any{"n": 2}}, nil
		})
	if code != 0 || m["failed"] != false || m["changed"] != false || m["msg"] != "fine" || m["n"] != float64(2) {
		t.Fatalf("unexpected result %v (exit %d)", m, code)
	}
	if !seen.Internals.CheckMode || seen.Internals.Verbosity != 2 {
		t.Fatalf("internals not decoded: %+v", seen.Internals)
	}
	if _, ok := seen.Internals.Other["_ansible_new_thing"]; !ok {
		t.Fatalf("unknown internal key not kept: %+v", seen.Internals.Other)
	}
	inv := m["invocation"].(map[string]any)["module_args"].(map[string]any)
	if inv["path"] != "/x" || inv["count"] != float64(3) {
		t.Fatalf("invocation wrong: %v", inv)
	}
	if _, ok := inv["_ansible_check_mode"]; ok {
		t.Fatal("internals leaked into invocation")
	}
}

func TestRunRejectsUnknownOption(t *testing.T) {
	called := false
	m, code, _ := runWith(t, `{"path":"/x","colour":"red","_ansible_module_name":"layercheck.kubespray.x"}`,
		func(ctx context.Context, a *Args) (*Result, error) { called = true; return &Result{}, nil })
	msg, _ := m["msg"].(string)
	if code == 0 || called || m["failed"] != true ||
		!strings.Contains(msg, "colour") || !strings.Contains(msg, "Supported parameters include: count, password, path") ||
		!strings.Contains(msg, "layercheck.kubespray.x") {
		t.Fatalf("unknown option not rejected clearly: %v (exit %d, called %v)", m, code, called)
	}
}

func TestRunRejectsWrongType(t *testing.T) {
	m, code, _ := runWith(t, `{"count":"three"}`, func(ctx context.Context, a *Args) (*Result, error) { return &Result{}, nil })
	if code == 0 || !strings.Contains(m["msg"].(string), "count") {
		t.Fatalf("wrong type not reported: %v", m)
	}
}

func TestRunMasksNoLog(t *testing.T) {
	m, _, out := runWith(t, `{"password":"s3cr3t","path":"/p"}`, func(ctx context.Context, a *Args) (*Result, error) { return &Result{}, nil })
	if strings.Contains(out, "s3cr3t") {
		t.Fatalf("no_log value printed: %s", out)
	}
	if m["invocation"].(map[string]any)["module_args"].(map[string]any)["password"] != NoLogPlaceholder {
		t.Fatalf("no_log value not masked: %v", m)
	}
	_, _, out = runWith(t, `{"path":"/secret-path","_ansible_no_log":true}`, func(ctx context.Context, a *Args) (*Result, error) { return &Result{}, nil })
	if strings.Contains(out, "/secret-path") {
		t.Fatalf("_ansible_no_log did not mask the invocation: %s", out)
	}
}

func TestRunFailuresAndPanics(t *testing.T) {
	m, code, _ := runWith(t, `{}`, func(ctx context.Context, a *Args) (*Result, error) {
		return &Result{Msg: "checking"}, errors.New("boom")
	})
	if code != 1 || m["failed"] != true || m["msg"] != "checking: boom" {
		t.Fatalf("error not turned into failure: %v", m)
	}
	m, code, _ = runWith(t, `{}`, func(ctx context.Context, a *Args) (*Result, error) { panic("oops") })
	if code != 1 || m["failed"] != true || !strings.Contains(m["msg"].(string), "oops") {
		t.Fatalf("panic not turned into failure: %v", m)
	}
	m, code, _ = runWith(t, `not json`, func(ctx context.Context, a *Args) (*Result, error) { return &Result{}, nil })
	if code != 1 || !strings.Contains(m["msg"].(string), "not a JSON object") {
		t.Fatalf("bad JSON not reported: %v", m)
	}
}

func TestRunWrongArgc(t *testing.T) {
	var out bytes.Buffer
	code := Run(context.Background(), []string{"mod"}, &out, nil, func(ctx context.Context, a *Args) (*Result, error) { return &Result{}, nil })
	if code != 1 || !strings.Contains(out.String(), "exactly one argument") {
		t.Fatalf("missing args file not reported: %s", out.String())
	}
	out.Reset()
	code = Run(context.Background(), []string{"mod", "/nonexistent/args"}, &out, nil, func(ctx context.Context, a *Args) (*Result, error) { return &Result{}, nil })
	if code != 1 || !strings.Contains(out.String(), "cannot read module arguments") {
		t.Fatalf("unreadable args file not reported: %s", out.String())
	}
}
