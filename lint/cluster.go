package lint

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/clusterstate"
	"github.com/layercheck/layercheck/parser"
)

// The cluster-* rules compare the inventory with the running cluster
// (Input.Cluster, read by verify/cluster.ReadState) before
// upgrade-cluster.yml, scale.yml or a re-run of cluster.yml: what
// kubespray would stop on mid-run, or silently change. They say nothing
// without Input.Cluster.

// target is the value a set of hosts gets for a variable, as kubespray
// will read it: set in the inventory (u.ours has its location) or
// kubespray's default (dflt; a templated default already evaluated).
type target struct {
	u    use
	text string
	dflt bool
}

// clusterHosts are the hosts a cluster-wide setting is read on:
// k8s_cluster's, else every host.
func (c *checkCtx) clusterHosts() []string {
	if hs, ok := c.groupHosts("k8s_cluster"); ok && len(hs) > 0 {
		return hs
	}
	return c.hosts
}

// targets groups hosts by the value they get for name; def gives the
// value of a templated default kubespray computes ("" when unknown: such
// hosts are left out).
func (c *checkCtx) targets(name string, hosts []string, def func() string) []target {
	type key struct {
		v    *parser.Value
		text string
	}
	var by byFirstSeen[key, target]
	for _, h := range hosts {
		v, set := c.value(h, name)
		var text string
		switch {
		case v == nil:
			if def != nil {
				text = def()
			}
		case !judged(v):
			continue
		default:
			var ok bool
			if text, ok = scalarText(v); !ok {
				continue
			}
		}
		if text == "" {
			continue
		}
		k := key{v, text}
		t := by.get(k, func() *target {
			t := &target{u: use{name: name, judge: v}, text: text, dflt: !set}
			if set {
				t.u.ours = v
			}
			return t
		})
		t.u.hosts = append(t.u.hosts, h)
	}
	return by.list()
}

// scalarText is a scalar as kubespray templates it.
func scalarText(v *parser.Value) (string, bool) {
	if v.Kind == parser.KindBool {
		return strconv.FormatBool(v.Bool), true
	}
	return versionText(v)
}

// clusterFinding starts a finding about t: the inventory's value with its
// location, or kubespray's default.
func (c *checkCtx) clusterFinding(id string, sev Severity, t target) Finding {
	f := c.finding(id, sev, t.u)
	f.Value = t.text
	return f
}

// inventoryValue says where a target's value comes from, for a message:
// `kube_version "1.36.4" (kubespray master's default)`.
func (c *checkCtx) inventoryValue(t target) string {
	v := strconv.Quote(t.text)
	if t.u.judge != nil && t.u.judge.Kind != parser.KindString {
		v = t.text // a YAML number or boolean, as written
	}
	if t.dflt {
		return fmt.Sprintf("%s %s (kubespray %s's default)", t.u.name, v, releaseName(c.cat))
	}
	return fmt.Sprintf("%s %s (%s)", t.u.name, v, c.where(t.u.ours.Pos))
}

// setFix is the fix that sets name to lit where t's value comes from.
func (c *checkCtx) setFix(t target, lit string) string {
	if t.dflt {
		return fmt.Sprintf("set %s: %s in the inventory (group_vars/k8s_cluster/k8s-cluster.yml)", t.u.name, lit)
	}
	return fmt.Sprintf("set %s at %s", fixText(t.u.name, lit, originOf(t.u)), c.where(t.u.ours.Pos))
}

// unread reports whether the state says prefix could not be read.
func unread(st *clusterstate.State, prefix string) bool {
	for _, u := range st.Unread {
		if strings.HasPrefix(u, prefix) {
			return true
		}
	}
	return false
}

// kver is a Kubernetes version: major, minor, patch.
type kver [3]int

// parseKver reads "v1.35.4", "1.35.4", "v1.35.4-rc.0+k3s1" (pre-release
// and build dropped); ok is false without major and minor.
func parseKver(s string) (kver, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return kver{}, false
	}
	var v kver
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return kver{}, false
		}
		v[i] = n
	}
	return v, true
}

func (v kver) less(w kver) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

func (v kver) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// minorsAhead is how many minors w is ahead of v (negative: behind); only
// meaningful within one major.
func (v kver) minorsAhead(w kver) int { return w[1] - v[1] }

// namesOf says a list of node names for a message: "node1, node2 … 3 more".
func namesOf(names []string) string { return strings.Join(abridge(names, 5), ", ") }

// inventoryNames keeps the names that are inventory hosts, for Hosts.
func (c *checkCtx) inventoryNames(names []string) []string {
	in := make(map[string]bool, len(c.hosts))
	for _, h := range c.hosts {
		in[h] = true
	}
	var out []string
	for _, n := range names {
		if in[n] {
			out = append(out, n)
		}
	}
	return out
}

// groupNodes groups node names by a key (a kubelet version ...), keys in
// order of first appearance.
func groupNodes(nodes []clusterstate.Node, key func(n *clusterstate.Node) string) (keys []string, by map[string][]string) {
	by = map[string][]string{}
	for i := range nodes {
		k := key(&nodes[i])
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], nodes[i].Name)
	}
	sort.Strings(keys)
	return keys, by
}
