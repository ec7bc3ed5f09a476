package node

import (
	"context"
	"crypto/tls"
	"net"
	"time"
)

// dial opens a connection from the node to addr (after AddrMap) within
// timeout: through Env.Dial when set (e.g. an SSH connection to the node),
// else from this machine.
func (e *Env) dial(ctx context.Context, network, addr string, timeout time.Duration) (net.Conn, error) {
	if e.Dial == nil {
		return (&net.Dialer{Timeout: timeout}).DialContext(ctx, network, addr)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return e.Dial(ctx, network, addr)
}

// dialTLS is dial followed by a TLS handshake with cfg, within timeout.
func (e *Env) dialTLS(ctx context.Context, addr string, cfg *tls.Config, timeout time.Duration) (net.Conn, error) {
	if e.Dial == nil {
		return (&tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: cfg}).DialContext(ctx, "tcp", addr)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	raw, err := e.Dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := tls.Client(raw, cfg)
	if err := c.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	return c, nil
}
