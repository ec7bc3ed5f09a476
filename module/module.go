// Package module implements the Ansible binary-module protocol and nothing
// else: Ansible copies the binary to the target and runs it with one
// argument, the path of a file holding the task's arguments as one JSON
// object. User options and Ansible's internal "_ansible_*" keys arrive
// mixed; the module prints exactly one JSON object on stdout and exits
// non-zero when it failed. Nothing is done for a binary module by Ansible:
// no argument validation, no check-mode handling, no no_log masking; this
// package does those.
//
// It knows nothing of kubespray.
package module

import (
	"syscall"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/layercheck/layercheck/parser/ansiblebool"
	"github.com/layercheck/layercheck/redact"
	"io"
	"math"
	"math/big"
	"os"
	"reflect"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
)

// Internals are the "_ansible_*" keys Ansible adds to every module's
// arguments (ansible-core's "Internal arguments" in the module developer
// guide). Unknown internal keys are kept in Other.
type Internals struct {
	CheckMode    bool     `json:"_ansible_check_mode"`
	Diff         bool     `json:"_ansible_diff"`
	Verbosity    int      `json:"_ansible_verbosity"`
	NoLog        bool     `json:"_ansible_no_log"`
	Debug        bool     `json:"_ansible_debug"`
	ModuleName   string   `json:"_ansible_module_name"`
	Version      string   `json:"_ansible_version"`
	TmpDir       string   `json:"_ansible_tmpdir"`
	RemoteTmp    string   `json:"_ansible_remote_tmp"`
	KeepRemote   bool     `json:"_ansible_keep_remote_files"`
	SyslogFacil  string   `json:"_ansible_syslog_facility"`
	StringConv   string   `json:"_ansible_string_conversion_action"`
	SelinuxFS    []string `json:"_ansible_selinux_special_fs"`
	Shell        string   `json:"_ansible_shell_executable"`
	IgnoreUnsafe bool     `json:"_ansible_ignore_unknown_opts"`
	Other        map[string]json.RawMessage
}

// NoLogPlaceholder replaces no_log option values in the invocation, as
// Ansible's own modules do.
const NoLogPlaceholder = "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"

// Args is a decoded arguments file.
type Args struct {
	Internals Internals
	// User are the user options as given, for the invocation echo.
	User map[string]json.RawMessage
}

// ParseArgs reads the arguments JSON, splits off the internals and decodes
// the user options strictly into opts (a pointer to a struct with json
// tags): an option opts does not declare is an error naming it and the
// supported ones, as Ansible's own argument spec does.
func ParseArgs(data []byte, opts any) (*Args, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, fmt.Errorf("module arguments are not a JSON object: %w", err)
	}
	a := &Args{User: map[string]json.RawMessage{}}
	internal := map[string]json.RawMessage{}
	for k, v := range all {
		if strings.HasPrefix(k, "_ansible_") {
			internal[k] = v
		} else {
			a.User[k] = v
		}
	}
	ib, _ := json.Marshal(internal)
	if err := json.Unmarshal(ib, &a.Internals); err != nil {
		return nil, fmt.Errorf("bad internal argument: %w", err)
	}
	known := map[string]bool{}
	for _, f := range jsonFields(reflect.TypeOf(a.Internals)) {
		known[f] = true
	}
	for k, v := range internal {
		if !known[k] {
			if a.Internals.Other == nil {
				a.Internals.Other = map[string]json.RawMessage{}
			}
			a.Internals.Other[k] = v
		}
	}
	if opts == nil {
		return a, nil
	}
	supported := jsonFields(reflect.TypeOf(opts))
	sup := map[string]bool{}
	for _, s := range supported {
		sup[s] = true
	}
	var unknown []string
	for k := range a.User {
		if !sup[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		sort.Strings(supported)
		return a, fmt.Errorf("Unsupported parameters for (%s) module: %s. Supported parameters include: %s.",
			moduleName(a), strings.Join(unknown, ", "), strings.Join(supported, ", "))
	}
	ub, _ := json.Marshal(coerceStrings(a.User, reflect.TypeOf(opts)))
	dec := json.NewDecoder(bytes.NewReader(ub))
	dec.DisallowUnknownFields()
	if err := dec.Decode(opts); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return a, fmt.Errorf("option %s: expected %s, got a JSON %s", te.Field, te.Type, te.Value)
		}
		return a, fmt.Errorf("bad module options: %w", err)
	}
	return a, nil
}

// coerceStrings returns user with the JSON strings given for bool, int and
// float options converted as Ansible's argument spec converts them for
// type bool, int and float: before ansible-core 2.19 a templated value
// such as "{{ n | int }}" or "{{ b | bool }}" reaches a module as a string
// ("7", "True"). A bool option takes what check_type_bool takes
// (ansiblebool.Boolean: y/yes/on/1/true/t and their opposites, the
// numbers 1 and 0; not "1.0"). A value that does not convert is left for
// the decoder to reject, naming the option.
func coerceStrings(user map[string]json.RawMessage, t reflect.Type) map[string]json.RawMessage {
	kinds := scalarFields(t)
	out := make(map[string]json.RawMessage, len(user))
	for k, v := range user {
		out[k] = v
		var str string
		kind, ok := kinds[k]
		if !ok {
			continue
		}
		if kind == reflect.Bool {
			// check_type_bool: boolean(value) for a str, int or float
			if b, err := ansiblebool.Boolean(jsonScalar(v)); err == nil {
				out[k] = json.RawMessage(strconv.FormatBool(b))
			}
			continue
		}
		if json.Unmarshal(v, &str) != nil {
			continue
		}
		s := strings.TrimSpace(str)
		switch kind {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				out[k] = json.RawMessage(strconv.FormatInt(n, 10))
			}
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if n, err := strconv.ParseUint(s, 10, 64); err == nil {
				out[k] = json.RawMessage(strconv.FormatUint(n, 10))
			}
		case reflect.Float32, reflect.Float64:
			if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				out[k] = json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64))
			}
		}
	}
	return out
}

// jsonScalar is a JSON string or number as Python's json.loads gives it
// (a str, an int, or a float when written with a fraction or exponent);
// nil for anything else.
func jsonScalar(raw json.RawMessage) any {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return nil
	}
	if i, ok := new(big.Int).SetString(n.String(), 10); ok {
		return i
	}
	if f, err := n.Float64(); err == nil {
		return f
	}
	return nil
}

// scalarFields maps the json name of each bool, integer and float option
// of struct type t (or a pointer to one; pointers to those kinds count,
// embedded untagged structs are walked) to its kind.
func scalarFields(t reflect.Type) map[string]reflect.Kind {
	out := map[string]reflect.Kind{}
	for _, f := range structFields(t) {
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if name == "" && f.Anonymous {
			for k, v := range scalarFields(ft) {
				if _, ok := out[k]; !ok {
					out[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		switch ft.Kind() {
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			out[name] = ft.Kind()
		}
	}
	return out
}

func moduleName(a *Args) string {
	if a.Internals.ModuleName != "" {
		return a.Internals.ModuleName
	}
	return "this"
}

// OptionNames lists the options a module with option struct t (or a
// pointer to it) accepts: the json names of its exported fields, those of
// untagged embedded structs included, in field order. Run rejects any
// other option.
func OptionNames(t reflect.Type) []string { return jsonFields(t) }

// jsonFields lists the json names of a struct type's exported fields.
func jsonFields(t reflect.Type) []string {
	var out []string
	for _, f := range structFields(t) {
		if !f.IsExported() {
			continue
		}
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if name == "-" {
			continue
		}
		if name == "" {
			if f.Anonymous {
				out = append(out, jsonFields(f.Type)...)
				continue
			}
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// structFields lists the fields of struct type t, or of the struct a
// pointer type t points to; nil for nil and any other kind.
func structFields(t reflect.Type) []reflect.StructField {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	out := make([]reflect.StructField, t.NumField())
	for i := range out {
		out[i] = t.Field(i)
	}
	return out
}

// noLogFields lists the json names of options tagged `ansible:"no_log"`.
func noLogFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for _, f := range structFields(t) {
		if strings.Contains(f.Tag.Get("ansible"), "no_log") {
			out[strings.Split(f.Tag.Get("json"), ",")[0]] = true
		}
	}
	return out
}

// Result is the module's one JSON answer. Extra keys are merged at the top
// level beside the standard ones.
type Result struct {
	Changed      bool           `json:"changed"`
	Failed       bool           `json:"failed"`
	Skipped      bool           `json:"skipped,omitempty"`
	Msg          string         `json:"msg,omitempty"`
	AnsibleFacts map[string]any `json:"ansible_facts,omitempty"`
	Warnings     []string       `json:"warnings,omitempty"`
	Extra        map[string]any `json:"-"`
	invocation   map[string]any
}

// MarshalJSON merges Extra and the invocation into the object.
func (r *Result) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	for k, v := range r.Extra {
		m[k] = v
	}
	m["changed"] = r.Changed
	m["failed"] = r.Failed
	if r.Skipped {
		m["skipped"] = true
	}
	if r.Msg != "" {
		m["msg"] = r.Msg
	}
	if r.AnsibleFacts != nil {
		m["ansible_facts"] = r.AnsibleFacts
	}
	if len(r.Warnings) > 0 {
		m["warnings"] = r.Warnings
	}
	if r.invocation != nil {
		m["invocation"] = r.invocation
	}
	return json.Marshal(m)
}

// Func is a module's body: it gets the decoded options and the internals,
// and returns the result; an error fails the task with its text as msg.
type Func func(ctx context.Context, args *Args) (*Result, error)

// Run is a module's whole life: it reads the arguments file named by
// argv[1], decodes the options into opts, calls fn, and writes exactly one
// JSON object to stdout. It returns the process exit code (non-zero when
// the result failed). Panics in fn become a failed result, not a trace on
// stdout.
func Run(ctx context.Context, argv []string, stdout io.Writer, opts any, fn Func) int {
	res, red := run(ctx, argv, opts, fn)
	b, err := json.Marshal(res)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"failed": true, "changed": false, "msg": "cannot encode module result: " + err.Error()})
		res.Failed = true
	}
	// every module result leaves through the one redaction
	stdout.Write(append(red.Bytes(b), '\n'))
	if res.Failed {
		return 1
	}
	return 0
}

func run(ctx context.Context, argv []string, opts any, fn Func) (res *Result, red *redact.Redactor) {
	red = redact.New()
	if len(argv) != 2 {
		return &Result{Failed: true, Msg: fmt.Sprintf("a binary module takes exactly one argument, the path of its JSON arguments file; got %d", len(argv)-1)}, red
	}
	data, err := readArgsFile(argv[1])
	if err != nil {
		return &Result{Failed: true, Msg: "cannot read module arguments: " + err.Error()}, red
	}
	args, err := ParseArgs(data, opts)
	red = redact.New(NoLogValues(args, opts)...)
	inv := invocation(args, opts)
	if err != nil {
		return &Result{Failed: true, Msg: err.Error(), invocation: inv}, red
	}
	defer func() {
		if p := recover(); p != nil {
			res = &Result{Failed: true, Msg: fmt.Sprintf("module crashed: %v", p), invocation: inv,
				Extra: map[string]any{"exception": string(debug.Stack())}}
		}
	}()
	res, err = fn(ctx, args)
	if res == nil {
		res = &Result{}
	}
	if err != nil {
		res.Failed = true
		if res.Msg == "" {
			res.Msg = err.Error()
		} else {
			res.Msg += ": " + err.Error()
		}
	}
	res.invocation = inv
	return res, red
}

// maxArgsBytes bounds the arguments file (Ansible writes a few kB; the
// lint's resolved values for 5,000 hosts stay far below).
const maxArgsBytes = 256 << 20

// readArgsFile reads the arguments file: a regular file of at most
// maxArgsBytes, never blocking on a FIFO.
func readArgsFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: is not a regular file (%s)", path, st.Mode().Type())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxArgsBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxArgsBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxArgsBytes)
	}
	return b, nil
}

// NoLogValues are the option values the result must not show, from the
// options tagged ansible:"no_log": with _ansible_no_log (no_log: true on
// the task) every string in them (an "@file" also without its "@");
// otherwise the values of keys whose name looks secret (redact.SecretName)
// and of secret-named name=value words. The values themselves are never
// returned to Ansible.
func NoLogValues(args *Args, opts any) []string {
	if args == nil {
		return nil
	}
	masked := noLogFields(reflect.TypeOf(opts))
	var out []string
	var walk func(name string, v any, all bool)
	walk = func(name string, v any, all bool) {
		switch x := v.(type) {
		case string:
			if all || redact.SecretName(name) {
				out = append(out, x)
				if all && strings.HasPrefix(x, "@") {
					out = append(out, x[1:])
				}
			}
			for _, w := range strings.Fields(x) {
				if k, val, ok := strings.Cut(w, "="); ok && redact.SecretName(k) {
					out = append(out, strings.Trim(val, `"'`))
				}
			}
		case []any:
			for _, it := range x {
				walk(name, it, all)
			}
		case map[string]any:
			for k, it := range x {
				walk(k, it, all || redact.SecretName(k))
			}
		}
	}
	keys := make([]string, 0, len(args.User))
	for k := range args.User {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !masked[k] {
			continue
		}
		var v any
		if json.Unmarshal(args.User[k], &v) == nil {
			walk(k, v, args.Internals.NoLog)
		}
	}
	return out
}

// invocation echoes the user options with no_log values masked; with
// _ansible_no_log the whole invocation is masked.
func invocation(args *Args, opts any) map[string]any {
	if args == nil {
		return nil
	}
	masked := noLogFields(reflect.TypeOf(opts))
	mod := map[string]any{}
	for k, raw := range args.User {
		if masked[k] || args.Internals.NoLog {
			mod[k] = NoLogPlaceholder
			continue
		}
		var v any
		if json.Unmarshal(raw, &v) == nil {
			mod[k] = v
		}
	}
	return map[string]any{"module_args": mod}
}
