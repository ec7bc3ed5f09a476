package sshverify

import (
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// --cluster-from first-control-plane reads admin.conf from node1 over
// SFTP and reaches the API server address it names (10.10.0.11:6443, the
// tree's address, mapped to a loopback port on the node) through node1's
// SSH connection. A TLS server with
// the tree's apiserver certificate stands in for kube-apiserver: it
// answers /version and records the client certificate, so the test sees
// the route, the TLS check against admin.conf's CA and admin.conf's user.
func TestVerifyClusterFromFirstControlPlane(t *testing.T) {
	f := newFleet(t, 1, fleetOpts{})
	node := f.node("node1")
	cert, err := tls.LoadX509KeyPair(node.Tree.Path("/etc/kubernetes/ssl/apiserver.crt"), node.Tree.Path("/etc/kubernetes/ssl/apiserver.key"))
	require.NoError(t, err)
	var mu sync.Mutex
	var users []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			mu.Lock()
			users = append(users, r.TLS.PeerCertificates[0].Subject.CommonName)
			mu.Unlock()
		}
		if r.URL.Path == "/version" {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"major": "1", "minor": "35", "gitVersion": "v1.35.4-standin"})
			return
		}
		http.NotFound(w, r)
	}), TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.ServeTLS(l, "", "") }()
	t.Cleanup(func() { srv.Close() })
	node.Vars["layercheck_verify_addr_map"].(map[string]string)["10.10.0.11:6443"] = l.Addr().String()

	inv := f.inventory(t)
	r := runVerify(t, "-i", inv, "--cluster-from", "first-control-plane", "--format", "json")
	var rep struct {
		Cluster *struct {
			Server        string `json:"server"`
			ServerVersion string `json:"server_version"`
		} `json:"cluster"`
		ClusterSkipped string `json:"cluster_skipped"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &rep), r.Out+r.Err)
	require.NotNil(t, rep.Cluster, "cluster layers not run: %s", rep.ClusterSkipped)
	require.Equal(t, "https://10.10.0.11:6443", rep.Cluster.Server)
	require.Equal(t, "v1.35.4-standin", rep.Cluster.ServerVersion)
	mu.Lock()
	require.Contains(t, users, "kubernetes-admin")
	mu.Unlock()
	f.noSecrets(t, r.Out+r.Err)

	r = runVerify(t, "-i", inv, "--cluster-from", "first-control-plane", "--kubeconfig", "x")
	require.Equal(t, 2, r.Code)
	require.Contains(t, r.Err, "not both")
}
