package node

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/layercheck/layercheck/verify"
)

// Request is what the node_facts module and `layercheck node` take: the
// kubespray values (Options, with kubespray's variable names) plus how to
// run. JSON names are the module's option names.
type Request struct {
	Options
	// Root is the node's filesystem root (default "/"; tests pass a tree).
	Root string `json:"root"`
	// Host is the inventory_hostname, used in messages and file names
	// (member-<host>.pem).
	Host string `json:"inventory_hostname"`
	// Now judges certificates (RFC 3339; default: the current time).
	Now string `json:"now"`
	// LayerTimeout and NetTimeout are in seconds (defaults 30 and 5).
	LayerTimeout float64 `json:"layer_timeout"`
	NetTimeout   float64 `json:"net_timeout"`
	// AddrMap maps "host:port" a layer would contact to the "host:port" it
	// really contacts (tests map etcd and DNS to loopback servers).
	AddrMap map[string]string `json:"addr_map"`
	// Layers selects layers (default all); Skip removes some.
	Layers []string `json:"layers"`
	Skip   []string `json:"skip"`
	// Systemd: read units with systemctl (default: only when Root is "/").
	Systemd *bool `json:"systemd"`
}

// Env validates the request and builds the layers' Env for this machine.
// Errors name the module option ("option now: ...").
func (r *Request) Env() (*Env, error) {
	return r.EnvOn(nil, func(opt string) string { return "option " + opt })
}

// Remote is a node that is not this machine: its files, commands and
// connections (layercheck verify reaches it over SSH).
type Remote struct {
	FS    verify.NodeFS
	Cmder verify.Cmder
	Dial  verify.DialFunc
}

// EnvOn is Env for the node behind remote (nil: this machine), the root
// checked on that node; name spells an option in errors (the module's
// "option now", the inventory's "layercheck_verify_now"). Systemd and
// other commands are used only for root "/" unless Systemd says otherwise.
func (r *Request) EnvOn(remote *Remote, name func(opt string) string) (*Env, error) {
	o := r.Options
	o.Defaults()
	root := r.Root
	if root == "" {
		root = "/"
	}
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("%s: %q is not an absolute path", name("root"), root)
	}
	stat := os.Stat
	if remote != nil {
		stat = remote.FS.Stat
	}
	fi, err := stat(root)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name("root"), err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: %s is not a directory", name("root"), root)
	}
	now := time.Now().UTC()
	if r.Now != "" {
		if now, err = time.Parse(time.RFC3339, r.Now); err != nil {
			return nil, fmt.Errorf("%s: %q is not an RFC 3339 time (e.g. 2026-11-30T14:22:06Z)", name("now"), r.Now)
		}
	}
	if err := verify.CheckDefaultsRelease(o.KubesprayVersion); err != nil {
		return nil, fmt.Errorf("%s: %v", name("kubespray_version"), err)
	}
	if o.CertFailDays < 0 || o.CertWarnDays < o.CertFailDays {
		return nil, fmt.Errorf("%s (%d) and %s (%d): need 0 <= fail <= warn", name("cert_warn_days"), o.CertWarnDays, name("cert_fail_days"), o.CertFailDays)
	}
	lt, err := verify.Seconds("layer_timeout", r.LayerTimeout, 30)
	if err != nil {
		return nil, err
	}
	nt, err := verify.Seconds("net_timeout", r.NetTimeout, 5)
	if err != nil {
		return nil, err
	}
	for from, to := range r.AddrMap {
		for _, a := range []string{from, to} {
			if _, _, err := net.SplitHostPort(a); err != nil {
				return nil, fmt.Errorf("%s: %q is not host:port: %v", name("addr_map"), a, err)
			}
		}
	}
	env := &Env{FS: verify.FS{Root: root, Links: verify.NewLinkCache()}, Host: r.Host, Now: now, LayerTimeout: lt, NetTimeout: nt, Options: o, AddrMap: r.AddrMap}
	var cmder verify.Cmder = verify.LocalCmder{}
	if remote != nil {
		env.FS.Sys, env.Dial, cmder = remote.FS, remote.Dial, remote.Cmder
	}
	useSystemd := root == "/"
	if r.Systemd != nil {
		useSystemd = *r.Systemd
	}
	if useSystemd {
		env.Systemd = &verify.Systemctl{Cmder: cmder}
	}
	// Programs under a fixture root are not for this machine: only a check
	// of the real root may run them.
	if root == "/" {
		env.Cmder = cmder
	}
	return env, nil
}

// RunRequest runs the selected layers for a request.
func RunRequest(ctx context.Context, r *Request) (*Report, error) {
	env, err := r.Env()
	if err != nil {
		return nil, err
	}
	return Run(ctx, env, r.Layers, r.Skip)
}

// LayerOrder is the order reports print layers in: from the node's files
// up to the services.
var LayerOrder = []string{"certificates", "install", "kubelet", "etcd", "dns", "cni", "addons"}

// OrderedLayers lists a report's layers in LayerOrder, then any others by name.
func (rep *Report) OrderedLayers() []string { return verify.OrderLayers(rep.Layers, LayerOrder) }
