//go:build shared

package parser

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
)

// fastYAML reads the real inventories' and kubespray's own YAML as
// yaml.v3 does, wherever it reads them.
func TestFastYAMLOnRealFiles(t *testing.T) {
	total, read := 0, 0
	for _, root := range []string{testutil.Shared(t, "fixtures", "inventories"), testutil.Shared(t, "kubespray")} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")) {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			total++
			if checkFast(t, data) {
				read++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("fastYAML read %d of %d YAML files (yaml.v3 the others)", read, total)
	if read == 0 {
		t.Fatal("fastYAML read none")
	}
}
