// Package lint checks a kubespray inventory before cluster.yml: booleans
// written as strings (which ansible-core >= 2.19 rejects in `when:`),
// choices kubespray asserts, networks, groups, misspelt and removed
// variables, and trade-offs worth a second look. Each rule is one file
// registering itself in the rules table; Run applies them all.
package lint

import (
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/kubespray"
	"github.com/layercheck/layercheck/parser"
)

// Severity of a finding: "error" fails the lint, "warning" and "info" do not.
type Severity string

// Severities, from most to least severe.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

func (s Severity) rank() int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

// Finding is one problem, reported once per location that defines the value.
type Finding struct {
	Rule     string   `json:"rule"` // stable id, e.g. "string-as-bool"
	Severity Severity `json:"severity"`
	Variable string   `json:"variable,omitempty"`
	Value    string   `json:"value,omitempty"` // parser.Value.Display(): never vault text
	Where    string   `json:"where,omitempty"` // "group_vars/all/all.yml:12:15" or "-e"
	Hosts    []string `json:"hosts,omitempty"` // hosts the setting affects (where it wins)
	Message  string   `json:"message"`         // one line: what is wrong
	Why      string   `json:"why,omitempty"`
	Fix      string   `json:"fix,omitempty"`
}

// Report is the result of Run.
type Report struct {
	Catalogue string    `json:"catalogue"` // which kubespray catalogue was used
	Errors    int       `json:"errors"`
	Warnings  int       `json:"warnings"`
	Findings  []Finding `json:"findings"`
}

// Input is what Run checks.
type Input struct {
	Inventory *parser.Inventory
	Extra     *parser.Map // -e values (nil if none)
	Catalogue *kubespray.Catalogue
	// Resolved, when set, holds per host the values Ansible itself resolved
	// (handed to the module by the play/action plugin, Origin ansible): the
	// types there are Ansible's and win for judging a value; our own
	// resolution still gives the location. A type disagreement between the
	// two is reported as an "info" finding.
	Resolved map[string]*parser.Map
}

// Run applies every rule and returns the findings sorted by severity, then
// where, then variable.
func Run(in Input) *Report {
	r := &Report{Findings: []Finding{}}
	if in.Catalogue != nil {
		r.Catalogue = in.Catalogue.Name
	}
	outside := rrOutside(in.Inventory) // as written, before dynamic_groups
	if in.Inventory != nil {
		kubespray.ApplyDynamicGroups(in.Inventory)
	}
	c := newCtx(in)
	c.rrOutside = outside
	for _, rl := range rules {
		r.Findings = append(r.Findings, rl.check(c)...)
	}
	r.finish()
	return r
}

// ForHost returns the findings affecting host: those naming it in Hosts,
// plus the global ones (no Hosts).
func (r *Report) ForHost(host string) *Report {
	out := &Report{Catalogue: r.Catalogue, Findings: []Finding{}}
	for _, f := range r.Findings {
		if len(f.Hosts) == 0 {
			out.Findings = append(out.Findings, f)
			continue
		}
		for _, h := range f.Hosts {
			if h == host {
				out.Findings = append(out.Findings, f)
				break
			}
		}
	}
	out.finish()
	return out
}

// finish sorts the findings and counts errors and warnings.
func (r *Report) finish() {
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i], r.Findings[j]
		if a.Severity.rank() != b.Severity.rank() {
			return a.Severity.rank() < b.Severity.rank()
		}
		if a.Where != b.Where {
			return whereLess(a.Where, b.Where)
		}
		if a.Variable != b.Variable {
			return a.Variable < b.Variable
		}
		return a.Rule < b.Rule
	})
	r.Errors, r.Warnings = 0, 0
	for _, f := range r.Findings {
		switch f.Severity {
		case SeverityError:
			r.Errors++
		case SeverityWarning:
			r.Warnings++
		}
	}
}

// whereLess orders locations by file, then line and column as numbers;
// "-e" (extra vars) last, as they win over every file.
func whereLess(a, b string) bool {
	fa, la, ca := splitWhere(a)
	fb, lb, cb := splitWhere(b)
	if (fa == "-e") != (fb == "-e") {
		return fb == "-e"
	}
	if fa != fb {
		return fa < fb
	}
	if la != lb {
		return la < lb
	}
	return ca < cb
}

func splitWhere(w string) (file string, line, col int) {
	file = w
	nums := []int{}
	for i := 0; i < 2; i++ {
		j := strings.LastIndexByte(file, ':')
		if j < 0 {
			break
		}
		n, err := strconv.Atoi(file[j+1:])
		if err != nil {
			break
		}
		nums = append([]int{n}, nums...)
		file = file[:j]
	}
	if len(nums) > 0 {
		line = nums[0]
	}
	if len(nums) > 1 {
		col = nums[1]
	}
	return file, line, col
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
