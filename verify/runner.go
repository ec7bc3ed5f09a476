package verify

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"
)

// LayerOf is one layer of checks run against an environment E: *Env for
// the node layers (package verify/node), *cluster.Env for the cluster layers.
type LayerOf[E any] interface {
	// Name is the layer's id, e.g. "certificates".
	Name() string
	// Check runs the layer's checks. Facts is the layer's structured data for
	// ansible_facts (may be nil). A returned error becomes one result with
	// status error (or skipped for ErrNotApplicable).
	Check(ctx context.Context, env E) (results []Result, facts any, err error)
}

type registration[E any] struct {
	name      string
	dependsOn []string
	factory   func() LayerOf[E]
}

// Registry holds the layers of one kind (node or cluster); layer files add
// themselves from init() and Select/Run run them. Its methods are safe for
// concurrent use.
type Registry[E any] struct {
	what  string
	order []string

	mu     sync.Mutex
	layers map[string]registration[E]
}

// NewRegistry returns an empty registry. What prefixes the panic of a
// layer registered twice ("verify", "cluster"). Order, when not nil, is the
// order Names lists layers in (registered layers outside it are not
// listed); nil lists them by name.
func NewRegistry[E any](what string, order []string) *Registry[E] {
	return &Registry[E]{what: what, order: order, layers: map[string]registration[E]{}}
}

// Register adds a layer. DependsOn names layers whose failure or error turns
// this layer's failed and errored results into skipped ones naming the
// prerequisite. Registering a name twice panics.
func (r *Registry[E]) Register(name string, dependsOn []string, factory func() LayerOf[E]) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.layers[name]; dup {
		panic(r.what + ": layer registered twice: " + name)
	}
	r.layers[name] = registration[E]{name: name, dependsOn: dependsOn, factory: factory}
}

// Names lists the registered layers (see NewRegistry for the order).
func (r *Registry[E]) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.names()
}

func (r *Registry[E]) names() []string {
	if r.order != nil {
		var out []string
		for _, n := range r.order {
			if _, ok := r.layers[n]; ok {
				out = append(out, n)
			}
		}
		return out
	}
	names := make([]string, 0, len(r.layers))
	for n := range r.layers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Selection is the set of layers one run checks.
type Selection[E any] struct {
	layers map[string]registration[E]
}

// Select picks the layers named in only (all registered when only is
// empty) minus those in skip. A name that is not registered, in either
// list, is an error listing the known layers.
func (r *Registry[E]) Select(only, skip []string) (*Selection[E], error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	selected := map[string]registration[E]{}
	for name, reg := range r.layers {
		selected[name] = reg
	}
	if len(only) > 0 {
		keep := map[string]registration[E]{}
		for _, n := range only {
			reg, ok := selected[n]
			if !ok {
				return nil, fmt.Errorf("unknown layer %q (known: %s)", n, strings.Join(r.names(), ", "))
			}
			keep[n] = reg
		}
		selected = keep
	}
	for _, n := range skip {
		if _, ok := r.layers[n]; !ok {
			return nil, fmt.Errorf("unknown layer %q in skip (known: %s)", n, strings.Join(r.names(), ", "))
		}
		delete(selected, n)
	}
	return &Selection[E]{layers: selected}, nil
}

// Names lists the selected layers by name.
func (s *Selection[E]) Names() []string {
	names := make([]string, 0, len(s.layers))
	for n := range s.layers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Run runs the selected layers concurrently against env, each under
// timeout(name) and with its panics recovered, so one failing layer never
// stops the others; a layer that does not finish in time is an error
// result. Then a layer whose prerequisite (see Register) failed or errored
// reports one root cause: its failed and errored results become skipped.
func (s *Selection[E]) Run(ctx context.Context, env E, timeout func(name string) time.Duration) map[string]*LayerReport {
	layers := map[string]*LayerReport{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, reg := range s.layers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lr := runLayer(ctx, env, reg, timeout(name))
			mu.Lock()
			layers[name] = lr
			mu.Unlock()
		}()
	}
	wg.Wait()

	for name, reg := range s.layers {
		for _, dep := range reg.dependsOn {
			d, ok := layers[dep]
			if !ok || (d.Status != StatusFail && d.Status != StatusError) {
				continue
			}
			lr := layers[name]
			for i := range lr.Results {
				if lr.Results[i].Status == StatusFail || lr.Results[i].Status == StatusError {
					lr.Results[i].Status = StatusSkipped
					lr.Results[i].Msg = fmt.Sprintf("prerequisite %s failed; %s", dep, lr.Results[i].Msg)
				}
			}
			lr.Status = layerStatus(lr.Results)
		}
	}
	return layers
}

// Overall is a run's status and summary: the status is the worst of the
// layers' where a skipped layer (one that does not apply) does not count,
// skipped when every layer was skipped, and ok when there is no layer; the
// summary counts the results by status.
func Overall(layers map[string]*LayerReport) (Status, Summary) {
	st := StatusOK
	var sum Summary
	allSkipped := len(layers) > 0
	for _, lr := range layers {
		if lr.Status != StatusSkipped {
			allSkipped = false
			st = Worse(st, lr.Status)
		}
		for _, res := range lr.Results {
			sum.Total++
			switch res.Status {
			case StatusOK:
				sum.OK++
			case StatusWarn:
				sum.Warn++
			case StatusFail:
				sum.Failed++
			case StatusSkipped:
				sum.Skipped++
			case StatusError:
				sum.Errored++
			}
		}
	}
	if allSkipped {
		st = StatusSkipped
	}
	return st, sum
}

// OrderLayers lists the names of layers in order, then any others by name.
func OrderLayers(layers map[string]*LayerReport, order []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range order {
		if _, ok := layers[n]; ok {
			out = append(out, n)
			seen[n] = true
		}
	}
	var rest []string
	for n := range layers {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// Seconds turns the option name's value v in seconds (0 means def) into a
// duration; values outside (0, 3600] are an error naming the option.
func Seconds(name string, v, def float64) (time.Duration, error) {
	if v == 0 {
		v = def
	}
	if v < 0 || v > 3600 {
		return 0, fmt.Errorf("option %s: %v seconds is out of range (0, 3600]", name, v)
	}
	return time.Duration(v * float64(time.Second)), nil
}

// layerStatus is the worst status of results that are not skipped, or
// skipped when all are (or there are none).
func layerStatus(results []Result) Status {
	if len(results) == 0 {
		return StatusSkipped
	}
	s := StatusOK
	allSkipped := true
	for _, r := range results {
		if r.Status != StatusSkipped {
			allSkipped = false
			s = Worse(s, r.Status)
		}
	}
	if allSkipped {
		return StatusSkipped
	}
	return s
}

func runLayer[E any](ctx context.Context, env E, r registration[E], timeout time.Duration) (lr *LayerReport) {
	start := time.Now()
	lr = &LayerReport{}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	type out struct {
		results []Result
		facts   any
		err     error
	}
	done := make(chan out, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- out{err: fmt.Errorf("layer %s panicked: %v\n%s", r.name, p, debug.Stack())}
			}
		}()
		res, facts, err := r.factory().Check(ctx, env)
		done <- out{res, facts, err}
	}()

	var o out
	select {
	case o = <-done:
	case <-ctx.Done():
		o.err = fmt.Errorf("layer %s did not finish within %s", r.name, timeout)
	}
	lr.Results = o.results
	lr.Facts = o.facts
	if o.err != nil {
		st := StatusError
		if errors.Is(o.err, ErrNotApplicable) {
			st = StatusSkipped
		}
		lr.Results = append(lr.Results, Result{Layer: r.name, Check: "run", Status: st, Msg: o.err.Error()})
	}
	for i := range lr.Results {
		if lr.Results[i].Layer == "" {
			lr.Results[i].Layer = r.name
		}
	}
	lr.Status = layerStatus(lr.Results)
	lr.DurationMS = time.Since(start).Milliseconds()
	return lr
}
