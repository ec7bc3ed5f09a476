// Package verify holds what the node layers (package verify/node) and the
// cluster layers (package verify/cluster) share: statuses and results, the
// layer registry and the runner that gives every layer its own timeout and
// recovers its panics, the time budgets of options given in seconds, and
// the seams to the node (FS for files under a root, Systemd and Cmder for
// units and programs), so tests point layers at generated node trees.
package verify

import (
	"errors"
	"strconv"
)

// Status is the outcome of a check or a layer.
type Status string

// Statuses, from best to worst; a layer's status is the worst of its checks.
const (
	StatusOK      Status = "ok"
	StatusSkipped Status = "skipped"
	StatusWarn    Status = "warn"
	StatusFail    Status = "fail"
	// StatusError means the check itself could not run (panic, timeout).
	StatusError Status = "error"
)

func (s Status) rank() int {
	switch s {
	case StatusOK:
		return 0
	case StatusSkipped:
		return 1
	case StatusWarn:
		return 2
	case StatusFail:
		return 3
	case StatusError:
		return 4
	}
	return 4
}

// Worse returns the worse of two statuses.
func Worse(a, b Status) Status {
	if b.rank() > a.rank() {
		return b
	}
	return a
}

// Result is one checked property: what was expected, what was found, and
// what to do about it. Keys are snake_case so playbooks can reach them.
type Result struct {
	Layer       string `json:"layer"`
	Check       string `json:"check"`
	Status      Status `json:"status"`
	Msg         string `json:"msg"`
	Expected    any    `json:"expected,omitempty"`
	Actual      any    `json:"actual,omitempty"`
	Evidence    any    `json:"evidence,omitempty"`
	Remediation string `json:"remediation,omitempty"`
}

// ErrNotApplicable is returned (wrapped) by a layer that does not apply to
// this host, e.g. etcd on a host outside the etcd group; it maps to skipped.
var ErrNotApplicable = errors.New("not applicable on this host")

// LayerReport is one layer's outcome.
type LayerReport struct {
	Status     Status   `json:"status"`
	Results    []Result `json:"results"`
	Facts      any      `json:"facts,omitempty"`
	DurationMS int64    `json:"duration_ms"`
}

// Summary counts results by status.
type Summary struct {
	Total   int `json:"total"`
	OK      int `json:"ok"`
	Warn    int `json:"warn"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	Errored int `json:"errored"`
}

// Plural is n and word, with an s unless n is 1 ("1 check", "3 checks").
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
