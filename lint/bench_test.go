package lint

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
)

// benchInventory writes the 5,000-host inventory bench/inventory.sh
// lints (bench/geninv) and returns its hosts file.
func benchInventory(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	out, err := exec.Command("go", "run", "../bench/geninv", "-hosts", "5000", "-out", dir).CombinedOutput()
	if err != nil {
		b.Fatalf("geninv: %v\n%s", err, out)
	}
	return filepath.Join(dir, "inventory.ini")
}

// BenchmarkRun lints bench/inventory.sh's 5,000-host inventory as
// `layercheck lint` does: the catalogue selected (deferred), the inventory
// loaded, the rules run. The catalogues' indexes are built once per
// process, as in the CLI: the first iteration pays for them.
func BenchmarkRun(b *testing.B) {
	ini := benchInventory(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cat, err := kubespray.SelectDeferred("", "--kubespray-version", []string{ini})
		if err != nil {
			b.Fatal(err)
		}
		inv, err := parser.Load(ini)
		if err != nil {
			b.Fatal(err)
		}
		Run(Input{Inventory: inv, Catalogue: cat})
	}
}

// BenchmarkRules is BenchmarkRun without loading: the rules only.
func BenchmarkRules(b *testing.B) {
	ini := benchInventory(b)
	cat, err := kubespray.SelectDeferred("", "--kubespray-version", []string{ini})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		inv, err := parser.Load(ini)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		Run(Input{Inventory: inv, Catalogue: cat})
	}
}
