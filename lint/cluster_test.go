package lint

import (
	"strings"
	"testing"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/lint/live"
)

// TestUpgradeFromCannotTell: a control plane whose Kubernetes no bundled
// release installs by default, or none read at all, is said, and no
// release is assumed.
func TestUpgradeFromCannotTell(t *testing.T) {
	cat, err := kubespray.Bundled("master")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []*live.State{
		{Server: "https://192.0.2.1:6443", ServerVersion: "v1.20.4"},
		{Server: "https://192.0.2.1:6443"},
	} {
		from, note := inferUpgradeFrom(st, cat)
		if from != nil || note == nil || !strings.HasPrefix(note.Message, "cannot tell which kubespray release installed the cluster") || note.Fix == "" {
			t.Errorf("%+v: from %v, note %+v", st, from, note)
		}
	}
}
