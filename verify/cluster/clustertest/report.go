package clustertest

import (
	"testing"

	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
)

// Result returns the result of check in layer of rep, and fails the test
// when the report has no such layer or check.
func Result(t testing.TB, rep *cluster.Report, layer, check string) verify.Result {
	t.Helper()
	lr := rep.Layers[layer]
	if lr == nil {
		t.Fatalf("no layer %s in report", layer)
	}
	for _, r := range lr.Results {
		if r.Check == check {
			return r
		}
	}
	t.Fatalf("layer %s has no check %s: %+v", layer, check, lr.Results)
	return verify.Result{}
}
