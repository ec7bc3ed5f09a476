package testutil

import (
	"os/exec"
	"strings"
	"testing"
)

// RequireAnsibleCoreSeries fails unless the venv's python imports
// ansible-core of the series ("2.19"): a stale venv must not stand in for
// another series.
func RequireAnsibleCoreSeries(t *testing.T, python, series string) {
	t.Helper()
	out, err := exec.Command(python, "-c", "import ansible.release as r; print(r.__version__)").Output()
	if err != nil {
		t.Fatalf("%s: ansible-core version: %v", python, err)
	}
	if v := strings.TrimSpace(string(out)); !strings.HasPrefix(v, series+".") {
		t.Fatalf("%s has ansible-core %s, want %s.x: run `make venv`", python, v, series)
	}
	t.Logf("ansible-core %s", strings.TrimSpace(string(out)))
}
