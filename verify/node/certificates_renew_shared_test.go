//go:build shared

package node

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
	"github.com/layercheck/layercheck/verify"
)

// Each kubespray release's k8s-certs-renew.sh.j2 gets the status the layer
// documents: a warning for the scripts that read NextElapseUSecRealtime
// during their own run (v2.29.1 to v2.31.0, kubespray #13072), ok for the
// older ones (which renew on every run by design) and master's fix.
func TestCertsRenewScriptEveryRelease(t *testing.T) {
	want := map[string]verify.Status{
		"v2.24.3": verify.StatusOK, "v2.25.1": verify.StatusOK, "v2.26.1": verify.StatusOK, "v2.27.1": verify.StatusOK,
		"v2.28.1": verify.StatusOK, "v2.29.1": verify.StatusWarn, "v2.30.0": verify.StatusWarn, "v2.31.0": verify.StatusWarn,
		"master": verify.StatusOK,
	}
	for rel, st := range want {
		data, err := os.ReadFile(filepath.Join(testutil.Shared(t, "kubespray-full", rel), "roles", "kubernetes", "control-plane", "templates", "k8s-certs-renew.sh.j2"))
		if err != nil {
			t.Fatal(err)
		}
		if r := certsRenewScriptResult("/usr/local/bin/k8s-certs-renew.sh", string(data), "node1"); r.Status != st {
			t.Errorf("%s: %s (%s), want %s", rel, r.Status, r.Msg, st)
		}
	}
}
