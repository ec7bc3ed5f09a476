package junit

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteCounts: Add counts every ending, Write gives XML that parses
// back to the same document with its counts.
func TestWriteCounts(t *testing.T) {
	var s Suite
	s.Name = "node1"
	s.Add(Case{Name: "ok", Classname: "node1.etcd"})
	s.Add(Case{Name: "bad", Classname: "node1.etcd", Failure: &Problem{Message: "expired", Type: "fail", Text: "expired\nfix: renew <&>"}})
	s.Add(Case{Name: "broken", Classname: "node1.dns", Error: &Problem{Message: "panic", Type: "error"}})
	s.Add(Case{Name: "later", Classname: "node1.cni", Skipped: &Problem{Message: "not applicable"}})
	all := Suites{Name: "layercheck verify"}
	all.Add(s)
	all.Add(Suite{Name: "cluster", Time: "1.500"})

	var b bytes.Buffer
	require.NoError(t, Write(&b, all))
	out := b.String()
	assert.True(t, strings.HasPrefix(out, xml.Header))
	assert.True(t, strings.HasSuffix(out, "</testsuites>\n"))
	assert.Contains(t, out, "renew &lt;&amp;&gt;")
	assert.Contains(t, out, `<testsuite name="node1" tests="4" failures="1" errors="1" skipped="1">`, "no time attribute when unknown")

	var back Suites
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
