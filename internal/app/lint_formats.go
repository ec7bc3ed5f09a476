package app

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/layercheck/layercheck/internal/lintreport"
	"github.com/layercheck/layercheck/lint"
)

// writeLintReport prints the lint report as sarif or junit.
func writeLintReport(w io.Writer, format string, rep *lint.Report, sources []string) error {
	if format == "sarif" {
		return lintreport.WriteSARIF(w, rep, lintBaseDir(rep, sources), "")
	}
	return lintreport.WriteJUnit(w, rep, "layercheck lint "+strings.Join(sources, " "))
}

// lintBaseDir is the directory the report's locations are relative to:
// LocationsRelativeTo when the sources are in different directories, else
// the inventory directory (a directory source, or a file source's
// directory).
func lintBaseDir(rep *lint.Report, sources []string) string {
	if rep.LocationsRelativeTo != "" {
		return rep.LocationsRelativeTo
	}
	if len(sources) == 0 {
		return "."
	}
	if fi, err := os.Stat(sources[0]); err == nil && fi.IsDir() {
		return sources[0]
	}
	return filepath.Dir(sources[0])
}
