// Package node checks one node of a kubespray cluster after cluster.yml,
// layer by layer. Each layer lives in its own file, implements Layer and
// registers itself in init(); the runner of package verify gives every
// layer its own timeout and recovers its panics, so one failing layer never
// stops the others.
//
// Layers read the node only through Env: files under Env.Root (verify.FS),
// and the network and systemd through the interfaces in Env, so tests point
// them at generated node trees and loopback servers.
//
// The etcd layer asks etcd for its status and member list through etcd's
// JSON gateway (POST /v3/maintenance/status and /v3/cluster/member/list on
// the client URL, over TLS with the admin certificate of etcd.env) with
// net/http, not through go.etcd.io/etcd/client/v3: the gRPC client,
// protobuf and zap made the node_facts module 15.3 MiB, and the module is
// copied to every host on every verify.yml run. The facts are the same
// (a test compares them with clientv3's answers from the same real etcd);
// the one difference is the wording of an error after the TLS handshake
// succeeded ("HTTP 503 ...: etcdserver: ..." instead of a gRPC status).
package node

import (
	"context"
	"time"

	"github.com/layercheck/layercheck/verify"
)

// Layer is one node layer of checks.
type Layer = verify.LayerOf[*Env]

var registry = verify.NewRegistry[*Env]("verify", nil)

// register adds a layer; each layer file calls it from init(). dependsOn
// names layers whose failure makes this layer's results skipped.
func register(name string, dependsOn []string, factory func() Layer) {
	registry.Register(name, dependsOn, factory)
}

// LayerNames lists the registered layers in name order.
func LayerNames() []string { return registry.Names() }

// Report is what a run gives: ansible_facts.layercheck_node.
type Report struct {
	Host    string                         `json:"host,omitempty"`
	Root    string                         `json:"root"`
	Status  verify.Status                  `json:"status"`
	Layers  map[string]*verify.LayerReport `json:"layers"`
	Summary verify.Summary                 `json:"summary"`
	// Defaults says whose defaults filled the options the role left
	// unset, when they are not kubespray v2.31.0's.
	Defaults string `json:"kubespray_defaults,omitempty"`
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
	rep := &Report{Host: env.Host, Root: env.Root, Defaults: env.Options.DefaultsFrom}
	rep.Layers = sel.Run(ctx, env, func(string) time.Duration { return timeout })
	rep.Status, rep.Summary = verify.Overall(rep.Layers)
	return rep, nil
}

// Env is what layers may read: the node's files under Root, the inventory
// values the role passes in, and the seams to the network and systemd.
type Env struct {
	// FS reads the node's files under FS.Root ("/" on a node, a generated
	// tree in tests).
	verify.FS
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
	Systemd verify.Systemd
	// Cmder runs node programs (e.g. `helm version --short` when the
	// binary carries no readable version); nil means never run any.
	Cmder verify.Cmder
	// Dial opens the layers' connections (etcd, DNS over TCP) from the
	// node; nil means dial from this machine (DNS over UDP).
	Dial verify.DialFunc
}

// Addr returns the address to contact for addr, after AddrMap.
func (e *Env) Addr(addr string) string {
	if m, ok := e.AddrMap[addr]; ok {
		return m
	}
	return addr
}
