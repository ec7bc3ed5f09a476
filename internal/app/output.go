package app

import (
	"encoding/json"
	"io"

	"github.com/layercheck/layercheck/verify"
)

// writeReport prints rep as indented JSON for --format json, and through
// text otherwise.
func writeReport(w io.Writer, format string, rep any, text func(io.Writer)) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	text(w)
	return nil
}

// verdict is the exit of `layercheck node` and `layercheck cluster` for a
// report's status: 1 when a check failed or could not run, else none.
func verdict(st verify.Status) error {
	if st == verify.StatusFail || st == verify.StatusError {
		return &ExitError{Code: 1}
	}
	return nil
}
