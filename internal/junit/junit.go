// Package junit writes JUnit XML as GitLab (artifacts:reports:junit) and
// Jenkins (the junit step) read it: <testsuites> with one <testsuite> per
// group of checks and a <testcase> per check, whose <failure>, <error> or
// <skipped> says how it ended. The lint report (one suite, a testcase per
// finding and per rule) and the verify reports (a suite per host and one
// for the cluster) share these types.
package junit

import (
	"encoding/xml"
	"io"
)

// Suites is the document element. Tests, Failures and Errors are the sums
// over Suites (Add keeps them).
type Suites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []Suite  `xml:"testsuite"`
}

// Suite is one <testsuite>; Time is in seconds ("1.250"), left out when
// unknown. Tests, Failures, Errors and Skipped count Cases (Add keeps them).
type Suite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Time     string `xml:"time,attr,omitempty"`
	Cases    []Case `xml:"testcase"`
}

// Case is one <testcase>. At most one of Failure (the check failed), Error
// (it could not run) and Skipped is set; none means it passed. File and
// Line (1-based) say where the tested thing is, as GitLab shows them.
type Case struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	File      string   `xml:"file,attr,omitempty"`
	Line      int      `xml:"line,attr,omitempty"`
	Time      string   `xml:"time,attr,omitempty"`
	Failure   *Problem `xml:"failure,omitempty"`
	Error     *Problem `xml:"error,omitempty"`
	Skipped   *Problem `xml:"skipped,omitempty"`
	SystemOut string   `xml:"system-out,omitempty"`
}

// Problem is a <failure>, <error> or <skipped>: Message is one line, Text
// the details (evidence, fix).
type Problem struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// Add appends c to s and counts it.
func (s *Suite) Add(c Case) {
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

// Add appends s to all and adds its counts.
func (all *Suites) Add(s Suite) {
	all.Tests += s.Tests
	all.Failures += s.Failures
	all.Errors += s.Errors
	all.Suites = append(all.Suites, s)
}

// Write prints the XML header and all, indented, ending with a newline.
func Write(w io.Writer, all Suites) error {
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
