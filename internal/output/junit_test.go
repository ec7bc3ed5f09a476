package output

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJUnitCounts: add counts every ending, writeJUnit gives XML that parses
// back to the same document with its counts.
func TestJUnitCounts(t *testing.T) {
	var s junitSuite
	s.Name = "node1"
	s.add(junitCase{Name: "ok", Classname: "node1.etcd"})
	s.add(junitCase{Name: "bad", Classname: "node1.etcd", Failure: &junitProblem{Message: "expired", Type: "fail", Text: "expired\nfix: renew <&>"}})
	s.add(junitCase{Name: "broken", Classname: "node1.dns", Error: &junitProblem{Message: "panic", Type: "error"}})
	s.add(junitCase{Name: "later", Classname: "node1.cni", Skipped: &junitProblem{Message: "not applicable"}})
	all := junitSuites{Name: "layercheck verify"}
	all.add(s)
	all.add(junitSuite{Name: "cluster", Time: "1.500"})

	var b bytes.Buffer
	require.NoError(t, writeJUnit(&b, all))
	out := b.String()
	assert.True(t, strings.HasPrefix(out, xml.Header))
	assert.True(t, strings.HasSuffix(out, "</testsuites>\n"))
	assert.Contains(t, out, "renew &lt;&amp;&gt;")
	assert.Contains(t, out, `<testsuite name="node1" tests="4" failures="1" errors="1" skipped="1">`, "no time attribute when unknown")

	var back junitSuites
	require.NoError(t, xml.Unmarshal(b.Bytes(), &back))
	assert.Equal(t, 4, back.Tests)
	assert.Equal(t, 1, back.Failures)
	assert.Equal(t, 1, back.Errors)
	require.Len(t, back.Suites, 2)
	assert.Equal(t, 1, back.Suites[0].Skipped)
	assert.Equal(t, "1.500", back.Suites[1].Time)
	assert.Equal(t, "expired\nfix: renew <&>", back.Suites[0].Cases[1].Failure.Text)
	back.XMLName = all.XMLName
	assert.Equal(t, all, back)
}
