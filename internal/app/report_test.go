package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// layercheck report answers the verify_report action's request with one
// JSON object; a request it cannot read is exit 2 naming what is wrong.
func TestReportCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	req := `{"scope": "play", "hosts": ["node1"], "order": ["etcd"],
		"nodes": {"node1": {"status": "warn", "layers": {"etcd": {"status": "warn", "results": [
			{"check": "service", "status": "warn", "msg": "systemd is not running on node1"}]}}}}}`
	require.NoError(t, Run(context.Background(), []string{"report"}, Streams{In: strings.NewReader(req), Out: &out, ErrOut: &errOut}))
	var res struct {
		Text   string `json:"text"`
		Msg    string `json:"msg"`
		Failed bool   `json:"failed"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &res), out.String())
	assert.Equal(t, "HOST   etcd  NODE\nnode1  warn  WARN\n\n[WARN] node1 etcd service: systemd is not running on node1\n\nlayercheck verify: 1 host: 0 ok, 1 warn, 0 failed", res.Text)
	assert.Equal(t, "layercheck verify: 1 host: 0 ok, 1 warn, 0 failed", res.Msg)
	assert.False(t, res.Failed)
	assert.Empty(t, errOut.String())

	for args, msg := range map[string]string{
		`{"scope": "host", "hosts": []}`: "report: scope host: hosts must name one host, got 0",
		`not json`:                       "report: the request is no verify play report request: invalid character 'o' in literal null (expecting 'u')",
	} {
		out.Reset()
		err := Run(context.Background(), []string{"report"}, Streams{In: strings.NewReader(args), Out: &out, ErrOut: &errOut})
		var ee *ExitError
		require.True(t, errors.As(err, &ee), "%s: %v", args, err)
		assert.Equal(t, 2, ee.Code)
		assert.Equal(t, msg, ee.Msg)
		assert.Empty(t, out.String())
	}
	err := Run(context.Background(), []string{"report", "file.json"}, Streams{In: strings.NewReader("{}"), Out: &out, ErrOut: &errOut})
	assert.ErrorContains(t, err, `report: takes no arguments, got ["file.json"]`)
}
