package fleet

import (
	"context"
	"fmt"
	"net"
	"path"

	"github.com/layercheck/layercheck/internal/sshconn"
)

// ClusterSource is where the cluster layers get their kubeconfig from with
// --cluster-from first-control-plane: kubespray's admin.conf on the first
// kube_control_plane host, read over SFTP (become), and a dialer that
// reaches the API server through the host's SSH connection, from the node
// as kubectl on the node would: the address admin.conf names answers there
// even when it is not reachable from the controller (and a direct attempt
// could reach something else, e.g. a proxy intercepting the address).
type ClusterSource struct {
	// Where names the file for messages ("node1:/etc/kubernetes/admin.conf").
	Where      string
	Kubeconfig []byte
	conn       *sshconn.Conn
	addrMap    map[string]string
	root       string
	// Host is the inventory host the source reads from.
	Host string
}

// FromFirstControlPlane opens the connection to host (the first
// kube_control_plane host of the plan) and reads admin.conf from its
// kube_config_dir (under layercheck_verify_root). Close ends the
// connection.
func FromFirstControlPlane(ctx context.Context, h *Host, opts Options) (*ClusterSource, error) {
	if h.Err != nil {
		return nil, h.Err
	}
	conn, err := sshconn.Dial(ctx, h.Target, opts.SSH)
	if err != nil {
		return nil, fmt.Errorf("host %s: UNREACHABLE: %v", h.Name, err)
	}
	o := h.Request.Options
	o.Defaults()
	root := h.Request.Root
	if root == "" {
		root = "/"
	}
	p := path.Join(o.KubeConfigDir, "admin.conf")
	data, err := conn.FS().ReadFile(path.Join(root, p))
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("read %s on %s: %v (cluster.yml writes it on kube_control_plane hosts; or give --kubeconfig)", p, h.Name, unwrapPath(err))
	}
	return &ClusterSource{Where: h.Name + ":" + p, Kubeconfig: data, conn: conn, addrMap: h.Request.AddrMap, root: root, Host: h.Name}, nil
}

// Dial connects to the API server from the control-plane host through its
// SSH connection (after the host's layercheck_verify_addr_map, as the node
// layers dial).
func (c *ClusterSource) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	to := addr
	if m, ok := c.addrMap[addr]; ok {
		to = m
	}
	conn, err := c.conn.DialNode(ctx, network, to)
	if err != nil {
		return nil, fmt.Errorf("API server %s: %v", addr, err)
	}
	return conn, nil
}

// ReadFile reads node path p on the host over SFTP (become, under
// layercheck_verify_root), as admin.conf was read.
func (c *ClusterSource) ReadFile(p string) ([]byte, error) {
	data, err := c.conn.FS().ReadFile(path.Join(c.root, p))
	if err != nil {
		return nil, fmt.Errorf("read %s on %s: %v", p, c.Host, unwrapPath(err))
	}
	return data, nil
}

// Close ends the SSH connection.
func (c *ClusterSource) Close() error { return c.conn.Close() }

func unwrapPath(err error) error {
	type unwrapper interface{ Unwrap() error }
	if u, ok := err.(unwrapper); ok && u.Unwrap() != nil {
		return u.Unwrap()
	}
	return err
}
