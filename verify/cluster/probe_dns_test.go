package cluster_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/verify/cluster"
)

// What agnhost netexec's /dial answers (k8s.io/kubernetes
// test/images/agnhost/netexec dialHandler), read as service_dns reads it.
func TestParseDial(t *testing.T) {
	for _, tc := range []struct {
		name                                   string
		status                                 int
		body                                   string
		err                                    error
		resolved                               bool
		lookup, server, response, dialErr, bad string
	}{
		{name: "answered", status: 200, body: `{"responses":["layercheck-probe-7d9f-abcde"]}`, resolved: true, response: "layercheck-probe-7d9f-abcde"},
		{name: "resolved, not reached", status: 200, body: `{"errors":["Get \"http://10.233.12.7:80/hostname\": dial tcp 10.233.12.7:80: i/o timeout"]}`,
			resolved: true, dialErr: `Get "http://10.233.12.7:80/hostname": dial tcp 10.233.12.7:80: i/o timeout`},
		{name: "no such host", status: 400, body: "host and/or port param are invalid. lookup layercheck-probe.ns.svc.cluster.local on 169.254.25.10:53: no such host\n",
			lookup: "lookup layercheck-probe.ns.svc.cluster.local on 169.254.25.10:53: no such host", server: "169.254.25.10"},
		{name: "ipv6 server", status: 400, body: "host and/or port param are invalid. lookup x. on [fd00::a]:53: no such host",
			lookup: "lookup x. on [fd00::a]:53: no such host", server: "fd00::a"},
		{name: "resolver names no server", status: 400, body: "host and/or port param are invalid. lookup x: no such host", lookup: "lookup x: no such host"},
		{name: "through the service proxy", body: "host and/or port param are invalid. lookup x on 10.233.0.3:53: server misbehaving", err: errors.New("the server rejected our request for an unknown reason"),
			lookup: "lookup x on 10.233.0.3:53: server misbehaving", server: "10.233.0.3"},
		{name: "no netexec", status: 404, body: "404 page not found", bad: "HTTP 404: not an answer of agnhost netexec's /dial: 404 page not found"},
		{name: "proxy error", body: "Error trying to reach service: dial tcp 10.233.64.9:8080: connect: connection refused", err: errors.New("the server is currently unable to handle the request"),
			bad: "the server is currently unable to handle the request: Error trying to reach service"},
	} {
		resolved, lookup, server, response, dialErr, err := cluster.ParseDial(tc.status, []byte(tc.body), tc.err)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.bad)
			}
			continue
		}
		if err != nil || resolved != tc.resolved || lookup != tc.lookup || server != tc.server || response != tc.response || dialErr != tc.dialErr {
			t.Errorf("%s: %v %q %q %q %q %v", tc.name, resolved, lookup, server, response, dialErr, err)
		}
	}
}
