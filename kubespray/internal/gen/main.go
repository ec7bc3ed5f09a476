// Command gen writes the bundled kubespray variable catalogues
// (kubespray/catalogue_<version>.json.gz) from kubespray's own data: for
// each version directory under -data (holding SOURCE.txt, roles/*/defaults,
// roles/*/vars and inventory/sample/group_vars), one gzipped JSON file in
// -out, with the release facts read from the same version under -src
// (roles/*/tasks, playbooks/ansible_version.yml), and where each came
// from: the galaxy.yml version of the whole tree under -full and the
// commit's date from -dates (scan.Provenance).
// Run it through `make generate` (go generate ./kubespray/...).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/layercheck/layercheck/kubespray/internal/scan"
)

func main() {
	data := flag.String("data", "", "directory of kubespray data, one subdirectory per version")
	src := flag.String("src", "", "directory of kubespray tasks and playbooks, one subdirectory per version (optional)")
	full := flag.String("full", "", "directory of whole kubespray trees, one subdirectory per version, for galaxy.yml's version (optional)")
	dates := flag.String("dates", "", "file of \"<version> <commit> <date>\" lines, the date of each commit (needed with -full)")
	out := flag.String("out", ".", "directory to write catalogue_<version>.json.gz into")
	flag.Parse()
	if *data == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: gen -data <dir> [-src <dir>] [-out <dir>]")
		os.Exit(2)
	}
	prov := scan.Provenance{FullDir: *full}
	if *dates != "" {
		d, err := scan.ReadCommitDates(*dates)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		prov.Dates = d
	}
	files, err := scan.Generate(*data, *src, *out, prov)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	for _, f := range files {
		vars, bools, sbools, inferred := 0, 0, 0, 0
		for _, defs := range f.Vars {
			vars++
			isBool, isInferred, isSB := false, true, false
			for _, d := range defs {
				if d.Type == scan.TypeBool {
					isBool = true
					isInferred = isInferred && d.Inferred
				}
				isSB = isSB || d.StringBool
			}
			if isBool {
				bools++
				if isInferred {
					inferred++
				}
			} else if isSB {
				sbools++
			}
		}
		fmt.Printf("kubespray %s (%.7s of %s, galaxy.yml %s): %d files, %d variables, %d booleans (%d inferred from templates), %d string-booleans\n",
			f.Kubespray, f.Commit, f.CommitDate, f.Galaxy, len(f.Files), vars, bools, inferred, sbools)
	}
}
