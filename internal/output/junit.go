package output

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/layercheck/layercheck/internal/fleet"
	"github.com/layercheck/layercheck/lint"
	"github.com/layercheck/layercheck/verify"
)

// JUnit XML as GitLab (artifacts:reports:junit) and Jenkins (the junit
// step) read it: <testsuites> with one <testsuite> per group of checks and
// a <testcase> per check, whose <failure>, <error> or <skipped> says how it
// ended. The lint report is one suite, a testcase per finding and per
// rule; a verify report a suite per host and one for the cluster.

// junitSuites is the document element. Tests, Failures and Errors are the
// sums over Suites (add keeps them).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

// junitSuite is one <testsuite>; Time is in seconds ("1.250"), left out
// when unknown. Tests, Failures, Errors and Skipped count Cases (add keeps
// them).
type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr,omitempty"`
	Cases    []junitCase `xml:"testcase"`
}

// junitCase is one <testcase>. At most one of Failure (the check failed),
// Error (it could not run) and Skipped is set; none means it passed. File
// and Line (1-based) say where the tested thing is, as GitLab shows them.
type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Time      string        `xml:"time,attr,omitempty"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// junitProblem is a <failure>, <error> or <skipped>: Message is one line,
// Text the details (evidence, fix).
type junitProblem struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// add appends c to s and counts it.
func (s *junitSuite) add(c junitCase) {
	s.Tests++
	switch {
	case c.Failure != nil:
		s.Failures++
	case c.Error != nil:
		s.Errors++
	case c.Skipped != nil:
		s.Skipped++
	}
	s.Cases = append(s.Cases, c)
}

// add appends s to all and adds its counts.
func (all *junitSuites) add(s junitSuite) {
	all.Tests += s.Tests
	all.Failures += s.Failures
	all.Errors += s.Errors
	all.Suites = append(all.Suites, s)
}

// writeJUnit prints the XML header and all, indented, ending with a newline.
func writeJUnit(w io.Writer, all junitSuites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// lintJUnit writes rep as one testsuite named name: a testcase per
// finding (errors fail; warnings and info pass with the finding in their
// output) and one passing testcase per rule that found nothing.
func lintJUnit(w io.Writer, rep *lint.Report, name string) error {
	s := junitSuite{Name: name}
	found := map[string]bool{}
	for _, f := range rep.Findings {
		found[f.Rule] = true
		title := f.Rule
		if f.Variable != "" {
			title += " " + f.Variable
		}
		if f.Where != "" {
			title += " at " + f.Where
		}
		text := f.Message
		if f.Where != "" {
			text += "\nwhere: " + f.Where
		}
		if len(f.Hosts) > 0 {
			text += "\nhosts: " + strings.Join(f.Hosts, ", ")
		}
		if f.Why != "" {
			text += "\nwhy: " + f.Why
		}
		if f.Fix != "" {
			text += "\nfix: " + f.Fix
		}
		file, line, _ := SplitWhere(f.Where)
		c := junitCase{Name: title, Classname: "lint." + f.Rule, Line: line}
		if file != "-e" {
			c.File = file
		}
		if f.Severity == lint.SeverityError {
			c.Failure = &junitProblem{Message: f.Message, Type: string(f.Severity), Text: text}
		} else {
			c.SystemOut = strings.ToUpper(string(f.Severity)) + ": " + text
		}
		s.add(c)
	}
	for _, r := range lint.Rules() {
		if !found[r.ID] {
			s.add(junitCase{Name: r.ID + ": no findings", Classname: "lint." + r.ID})
		}
	}
	all := junitSuites{Name: "layercheck lint"}
	all.add(s)
	return writeJUnit(w, all)
}

// verifyJUnitCase is one check as a JUnit testcase: failed checks are
// failures, checks that could not run errors, skipped ones skipped; the
// text holds the message and the remedy.
func verifyJUnitCase(classname string, r verify.Result) junitCase {
	c := junitCase{Name: r.Layer + ": " + r.Check, Classname: classname}
	text := r.Msg
	if r.Remediation != "" {
		text += "\nfix: " + r.Remediation
	}
	switch r.Status {
	case verify.StatusFail:
		c.Failure = &junitProblem{Message: r.Msg, Type: string(r.Status), Text: text}
	case verify.StatusWarn:
		// A warning does not fail the host (as layercheck_verify_fail_on_warn
		// defaults to false): it passes, with the warning in its output.
		c.SystemOut = "WARN: " + text
	case verify.StatusError:
		c.Error = &junitProblem{Message: r.Msg, Type: "error", Text: text}
	case verify.StatusSkipped:
		c.Skipped = &junitProblem{Message: r.Msg}
	default:
		c.SystemOut = r.Msg
	}
	return c
}

// fleetJUnit writes one testsuite per host and a testcase per check, and
// a testsuite for the cluster; an unreachable host is one testcase
// "connect" in error.
func fleetJUnit(w io.Writer, r *fleet.Report) error {
	all := junitSuites{Name: fleetTitle(r)}
	for _, h := range r.Hosts {
		s := junitSuite{Name: h.Host, Time: fmt.Sprintf("%.3f", float64(h.DurationMS)/1000)}
		if h.Report == nil {
			s.add(junitCase{Name: "connect", Classname: h.Host,
				Error: &junitProblem{Message: h.Msg, Type: string(h.Status), Text: h.Msg}})
		} else {
			for _, l := range h.Report.OrderedLayers() {
				for _, res := range h.Report.Layers[l].Results {
					s.add(verifyJUnitCase(h.Host+"."+l, res))
				}
			}
		}
		all.add(s)
	}
	if c := r.Cluster; c != nil {
		s := junitSuite{Name: "cluster"}
		for _, l := range c.OrderedLayers() {
			for _, res := range c.Layers[l].Results {
				s.add(verifyJUnitCase("cluster."+l, res))
			}
		}
		all.add(s)
	}
	return writeJUnit(w, all)
}
