package testutil

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// PromInputSeries turns a `layercheck node --format prometheus`
// exposition into `promtool test rules` input series, as node1 scraped by
// node_exporter's textfile collector (instance node1:9100, job node), each
// value held for two hours, timestamps (names ending in
// _timestamp_seconds) shifted by at (promtool's time 0); it also returns
// the shifted not_after of each certificate path.
func PromInputSeries(t *testing.T, exposition string, at time.Time) ([]any, map[string]float64) {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(exposition))
	require.NoError(t, err)
	var out []any
	notAfter := map[string]float64{}
	names := make([]string, 0, len(mfs))
	for n := range mfs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, m := range mfs[name].GetMetric() {
			labels := []string{`instance="node1:9100"`, `job="node"`}
			path := ""
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
				if l.GetName() == "path" {
					path = l.GetValue()
				}
			}
			v := m.GetGauge().GetValue()
			if strings.HasSuffix(name, "_timestamp_seconds") {
				v -= float64(at.Unix())
			}
			if name == "layercheck_certificate_not_after_timestamp_seconds" {
				notAfter[path] = v
			}
			out = append(out, map[string]any{
				"series": name + "{" + strings.Join(labels, ",") + "}",
				"values": fmt.Sprintf("%sx120", model.SampleValue(v).String()),
			})
		}
	}
	return out, notAfter
}
