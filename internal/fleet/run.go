package fleet

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/layercheck/layercheck/internal/sshconn"
	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/node"
)

// StatusUnreachable is a host layercheck could not connect to (Ansible's
// UNREACHABLE).
const StatusUnreachable verify.Status = "unreachable"

// Options bound a fleet run.
type Options struct {
	// Forks is the number of hosts checked at once (default 50).
	Forks int
	// SSH is how to connect (its Timeout bounds connect + handshake).
	SSH sshconn.Options
	// HostTimeout bounds everything done on one host after connecting
	// (default: 2 layer timeouts + 30s).
	HostTimeout time.Duration
	// Now overrides the time certificates are judged at when a host does
	// not set layercheck_verify_now (zero: now).
	Now time.Time
	// Layers and Skip select node layers on top of the hosts' own
	// layercheck_verify_layers / layercheck_verify_skip.
	Layers, Skip []string
	// Progress, when set, is called after each host: done, total, hosts
	// that failed so far.
	Progress func(done, total, failed int)
}

// HostReport is one host's outcome.
type HostReport struct {
	Host string `json:"host"`
	// Address is user@host:port connected to; Via the jump host.
	Address string        `json:"address,omitempty"`
	Via     string        `json:"via,omitempty"`
	Status  verify.Status `json:"status"`
	// Msg says why a host is unreachable or could not be checked.
	Msg    string       `json:"msg,omitempty"`
	Report *node.Report `json:"report,omitempty"`
	// DurationMS is the time spent on the host, connecting included.
	DurationMS int64 `json:"duration_ms"`
}

// Report is a fleet run's outcome, hosts in inventory order.
type Report struct {
	Status  verify.Status `json:"status"`
	Hosts   []*HostReport `json:"hosts"`
	Summary Summary       `json:"summary"`
	// Cluster is the cluster layers' report, run once (nil when not run;
	// ClusterSkipped says why).
	Cluster        *cluster.Report `json:"cluster,omitempty"`
	ClusterSkipped string          `json:"cluster_skipped,omitempty"`
	// Title names the command in the markdown and junit reports (default
	// "layercheck verify").
	Title string `json:"-"`
}

// AddCluster folds the cluster layers' report into the run's status.
func (r *Report) AddCluster(c *cluster.Report) {
	r.Cluster = c
	if c != nil && c.Status != verify.StatusSkipped {
		r.Status = verify.Worse(r.Status, c.Status)
	}
}

// Summary counts hosts by status.
type Summary struct {
	Hosts       int `json:"hosts"`
	OK          int `json:"ok"`
	Warn        int `json:"warn"`
	Failed      int `json:"failed"`
	Unreachable int `json:"unreachable"`
}

// Run checks every host, at most opts.Forks at a time; one host's failure,
// hang or unreachability never stops the others.
func Run(ctx context.Context, hosts []*Host, opts Options) *Report {
	forks := opts.Forks
	if forks <= 0 {
		forks = 50
	}
	rep := &Report{Hosts: make([]*HostReport, len(hosts))}
	sem := make(chan struct{}, forks)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done, failed := 0, 0
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			hr := checkHost(ctx, h, opts)
			rep.Hosts[i] = hr
			mu.Lock()
			done++
			if hr.Status == verify.StatusFail || hr.Status == verify.StatusError || hr.Status == StatusUnreachable {
				failed++
			}
			if opts.Progress != nil {
				opts.Progress(done, len(hosts), failed)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	rep.summarise()
	return rep
}

// NewReport is the report of hosts checked elsewhere (e.g. one node by
// `layercheck node`), with its status and summary.
func NewReport(hosts ...*HostReport) *Report {
	r := &Report{Hosts: hosts}
	r.summarise()
	return r
}

func (rep *Report) summarise() {
	rep.Status = verify.StatusOK
	rep.Summary = Summary{}
	for _, hr := range rep.Hosts {
		rep.Summary.Hosts++
		switch hr.Status {
		case StatusUnreachable:
			rep.Summary.Unreachable++
			rep.Status = verify.StatusError
		case verify.StatusFail, verify.StatusError:
			rep.Summary.Failed++
			rep.Status = verify.Worse(rep.Status, hr.Status)
		case verify.StatusWarn:
			rep.Summary.Warn++
			rep.Status = verify.Worse(rep.Status, hr.Status)
		default:
			rep.Summary.OK++
		}
	}
}

func checkHost(ctx context.Context, h *Host, opts Options) (hr *HostReport) {
	start := time.Now()
	hr = &HostReport{Host: h.Name}
	defer func() { hr.DurationMS = time.Since(start).Milliseconds() }()
	if h.Err != nil {
		hr.Status, hr.Msg = verify.StatusError, h.Err.Error()
		return hr
	}
	t := h.Target
	hr.Address = t.User + "@" + t.Addr()
	if t.Jump != nil {
		hr.Via = t.Jump.User + "@" + t.Jump.Addr()
	}
	conn, err := sshconn.Dial(ctx, t, opts.SSH)
	if err != nil {
		hr.Status, hr.Msg = StatusUnreachable, err.Error()
		return hr
	}
	defer conn.Close()

	req := h.Request
	req.Layers = append(append([]string(nil), req.Layers...), opts.Layers...)
	req.Skip = append(append([]string(nil), req.Skip...), opts.Skip...)
	if req.Now == "" && !opts.Now.IsZero() {
		req.Now = opts.Now.UTC().Format(time.RFC3339)
	}
	env, err := nodeEnv(&req, conn)
	if err != nil {
		hr.Status, hr.Msg = verify.StatusError, fmt.Sprintf("host %s: %v", h.Name, err)
		return hr
	}
	ht := opts.HostTimeout
	if ht <= 0 {
		ht = 2*env.LayerTimeout + 30*time.Second
	}
	hctx, cancel := context.WithTimeout(ctx, ht)
	defer cancel()
	type out struct {
		rep *node.Report
		err error
	}
	ch := make(chan out, 1)
	go func() {
		r, err := node.Run(hctx, env, req.Layers, req.Skip)
		ch <- out{r, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			hr.Status, hr.Msg = verify.StatusError, fmt.Sprintf("host %s: %v", h.Name, o.err)
			return hr
		}
		hr.Report, hr.Status = o.rep, o.rep.Status
	case <-hctx.Done():
		hr.Status, hr.Msg = verify.StatusError, fmt.Sprintf("host %s: the node layers did not finish within %s", h.Name, ht)
	}
	return hr
}

// nodeEnv is node.Request.Env for a node reached over conn: the same
// validation and defaults, the root checked over SFTP, and the node's
// files, commands and connections through conn; errors name the inventory
// variables (layercheck_verify_root, ...).
func nodeEnv(r *node.Request, conn *sshconn.Conn) (*node.Env, error) {
	return r.EnvOn(&node.Remote{FS: conn.FS(), Cmder: conn.Cmder(), Dial: conn.DialNode},
		func(opt string) string { return "layercheck_verify_" + opt })
}

// Failures lists the results that are not ok or skipped, per host in
// report order and layers in node.LayerOrder.
func (r *Report) Failures() []HostResult {
	var out []HostResult
	for _, h := range r.Hosts {
		if h.Report == nil {
			continue
		}
		for _, l := range h.Report.OrderedLayers() {
			for _, res := range h.Report.Layers[l].Results {
				if res.Status == verify.StatusFail || res.Status == verify.StatusError || res.Status == verify.StatusWarn {
					out = append(out, HostResult{Host: h.Host, Result: res})
				}
			}
		}
	}
	return out
}

// HostResult is one result with its host.
type HostResult struct {
	Host string
	verify.Result
}
