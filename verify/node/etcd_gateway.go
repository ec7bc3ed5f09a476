package node

// The live etcd checks ask etcd through its JSON gateway (verify/etcdgw),
// over the connection the endpoint check opened and, should etcd close it,
// over new ones dialled the same way (through Env.Dial when set, to the
// address after Env.AddrMap).

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/layercheck/layercheck/verify/etcdgw"
)

type (
	etcdUint64             = etcdgw.Uint64
	etcdStatusResponse     = etcdgw.StatusResponse
	etcdMember             = etcdgw.Member
	etcdMemberListResponse = etcdgw.MemberListResponse
)

const etcdGatewayMaxBody = etcdgw.MaxBody

func newEtcdGateway(env *Env, dialURL, dialed string, cfg *tls.Config, conn net.Conn, timeout time.Duration) *etcdgw.Gateway {
	return etcdgw.New(dialURL, dialed, etcdgw.Dialer{
		Dial:    func(ctx context.Context) (net.Conn, error) { return env.dial(ctx, "tcp", dialed, timeout) },
		DialTLS: func(ctx context.Context) (net.Conn, error) { return env.dialTLS(ctx, dialed, cfg, timeout) },
	}, conn, timeout)
}
