// Command gentree writes a healthy kubespray-shaped node tree (see package
// harness) for benchmarks and manual runs of `layercheck node`:
//
//	go run ./test/harness/gentree -out DIR [-now 2026-11-30T14:22:06Z] [-rsa] \
//	  [-host node2 -ip 192.0.2.12] [-lb 192.0.2.11:6443,...] [-expired PATH,...]
//
// -host and -ip give the tree its node's inventory_hostname and address
// (certificate SANs, kubeadm-config, etcd.env, kubelet-config), so a tree
// laid on a real machine agrees with its inventory entry. -lb makes it a
// worker behind kubespray's nginx-proxy with those upstreams; -expired
// reissues the named certificates (node paths) so they expired a day
// before -now, the same key and CA: a host verify must fail.
//
// The tree holds throw-away private keys.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/layercheck/layercheck/test/harness"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gentree:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	fl := flag.NewFlagSet("gentree", flag.ContinueOnError)
	out := fl.String("out", "", "directory to write the tree into (created)")
	now := fl.String("now", "2026-11-30T14:22:06Z", "when the certificates are made (RFC 3339)")
	rsa := fl.Bool("rsa", false, "RSA-2048 keys as kubespray makes them (default ECDSA-P256)")
	host := fl.String("host", "", "the node's inventory_hostname (default node1 of kubespray's sample inventory)")
	ip := fl.String("ip", "", "the node's address (required with -host)")
	lb := fl.String("lb", "", "comma-separated API server upstreams host:port: a worker behind kubespray's nginx-proxy")
	expired := fl.String("expired", "", "comma-separated certificate node paths to reissue as expired")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("-out is required")
	}
	t, err := time.Parse(time.RFC3339, *now)
	if err != nil {
		return fmt.Errorf("-now: %v", err)
	}
	cfg := harness.Config{Now: t}
	if *rsa {
		cfg.Keys = harness.RSA2048
	}
	if (*host == "") != (*ip == "") {
		return fmt.Errorf("-host and -ip go together")
	}
	if *host != "" {
		if net.ParseIP(*ip) == nil {
			return fmt.Errorf("-ip %q is not an IP address", *ip)
		}
		cfg.Host, cfg.Hosts, cfg.IPs = *host, []string{*host}, []string{*ip}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	tr, err := harness.Build(*out, cfg)
	if err != nil {
		return err
	}
	if *lb != "" {
		ups := strings.Split(*lb, ",")
		for _, u := range ups {
			if _, _, err := net.SplitHostPort(u); err != nil {
				return fmt.Errorf("-lb %q: %v", u, err)
			}
		}
		if err := tr.LocalhostLB(ups...); err != nil {
			return err
		}
	}
	if *expired != "" {
		for _, p := range strings.Split(*expired, ",") {
			if err := tr.ReissueLeaf(p, t.Add(-48*time.Hour), t.Add(-24*time.Hour), nil); err != nil {
				return fmt.Errorf("-expired: %v", err)
			}
		}
	}
	fmt.Println(*out)
	return nil
}
