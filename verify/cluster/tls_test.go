package cluster_test

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
