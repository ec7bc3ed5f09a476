// Command genbin writes the binary form of each bundled kubespray
// catalogue (catalogue_<version>.bin.gz, which the lint reads) from its
// JSON form (catalogue_<version>.json.gz, which gen writes and review
// reads): run by go generate after gen, in the directory holding them.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/layercheck/layercheck/kubespray/internal/scan"
)

func main() {
	dir := flag.String("dir", ".", "directory holding catalogue_<version>.json.gz")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "genbin:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "catalogue_*.json.gz"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no catalogue_*.json.gz in %s", dir)
	}
	for _, f := range files {
		js, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		bin, err := scan.Transcode(js)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "catalogue_"), ".json.gz")
		if err := os.WriteFile(filepath.Join(dir, scan.BinaryFileName(version)), bin, 0o644); err != nil {
			return err
		}
	}
	return nil
}
