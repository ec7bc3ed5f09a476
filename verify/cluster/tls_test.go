package cluster_test

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/verify"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/layercheck/layercheck/verify/cluster/clustertest"
)

// An API server that answers with a certificate not naming the address the
// kubeconfig uses is reported as a certificate problem, not as a server
// that did not answer.
func TestAPIServerCertificateNotAccepted(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"major":"1","minor":"35","gitVersion":"v1.35.4"}`))
	}))
	defer srv.Close()
	// httptest's certificate names 127.0.0.1 and example.com, not localhost.
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	server := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	kc := filepath.Join(t.TempDir(), "admin.conf")
	conf := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " + server +
		"\n    certificate-authority-data: " + base64.StdEncoding.EncodeToString(caPEM) +
		"\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
	if err := os.WriteFile(kc, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	req := &cluster.Request{Options: cluster.Options{KubeControlPlane: []string{"node1"}, KubeNode: []string{"node1"}},
		Kubeconfig: kc, Timeout: 5, Layers: []string{"nodes"}}
	rep, err := cluster.RunRequest(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	r := clustertest.Result(t, rep, "nodes", "api_server")
	if r.Status != verify.StatusError || !strings.Contains(r.Msg, "answered, but its TLS certificate was not accepted") ||
		!strings.Contains(r.Msg, "x509") || strings.Contains(r.Msg, "did not answer") ||
		!strings.Contains(r.Remediation, "supplementary_addresses_in_ssl_keys") {
		t.Fatalf("certificate failure reported as %+v", r)
	}
}

// writeKubeconfig writes a kubeconfig for server (no CA: TLS verification
// is skipped, so only a refusal or a silence can fail) and returns its path.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "admin.conf")
	conf := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"" + server + "\", insecure-skip-tls-verify: true}\n" +
		"users:\n- name: u\n  user: {}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
	require.NoError(t, os.WriteFile(kc, []byte(conf), 0o600))
	return kc
}

// Each way the API server can fail the first request is said as what it
// is: a refused connection (nothing listens), a silence (connection
// accepted, no answer within the timeout), a certificate not accepted.
func TestAPIServerFailureWording(t *testing.T) {
	// Refused: a port that was just listened on and closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refusedAddr := l.Addr().String()
	require.NoError(t, l.Close())

	// Silent: accepts connections and never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		silent.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})

	for _, tc := range []struct {
		name, server string
		want         []string
		fix          string
	}{
		{"refused", "https://" + refusedAddr, []string{"refused the connection", "nothing listens"}, "crictl ps -a --name kube-apiserver"},
		{"timeout", "https://" + silent.Addr().String(), []string{"did not answer within 1s", "timed out"}, "firewall"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &cluster.Request{Options: cluster.Options{KubeControlPlane: []string{"node1"}, KubeNode: []string{"node1"}},
				Kubeconfig: writeKubeconfig(t, tc.server), Timeout: 1, Layers: []string{"nodes"}}
			rep, err := cluster.RunRequest(context.Background(), req)
			require.NoError(t, err)
			r := clustertest.Result(t, rep, "nodes", "api_server")
			assert.Equal(t, verify.StatusError, r.Status)
			for _, w := range tc.want {
				assert.Contains(t, r.Msg, w)
			}
			assert.Contains(t, r.Remediation, tc.fix)
			for _, other := range []string{"refused the connection", "did not answer", "TLS certificate was not accepted"} {
				if !slices.Contains(tc.want, other) && !strings.Contains(tc.want[0], other) {
					assert.NotContains(t, r.Msg, other)
				}
			}
		})
	}
}
