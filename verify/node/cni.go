package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/layercheck/layercheck/verify"
)

// The cni layer checks the node side of kube_network_plugin: the tunnel
// interfaces the plugin creates (read from /proc/net/dev, else
// /sys/class/net, under Root), that each is up (cni_state.go) and
// lists the ports and protocols it needs open between nodes, with the
// inventory's choice that makes each one needed.
func init() { register("cni", nil, func() Layer { return cniLayer{} }) }

type cniLayer struct{}

func (cniLayer) Name() string { return "cni" }

// CNIPort is a port or IP protocol the network plugin needs between nodes.
type CNIPort struct {
	Protocol string `json:"protocol"` // udp, tcp, or ip (an IP protocol number)
	Port     int    `json:"port"`     // port, or the IP protocol number for "ip"
	Purpose  string `json:"purpose"`
	// Because is the inventory choice that needs it, e.g. "calico_vxlan_mode: Always".
	Because string `json:"because"`
}

// CNIInterface is a network interface the plugin should have created.
type CNIInterface struct {
	Name    string `json:"name"`
	Present bool   `json:"present"`
	Because string `json:"because"`
	// State is what was read of a present interface's state (cni_state.go).
	State *LinkState `json:"state,omitempty"`
}

// CNIFacts are the cni layer's facts.
type CNIFacts struct {
	Plugin     string         `json:"kube_network_plugin"`
	Interfaces []CNIInterface `json:"interfaces"`
	Ports      []CNIPort      `json:"ports"`
	// NodeInterfaces lists the node's interfaces, read from
	// InterfacesSource.
	NodeInterfaces   []string `json:"node_interfaces"`
	InterfacesSource string   `json:"interfaces_source,omitempty"`
}

// procNetDev is the interface list of the reader's own network namespace.
// It comes before /sys/class/net, which lists the interfaces of the
// namespace that mounted sysfs: on a node that is itself a container
// (systemd-nspawn with writable API file systems binds the host's /sys) that
// is the host's, and the plugin's interfaces are not in it.
const procNetDev = "/proc/net/dev"

// sysClassNet lists the interfaces where there is no /proc/net/dev.
const sysClassNet = "/sys/class/net"

// nodeInterfaces lists the node's network interfaces from /proc/net/dev,
// or /sys/class/net where there is no /proc/net/dev (a copied node tree),
// and says which it read.
func nodeInterfaces(env *Env) ([]string, string, error) {
	b, err := env.Files().ReadFile(env.Path(procNetDev))
	if err == nil {
		names, perr := parseProcNetDev(b)
		if perr != nil {
			return nil, procNetDev, fmt.Errorf("%s: %v", procNetDev, perr)
		}
		return names, procNetDev, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, procNetDev, fmt.Errorf("cannot read %s: %v", procNetDev, verify.PathErr(err))
	}
	ents, err := env.Files().ReadDir(env.Path(sysClassNet))
	if err != nil {
		return nil, sysClassNet, fmt.Errorf("cannot list %s: %w", sysClassNet, verify.PathErr(err))
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names, sysClassNet, nil
}

// parseProcNetDev reads the interface names of /proc/net/dev: two header
// lines, then "name: counters" per interface.
func parseProcNetDev(b []byte) ([]string, error) {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) < 2 || !strings.Contains(lines[0], "|") {
		return nil, errors.New("not a /proc/net/dev table (no header line)")
	}
	var names []string
	for i, l := range lines[2:] {
		name, _, ok := strings.Cut(l, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("line %d: no interface name before ':'", i+3)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// calicoMode says whether a calico_*_mode value turns the encapsulation on
// (Always or CrossSubnet; Never turns it off).
func calicoMode(v string) bool { return v != "" && !strings.EqualFold(v, "Never") }

func (cniLayer) Check(ctx context.Context, env *Env) ([]verify.Result, any, error) {
	o := env.Options
	host := hostName(env)
	if len(o.Groups) > 0 && !o.InGroup("kube_control_plane") && !o.InGroup("kube_node") {
		return nil, nil, fmt.Errorf("%w: %s is not a Kubernetes node", verify.ErrNotApplicable, host)
	}
	f := &CNIFacts{Plugin: o.KubeNetworkPlugin, Interfaces: []CNIInterface{}, Ports: []CNIPort{}, NodeInterfaces: []string{}}
	names, src, err := nodeInterfaces(env)
	f.InterfacesSource = src
	if err != nil {
		if src == sysClassNet && errors.Is(err, fs.ErrNotExist) && env.Root != "" && env.Root != "/" && !sysExists(env) {
			// a node tree copied for --root holds no kernel state (no
			// /proc or /sys at all); on a node, /sys/class/net always exists
			return []verify.Result{{Check: "interfaces", Status: verify.StatusSkipped,
				Msg: fmt.Sprintf("the node tree %s has no /sys/class/net (a copied tree holds no kernel state): the network interfaces were not checked", env.Root)}}, f, nil
		}
		return nil, f, err
	}
	if p := o.KubeNetworkPlugin; p != "none" && p != "cni" && !roleRan(env, roleNetworkPlugin) {
		return []verify.Result{roleNotRun(env, roleNetworkPlugin, "the "+p+" interfaces and ports are not checked")}, f, nil
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	f.NodeInterfaces = append(f.NodeInterfaces, names...)
	want := func(name, because string) {
		f.Interfaces = append(f.Interfaces, CNIInterface{Name: name, Present: have[name], Because: because})
	}
	switch o.KubeNetworkPlugin {
	case "calico":
		if calicoMode(o.CalicoVXLANMode) {
			b := "calico_vxlan_mode: " + o.CalicoVXLANMode
			want("vxlan.calico", b)
			f.Ports = append(f.Ports, CNIPort{"udp", 4789, "calico VXLAN overlay", b})
		}
		if calicoMode(o.CalicoIPIPMode) {
			b := "calico_ipip_mode: " + o.CalicoIPIPMode
			want("tunl0", b)
			f.Ports = append(f.Ports, CNIPort{"ip", 4, "calico IP-in-IP (IP protocol 4)", b})
		}
		if o.CalicoNetworkBackend == "bird" {
			f.Ports = append(f.Ports, CNIPort{"tcp", 179, "calico BGP peering (BIRD)", "calico_network_backend: bird"})
		}
	case "flannel":
		switch o.FlannelBackendType {
		case "vxlan":
			vni, port := *o.FlannelVXLANVNI, *o.FlannelVXLANPort // set by Defaults
			b := fmt.Sprintf("kube_network_plugin: flannel, flannel_backend_type: vxlan, flannel_vxlan_vni: %d", vni)
			want(fmt.Sprintf("flannel.%d", vni), b)
			f.Ports = append(f.Ports, CNIPort{"udp", port, "flannel VXLAN", fmt.Sprintf("flannel_vxlan_port: %d", port)})
		case "wireguard":
			// flannel's wireguard backend: device flannel-wg, port 51820.
			b := "kube_network_plugin: flannel, flannel_backend_type: wireguard"
			want("flannel-wg", b)
			f.Ports = append(f.Ports, CNIPort{"udp", 51820, "flannel WireGuard", b})
		case "host-gw":
			// routes through the nodes' own interfaces: no tunnel device
			// and no port of its own.
			return []verify.Result{{Check: "plugin", Status: verify.StatusOK,
				Msg: "flannel_backend_type host-gw has no tunnel interface or port to check on the node"}}, f, nil
		default:
			return []verify.Result{{Check: "plugin", Status: verify.StatusWarn,
				Msg:         fmt.Sprintf("flannel_backend_type %q is not one kubespray's flannel role configures (vxlan, host-gw, wireguard): its interfaces were not checked", o.FlannelBackendType),
				Remediation: "set flannel_backend_type to vxlan (kubespray's default), host-gw or wireguard"}}, f, nil
		}
	case "cilium":
		want("cilium_host", "kube_network_plugin: cilium")
		f.Ports = append(f.Ports, CNIPort{"udp", 8472, "cilium VXLAN tunnel", "kube_network_plugin: cilium"},
			CNIPort{"tcp", 4240, "cilium health checks", "kube_network_plugin: cilium"})
	default:
		return []verify.Result{{Check: "plugin", Status: verify.StatusSkipped,
			Msg: fmt.Sprintf("kube_network_plugin %q has no node checks here", o.KubeNetworkPlugin)}}, f, nil
	}
	var results []verify.Result
	for n := range f.Interfaces {
		i := &f.Interfaces[n]
		if i.Present {
			results = append(results, verify.Result{Check: "interface:" + i.Name, Status: verify.StatusOK,
				Msg: fmt.Sprintf("%s present (%s)", i.Name, i.Because)})
			i.State = linkState(ctx, env, i.Name, names, src)
			results = append(results, linkStateResult(env, *i, f.Ports))
			continue
		}
		results = append(results, verify.Result{Check: "interface:" + i.Name, Status: verify.StatusFail,
			Msg:      fmt.Sprintf("interface %s is missing on %s although %s", i.Name, host, i.Because),
			Evidence: map[string]any{"read": f.InterfacesSource, "interfaces": f.NodeInterfaces},
			Remediation: fmt.Sprintf("check the %s pod on %s (kubectl -n kube-system logs of its node agent) and that the inventory's %s matches the cluster's pool; allow %s between nodes",
				o.KubeNetworkPlugin, host, i.Because, portList(f.Ports))})
	}
	if len(f.Ports) > 0 {
		results = append(results, verify.Result{Check: "ports", Status: verify.StatusOK,
			Msg: "needs between nodes: " + portList(f.Ports), Actual: f.Ports})
	}
	return results, f, nil
}

func portList(ps []CNIPort) string {
	var s []string
	for _, p := range ps {
		if p.Protocol == "ip" {
			s = append(s, fmt.Sprintf("IP protocol %d", p.Port))
		} else {
			s = append(s, fmt.Sprintf("%s/%d", p.Protocol, p.Port))
		}
	}
	return strings.Join(s, ", ")
}

// sysExists reports whether the node tree has /sys at all.
func sysExists(env *Env) bool {
	_, err := env.Stat("/sys")
	return err == nil
}
