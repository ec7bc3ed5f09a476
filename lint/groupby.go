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
