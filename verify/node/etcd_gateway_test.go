package node

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/verify"
)

// etcdStatusClientV3 is the probe as it was written with
// go.etcd.io/etcd/client/v3 (gRPC) before the layer moved to etcd's JSON
// gateway: the oracle the gateway's facts are compared with.
func etcdStatusClientV3(ctx context.Context, env *Env, ep string, base *tls.Config, timeout time.Duration, ef *EtcdEndpointFacts) ([]*etcdserverpb.Member, error) {
	dialURL, dialed, serverName, err := etcdDial(env, ep)
	ef.Dialed = dialed
	if err != nil {
		return nil, err
	}
	cfg := base.Clone()
	cfg.ServerName = serverName
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: []string{dialURL}, DialTimeout: timeout, DialKeepAliveTimeout: timeout,
		TLS: cfg, Logger: zap.NewNop(), Context: ctx,
	})
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	sctx, cancel := context.WithTimeout(ctx, timeout)
	st, err := cli.Status(sctx, dialURL)
	cancel()
	if err != nil {
		return nil, err
	}
	ef.Healthy = len(st.Errors) == 0
	ef.Version = st.Version
	ef.DBSize = st.DbSize
	ef.DBSizeInUse = st.DbSizeInUse
	ef.Leader = fmt.Sprintf("%x", st.Leader)
	ef.RaftIndex = st.RaftIndex
	ef.RaftTerm = st.RaftTerm
	ef.IsLearner = st.IsLearner
	ef.Alarms = st.Errors
	if st.Header != nil {
		ef.MemberID = fmt.Sprintf("%x", st.Header.MemberId)
	}
	mctx, cancel := context.WithTimeout(ctx, timeout)
	ml, err := cli.MemberList(mctx)
	cancel()
	if err != nil {
		return nil, err
	}
	return ml.Members, nil
}

// etcdCompareProbes asks every endpoint through the gateway and through
// clientv3 and requires the same facts (all but the latency). An idle
// cluster answers both the same; should a raft entry land between the two
// asks, the pair is asked again (a few times at most).
func etcdCompareProbes(t *testing.T, env *Env, eps []string, cfg *tls.Config) []EtcdMemberFacts {
	t.Helper()
	ctx := context.Background()
	var last []EtcdMemberFacts
	for _, ep := range eps {
		var diff string
		for range 5 {
			var gw, cv EtcdEndpointFacts
			gm, err := etcdStatus(ctx, env, ep, cfg, 5*time.Second, &gw)
			require.NoError(t, err, "gateway %s", ep)
			cm, err := etcdStatusClientV3(ctx, env, ep, cfg, 5*time.Second, &cv)
			require.NoError(t, err, "clientv3 %s", ep)
			gw.LatencyMS, cv.LatencyMS = 0, 0
			gw.Endpoint, cv.Endpoint = ep, ep
			var f1, f2 EtcdFacts
			etcdCheckMembers(env, &EtcdEnv{}, gm, &f1, func(verify.Result) {})
			var cmv []*etcdMember
			for _, m := range cm {
				cmv = append(cmv, &etcdMember{ID: etcdUint64(m.ID), Name: m.Name, PeerURLs: m.PeerURLs, ClientURLs: m.ClientURLs, IsLearner: m.IsLearner})
			}
			etcdCheckMembers(env, &EtcdEnv{}, cmv, &f2, func(verify.Result) {})
			diff = ""
			if fmt.Sprintf("%#v", gw) != fmt.Sprintf("%#v", cv) {
				diff = fmt.Sprintf("endpoint facts:\n gateway  %#v\n clientv3 %#v", gw, cv)
			} else if fmt.Sprintf("%#v", f1.Members) != fmt.Sprintf("%#v", f2.Members) {
				diff = fmt.Sprintf("members:\n gateway  %#v\n clientv3 %#v", f1.Members, f2.Members)
			}
			if diff == "" {
				require.NotZero(t, gw.RaftIndex)
				require.NotEmpty(t, gw.Version)
				last = f1.Members
				break
			}
		}
		require.Empty(t, diff, "%s: the gateway's facts differ from clientv3's", ep)
	}
	return last
}

// TestEtcdGatewayMatchesClientV3 runs a real three-member etcd cluster
// (TLS, client certificate authentication) and compares the facts read
// through the JSON gateway with clientv3's for the same endpoints: a
// healthy cluster, one with a learner added but never started (empty
// name, no client URLs, isLearner: the zero-value fields protojson leaves
// out), and one with a NOSPACE alarm raised (status errors).
func TestEtcdGatewayMatchesClientV3(t *testing.T) {
	root := t.TempDir()
	ssl := filepath.Join(root, "etc/ssl/etcd/ssl")
	pki := newEtcdTestPKI(t, ssl, []string{"node1", "node2", "node3"}, []string{"10.10.0.11", "10.10.0.12", "10.10.0.13"})
	for _, h := range []string{"node1", "node2", "node3"} {
		pki.leaf(t, "member", h)
	}
	pki.leaf(t, "admin", "node1")
	members, addr := harness.FixtureEtcdMembers(t, ssl)
	etcdWriteEnv(t, root, etcdTestEnvFile("node1", "etcd1", "10.10.0.11",
		"etcd1=https://10.10.0.11:2380,etcd2=https://10.10.0.12:2380,etcd3=https://10.10.0.13:2380"))
	harness.StartEtcd(t, filepath.Join(ssl, "ca.pem"), members)

	env := etcdTestEnv(root, []string{"node1", "node2", "node3"}, addr, 5*time.Second)
	data, err := env.Read(etcdEnvPath)
	require.NoError(t, err)
	ee, err := ParseEtcdEnv(data)
	require.NoError(t, err)
	var certs EtcdFacts
	cfg := etcdCheckCerts(env, ee, &certs, func(verify.Result) {})
	require.NotNil(t, cfg)
	eps := []string{"https://10.10.0.11:2379", "https://10.10.0.12:2379", "https://10.10.0.13:2379"}

	// A fresh cluster may still be electing.
	var res []verify.Result
	var facts any
	for range 50 {
		res, facts, err = etcdLayer{}.Check(context.Background(), env)
		require.NoError(t, err)
		if st, _ := etcdWorst(t, res, "leader"); st == verify.StatusOK {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, r := range res {
		assert.Equal(t, verify.StatusOK, r.Status, "%s: %s", r.Check, r.Msg)
	}
	f := facts.(*EtcdFacts)
	require.Len(t, f.Members, 3)
	assert.Equal(t, f.Members, etcdCompareProbes(t, env, eps, cfg))

	cli, err := clientv3.New(clientv3.Config{
		Endpoints: []string{"https://" + addr["10.10.0.11:2379"]}, DialTimeout: 5 * time.Second,
		TLS: cfg.Clone(), Logger: zap.NewNop(),
	})
	require.NoError(t, err)
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	t.Run("learner added, never started", func(t *testing.T) {
		// etcd refuses a new member until every member has been up for
		// a few seconds ("unhealthy cluster").
		var err error
		for range 60 {
			actx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err = cli.MemberAddAsLearner(actx, []string{"https://10.10.0.14:2380"})
			cancel()
			if err == nil {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		require.NoError(t, err)
		ms := etcdCompareProbes(t, env, eps, cfg)
		require.Len(t, ms, 4)
		var learner *EtcdMemberFacts
		for i := range ms {
			if ms[i].IsLearner {
				learner = &ms[i]
			}
		}
		require.NotNil(t, learner, "%+v", ms)
		assert.Empty(t, learner.Name)
		assert.Nil(t, learner.ClientURLs)
		res, _, err := etcdLayer{}.Check(context.Background(), env)
		require.NoError(t, err)
		st, msg := etcdWorst(t, res, "members")
		assert.Equal(t, verify.StatusFail, st)
		assert.Contains(t, msg, "(https://10.10.0.14:2380) was added but never started")
	})

	t.Run("NOSPACE alarm", func(t *testing.T) {
		conn := cli.ActiveConnection()
		st, err := cli.Status(ctx, cli.Endpoints()[0])
		require.NoError(t, err)
		_, err = etcdserverpb.NewMaintenanceClient(conn).Alarm(ctx, &etcdserverpb.AlarmRequest{
			Action: etcdserverpb.AlarmRequest_ACTIVATE, MemberID: st.Header.MemberId, Alarm: etcdserverpb.AlarmType_NOSPACE})
		require.NoError(t, err)
		etcdCompareProbes(t, env, eps, cfg)
		res, facts, err := etcdLayer{}.Check(context.Background(), env)
		require.NoError(t, err)
		f := facts.(*EtcdFacts)
		require.NotEmpty(t, f.Endpoints)
		assert.False(t, f.Endpoints[0].Healthy)
		assert.Contains(t, strings.Join(f.Endpoints[0].Alarms, ";"), "NOSPACE")
		stat, msg := etcdWorst(t, res, "endpoint_status")
		assert.Equal(t, verify.StatusFail, stat)
		assert.Contains(t, msg, "reports errors")
	})
}

// TestEtcdGatewayErrors: answers that are not a status name the HTTP
// status and the endpoint, a slow server ends at the timeout, and an
// oversized answer is refused.
func TestEtcdGatewayErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	unavailable := `{"code":14,"message":"etcdserver: leader changed","details":[]}`
	// A real HTTP server, so that keep-alive and request bodies are
	// handled as etcd's gateway handles them: a hand-written one that
	// closes a connection with the request body unread resets the
	// connection the client is about to reuse.
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(etcdGatewayMaxBody+10))
		_, _ = io.WriteString(w, strings.Repeat(" ", etcdGatewayMaxBody+10))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, unavailable)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	env := &Env{}
	dialed := ln.Addr().String()
	conn, err := net.Dial("tcp", dialed)
	require.NoError(t, err)
	gw := newEtcdGateway(env, "http://"+dialed, dialed, nil, conn, 2*time.Second)
	defer gw.Close()
	var st etcdStatusResponse
	err = gw.Call(context.Background(), "/v3/maintenance/status", struct{}{}, &st)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "HTTP 503 Service Unavailable: etcdserver: leader changed")

	err = gw.Call(context.Background(), "/slow", struct{}{}, &st)
	require.Error(t, err)
	var ne net.Error
	assert.True(t, errors.As(err, &ne) && ne.Timeout(), "%v", err)

	err = gw.Call(context.Background(), "/big", struct{}{}, &st)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "answer larger than")
}

// TestEtcdUint64: protojson writes 64-bit integers as strings.
func TestEtcdUint64(t *testing.T) {
	var v struct {
		A, B, C etcdUint64
	}
	require.NoError(t, json.Unmarshal([]byte(`{"A":"18446744073709551615","B":42,"C":null}`), &v))
	assert.Equal(t, etcdUint64(18446744073709551615), v.A)
	assert.Equal(t, etcdUint64(42), v.B)
	assert.Zero(t, v.C)
	assert.Error(t, json.Unmarshal([]byte(`{"A":"-1"}`), &v))
	assert.Error(t, json.Unmarshal([]byte(`{"A":"x"}`), &v))
}
