package verify

import "io"

// What a layer's facts add to the reports beside its status and results,
// declared in the layer's file beside its checks: metric series
// (MetricsExporter) and lines under the layer in a node's text report
// (TextDetailer). The CLI's output package asks every layer's facts for
// them and knows no layer.
//
// Every exported value is a gauge. The CLI turns the samples into
// Prometheus metrics (`layercheck node --format prometheus`, --textfile);
// this package and the layers stay without Prometheus's client library,
// which the module binaries do not link.

// Series is a metric family a layer exports: its name (layercheck_*, in
// base units), its help text and its label names.
type Series struct {
	Name   string
	Help   string
	Labels []string
}

// Sample is one value of a series, with its label values in the order of
// the series' Labels.
type Sample struct {
	Series *Series
	Value  float64
	Labels []string
}

// MetricsExporter is implemented by the facts of a layer that exports
// metrics: Metrics sends each sample, given the layer's report (whose
// results hold verdicts the facts do not). A nil receiver sends nothing.
type MetricsExporter interface {
	Metrics(lr *LayerReport, send func(Sample))
}

// TextDetailer is implemented by the facts of a layer that add lines under
// the layer's line in a node's text report (`layercheck node`): each line
// indented by four spaces and ending with a newline. A nil receiver
// writes nothing.
type TextDetailer interface {
	TextDetail(w io.Writer)
}

// Gauge01 is 1 for true, 0 for false.
func Gauge01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// CheckStatus is the status of the layer's first result named check (""
// when there is none).
func (lr *LayerReport) CheckStatus(check string) Status {
	for _, r := range lr.Results {
		if r.Check == check {
			return r.Status
		}
	}
	return ""
}
