package module

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type testOpts struct {
	Path     string `json:"path"`
	Count    int    `json:"count"`
	Password string `json:"password" ansible:"no_log"`
}

func runWith(t *testing.T, args string, fn Func) (map[string]any, int, string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "args")
	require.NoError(t, os.WriteFile(f, []byte(args), 0o600))
	var out bytes.Buffer
	var opts testOpts
	code := Run(context.Background(), []string{"mod", f}, &out, &opts, fn)
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
	require.NoError(t, dec.Decode(&m), "stdout is not one JSON object:\n%s", out.String())
	require.False(t, dec.More(), "stdout holds more than one JSON object: %s", out.String())
	return m, code, out.String()
}

// moduleArgs is the result's invocation.module_args.
func moduleArgs(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	inv, ok := m["invocation"].(map[string]any)
	require.True(t, ok, "no invocation in %v", m)
	args, ok := inv["module_args"].(map[string]any)
	require.True(t, ok, "no invocation.module_args in %v", m)
	return args
}

func ok(context.Context, *Args) (*Result, error) { return &Result{}, nil }

func TestRunSeparatesInternalsAndDecodesOptions(t *testing.T) {
	var seen *Args
	m, code, _ := runWith(t, `{"path":"/x","count":3,"_ansible_check_mode":true,"_ansible_verbosity":2,"_ansible_new_thing":1}`,
		func(ctx context.Context, a *Args) (*Result, error) {
			seen = a
			return &Result{Msg: "fine", AnsibleFacts: map[string]any{"k": 1}, Extra: map[string]any{"n": 2}}, nil
		})
	require.Equal(t, 0, code, "result %v", m)
	assert.Equal(t, false, m["failed"])
	assert.Equal(t, false, m["changed"])
	assert.Equal(t, "fine", m["msg"])
	assert.Equal(t, float64(2), m["n"])
	require.NotNil(t, seen)
	assert.True(t, seen.Internals.CheckMode, "internals %+v", seen.Internals)
	assert.Equal(t, 2, seen.Internals.Verbosity)
	assert.Contains(t, seen.Internals.Other, "_ansible_new_thing", "unknown internal key not kept")
	inv := moduleArgs(t, m)
	assert.Equal(t, "/x", inv["path"])
	assert.Equal(t, float64(3), inv["count"])
	assert.NotContains(t, inv, "_ansible_check_mode", "internals leaked into invocation")
}

func TestRunRejectsUnknownOption(t *testing.T) {
	called := false
	m, code, _ := runWith(t, `{"path":"/x","colour":"red","_ansible_module_name":"layercheck.kubespray.x"}`,
		func(ctx context.Context, a *Args) (*Result, error) { called = true; return &Result{}, nil })
	assert.NotEqual(t, 0, code)
	assert.False(t, called, "the module ran despite an unknown option")
	assert.Equal(t, true, m["failed"])
	msg, _ := m["msg"].(string)
	assert.Contains(t, msg, "colour")
	assert.Contains(t, msg, "Supported parameters include: count, password, path")
	assert.Contains(t, msg, "layercheck.kubespray.x")
}

func TestRunRejectsWrongType(t *testing.T) {
	m, code, _ := runWith(t, `{"count":"three"}`, ok)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, m["msg"], "count")
}

// Before ansible-core 2.19 "{{ n | int }}" and "{{ b | bool }}" reach a
// module as strings; like Ansible's argument spec, the module converts them
// for bool, int and float options, and still rejects what does not convert.
func TestParseArgsConvertsStringsAsAnsible(t *testing.T) {
	type Embedded struct {
		Ratio float64 `json:"ratio"`
	}
	var opts struct {
		Embedded
		Count   int    `json:"count"`
		Enabled bool   `json:"enabled"`
		Off     *bool  `json:"off"`
		VNI     *int   `json:"vni"`
		Port    uint16 `json:"port"`
		Name    string `json:"name"`
	}
	_, err := ParseArgs([]byte(`{"count":" 7","enabled":"True","off":"no","vni":"0","port":"8080","ratio":"2.5","name":"42"}`), &opts)
	require.NoError(t, err)
	assert.Equal(t, 7, opts.Count)
	assert.True(t, opts.Enabled)
	require.NotNil(t, opts.Off)
	assert.False(t, *opts.Off)
	require.NotNil(t, opts.VNI, "an explicit 0 is a value")
	assert.Equal(t, 0, *opts.VNI)
	assert.Equal(t, uint16(8080), opts.Port)
	assert.Equal(t, 2.5, opts.Ratio)
	assert.Equal(t, "42", opts.Name, "a string option stays as given")

	for _, bad := range []string{`{"count":"7.5"}`, `{"vni":"one"}`, `{"enabled":"maybe"}`, `{"ratio":"NaN"}`, `{"port":"-1"}`,
		// check_type_bool refuses these (convert_bool.boolean, strict)
		`{"enabled":"1.0"}`, `{"enabled":"0.0"}`, `{"enabled":""}`, `{"enabled":2}`, `{"enabled":0.5}`} {
		_, err := ParseArgs([]byte(bad), &opts)
		assert.Error(t, err, bad)
	}
	// and takes y/t and the numbers 1 and 0 (int or float) as it does
	for arg, want := range map[string]bool{`"y"`: true, `"T"`: true, `" n "`: false, `1`: true, `0`: false, `1.0`: true, `0.0`: false} {
		var b struct {
			Enabled bool `json:"enabled"`
		}
		_, err := ParseArgs([]byte(`{"enabled":`+arg+`}`), &b)
		require.NoError(t, err, arg)
		assert.Equal(t, want, b.Enabled, arg)
	}
}

func TestRunMasksNoLog(t *testing.T) {
	m, _, out := runWith(t, `{"password":"s3cr3t","path":"/p"}`, ok)
	assert.NotContains(t, out, "s3cr3t", "no_log value printed")
	assert.Equal(t, NoLogPlaceholder, moduleArgs(t, m)["password"])
	_, _, out = runWith(t, `{"path":"/secret-path","_ansible_no_log":true}`, ok)
	assert.NotContains(t, out, "/secret-path", "_ansible_no_log did not mask the invocation")
}

func TestRunFailuresAndPanics(t *testing.T) {
	m, code, _ := runWith(t, `{}`, func(ctx context.Context, a *Args) (*Result, error) {
		return &Result{Msg: "checking"}, errors.New("boom")
	})
	assert.Equal(t, 1, code)
	assert.Equal(t, true, m["failed"])
	assert.Equal(t, "checking: boom", m["msg"])

	m, code, _ = runWith(t, `{}`, func(ctx context.Context, a *Args) (*Result, error) { panic("oops") })
	assert.Equal(t, 1, code)
	assert.Equal(t, true, m["failed"])
	assert.Contains(t, m["msg"], "oops")

	m, code, _ = runWith(t, `not json`, ok)
	assert.Equal(t, 1, code)
	assert.Contains(t, m["msg"], "not a JSON object")
}

func TestRunWrongArgc(t *testing.T) {
	var out bytes.Buffer
	code := Run(context.Background(), []string{"mod"}, &out, nil, ok)
	assert.Equal(t, 1, code)
	assert.Contains(t, out.String(), "exactly one argument")

	out.Reset()
	code = Run(context.Background(), []string{"mod", "/nonexistent/args"}, &out, nil, ok)
	assert.Equal(t, 1, code)
	assert.Contains(t, out.String(), "cannot read module arguments")
}
