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
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/layercheck/layercheck/parser/filekind"
	"github.com/layercheck/layercheck/verify"
)

// Request is what cluster_facts and `layercheck cluster` take. Option names
// follow kubernetes.core (kubeconfig, context) and kubespray (Options).
type Request struct {
	Options
	Probe
	EtcdAccess
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
	// Preflight reads the cluster for the lint instead of running the
	// layers (ReadStateRequest): cluster_facts then returns
	// ansible_facts.layercheck_cluster_state, which the lint role hands to
	// inventory_lint as cluster_state.
	Preflight bool `json:"preflight"`
	// KubeconfigData, when set, is the kubeconfig itself (e.g. admin.conf
	// read from a control-plane host); Kubeconfig then only names it.
	KubeconfigData []byte `json:"-"`
	// Dial, when set, opens the API client's connections (e.g. through an
	// SSH connection to a control-plane host).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error) `json:"-"`
}

// RestConfig loads the kubeconfig as kubectl does (clientcmd's default
// loading rules with an explicit path first) and applies the timeout.
func (r *Request) RestConfig() (*rest.Config, string, error) {
	if len(r.KubeconfigData) > 0 {
		kc, err := clientcmd.Load(r.KubeconfigData)
		if err != nil {
			return nil, r.Kubeconfig, fmt.Errorf("kubeconfig %s: %v", r.Kubeconfig, err)
		}
		cfg, err := clientcmd.NewNonInteractiveClientConfig(*kc, r.Context, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
		if err != nil {
			return nil, r.Kubeconfig, fmt.Errorf("kubeconfig %s: %v", r.Kubeconfig, err)
		}
		return cfg, r.Kubeconfig, nil
	}
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
		st, err := os.Stat(path)
		if err != nil {
			return nil, path, fmt.Errorf("option kubeconfig: %v", err)
		}
		// client-go would block forever on a FIFO and read a device to the end
		if !st.Mode().IsRegular() {
			return nil, path, fmt.Errorf("option kubeconfig: %s: is a %s, not a file", path, filekind.Of(st.Mode()))
		}
		if st.Size() > maxKubeconfigBytes {
			return nil, path, fmt.Errorf("option kubeconfig: %s: larger than %d bytes", path, maxKubeconfigBytes)
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
		if clientcmd.IsEmptyConfig(err) {
			// client-go says "try setting KUBERNETES_MASTER", which no
			// kubespray user needs
			return nil, shown, fmt.Errorf("kubeconfig %s: no cluster, user or context to use (empty kubeconfig?); use the kubeconfig kubespray wrote (/etc/kubernetes/admin.conf on a control-plane host, or artifacts/admin.conf with kubeconfig_localhost: true)", shown)
		}
		return nil, shown, fmt.Errorf("kubeconfig %s: %v", shown, err)
	}
	return cfg, shown, nil
}

// maxKubeconfigBytes bounds the kubeconfig read (a real one is a few kB).
const maxKubeconfigBytes = 16 << 20

// Env is what the cluster layers read.
type Env struct {
	// Kube makes the typed calls (NewAPI; tests adapt client-go's fake
	// clientset).
	Kube    API
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
	// serverVersion is GET /version's gitVersion, read as the run begins.
	serverVersion string
	// Timeout bounds one API request; LayerTimeout one layer (the probe
	// and addons layers get the probe and clean-up budgets on top).
	Timeout      time.Duration
	LayerTimeout time.Duration
	// RolloutWait bounds the wait for control-plane static pods and
	// Deployments still restarting or rolling out when verify begins,
	// as right after cluster.yml (NewEnv: probe_timeout; 0: no wait).
	RolloutWait time.Duration
	// HTTP is used for the probe's ClusterIP requests (default: a client
	// with Timeout).
	HTTP *http.Client

	// inv is Options' groups indexed once by Run.
	inv  *inventory
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
	// Defaults says whose defaults filled the options left unset, when
	// they are not kubespray v2.31.0's.
	Defaults string `json:"kubespray_defaults,omitempty"`
}

// Layer is one cluster layer, as verify.Layer is for a node.
type Layer = verify.LayerOf[*Env]

// LayerOrder is the order layers are reported in: from the nodes up to a
// real request through a Service.
var LayerOrder = []string{"nodes", "kube_system", "cni", "addons", "probe"}

var registry = verify.NewRegistry[*Env]("cluster", LayerOrder)

func register(name string, f func() Layer) { registry.Register(name, nil, f) }

// LayerNames lists the registered layers in LayerOrder.
func LayerNames() []string { return registry.Names() }

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
	env, requests, err := r.connect()
	if err != nil {
		return nil, err
	}
	rep, err := Run(ctx, env, r.Layers, r.Skip)
	if rep != nil {
		rep.Requests = requests.Load()
	}
	return rep, err
}

// connect checks the options, loads the kubeconfig and builds the Env's
// clients, every request counted in the returned counter.
func (r *Request) connect() (*Env, *atomic.Int64, error) {
	o := r.Options
	o.Defaults()
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	p := r.Probe
	if err := p.defaults(); err != nil {
		return nil, nil, err
	}
	timeout, err := verify.Seconds("timeout", r.Timeout, 10)
	if err != nil {
		return nil, nil, err
	}
	lt, err := verify.Seconds("layer_timeout", r.LayerTimeout, 60)
	if err != nil {
		return nil, nil, err
	}
	cfg, _, err := r.RestConfig()
	if err != nil {
		return nil, nil, err
	}
	cfg.Timeout = timeout
	if r.Dial != nil {
		cfg.Dial = r.Dial
	}
	requests := &atomic.Int64{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &CountingTransport{Base: rt, N: requests}
	})
	// The cluster layers make a handful of list calls; client-go's default
	// client-side throttle (5 qps) would only slow the probe's polling.
	cfg.QPS, cfg.Burst = 50, 100
	// The typed lists (Nodes, kube-system's pods: 15,000 on 5,000 nodes)
	// travel as protobuf, several times smaller and faster to encode and
	// decode than JSON; the dynamic and metadata clients stay on JSON.
	kcfg := rest.CopyConfig(cfg)
	kcfg.ContentType = "application/vnd.kubernetes.protobuf"
	kcfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	kube, err := NewAPI(kcfg)
	if err != nil {
		return nil, nil, fmt.Errorf("API client for %s: %v", cfg.Host, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("dynamic API client for %s: %v", cfg.Host, err)
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("metadata API client for %s: %v", cfg.Host, err)
	}
	return &Env{Kube: kube, Dynamic: dyn, Metadata: md, Options: o, Probe: p, Server: cfg.Host, CheckMode: r.CheckMode,
		Timeout: timeout, LayerTimeout: lt, RolloutWait: p.timeout()}, requests, nil
}

// Run checks that the API server answers, then runs the selected layers
// concurrently, each under its own timeout. When the API server does not
// answer within Timeout, every layer is an error naming the server.
func Run(ctx context.Context, env *Env, only, skip []string) (*Report, error) {
	sel, err := registry.Select(only, skip)
	if err != nil {
		return nil, err
	}
	if env.Timeout <= 0 {
		env.Timeout = 10 * time.Second
	}
	if env.LayerTimeout <= 0 {
		env.LayerTimeout = 60 * time.Second
	}
	env.snap.env = env
	env.inv = newInventory(&env.Options)
	rep := &Report{Server: env.Server, Layers: map[string]*verify.LayerReport{}, Defaults: env.Options.DefaultsFrom}

	vctx, cancel := context.WithTimeout(ctx, env.Timeout)
	ver, verr := serverVersion(vctx, env)
	cancel()
	if verr != nil {
		msg, remedy := serverFailure(env, verr)
		for _, n := range sel.Names() {
			rep.Layers[n] = &verify.LayerReport{Status: verify.StatusError, Results: []verify.Result{{
				Layer: n, Check: "api_server", Status: verify.StatusError, Msg: msg, Remediation: remedy,
			}}}
		}
		summarize(rep)
		return rep, nil
	}
	rep.ServerVersion = ver
	env.serverVersion = ver

	rep.Layers = sel.Run(ctx, env, func(name string) time.Duration {
		switch name {
		case "probe", "addons":
			return env.probeLayerBudget()
		case "kube_system":
			return env.LayerTimeout + env.RolloutWait
		}
		return env.LayerTimeout
	})
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
		v, err := env.Kube.ServerVersion(ctx)
		if err != nil {
			ch <- res{err: err}
			return
		}
		ch <- res{v: v.GitVersion}
	}()
	select {
	case r := <-ch:
		if r.err != nil && ctx.Err() != nil {
			// the deadline, not what the cancelled request made of it
			return "", ctx.Err()
		}
		return r.v, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// summarize sets the report's status, the worst of its layers' where a
// skipped layer (check mode, an add-on switched off) does not count unless
// every layer was skipped (or there is none), and counts the results.
func summarize(rep *Report) {
	rep.Status, rep.Summary = verify.Overall(rep.Layers)
	if len(rep.Layers) == 0 {
		rep.Status = verify.StatusSkipped
	}
}

// OrderedLayers lists a report's layers in LayerOrder, then any others by name.
func (rep *Report) OrderedLayers() []string { return verify.OrderLayers(rep.Layers, LayerOrder) }

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

// probeLayerBudget is the longest a layer that probes (probe, addons) may
// take: probes create objects and wait for them (the probe budget), with
// the clean-up budget for what is in the way of their namespaces' deletion;
// LayerTimeout on top covers the other calls, so the layer's own results,
// not this deadline, say what failed. RolloutWait on top is for what is
// still starting (the add-ons, and the APIService the probes wait for).
func (env *Env) probeLayerBudget() time.Duration {
	return env.Probe.timeout() + env.Probe.cleanupTimeout() + env.LayerTimeout + env.RolloutWait
}
