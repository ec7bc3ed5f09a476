package output

// Prometheus metrics of a node's or the cluster's report (`layercheck node`
// and `layercheck cluster` --format prometheus, --textfile): a private
// registry per run holding one collector that walks the report's layers,
// written in the text exposition format (expfmt) to a writer or atomically
// to node_exporter's textfile directory. Every layer gets its status and
// duration; a layer whose facts export series of their own
// (verify.MetricsExporter, declared in the layer's file beside its checks)
// adds them. Nothing here knows a layer.
//
// Every metric is named layercheck_*, in base units, and its labels take
// only values bounded by the node's layout: certificate files, etcd
// endpoints, DNS tiers, layers and statuses. The values come from the
// reports as they are; nothing here reads the node again.

import (
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/layercheck/layercheck/verify"
)

// Run is what is known of a run beside its report: when it started and
// how long it took.
type Run struct {
	Start    time.Time
	Duration time.Duration
}

// Scopes: the scope label of the metrics every run has.
const (
	scopeNode    = "node"
	scopeCluster = "cluster"
)

// Statuses are the values of layercheck_layer_status's status label, one
// series each per layer, 1 for the layer's status and 0 for the others.
var Statuses = []verify.Status{verify.StatusOK, verify.StatusWarn, verify.StatusFail, verify.StatusSkipped, verify.StatusError}

var (
	descLayerStatus = prometheus.NewDesc("layercheck_layer_status",
		"Status of a layercheck layer in the last run: 1 for the layer's status (ok, warn, fail, skipped, error), 0 for the others.",
		[]string{"scope", "layer", "status"}, nil)
	descLayerDuration = prometheus.NewDesc("layercheck_layer_duration_seconds",
		"Time a layercheck layer took in the last run.",
		[]string{"scope", "layer"}, nil)
	descLastRun = prometheus.NewDesc("layercheck_last_run_timestamp_seconds",
		"Time the last layercheck run started, in seconds since the Unix epoch.",
		[]string{"scope"}, nil)
	descLastRunDuration = prometheus.NewDesc("layercheck_last_run_duration_seconds",
		"Time the last layercheck run took.",
		[]string{"scope"}, nil)
)

// newRegistry returns a private registry (pedantic: it checks that what
// the collector sends matches what it describes) holding c.
func newRegistry(c prometheus.Collector) (*prometheus.Registry, error) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	return reg, nil
}

// writeMetrics writes what g gathers in the Prometheus text exposition format.
func writeMetrics(w io.Writer, g prometheus.Gatherer) error {
	mfs, err := g.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}

// writeTextfile writes what g gathers to dir/name for node_exporter's
// textfile collector, atomically: a temporary file in dir (whose name does
// not end in .prom, so the collector never reads it half-written), made
// readable by all (0644, node_exporter runs as its own user), renamed over
// the file.
func writeTextfile(dir, name string, g prometheus.Gatherer) error {
	return prometheus.WriteToTextfile(filepath.Join(dir, name), g)
}

// collector collects the metrics of a `layercheck node` (Scope
// scopeNode) or `layercheck cluster` (scopeCluster) run: each layer's
// status and duration, what each layer exports, the run's start and
// duration.
type collector struct {
	Scope  string
	Layers map[string]*verify.LayerReport
	Run    Run
}

// Describe sends the descriptors of what Collect sends.
func (c *collector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

// Collect sends the run's metrics and every layer's.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for name, lr := range c.Layers {
		for _, st := range Statuses {
			ch <- prometheus.MustNewConstMetric(descLayerStatus, prometheus.GaugeValue, verify.Gauge01(lr.Status == st), c.Scope, name, string(st))
		}
		ch <- prometheus.MustNewConstMetric(descLayerDuration, prometheus.GaugeValue, float64(lr.DurationMS)/1000, c.Scope, name)
		if e, ok := lr.Facts.(verify.MetricsExporter); ok {
			e.Metrics(lr, func(s verify.Sample) { ch <- constMetric(s) })
		}
	}
	ch <- prometheus.MustNewConstMetric(descLastRun, prometheus.GaugeValue, float64(c.Run.Start.UnixNano())/1e9, c.Scope)
	ch <- prometheus.MustNewConstMetric(descLastRunDuration, prometheus.GaugeValue, c.Run.Duration.Seconds(), c.Scope)
}

// descs holds the descriptor of each series a layer exports.
var descs sync.Map // *verify.Series -> *prometheus.Desc

// constMetric is a layer's sample as a constant gauge; a sample that does
// not fit its series (label values against label names) fails the
// gathering with the reason instead of a panic.
func constMetric(s verify.Sample) prometheus.Metric {
	d, ok := descs.Load(s.Series)
	if !ok {
		d, _ = descs.LoadOrStore(s.Series, prometheus.NewDesc(s.Series.Name, s.Series.Help, s.Series.Labels, nil))
	}
	desc := d.(*prometheus.Desc)
	m, err := prometheus.NewConstMetric(desc, prometheus.GaugeValue, s.Value, s.Labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(desc, err)
	}
	return m
}
