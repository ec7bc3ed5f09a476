package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/layercheck/layercheck/clusterstate"
	"github.com/layercheck/layercheck/verify/etcdgw"
)

// EtcdAccess is how the preflight reaches etcd (kubespray's etcd as a host
// service has no API object to read): client URLs and the client
// certificate, files on the host the read runs on (on a kubespray etcd
// host /etc/ssl/etcd/ssl/ca.pem, admin-<host>.pem, admin-<host>-key.pem).
// No endpoint: etcd is not read.
type EtcdAccess struct {
	Endpoints []string `json:"etcd_endpoints"`
	CACert    string   `json:"etcd_cacert"`
	Cert      string   `json:"etcd_cert"`
	Key       string   `json:"etcd_key"`
	// CAData, CertData and KeyData, when set, are the files' contents
	// (read elsewhere, e.g. over SFTP from an etcd host); the paths then
	// only name them.
	CAData, CertData, KeyData []byte `json:"-"`
	// Dial, when set, opens the connections to the client URLs (e.g.
	// through an SSH connection to an etcd host).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error) `json:"-"`
}

// TLSConfig loads the client certificate and the CA.
func (a *EtcdAccess) TLSConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if a.CACert != "" || a.CAData != nil {
		pem, err := a.CAData, error(nil)
		if pem == nil {
			pem, err = os.ReadFile(a.CACert)
		}
		if err != nil {
			return nil, fmt.Errorf("option etcd_cacert: %v", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("option etcd_cacert: %s holds no PEM certificate", a.CACert)
		}
	}
	if a.Cert != "" || a.Key != "" {
		var pair tls.Certificate
		var err error
		if a.CertData != nil && a.KeyData != nil {
			pair, err = tls.X509KeyPair(a.CertData, a.KeyData)
		} else {
			pair, err = tls.LoadX509KeyPair(a.Cert, a.Key)
		}
		if err != nil {
			return nil, fmt.Errorf("options etcd_cert, etcd_key: %v", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// ReadEtcd reads etcd's member list through the JSON gateway of the first
// endpoint that answers, then each started member's version
// (Maintenance.Status at its first client URL): one request per member,
// not per node. A member whose status cannot be read has no Version.
func ReadEtcd(ctx context.Context, a *EtcdAccess, timeout time.Duration) (*clusterstate.Etcd, error) {
	cfg, err := a.TLSConfig()
	if err != nil {
		return nil, err
	}
	var errs []string
	for _, ep := range a.Endpoints {
		var ml etcdgw.MemberListResponse
		gw, err := etcdGateway(ep, cfg, timeout, a.Dial)
		if err == nil {
			err = gw.Call(ctx, "/v3/cluster/member/list", map[string]bool{"linearizable": true}, &ml)
			gw.Close()
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", ep, err))
			continue
		}
		out := &clusterstate.Etcd{Endpoint: ep, Members: []clusterstate.Member{}}
		for _, m := range ml.Members {
			lm := clusterstate.Member{Name: m.Name, PeerURLs: m.PeerURLs, ClientURLs: m.ClientURLs, IsLearner: m.IsLearner}
			if len(m.ClientURLs) > 0 {
				if g, err := etcdGateway(m.ClientURLs[0], cfg, timeout, a.Dial); err == nil {
					var st etcdgw.StatusResponse
					if g.Call(ctx, "/v3/maintenance/status", struct{}{}, &st) == nil {
						lm.Version = st.Version
					}
					g.Close()
				}
			}
			out.Members = append(out.Members, lm)
		}
		return out, nil
	}
	return nil, fmt.Errorf("no etcd endpoint answered: %v", errs)
}

// etcdGateway asks client URL u (TLS with cfg for https), through dial
// when set, else directly.
func etcdGateway(u string, cfg *tls.Config, timeout time.Duration, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (*etcdgw.Gateway, error) {
	pu, err := url.Parse(u)
	if err != nil || pu.Host == "" {
		return nil, fmt.Errorf("%q is not a client URL", u)
	}
	host := pu.Host
	if pu.Port() == "" {
		host = net.JoinHostPort(pu.Hostname(), "2379")
	}
	c := cfg.Clone()
	c.ServerName = pu.Hostname()
	if dial == nil {
		dial = (&net.Dialer{Timeout: timeout}).DialContext
	}
	plain := func(ctx context.Context) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return dial(ctx, "tcp", host)
	}
	return etcdgw.New(u, host, etcdgw.Dialer{
		Dial: plain,
		DialTLS: func(ctx context.Context) (net.Conn, error) {
			raw, err := plain(ctx)
			if err != nil {
				return nil, err
			}
			tc := tls.Client(raw, c)
			hctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			if err := tc.HandshakeContext(hctx); err != nil {
				raw.Close()
				return nil, err
			}
			return tc, nil
		},
	}, nil, timeout), nil
}
