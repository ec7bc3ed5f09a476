package app

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --cluster-from takes one value and excludes --kubeconfig, in lint and in
// verify alike; each command words the error as its other usage errors.
func TestClusterFromUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"lint", "-i", "x", "--cluster-from", "node1"},
			`lint: --cluster-from "node1": want first-control-plane (see 'layercheck lint --help')`},
		{[]string{"lint", "-i", "x", "--cluster-from", "first-control-plane", "--kubeconfig", "k"},
			`lint: give --kubeconfig or --cluster-from, not both (see 'layercheck lint --help')`},
		{[]string{"verify", "-i", "x", "--cluster-from", "node1"},
			`verify: --cluster-from "node1": want first-control-plane`},
		{[]string{"verify", "-i", "x", "--cluster-from", "first-control-plane", "--kubeconfig", "k"},
			`verify: give --kubeconfig or --cluster-from, not both`},
	} {
		var out, errOut bytes.Buffer
		err := Run(context.Background(), c.args, Streams{Out: &out, ErrOut: &errOut})
		var ee *ExitError
		require.True(t, errors.As(err, &ee), "%v: %v", c.args, err)
		assert.Equal(t, 2, ee.Code, "%v", c.args)
		assert.Equal(t, c.msg, ee.Msg, "%v", c.args)
	}
}

// Each command's help says what it does with --cluster-from.
func TestClusterFromHelp(t *testing.T) {
	for cmd, line := range map[string]string{
		"lint":   "  --cluster-from first-control-plane  also compare with the running cluster, read with admin.conf of the first kube_control_plane host (over SSH, as layercheck verify)\n",
		"verify": "  --cluster-from first-control-plane  run the cluster layers with admin.conf of the first kube_control_plane host (read over SFTP), the API server reached through that host's SSH connection\n",
	} {
		var out, errOut bytes.Buffer
		require.NoError(t, Run(context.Background(), []string{cmd, "--help"}, Streams{Out: &out, ErrOut: &errOut}))
		assert.Contains(t, out.String(), line, cmd)
	}
}
