package sshverify

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/internal/app"
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
	users := standInAPIServer(t, f.node("node1"))
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
	require.Contains(t, users(), "kubernetes-admin")
	f.noSecrets(t, r.Out+r.Err)

	r = runVerify(t, "-i", inv, "--cluster-from", "first-control-plane", "--kubeconfig", "x")
	require.Equal(t, 2, r.Code)
	require.Contains(t, r.Err, "not both")
}

// standInAPIServer stands in for kube-apiserver behind node's
// 10.10.0.11:6443 (mapped to a loopback port on the node) with the tree's
// apiserver certificate: it answers /version (v1.35.4-standin) and 404
// to the rest, and users lists the client certificates' CNs it saw.
func standInAPIServer(t *testing.T, node *simNode) (users func() []string) {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(node.Tree.Path("/etc/kubernetes/ssl/apiserver.crt"), node.Tree.Path("/etc/kubernetes/ssl/apiserver.key"))
	require.NoError(t, err)
	var mu sync.Mutex
	var seen []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			mu.Lock()
			seen = append(seen, r.TLS.PeerCertificates[0].Subject.CommonName)
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
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// TestLintClusterFromFirstControlPlane: layercheck lint --cluster-from
// first-control-plane reads the cluster as verify does (admin.conf over
// SFTP, the API server through node1's SSH connection): the control
// plane's /version gives the release upgraded from, etcd's members are
// read through the same host (a default etcd_version older than theirs is
// a downgrade), and what the stand-in does not serve is said as unread,
// not an error.
func TestLintClusterFromFirstControlPlane(t *testing.T) {
	f := newFleet(t, 1, fleetOpts{})
	users := standInAPIServer(t, f.node("node1"))
	inv := f.inventory(t)
	var out, errOut bytes.Buffer
	err := app.Run(context.Background(), []string{"lint", "-i", inv, "--kubespray-version", "master", "--cluster-from", "first-control-plane", "--format", "json"},
		app.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	require.NotEqual(t, 2, app.ExitCode(err), "%v\n%s", err, errOut.String())
	var rep struct {
		Findings []struct{ Rule, Message string } `json:"findings"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String()+errOut.String())
	var from string
	var cluster []string
	for _, fd := range rep.Findings {
		if fd.Rule == "upgrade-from" {
			from = fd.Message
		}
		if strings.HasPrefix(fd.Rule, "cluster-") {
			cluster = append(cluster, fd.Rule+": "+fd.Message)
		}
	}
	// etcd read through node1 too: its loopback client URL through the
	// SSH connection, its admin certificate over SFTP
	require.Equal(t, []string{`cluster-version: etcd_version "3.6.14" (kubespray master's default) is older than etcd 3.7.3 that member(s) etcd1 run (etcd Maintenance.Status version at https://127.0.0.1:2379): an etcd downgrade`}, cluster,
		"%s", errOut.String())
	require.Contains(t, from, "the control plane runs Kubernetes 1.35.4 (GET /version gitVersion v1.35.4-standin at https://10.10.0.11:6443), kubespray v2.31.0's default")
	require.Contains(t, errOut.String(), "layercheck: warning: cluster: could not read Nodes")
	require.Contains(t, users(), "kubernetes-admin")
	f.noSecrets(t, out.String()+errOut.String())
}
