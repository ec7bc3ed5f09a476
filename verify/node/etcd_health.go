package node

// Live health: every endpoint's status over TLS, each call bounded by
// Env.NetTimeout.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/layercheck/layercheck/verify"
)

// etcdEndpoints lists ETCDCTL_ENDPOINTS then ETCD_ADVERTISE_CLIENT_URLS
// (what etcdctl on this host uses, then what kube-apiserver and the other
// members use), without duplicates.
func etcdEndpoints(ee *EtcdEnv) []string {
	var eps []string
	for _, u := range append(slices.Clone(ee.CtlEndpoints), ee.AdvertiseClientURLs...) {
		if !slices.Contains(eps, u) {
			eps = append(eps, u)
		}
	}
	return eps
}

// etcdCheckLive asks every endpoint for its status and one healthy endpoint
// for the member list, each call bounded by Env.NetTimeout.
func etcdCheckLive(ctx context.Context, env *Env, ee *EtcdEnv, tlsCfg *tls.Config, facts *EtcdFacts, add func(verify.Result)) {
	eps := etcdEndpoints(ee)
	if len(eps) == 0 {
		add(verify.Result{Check: "endpoint_status", Status: verify.StatusFail, Msg: "etcd.env names no client endpoint (ETCDCTL_ENDPOINTS, ETCD_ADVERTISE_CLIENT_URLS)", Remediation: etcdRemedyRerun})
		return
	}
	if tlsCfg == nil {
		add(verify.Result{Check: "endpoint_status", Status: verify.StatusFail,
			Msg:         "live etcd checks skipped: the CA or admin certificate/key of etcd.env (ETCDCTL_CACERT, ETCDCTL_CERT, ETCDCTL_KEY) is unusable, see the certificate results",
			Remediation: etcdRemedyCerts})
		return
	}
	timeout := etcdNetTimeout(env)
	// Endpoints are asked concurrently, so a dead cluster costs one
	// NetTimeout, not one per endpoint.
	type answer struct {
		ef      EtcdEndpointFacts
		members []*etcdMember
		err     error
	}
	answers := make([]answer, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := &answers[i]
			a.ef.Endpoint = ep
			a.members, a.err = etcdStatus(ctx, env, ep, tlsCfg, timeout, &a.ef)
		}()
	}
	wg.Wait()
	var members []*etcdMember
	var memberErr error
	for i, ep := range eps {
		a := answers[i]
		ef := a.ef
		if a.members != nil && members == nil {
			members = a.members
		}
		if a.err != nil && memberErr == nil {
			memberErr = a.err
		}
		facts.Endpoints = append(facts.Endpoints, ef)
		if ef.Error != "" {
			add(verify.Result{Check: "endpoint_status", Status: verify.StatusFail,
				Msg:         fmt.Sprintf("etcd endpoint %s (dialed %s): %s", ep, ef.Dialed, ef.Error),
				Evidence:    ef,
				Remediation: fmt.Sprintf(etcdRemedyEndpoint, ep)})
			continue
		}
		if len(ef.Alarms) > 0 {
			add(verify.Result{Check: "endpoint_status", Status: verify.StatusFail,
				Msg:         fmt.Sprintf("etcd endpoint %s reports errors: %s", ep, strings.Join(ef.Alarms, "; ")),
				Evidence:    ef,
				Remediation: "etcdctl alarm list; for NOSPACE: compact and defragment (etcdctl defrag), raise etcd_quota_backend_bytes if needed, then etcdctl alarm disarm"})
			continue
		}
		add(verify.Result{Check: "endpoint_status", Status: verify.StatusOK,
			Msg:      fmt.Sprintf("etcd endpoint %s: version %s, DB %d bytes, raft index %d, leader %s", ep, ef.Version, ef.DBSize, ef.RaftIndex, ef.Leader),
			Evidence: ef})
	}

	// Member list against ETCD_INITIAL_CLUSTER and the inventory.
	if members == nil {
		msg := "member list not read: no endpoint answered"
		if memberErr != nil {
			msg = fmt.Sprintf("member list not read: %v", memberErr)
		}
		add(verify.Result{Check: "members", Status: verify.StatusFail, Msg: msg, Remediation: etcdRemedyService})
	} else {
		etcdCheckMembers(env, ee, members, facts, add)
	}

	// Leader.
	var leaders []uint64
	for _, ef := range facts.Endpoints {
		if ef.Error != "" {
			continue
		}
		id, _ := strconv.ParseUint(ef.Leader, 16, 64)
		if !slices.Contains(leaders, id) {
			leaders = append(leaders, id)
		}
	}
	switch {
	case len(leaders) == 0:
		add(verify.Result{Check: "leader", Status: verify.StatusFail, Msg: "leader unknown: no etcd endpoint answered", Remediation: etcdRemedyService})
	case len(leaders) > 1:
		add(verify.Result{Check: "leader", Status: verify.StatusFail, Msg: fmt.Sprintf("endpoints disagree on the leader (%v)", etcdHexList(leaders)), Actual: etcdHexList(leaders), Remediation: etcdRemedyLeader})
	case leaders[0] == 0:
		add(verify.Result{Check: "leader", Status: verify.StatusFail, Msg: "etcd has no leader", Remediation: etcdRemedyLeader})
	default:
		name := fmt.Sprintf("%x", leaders[0])
		found := members == nil
		for _, m := range members {
			if uint64(m.ID) == leaders[0] {
				found = true
				if m.Name != "" {
					name = m.Name
				}
			}
		}
		facts.Leader = name
		if !found {
			add(verify.Result{Check: "leader", Status: verify.StatusFail, Msg: fmt.Sprintf("leader %s is not in the member list", name), Remediation: etcdRemedyLeader})
		} else {
			add(verify.Result{Check: "leader", Status: verify.StatusOK, Msg: fmt.Sprintf("etcd leader is %s", name)})
		}
	}
}

func etcdHexList(ids []uint64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmt.Sprintf("%x", id)
	}
	return out
}

// etcdDial returns the URL to give the client (host:port after
// Env.AddrMap) and the server name to verify (the original host).
func etcdDial(env *Env, ep string) (dialURL, dialed, serverName string, err error) {
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" {
		return "", "", "", fmt.Errorf("endpoint %q is not a URL", ep)
	}
	hostport := u.Host
	if u.Port() == "" {
		hostport = net.JoinHostPort(u.Hostname(), "2379")
	}
	dialed = env.Addr(hostport)
	du := *u
	du.Host = dialed
	return du.String(), dialed, u.Hostname(), nil
}

// etcdStatus probes one endpoint: a TLS handshake first (so a refused
// connection or a certificate error is named as such), then, over that
// connection, Maintenance.Status and Cluster.MemberList through etcd's
// JSON gateway (see etcd_gateway.go). It fills ef and returns the members
// it read.
func etcdStatus(ctx context.Context, env *Env, ep string, base *tls.Config, timeout time.Duration, ef *EtcdEndpointFacts) ([]*etcdMember, error) {
	dialURL, dialed, serverName, err := etcdDial(env, ep)
	ef.Dialed = dialed
	if err != nil {
		ef.Error = err.Error()
		return nil, err
	}
	cfg := base.Clone()
	cfg.ServerName = serverName
	// The gateway is plain HTTP/1.1 on the client port.
	cfg.NextProtos = []string{"http/1.1"}
	start := time.Now()

	pctx, cancel := context.WithTimeout(ctx, timeout)
	var conn net.Conn
	if strings.HasPrefix(dialURL, "http://") {
		// Plain-text client URL (not what kubespray renders): no TLS.
		cfg = nil
		conn, err = env.dial(pctx, "tcp", dialed, timeout)
	} else {
		conn, err = env.dialTLS(pctx, dialed, cfg, timeout)
	}
	cancel()
	if err != nil {
		what := "TLS connection"
		if cfg == nil {
			what = "connection"
		}
		ef.Error = fmt.Sprintf("%s failed within %s: %v", what, timeout, err)
		return nil, errors.New(ef.Error)
	}

	gw := newEtcdGateway(env, dialURL, dialed, cfg, conn, timeout)
	defer gw.Close()

	var st etcdStatusResponse
	err = gw.Call(ctx, "/v3/maintenance/status", struct{}{}, &st)
	ef.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		ef.Error = fmt.Sprintf("status failed within %s: %v", timeout, err)
		return nil, errors.New(ef.Error)
	}
	ef.Healthy = len(st.Errors) == 0
	ef.Version = st.Version
	ef.DBSize = int64(st.DBSize)
	ef.DBSizeInUse = int64(st.DBSizeInUse)
	ef.Leader = fmt.Sprintf("%x", uint64(st.Leader))
	ef.RaftIndex = uint64(st.RaftIndex)
	ef.RaftTerm = uint64(st.RaftTerm)
	ef.IsLearner = st.IsLearner
	ef.Alarms = st.Errors
	if st.Header != nil {
		ef.MemberID = fmt.Sprintf("%x", st.Header.MemberIDOf())
	}
	// Linearizable, as clientv3's MemberList and etcdctl member list ask.
	var ml etcdMemberListResponse
	if err := gw.Call(ctx, "/v3/cluster/member/list", map[string]bool{"linearizable": true}, &ml); err != nil {
		return nil, fmt.Errorf("member list from %s failed within %s: %v", ep, timeout, err)
	}
	return ml.Members, nil
}
