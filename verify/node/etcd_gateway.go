package node

// etcd's JSON gateway: the live etcd checks ask Maintenance.Status and
// Cluster.MemberList as HTTP POSTs of JSON to the client URL
// (/v3/maintenance/status, /v3/cluster/member/list), which etcd 3.4, 3.5,
// 3.6 and 3.7 serve beside gRPC on the same port (grpc-gateway,
// --enable-grpc-gateway, on by default; kubespray's etcd.env does not turn
// it off). The TLS connection is the one the endpoint check opened, with
// the admin certificate of etcd.env, so one handshake serves the status and
// the member list.
//
// Why not go.etcd.io/etcd/client/v3: the gRPC client, protobuf and zap it
// links made node_facts 15.3 MiB, which every host receives on every
// verify.yml run (binary modules are copied, never pipelined); net/http and
// encoding/json are already in the binary. The answers are the same
// messages (etcdserverpb.StatusResponse, MemberListResponse) in protojson:
// field names are the .proto names (UseProtoNames: "dbSize", "member_id",
// "peerURLs"), 64-bit integers are JSON strings, and fields at their zero
// value are left out (false, 0, empty lists). A test compares every fact
// with what clientv3 reads from the same real etcd.

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// etcdGatewayMaxBody bounds one gateway answer (a member list of a few
// hundred members is a few tens of KiB).
const etcdGatewayMaxBody = 4 << 20

// etcdUint64 is a protojson 64-bit integer: a JSON string of decimal
// digits (or a bare number, which protojson also accepts).
type etcdUint64 uint64

func (u *etcdUint64) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "null" || s == "" {
		*u = 0
		return nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		// int64 fields (dbSize) are never negative, but say so clearly.
		return fmt.Errorf("%s is not an unsigned 64-bit integer", b)
	}
	*u = etcdUint64(v)
	return nil
}

// etcdResponseHeader is etcdserverpb.ResponseHeader. protojson with
// UseProtoNames writes member_id; memberId (the JSON name) is read too.
type etcdResponseHeader struct {
	ClusterID     etcdUint64 `json:"cluster_id"`
	MemberID      etcdUint64 `json:"member_id"`
	MemberIDCamel etcdUint64 `json:"memberId"`
	Revision      etcdUint64 `json:"revision"`
	RaftTerm      etcdUint64 `json:"raft_term"`
}

func (h *etcdResponseHeader) memberID() uint64 {
	if h.MemberID != 0 {
		return uint64(h.MemberID)
	}
	return uint64(h.MemberIDCamel)
}

// etcdStatusResponse is etcdserverpb.StatusResponse as the gateway writes it.
type etcdStatusResponse struct {
	Header      *etcdResponseHeader `json:"header"`
	Version     string              `json:"version"`
	DBSize      etcdUint64          `json:"dbSize"`
	Leader      etcdUint64          `json:"leader"`
	RaftIndex   etcdUint64          `json:"raftIndex"`
	RaftTerm    etcdUint64          `json:"raftTerm"`
	Errors      []string            `json:"errors"`
	DBSizeInUse etcdUint64          `json:"dbSizeInUse"`
	IsLearner   bool                `json:"isLearner"`
}

// etcdMember is etcdserverpb.Member as the gateway writes it.
type etcdMember struct {
	ID         etcdUint64 `json:"ID"`
	Name       string     `json:"name"`
	PeerURLs   []string   `json:"peerURLs"`
	ClientURLs []string   `json:"clientURLs"`
	IsLearner  bool       `json:"isLearner"`
}

// etcdMemberListResponse is etcdserverpb.MemberListResponse.
type etcdMemberListResponse struct {
	Header  *etcdResponseHeader `json:"header"`
	Members []*etcdMember       `json:"members"`
}

// etcdGatewayError is the body of a failed gateway call: grpc-gateway v2
// writes {code, message, details}, v1 (etcd 3.4/3.5) also "error".
type etcdGatewayError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Error   string `json:"error"`
}

// etcdGateway asks one endpoint over HTTP/1.1: first over the connection
// already opened (and checked) by the endpoint probe, then, should etcd
// close it, over a new one dialled the same way (through Env.Dial when
// set, to the address after Env.AddrMap).
type etcdGateway struct {
	base    string // scheme://dialed
	client  *http.Client
	tr      *http.Transport
	timeout time.Duration
}

func newEtcdGateway(env *Env, dialURL, dialed string, cfg *tls.Config, conn net.Conn, timeout time.Duration) *etcdGateway {
	var mu sync.Mutex
	take := func() net.Conn {
		mu.Lock()
		defer mu.Unlock()
		c := conn
		conn = nil
		return c
	}
	tr := &http.Transport{
		Proxy: nil, // the node's own endpoints; never an HTTP(S)_PROXY
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			if c := take(); c != nil {
				return c, nil
			}
			return env.dial(ctx, "tcp", dialed, timeout)
		},
		DialTLSContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			if c := take(); c != nil {
				return c, nil
			}
			return env.dialTLS(ctx, dialed, cfg, timeout)
		},
		MaxIdleConnsPerHost:   1,
		ResponseHeaderTimeout: timeout,
		DisableCompression:    true,
	}
	scheme := "https"
	if strings.HasPrefix(dialURL, "http://") {
		scheme = "http"
	}
	return &etcdGateway{
		base:    scheme + "://" + dialed,
		client:  &http.Client{Transport: tr, Timeout: timeout},
		tr:      tr,
		timeout: timeout,
	}
}

// close drops the connections the gateway opened.
func (g *etcdGateway) close() { g.tr.CloseIdleConnections() }

// call POSTs req as JSON to path and decodes the answer into out, within
// the gateway's timeout. An answer other than 200 is an error carrying the
// HTTP status and etcd's message (e.g. "etcdserver: request timed out").
func (g *etcdGateway) call(ctx context.Context, path string, req, out any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, g.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := g.client.Do(hr)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			// *url.Error repeats method and URL; the caller names the endpoint.
			err = ue.Unwrap()
		}
		return fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, etcdGatewayMaxBody+1))
	if err != nil {
		return fmt.Errorf("POST %s: reading the answer: %w", path, err)
	}
	if len(data) > etcdGatewayMaxBody {
		return fmt.Errorf("POST %s: answer larger than %d bytes", path, etcdGatewayMaxBody)
	}
	if resp.StatusCode != http.StatusOK {
		var ge etcdGatewayError
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &ge) == nil && (ge.Message != "" || ge.Error != "") {
			msg = ge.Message
			if msg == "" {
				msg = ge.Error
			}
		}
		if len(msg) > 512 {
			msg = msg[:512] + "..."
		}
		return fmt.Errorf("POST %s: HTTP %s: %s", path, resp.Status, msg)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("POST %s: the answer is not etcd's JSON: %w", path, err)
	}
	return nil
}
