package lint

// byFirstSeen groups values by key and keeps the keys in the order they
// were first seen (the inventory's host order, where the callers walk
// hosts), so findings come out in a stable order.
type byFirstSeen[K comparable, V any] struct {
	m     map[K]*V
	order []K
}

// get returns the group of k, made by mk when k is new.
func (g *byFirstSeen[K, V]) get(k K, mk func() *V) *V {
	if v, ok := g.m[k]; ok {
		return v
	}
	if g.m == nil {
		g.m = map[K]*V{}
	}
	v := mk()
	g.m[k] = v
	g.order = append(g.order, k)
	return v
}

// list returns the groups in first-seen order.
func (g *byFirstSeen[K, V]) list() []V {
	out := make([]V, 0, len(g.order))
	for _, k := range g.order {
		out = append(out, *g.m[k])
	}
	return out
}

// hostList collects a group's hosts of c.hosts, added by index in
// ascending order. While they are one run of consecutive hosts it holds
// only the run's bounds and lists that run of c.hosts itself (capped: an
// append copies), so that a value a million hosts share costs no list of
// its own; a second run makes it a list of its own.
type hostList struct {
	first, end int      // the run hosts[first:end], until split
	own        []string // the hosts, once split
	split      bool
}

// add adds the host at index i of hosts.
func (l *hostList) add(hosts []string, i int) {
	switch {
	case l.split:
		l.own = append(l.own, hosts[i])
	case l.first == l.end: // empty
		l.first, l.end = i, i+1
	case i == l.end:
		l.end++
	default:
		l.own = append(make([]string, 0, 2*(l.end-l.first)+1), hosts[l.first:l.end]...)
		l.own = append(l.own, hosts[i])
		l.split = true
	}
}

// list is the hosts added, in the order added (nil for none).
func (l *hostList) list(hosts []string) []string {
	if l.split {
		return l.own
	}
	if l.first == l.end {
		return nil
	}
	return hosts[l.first:l.end:l.end]
}
