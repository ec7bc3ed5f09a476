package kubespray

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// coverageTable renders what the lint evaluates of every bundled
// release's inventory asserts, as README.md shows it.
func coverageTable(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("| release | task file | asserts | evaluated | need facts | not modelled |\n|---|---|---:|---:|---:|---:|\n")
	var facts strings.Builder
	for _, v := range ReleaseOrder() {
		c, err := Bundled(v)
		if err != nil {
			t.Fatal(err)
		}
		cov := c.Coverage()
		n := len(cov.Evaluated) + len(cov.NeedsFact) + len(cov.NotModelled)
		fmt.Fprintf(&b, "| %s | `%s` | %d | %d | %d | %d |\n", v, cov.File, n, len(cov.Evaluated), len(cov.NeedsFact), len(cov.NotModelled))
		var parts []string
		for _, t := range cov.NeedsFact {
			parts = append(parts, fmt.Sprintf("%s (line %d: %s)", t.Task, t.Line, strings.Join(t.Needs, ", ")))
		}
		for _, t := range cov.NotModelled {
			parts = append(parts, fmt.Sprintf("NOT MODELLED %s (line %d: %s)", t.Task, t.Line, strings.Join(t.Needs, ", ")))
		}
		if len(parts) > 0 {
			fmt.Fprintf(&facts, "- **%s**: %s.\n", v, strings.Join(parts, "; "))
		}
	}
	if facts.Len() > 0 {
		b.WriteString("\nAsserts that need facts, with the facts (the lint leaves them to the run):\n\n")
		b.WriteString(facts.String())
	}
	return b.String()
}

// TestREADMEAssertCoverage keeps README.md's coverage table equal to
// what the bundled catalogues say (LAYERCHECK_UPDATE_README=1 rewrites it).
func TestREADMEAssertCoverage(t *testing.T) {
	const start, end = "<!-- assert-coverage:start -->\n", "<!-- assert-coverage:end -->"
	path := filepath.Join("..", "README.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, start), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("README.md has no %q ... %q section", start, end)
	}
	want := coverageTable(t)
	if got := s[i+len(start) : j]; got != want {
		if os.Getenv("LAYERCHECK_UPDATE_README") != "" {
			if err := os.WriteFile(path, []byte(s[:i+len(start)]+want+s[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("README.md's assert coverage differs from the catalogues; want:\n%s", want)
	}
}
