// Package cluster checks a kubespray cluster through its API server after
// cluster.yml, layer by layer: nodes, kube-system, cni, addons and a
// workload probe. It is the body of the cluster_facts module and of
// `layercheck cluster`; client-go lives only here (and in cmd/cluster_facts)
// so that node_facts stays small.
//
// Every layer reads the cluster with list calls shared through a Snapshot,
// never a call per node, so the number of API requests does not grow with
// the number of nodes (Report.Requests counts them).
package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/layercheck/layercheck/verify"
)

// Request is what cluster_facts and `layercheck cluster` take. Option names
// follow kubernetes.core (kubeconfig, context) and kubespray (Options).
type Request struct {
	Options
	Probe
	// Kubeconfig is the kubeconfig file; empty means kubectl's rules:
	// $K8S_AUTH_KUBECONFIG, then $KUBECONFIG, then ~/.kube/config.
	Kubeconfig string `json:"kubeconfig"`
	// Context selects a kubeconfig context (default: current-context).
	Context string `json:"context"`
	// Timeout is the per-request limit in seconds (default 10);
	// LayerTimeout bounds each layer but the probe (default 60).
	Timeout      float64 `json:"timeout"`
	LayerTimeout float64 `json:"layer_timeout"`
	// Layers selects layers (default all); Skip removes some.
	Layers []string `json:"layers"`
	Skip   []string `json:"skip"`
	// CheckMode is Ansible's check mode: probes that create objects are
	// skipped and say so.
	CheckMode bool `json:"-"`
}

// RestConfig loads the kubeconfig as kubectl does (clientcmd's default
// loading rules with an explicit path first) and applies the timeout.
func (r *Request) RestConfig() (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	path := r.Kubeconfig
	if path == "" {
		path = os.Getenv("K8S_AUTH_KUBECONFIG")
	}
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			return nil, path, fmt.Errorf("option kubeconfig: %v", err)
		}
		rules.ExplicitPath = path
	}
	shown := path
	if shown == "" {
		shown = strings.Join(rules.Precedence, ":")
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: r.Context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, shown, fmt.Errorf("kubeconfig %s: %v", shown, err)
	}
	return cfg, shown, nil
}

// Env is what the cluster layers read.
type Env struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// Metadata lists objects without their content (helm's release
	// Secrets); nil falls back to Kube.
	Metadata metadata.Interface
	Options  Options
	Probe    Probe
	// Server is the API server URL, for messages.
	Server string
	// CheckMode skips the probes that create objects.
	CheckMode bool
	// Timeout bounds one API request; LayerTimeout one layer (the probe
	// layer gets the probe timeout plus LayerTimeout for its clean-up).
	Timeout      time.Duration
	LayerTimeout time.Duration
	// HTTP is used for the probe's ClusterIP requests (default: a client
	// with Timeout).
	HTTP *http.Client

	snap Snapshot
}

// Report is ansible_facts.layercheck_cluster.
type Report struct {
	Server        string                         `json:"server"`
	ServerVersion string                         `json:"server_version,omitempty"`
	Status        verify.Status                  `json:"status"`
	Layers        map[string]*verify.LayerReport `json:"layers"`
	Summary       verify.Summary                 `json:"summary"`
	// Requests is the number of HTTP requests made to the API server.
	Requests int64 `json:"requests"`
}

// Layer is one cluster layer, as verify.Layer is for a node.
type Layer interface {
	Name() string
	Check(ctx context.Context, env *Env) (results []verify.Result, facts any, err error)
}

var (
	registryMu sync.Mutex
	registry   = map[string]func() Layer{}
)

func register(name string, f func() Layer) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("cluster: layer registered twice: " + name)
	}
	registry[name] = f
}

// LayerOrder is the order layers are reported in: from the nodes up to a
// real request through a Service.
var LayerOrder = []string{"nodes", "kube_system", "cni", "addons", "probe"}

// LayerNames lists the registered layers in LayerOrder.
func LayerNames() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	var out []string
	for _, n := range LayerOrder {
		if _, ok := registry[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// CountingTransport counts the requests that pass through it into N, which
// several transports may share; RunRequest wraps every client's transport
// with one to fill Report.Requests.
type CountingTransport struct {
	Base http.RoundTripper
	N    *atomic.Int64
}

// RoundTrip counts and forwards the request.
func (c *CountingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.N.Add(1)
	return c.Base.RoundTrip(r)
}

// RunRequest loads the kubeconfig, connects and runs the selected layers.
// Errors are for bad options or an unreadable kubeconfig; an unreachable
// API server is a failed report, not an error.
func RunRequest(ctx context.Context, r *Request) (*Report, error) {
	o := r.Options
	o.Defaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	p := r.Probe
	if err := p.defaults(); err != nil {
		return nil, err
	}
	secs := func(name string, v, def float64) (time.Duration, error) {
		if v == 0 {
			v = def
		}
		if v < 0 || v > 3600 {
			return 0, fmt.Errorf("option %s: %v seconds is out of range (0, 3600]", name, v)
		}
		return time.Duration(v * float64(time.Second)), nil
	}
	timeout, err := secs("timeout", r.Timeout, 10)
	if err != nil {
		return nil, err
	}
	lt, err := secs("layer_timeout", r.LayerTimeout, 60)
	if err != nil {
		return nil, err
	}
	cfg, _, err := r.RestConfig()
	if err != nil {
		return nil, err
	}
	cfg.Timeout = timeout
	var requests atomic.Int64
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &CountingTransport{Base: rt, N: &requests}
	})
	// The cluster layers make a handful of list calls; client-go's default
	// client-side throttle (5 qps) would only slow the probe's polling.
	cfg.QPS, cfg.Burst = 50, 100
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("API client for %s: %v", cfg.Host, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic API client for %s: %v", cfg.Host, err)
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("metadata API client for %s: %v", cfg.Host, err)
	}
	env := &Env{Kube: kube, Dynamic: dyn, Metadata: md, Options: o, Probe: p, Server: cfg.Host, CheckMode: r.CheckMode,
		Timeout: timeout, LayerTimeout: lt}
	rep, err := Run(ctx, env, r.Layers, r.Skip)
	if rep != nil {
		rep.Requests = requests.Load()
	}
	return rep, err
}

// Run checks that the API server answers, then runs the selected layers
// concurrently, each under its own timeout. When the API server does not
// answer within Timeout, every layer is an error naming the server.
func Run(ctx context.Context, env *Env, only, skip []string) (*Report, error) {
	registryMu.Lock()
	selected := map[string]func() Layer{}
	for n, f := range registry {
		selected[n] = f
	}
	registryMu.Unlock()
	if len(only) > 0 {
		keep := map[string]func() Layer{}
		for _, n := range only {
			f, ok := selected[n]
			if !ok {
				return nil, fmt.Errorf("unknown layer %q (known: %s)", n, strings.Join(LayerNames(), ", "))
			}
			keep[n] = f
		}
		selected = keep
	}
	for _, n := range skip {
		if _, ok := selected[n]; !ok {
			if _, known := registry[n]; !known {
				return nil, fmt.Errorf("unknown layer %q in skip (known: %s)", n, strings.Join(LayerNames(), ", "))
			}
		}
		delete(selected, n)
	}
	if env.Timeout <= 0 {
		env.Timeout = 10 * time.Second
	}
	if env.LayerTimeout <= 0 {
		env.LayerTimeout = 60 * time.Second
	}
	env.snap.env = env
	rep := &Report{Server: env.Server, Layers: map[string]*verify.LayerReport{}}

	vctx, cancel := context.WithTimeout(ctx, env.Timeout)
	ver, verr := serverVersion(vctx, env)
	cancel()
	if verr != nil {
		msg := fmt.Sprintf("API server %s did not answer within %s: %v", env.Server, env.Timeout, verr)
		for n := range selected {
			rep.Layers[n] = &verify.LayerReport{Status: verify.StatusError, Results: []verify.Result{{
				Layer: n, Check: "api_server", Status: verify.StatusError, Msg: msg,
				Remediation: "check that kube-apiserver runs on the control plane (crictl ps --name kube-apiserver; journalctl -u kubelet), that the kubeconfig's server address is reachable from here, and that its credentials are valid",
			}}}
		}
		summarize(rep)
		return rep, nil
	}
	rep.ServerVersion = ver

	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, f := range selected {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lr := runLayer(ctx, env, name, f)
			mu.Lock()
			rep.Layers[name] = lr
			mu.Unlock()
		}()
	}
	wg.Wait()
	summarize(rep)
	return rep, nil
}

func serverVersion(ctx context.Context, env *Env) (string, error) {
	type res struct {
		v   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		v, err := env.Kube.Discovery().ServerVersion()
		if err != nil {
			ch <- res{err: err}
			return
		}
		ch <- res{v: v.GitVersion}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// summarize sets the report's status, the worst of its layers' where a
// skipped layer (check mode, an add-on switched off) does not count unless
// every layer was skipped, and counts the results.
func summarize(rep *Report) {
	all := []verify.Result{}
	for _, lr := range rep.Layers {
		all = append(all, verify.Result{Status: lr.Status})
	}
	rep.Status = layerStatus(all)
	for _, lr := range rep.Layers {
		for _, res := range lr.Results {
			rep.Summary.Total++
			switch res.Status {
			case verify.StatusOK:
				rep.Summary.OK++
			case verify.StatusWarn:
				rep.Summary.Warn++
			case verify.StatusFail:
				rep.Summary.Failed++
			case verify.StatusSkipped:
				rep.Summary.Skipped++
			case verify.StatusError:
				rep.Summary.Errored++
			}
		}
	}
}

func layerStatus(results []verify.Result) verify.Status {
	s := verify.StatusSkipped
	counted := false
	for _, r := range results {
		if r.Status != verify.StatusSkipped {
			if !counted {
				s = verify.StatusOK
				counted = true
			}
			s = verify.Worse(s, r.Status)
		}
	}
	return s
}

func runLayer(ctx context.Context, env *Env, name string, f func() Layer) *verify.LayerReport {
	start := time.Now()
	timeout := env.LayerTimeout
	if name == "probe" || name == "addons" {
		// Probes create objects, wait for them, and must clean up after.
		timeout += env.Probe.timeout()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type out struct {
		results []verify.Result
		facts   any
		err     error
	}
	done := make(chan out, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- out{err: fmt.Errorf("layer %s panicked: %v\n%s", name, p, debug.Stack())}
			}
		}()
		res, facts, err := f().Check(ctx, env)
		done <- out{res, facts, err}
	}()
	var o out
	select {
	case o = <-done:
	case <-ctx.Done():
		o.err = fmt.Errorf("layer %s did not finish within %s", name, timeout)
	}
	lr := &verify.LayerReport{Results: o.results, Facts: o.facts}
	if o.err != nil {
		lr.Results = append(lr.Results, verify.Result{Layer: name, Check: "run", Status: verify.StatusError, Msg: o.err.Error()})
	}
	for i := range lr.Results {
		if lr.Results[i].Layer == "" {
			lr.Results[i].Layer = name
		}
	}
	lr.Status = layerStatus(lr.Results)
	lr.DurationMS = time.Since(start).Milliseconds()
	return lr
}

// OrderedLayers lists a report's layers in LayerOrder.
func (rep *Report) OrderedLayers() []string {
	var out []string
	for _, n := range LayerOrder {
		if _, ok := rep.Layers[n]; ok {
			out = append(out, n)
		}
	}
	var rest []string
	for n := range rep.Layers {
		if !contains(LayerOrder, n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// Failures lists "layer check: msg" for every failed or errored result.
func (rep *Report) Failures() []string {
	var out []string
	for _, n := range rep.OrderedLayers() {
		for _, r := range rep.Layers[n].Results {
			if r.Status == verify.StatusFail || r.Status == verify.StatusError {
				out = append(out, fmt.Sprintf("%s %s: %s", n, r.Check, r.Msg))
			}
		}
	}
	return out
}

// errAPI wraps an API error with the call that failed and the server.
func errAPI(env *Env, what string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s at %s: no answer within the time limit: %w", what, env.Server, err)
	}
	return fmt.Errorf("%s at %s: %w", what, env.Server, err)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
