package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/layercheck/layercheck/lint"
)

// ConfigFile is the name of the lint configuration in an inventory
// directory.
const ConfigFile = ".layercheck.yml"

// Config is .layercheck.yml: what the lint leaves out. Unknown keys are
// an error.
//
//	skip_rules: [local-path-provisioner, certificates-duration]
//	skip_variables: [metrics_server_enabled]
type Config struct {
	// SkipRules are rule ids (layercheck lint --rules) never reported.
	SkipRules []string `yaml:"skip_rules"`
	// SkipVariables are variables whose findings are never reported.
	SkipVariables []string `yaml:"skip_variables"`
	path          string
}

// LoadConfig reads the configuration file path. With path "" it reads
// dir/.layercheck.yml when there is one (nil, nil when not). Errors name
// the file and line; an unknown rule is an error too.
func LoadConfig(path, dir string) (*Config, error) {
	explicit := path != ""
	if !explicit {
		path = filepath.Join(dir, ConfigFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("lint config: %w", err)
	}
	c := &Config{path: path}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("lint config %s: %w", path, err)
	}
	known := map[string]bool{}
	for _, r := range lint.Rules() {
		known[r.ID] = true
	}
	for _, r := range c.SkipRules {
		if !known[r] {
			return nil, fmt.Errorf("lint config %s: skip_rules: no rule %q (layercheck lint --rules lists them)", path, r)
		}
	}
	return c, nil
}

// ignoreRE is a suppression comment: "# layercheck: ignore[rule]",
// "# layercheck: ignore[rule-a, rule-b]" or "# layercheck: ignore" (every
// rule); ";" starts the comment too (INI).
var ignoreRE = regexp.MustCompile(`[#;]\s*layercheck:\s*ignore(?:\[([^\]]*)\])?`)

// commentIgnores reports which rules a suppression comment on the line, or
// on a comment-only line right above it, silences ("*": all).
func commentIgnores(lines []string, line int) (map[string]bool, int) {
	check := func(i int, commentOnly bool) map[string]bool {
		if i < 1 || i > len(lines) {
			return nil
		}
		l := lines[i-1]
		if commentOnly {
			t := strings.TrimSpace(l)
			if !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, ";") {
				return nil
			}
		}
		m := ignoreRE.FindStringSubmatch(l)
		if m == nil {
			return nil
		}
		out := map[string]bool{}
		if strings.TrimSpace(m[1]) == "" {
			out["*"] = true
		}
		for _, r := range strings.Split(m[1], ",") {
			if r = strings.TrimSpace(r); r != "" {
				out[r] = true
			}
		}
		return out
	}
	if m := check(line, false); m != nil {
		return m, line
	}
	if m := check(line-1, true); m != nil {
		return m, line - 1
	}
	return nil, 0
}

// Suppressions are what silences findings, in order: comments in the
// inventory files, the configuration, a baseline.
type Suppressions struct {
	// Base is the absolute directory finding locations are relative to
	// (the inventory directory, or Report.LocationsRelativeTo).
	Base string
	// Comments enables "# layercheck: ignore[rule]" comments.
	Comments bool
	Config   *Config
	Baseline *Baseline
}

// Apply moves the findings the suppressions silence from r.Findings to
// r.Suppressed, each with SuppressedBy, and counts again. Call it before
// Relocate.
func (s Suppressions) Apply(r *lint.Report) {
	files := map[string][]string{}
	read := func(file string) []string {
		if l, ok := files[file]; ok {
			return l
		}
		p := file
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.Base, file)
		}
		var lines []string
		if f, err := os.Open(p); err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			f.Close()
		}
		files[file] = lines
		return lines
	}
	skipRule, skipVar := map[string]bool{}, map[string]bool{}
	if s.Config != nil {
		for _, x := range s.Config.SkipRules {
			skipRule[x] = true
		}
		for _, x := range s.Config.SkipVariables {
			skipVar[x] = true
		}
	}
	keep := r.Findings[:0:0]
	for _, f := range r.Findings {
		by := ""
		if loc := lint.ParseWhere(f.Where); s.Comments && loc != nil && loc.File != "-e" && loc.Line > 0 {
			if m, at := commentIgnores(read(loc.File), loc.Line); m != nil && (m["*"] || m[f.Rule]) {
				by = fmt.Sprintf("comment %s:%d", loc.File, at)
			}
		}
		if by == "" && s.Config != nil && (skipRule[f.Rule] || (f.Variable != "" && skipVar[f.Variable])) {
			by = "config " + s.Config.path
		}
		if by == "" && s.Baseline != nil && s.Baseline.has(f) {
			by = "baseline " + s.Baseline.path
		}
		if by == "" {
			keep = append(keep, f)
			continue
		}
		f.SuppressedBy = by
		r.Suppressed = append(r.Suppressed, f)
	}
	r.Findings = keep
	r.Recount()
}

// SuppressedCounts counts r.Suppressed per rule.
func SuppressedCounts(r *lint.Report) map[string]int {
	if len(r.Suppressed) == 0 {
		return nil
	}
	out := map[string]int{}
	for _, f := range r.Suppressed {
		out[f.Rule]++
	}
	return out
}

// Baseline is a file of known findings (--write-baseline writes it,
// --baseline reads it): a finding matching one by rule, variable, file and
// value is silenced, whatever its line, so CI fails only on new findings.
type Baseline struct {
	Findings []BaselineEntry `json:"findings"`
	path     string
	set      map[BaselineEntry]bool
}

// BaselineEntry identifies a finding in a baseline.
type BaselineEntry struct {
	Rule     string `json:"rule"`
	Variable string `json:"variable,omitempty"`
	File     string `json:"file,omitempty"`
	Value    string `json:"value,omitempty"`
}

func entry(f lint.Finding) BaselineEntry {
	e := BaselineEntry{Rule: f.Rule, Variable: f.Variable, Value: f.Value}
	if loc := lint.ParseWhere(f.Where); loc != nil {
		e.File = loc.File
	}
	if f.Variable == "" {
		e.Value = f.Message // a finding about groups: its message says which
	}
	return e
}

func (b *Baseline) has(f lint.Finding) bool { return b.set[entry(f)] }

// ReadBaseline reads a baseline file written by WriteBaseline.
func ReadBaseline(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	b := &Baseline{path: path, set: map[BaselineEntry]bool{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(b); err != nil {
		return nil, fmt.Errorf("baseline %s: %w", path, err)
	}
	for _, e := range b.Findings {
		b.set[e] = true
	}
	return b, nil
}

// WriteBaseline writes r's findings (reported and suppressed alike) to
// path as a baseline, sorted, one entry per distinct finding.
func WriteBaseline(path string, r *lint.Report) error {
	set := map[BaselineEntry]bool{}
	for _, fs := range [][]lint.Finding{r.Findings, r.Suppressed} {
		for _, f := range fs {
			set[entry(f)] = true
		}
	}
	b := Baseline{Findings: make([]BaselineEntry, 0, len(set))}
	for e := range set {
		b.Findings = append(b.Findings, e)
	}
	sort.Slice(b.Findings, func(i, j int) bool {
		x, y := b.Findings[i], b.Findings[j]
		if x.File != y.File {
			return x.File < y.File
		}
		if x.Rule != y.Rule {
			return x.Rule < y.Rule
		}
		if x.Variable != y.Variable {
			return x.Variable < y.Variable
		}
		return x.Value < y.Value
	})
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	return nil
}

// InventoryDir is the absolute directory of an inventory source: the
// source itself when it is a directory, else its directory; "" for a
// host list ("node1,node2,").
func InventoryDir(src string) string {
	if strings.Contains(src, ",") {
		return ""
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		return ""
	}
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		return abs
	}
	return filepath.Dir(abs)
}
