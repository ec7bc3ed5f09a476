// Package etcdgw asks etcd through its JSON gateway: Maintenance.Status
// and Cluster.MemberList as HTTP POSTs of JSON to the client URL
// (/v3/maintenance/status, /v3/cluster/member/list), which etcd 3.4, 3.5,
// 3.6 and 3.7 serve beside gRPC on the same port (grpc-gateway,
// --enable-grpc-gateway, on by default; kubespray's etcd.env does not turn
// it off). The node layer's etcd checks (verify/node) and the lint's
// cluster preflight (verify/cluster) use it; a connection already opened
// and checked can serve the first call, so one TLS handshake serves the
// status and the member list.
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
package etcdgw

import (
	"bytes"
	"context"
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

// MaxBody bounds one gateway answer (a member list of a few
// hundred members is a few tens of KiB).
const MaxBody = 4 << 20

// Uint64 is a protojson 64-bit integer: a JSON string of decimal
// digits (or a bare number, which protojson also accepts).
type Uint64 uint64

func (u *Uint64) UnmarshalJSON(b []byte) error {
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
	*u = Uint64(v)
	return nil
}

// ResponseHeader is etcdserverpb.ResponseHeader. protojson with
// UseProtoNames writes member_id; memberId (the JSON name) is read too.
type ResponseHeader struct {
	ClusterID     Uint64 `json:"cluster_id"`
	MemberID      Uint64 `json:"member_id"`
	MemberIDCamel Uint64 `json:"memberId"`
	Revision      Uint64 `json:"revision"`
	RaftTerm      Uint64 `json:"raft_term"`
}

func (h *ResponseHeader) MemberIDOf() uint64 {
	if h.MemberID != 0 {
		return uint64(h.MemberID)
	}
	return uint64(h.MemberIDCamel)
}

// StatusResponse is etcdserverpb.StatusResponse as the gateway writes it.
type StatusResponse struct {
	Header      *ResponseHeader `json:"header"`
	Version     string          `json:"version"`
	DBSize      Uint64          `json:"dbSize"`
	Leader      Uint64          `json:"leader"`
	RaftIndex   Uint64          `json:"raftIndex"`
	RaftTerm    Uint64          `json:"raftTerm"`
	Errors      []string        `json:"errors"`
	DBSizeInUse Uint64          `json:"dbSizeInUse"`
	IsLearner   bool            `json:"isLearner"`
}

// Member is etcdserverpb.Member as the gateway writes it.
type Member struct {
	ID         Uint64   `json:"ID"`
	Name       string   `json:"name"`
	PeerURLs   []string `json:"peerURLs"`
	ClientURLs []string `json:"clientURLs"`
	IsLearner  bool     `json:"isLearner"`
}

// MemberListResponse is etcdserverpb.MemberListResponse.
type MemberListResponse struct {
	Header  *ResponseHeader `json:"header"`
	Members []*Member       `json:"members"`
}

// gatewayError is the body of a failed gateway call: grpc-gateway v2
// writes {code, message, details}, v1 (etcd 3.4/3.5) also "error".
type gatewayError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Error   string `json:"error"`
}

// Gateway asks one endpoint over HTTP/1.1 (see New).
type Gateway struct {
	base    string // scheme://dialed
	client  *http.Client
	tr      *http.Transport
	timeout time.Duration
}

// Dialer opens the gateway's connections: Dial a plain TCP one, DialTLS a
// TLS one (after its handshake).
type Dialer struct {
	Dial    func(ctx context.Context) (net.Conn, error)
	DialTLS func(ctx context.Context) (net.Conn, error)
}

// New asks the endpoint dialURL (http:// or https://) at dialed
// ("host:port"): first over conn when it is not nil (a connection already
// opened and checked), then over connections d opens. Every call is
// bounded by timeout.
func New(dialURL, dialed string, d Dialer, conn net.Conn, timeout time.Duration) *Gateway {
	var mu sync.Mutex
	take := func() net.Conn {
		mu.Lock()
		defer mu.Unlock()
		c := conn
		conn = nil
		return c
	}
	tr := &http.Transport{
		Proxy: nil, // the cluster's own endpoints; never an HTTP(S)_PROXY
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			if c := take(); c != nil {
				return c, nil
			}
			return d.Dial(ctx)
		},
		DialTLSContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			if c := take(); c != nil {
				return c, nil
			}
			return d.DialTLS(ctx)
		},
		MaxIdleConnsPerHost:   1,
		ResponseHeaderTimeout: timeout,
		DisableCompression:    true,
	}
	scheme := "https"
	if strings.HasPrefix(dialURL, "http://") {
		scheme = "http"
	}
	return &Gateway{
		base:    scheme + "://" + dialed,
		client:  &http.Client{Transport: tr, Timeout: timeout},
		tr:      tr,
		timeout: timeout,
	}
}

// Close drops the connections the gateway opened.
func (g *Gateway) Close() { g.tr.CloseIdleConnections() }

// Call POSTs req as JSON to path and decodes the answer into out, within
// the gateway's timeout. An answer other than 200 is an error carrying the
// HTTP status and etcd's message (e.g. "etcdserver: request timed out").
func (g *Gateway) Call(ctx context.Context, path string, req, out any) error {
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
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return fmt.Errorf("POST %s: reading the answer: %w", path, err)
	}
	if len(data) > MaxBody {
		return fmt.Errorf("POST %s: answer larger than %d bytes", path, MaxBody)
	}
	if resp.StatusCode != http.StatusOK {
		var ge gatewayError
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
