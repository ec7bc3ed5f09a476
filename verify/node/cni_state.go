package node

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/layercheck/layercheck/verify"
)

// The cni layer's part on the state of the plugin's interfaces: a
// vxlan.calico or flannel.1 that exists but is down carries nothing. A
// link is up when the kernel's IFF_UP flag is set (/sys/class/net/<if>/flags,
// dev->flags in hex). Its operstate does not tell: a vxlan device never
// reports a carrier, so an up vxlan.calico or flannel.1 is "unknown" there;
// sysfs shows "down" only for a link that is not running or has no carrier.
//
// /sys/class/net lists the interfaces of the network namespace that
// mounted sysfs. On a node that is itself a container (systemd-nspawn
// binds the host's /sys) that is another namespace than the node's, whose
// interfaces /proc/net/dev lists: sysfs is read only when it lists the
// same interfaces; otherwise `ip -o link show` runs on the node, where
// programs may run (root "/"), and the state is not read elsewhere.

// iffUp is IFF_UP of linux/if.h.
const iffUp = 0x1

// LinkState is what was read of an interface's state.
type LinkState struct {
	// Up is whether IFF_UP is set (nil: not read).
	Up *bool `json:"up,omitempty"`
	// Flags is sysfs's flags ("0x1003") or ip's ("BROADCAST,MULTICAST,UP,LOWER_UP").
	Flags string `json:"flags,omitempty"`
	// Operstate is sysfs's operstate or ip's state, lower case.
	Operstate string `json:"operstate,omitempty"`
	// Source is where it was read from; NotRead says why it was not.
	Source  string `json:"source,omitempty"`
	NotRead string `json:"not_read,omitempty"`
}

// linkState reads the state of interface name; names are the node's
// interfaces as read from src (/proc/net/dev or /sys/class/net).
func linkState(ctx context.Context, env *Env, name string, names []string, src string) *LinkState {
	st := &LinkState{}
	sysfs := src == sysClassNet
	if !sysfs {
		listed, err := env.List(sysClassNet)
		sysfs = err == nil && slices.Equal(listed, names)
	}
	if sysfs {
		dir := path.Join(sysClassNet, name)
		if b, err := env.Read(path.Join(dir, "operstate")); err == nil {
			st.Operstate = strings.ToLower(strings.TrimSpace(string(b)))
		}
		b, err := env.Read(path.Join(dir, "flags"))
		if err == nil {
			st.Flags = strings.TrimSpace(string(b))
			if v, perr := strconv.ParseUint(st.Flags, 0, 64); perr == nil {
				up := v&iffUp != 0
				st.Up, st.Source = &up, path.Join(dir, "flags")
				return st
			}
			st.NotRead = fmt.Sprintf("%s/flags is %q, not a number", dir, st.Flags)
		}
		if st.Operstate != "" {
			up := operUp(st.Operstate)
			st.Up, st.Source = &up, path.Join(dir, "operstate")
			return st
		}
		if st.NotRead == "" {
			st.NotRead = fmt.Sprintf("%s has neither flags nor operstate", dir)
		}
	} else {
		st.NotRead = fmt.Sprintf("%s lists other interfaces than %s (the node's sysfs belongs to another network namespace, as in a container)", sysClassNet, src)
	}
	if env.Cmder == nil {
		st.NotRead += ", and no command runs on a node tree"
		return st
	}
	timeout := env.NetTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := env.Cmder.Command(tctx, "ip", "-o", "link", "show", "dev", name).Output()
	if err != nil {
		st.NotRead += "; " + err.Error()
		return st
	}
	flags, oper, ok := parseIPLink(string(out), name)
	if !ok {
		st.NotRead += fmt.Sprintf("; `ip -o link show dev %s` printed no line for it: %q", name, strings.TrimSpace(string(out)))
		return st
	}
	up := slices.Contains(strings.Split(flags, ","), "UP")
	st.Up, st.Flags, st.Operstate, st.Source, st.NotRead = &up, flags, oper, "ip -o link show dev "+name, ""
	return st
}

// operUp reads a sysfs operstate as up unless it says the link is not
// running (down) or has no carrier below it.
func operUp(s string) bool {
	switch s {
	case "down", "lowerlayerdown", "notpresent":
		return false
	}
	return true
}

// parseIPLink reads `ip -o link show dev name`: "5: vxlan.calico:
// <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 qdisc noqueue state UNKNOWN
// mode DEFAULT ...", the flags between < and > and the state, lower case.
func parseIPLink(out, name string) (flags, oper string, ok bool) {
	for _, line := range strings.Split(out, "\n") {
		fs := strings.Fields(line)
		if len(fs) < 3 || strings.TrimSuffix(strings.SplitN(fs[1], "@", 2)[0], ":") != name {
			continue
		}
		f := fs[2]
		if !strings.HasPrefix(f, "<") || !strings.HasSuffix(f, ">") {
			continue
		}
		flags = strings.Trim(f, "<>")
		for i := 3; i+1 < len(fs); i++ {
			if fs[i] == "state" {
				oper = strings.ToLower(fs[i+1])
			}
		}
		return flags, oper, true
	}
	return "", "", false
}

// linkStateResult judges a present interface's state.
func linkStateResult(env *Env, i CNIInterface, ports []CNIPort) verify.Result {
	check := "interface_up:" + i.Name
	st := i.State
	switch {
	case st == nil || st.Up == nil:
		why := "not read"
		if st != nil {
			why = st.NotRead
		}
		return verify.Result{Check: check, Status: verify.StatusSkipped,
			Msg: fmt.Sprintf("the state of %s was not read: %s", i.Name, why)}
	case !*st.Up:
		return verify.Result{Check: check, Status: verify.StatusFail,
			Msg: fmt.Sprintf("interface %s on %s is down (%s: %s) although %s: pods on this node reach no pod on another node through it",
				i.Name, hostName(env), st.Source, stateWords(st), i.Because),
			Evidence: st,
			Remediation: fmt.Sprintf("the %s pod on %s sets its device up: check it (kubectl -n kube-system logs of it), ip -d link show %s; `ip link set %s up` brings it back until that pod restarts; allow %s between nodes",
				env.Options.KubeNetworkPlugin, hostName(env), i.Name, i.Name, portList(ports))}
	case st.Operstate == "down" || st.Operstate == "lowerlayerdown":
		return verify.Result{Check: check, Status: verify.StatusFail,
			Msg: fmt.Sprintf("interface %s on %s is set up but its link is %s (%s): it carries nothing",
				i.Name, hostName(env), st.Operstate, stateWords(st)),
			Evidence:    st,
			Remediation: fmt.Sprintf("ip -d link show %s on %s shows the device it sends through: that interface must be up", i.Name, hostName(env))}
	}
	return verify.Result{Check: check, Status: verify.StatusOK,
		Msg: fmt.Sprintf("%s is up (%s: %s)", i.Name, st.Source, stateWords(st))}
}

func stateWords(st *LinkState) string {
	var w []string
	if st.Flags != "" {
		w = append(w, "flags "+st.Flags)
	}
	if st.Operstate != "" {
		w = append(w, "operstate "+st.Operstate)
	}
	return strings.Join(w, ", ")
}
