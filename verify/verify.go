// Package verify checks one node of a kubespray cluster after cluster.yml,
// layer by layer. Each layer lives in its own file, implements Layer and
// registers itself in init(); the runner gives every layer its own timeout
// and recovers its panics, so one failing layer never stops the others.
//
// Layers read the node only through Env: files under Env.Root, and the
// network and systemd through the interfaces in Env, so tests point them at
// fixture trees and loopback servers.
package verify

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"time"
)

// Status is the outcome of a check or a layer.
type Status string

// Statuses, from best to worst; a layer's status is the worst of its checks.
const (
	StatusOK      Status = "ok"
	StatusSkipped Status = "skipped"
	StatusWarn    Status = "warn"
	StatusFail    Status = "fail"
	// StatusError means the check itself could not run (panic, timeout).
	StatusError Status = "error"
)

func (s Status) rank() int {
	switch s {
	case StatusOK:
		return 0
	case StatusSkipped:
		return 1
	case StatusWarn:
		return 2
	case StatusFail:
		return 3
	case StatusError:
		return 4
	}
	return 4
}

// Worse returns the worse of two statuses.
func Worse(a, b Status) Status {
	if b.rank() > a.rank() {
		return b
	}
	return a
}

// Result is one checked property: what was expected, what was found, and
// what to do about it. Keys are snake_case so playbooks can reach them.
type Result struct {
	Layer       string `json:"layer"`
	Check       string `json:"check"`
	Status      Status `json:"status"`
	Msg         string `json:"msg"`
	Expected    any    `json:"expected,omitempty"`
	Actual      any    `json:"actual,omitempty"`
	Evidence    any    `json:"evidence,omitempty"`
	Remediation string `json:"remediation,omitempty"`
}

// ErrNotApplicable is returned (wrapped) by a layer that does not apply to
// this host, e.g. etcd on a host outside the etcd group; it maps to skipped.
var ErrNotApplicable = errors.New("not applicable on this host")

// Layer is one node layer of checks.
type Layer = LayerOf[*Env]

var registry = NewRegistry[*Env]("verify", nil)

// register adds a layer; each layer file calls it from init(). dependsOn
// names layers whose failure makes this layer's results skipped.
func register(name string, dependsOn []string, factory func() Layer) {
	registry.Register(name, dependsOn, factory)
}

// LayerNames lists the registered layers in name order.
func LayerNames() []string { return registry.Names() }

// LayerReport is one layer's outcome.
type LayerReport struct {
	Status     Status   `json:"status"`
	Results    []Result `json:"results"`
	Facts      any      `json:"facts,omitempty"`
	DurationMS int64    `json:"duration_ms"`
}

// Summary counts results by status.
type Summary struct {
	Total   int `json:"total"`
	OK      int `json:"ok"`
	Warn    int `json:"warn"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	Errored int `json:"errored"`
}

// Report is what a run gives: ansible_facts.layercheck_node.
type Report struct {
	Host    string                  `json:"host,omitempty"`
	Root    string                  `json:"root"`
	Status  Status                  `json:"status"`
	Layers  map[string]*LayerReport `json:"layers"`
	Summary Summary                 `json:"summary"`
}

// Run runs the selected layers (all registered when only is empty, minus
// skip) concurrently, each under its own timeout (Env.LayerTimeout, default
// 30s), and collects a Report.
func Run(ctx context.Context, env *Env, only, skip []string) (*Report, error) {
	sel, err := registry.Select(only, skip)
	if err != nil {
		return nil, err
	}
	timeout := env.LayerTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	rep := &Report{Host: env.Host, Root: env.Root}
	rep.Layers = sel.Run(ctx, env, func(string) time.Duration { return timeout })
	rep.Status, rep.Summary = Overall(rep.Layers)
	return rep, nil
}

// Env is what layers may read: the node's files under Root, the inventory
// values the role passes in, and the seams to the network and systemd.
type Env struct {
	// Root is the node's filesystem root ("/" on a node, a fixture tree in tests).
	Root string
	// Host is the inventory_hostname, for messages.
	Host string
	// Now is the time certificates are judged at; tests pass it explicitly.
	Now time.Time
	// LayerTimeout bounds each layer; NetTimeout bounds each network call.
	LayerTimeout time.Duration
	NetTimeout   time.Duration
	// Options are the kubespray values the layers need.
	Options Options
	// AddrMap maps an address a layer would contact (e.g. "169.254.25.10:53")
	// to the one it really contacts (e.g. "127.0.0.2:5353"), for tests.
	AddrMap map[string]string
	// Systemd reads unit state; nil means the host has no systemd.
	Systemd Systemd
	// Cmder runs node programs (e.g. `helm version --short` when the
	// binary carries no readable version); nil means never run any.
	Cmder Cmder
	// FS reads the node's files (paths from Path); nil means this
	// machine's file system. `layercheck verify` gives one over SFTP.
	FS NodeFS
	// Dial opens the layers' connections (etcd, DNS over TCP) from the
	// node; nil means dial from this machine (DNS over UDP).
	Dial DialFunc
}

// Systemd reads the state of a unit as `systemctl show` gives it.
type Systemd interface {
	// Show returns properties such as ActiveState, SubState, UnitFileState, MainPID.
	Show(ctx context.Context, unit string) (map[string]string, error)
}

// Path maps an absolute node path ("/etc/etcd.env") under Root.
func (e *Env) Path(p string) string {
	return filepath.Join(e.Root, filepath.FromSlash(strings.TrimPrefix(p, "/")))
}

// Display strips Root again, so reports show node paths.
func (e *Env) Display(p string) string {
	if e.Root == "" || e.Root == "/" {
		return p
	}
	rel, err := filepath.Rel(e.Root, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return p
	}
	return "/" + filepath.ToSlash(rel)
}

// ReadFile reads a node file (absolute node path) under Root.
func (e *Env) ReadFile(p string) ([]byte, error) { return e.fsys().ReadFile(e.Path(p)) }

// Addr returns the address to contact for addr, after AddrMap.
func (e *Env) Addr(addr string) string {
	if m, ok := e.AddrMap[addr]; ok {
		return m
	}
	return addr
}
