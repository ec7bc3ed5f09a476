package app

import (
	"encoding/xml"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/harness"
)

// `layercheck node --format junit|markdown`: the failure carries the host,
// layer, check and fix.
func TestNodeJUnitAndMarkdown(t *testing.T) {
	made := time.Date(2026, 11, 30, 14, 22, 6, 0, time.UTC)
	tr, err := harness.Build(t.TempDir(), harness.Config{Now: made})
	require.NoError(t, err)
	args := []string{"--root", tr.Root, "--host", "node1", "--now", made.Add(364 * 24 * time.Hour).Format(time.RFC3339),
		"--group", "kube_control_plane", "--group", "etcd", "--group", "kube_node",
		"--etcd-member", "node1", "--etcd-member", "node2", "--etcd-member", "node3",
		"--skip", "etcd", "--skip", "dns", "--vars", `{"kube_version": "1.35.4"}`}

	out, _, code := runNodeCLI(t, append(args, "--format", "junit")...)
	require.Equal(t, 1, code, out)
	var suites struct {
		Name   string `xml:"name,attr"`
		Suites []struct {
			Name     string `xml:"name,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Text string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal([]byte(out), &suites), out)
	assert.Equal(t, "layercheck node", suites.Name)
	require.Len(t, suites.Suites, 1)
	s := suites.Suites[0]
	assert.Equal(t, "node1", s.Name)
	require.Positive(t, s.Failures)
	found := false
	for _, c := range s.Cases {
		if c.Name == "certificates: certificate:/etc/kubernetes/ssl/apiserver.crt" && c.Failure != nil {
			assert.Equal(t, "node1.certificates", c.Classname)
			assert.Contains(t, c.Failure.Text, "fix: on node1 run `kubeadm certs renew apiserver`")
			found = true
		}
	}
	assert.True(t, found, out)
	tr.AssertNoSecrets(t, out)

	md, _, code := runNodeCLI(t, append(args, "--format", "markdown")...)
	require.Equal(t, 1, code)
	assert.Contains(t, md, "## layercheck node: FAIL")
	assert.Contains(t, md, "| node1 | ")
	assert.Contains(t, md, "- **node1** `certificates` certificate:/etc/kubernetes/ssl/apiserver.crt (fail)")
	tr.AssertNoSecrets(t, md)

	_, errOut, code := runNodeCLI(t, append(args, "--format", "sarif")...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "want text, json, junit, markdown or prometheus")
}
