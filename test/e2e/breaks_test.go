//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/verify"
)

const etcdSSL = "/etc/ssl/etcd/ssl"

// etcdctl on node1 with kubespray's admin certificate of node1.
func etcdctl(args string) string {
	return "ETCDCTL_API=3 /usr/local/bin/etcdctl --endpoints=https://127.0.0.1:2379 --cacert=" + etcdSSL + "/ca.pem" +
		" --cert=" + etcdSSL + "/admin-node1.pem --key=" + etcdSSL + "/admin-node1-key.pem " + args
}

// waitHealthy waits until every member answers, after a restart.
func waitHealthy(t *testing.T) {
	t.Helper()
	var out string
	for i := 0; i < 60; i++ {
		out = onNode(t, "node1", etcdctl("endpoint health --cluster 2>&1 || true"))
		if strings.Count(out, "is healthy") == 3 {
			return
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("etcd did not become healthy again:\n%s", out)
}

// breaks are seeded one at a time on the healthy nodes, in this order;
// each is mended before the next, except the certificate that expires in
// 10 days (it stays: the later breaks are judged on other layers) and the
// removed member (last).
func breaks(s *stage) []brk {
	return []brk{
		{
			Name: "etcd stopped on node3",
			Seed: func(t *testing.T, _ *stage) { onNode(t, "node3", "systemctl stop etcd") },
			Restore: func(t *testing.T, _ *stage) {
				onNode(t, "node3", "systemctl start etcd")
				waitHealthy(t)
			},
			Host: "node3", Layer: "etcd", Status: verify.StatusFail,
			Check: regexp.MustCompile(`^service$`), Remedy: regexp.MustCompile(`systemctl status etcd`),
		},
		{
			Name: "node2 serves node1's member certificate",
			Seed: func(t *testing.T, _ *stage) {
				onNode(t, "node2", fmt.Sprintf("cd %[1]s && cp -p member-node2.pem member-node2.pem.e2e && cp -p member-node2-key.pem member-node2-key.pem.e2e && "+
					"cp -p member-node1.pem member-node2.pem && cp -p member-node1-key.pem member-node2-key.pem && systemctl restart etcd", etcdSSL))
			},
			Restore: func(t *testing.T, _ *stage) {
				onNode(t, "node2", fmt.Sprintf("cd %[1]s && mv member-node2.pem.e2e member-node2.pem && mv member-node2-key.pem.e2e member-node2-key.pem && systemctl restart etcd", etcdSSL))
				waitHealthy(t)
			},
			Host: "node2", Layer: "etcd", Status: verify.StatusFail,
			Check: regexp.MustCompile(`^member_certificate$`), Remedy: regexp.MustCompile(`check_certs\.yml|force_etcd_cert_refresh`),
		},
		{
			// kubespray's own script makes it: the first etcd node's copy of
			// node3's certificates is removed, and the etcd role (re)runs
			// with a short certificates_duration, so make-ssl-etcd.sh issues
			// node3's anew and they are synced to node3.
			Name: "an etcd certificate that expires in 10 days (node3, make-ssl-etcd.sh with certificates_duration=10)",
			Seed: func(t *testing.T, s *stage) {
				onNode(t, "node1", fmt.Sprintf("rm -f %[1]s/member-node3.pem %[1]s/member-node3-key.pem %[1]s/admin-node3.pem %[1]s/admin-node3-key.pem", etcdSSL))
				out, err := s.ansible(t, "kubespray-short-certs", s.play, "--tags", "etcd", "-e", "certificates_duration=10")
				if _, ok := recap(out); err != nil || !ok {
					t.Fatalf("kubespray's etcd role with certificates_duration=10 failed (%v):\n%s", err, tail(out, 60))
				}
				waitHealthy(t)
			},
			Host: "node3", Layer: "certificates", Status: verify.StatusWarn,
			Check: regexp.MustCompile(`member-node3\.pem`), Remedy: regexp.MustCompile(`make-ssl-etcd\.sh.*--tags etcd`),
		},
		{
			Name: "/etc/resolv.conf points at a stub resolver (node2)",
			Seed: func(t *testing.T, _ *stage) {
				onNode(t, "node2", "cp -p /etc/resolv.conf /etc/resolv.conf.e2e && printf 'nameserver 127.0.0.53\\noptions edns0 trust-ad\\nsearch .\\n' > /etc/resolv.conf")
			},
			Restore: func(t *testing.T, _ *stage) { onNode(t, "node2", "mv /etc/resolv.conf.e2e /etc/resolv.conf") },
			Host:    "node2", Layer: "dns", Status: verify.StatusFail,
			Check: regexp.MustCompile(`^pod_resolv_conf$`), Remedy: regexp.MustCompile(`kube_resolv_conf|upstream_dns_servers`),
		},
		{
			Name: "a member removed from the cluster (node3)",
			Seed: func(t *testing.T, _ *stage) {
				list := onNode(t, "node1", etcdctl("member list"))
				var id string
				for _, line := range strings.Split(list, "\n") {
					if f := strings.Split(line, ", "); len(f) > 2 && f[2] == "etcd3" {
						id = f[0]
					}
				}
				if id == "" {
					t.Fatalf("no member etcd3 in:\n%s", list)
				}
				onNode(t, "node1", etcdctl("member remove "+id))
			},
			Host: "node1", Layer: "etcd", Status: verify.StatusFail,
			Check: regexp.MustCompile(`^members$`), Remedy: regexp.MustCompile(`etcdctl member (remove|list)`),
		},
	}
}
