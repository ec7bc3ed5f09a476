package parser

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// genInventory writes an INI inventory of n hosts in kubespray's groups,
// with group_vars for each group and a host_vars file for every host.
func genInventory(tb testing.TB, dir string, n int) string {
	tb.Helper()
	var sb strings.Builder
	groups := []string{"kube_control_plane", "etcd", "kube_node", "calico_rr"}
	for gi, g := range groups {
		fmt.Fprintf(&sb, "[%s]\n", g)
		for i := 0; i < n; i++ {
			if i%len(groups) == gi || g == "kube_node" {
				fmt.Fprintf(&sb, "node%05d ansible_host=10.%d.%d.%d ip=10.%d.%d.%d etcd_member_name=etcd%d\n",
					i, i>>16&255, i>>8&255, i&255, i>>16&255, i>>8&255, i&255, i)
			}
		}
	}
	sb.WriteString("[k8s_cluster:children]\nkube_control_plane\nkube_node\ncalico_rr\n[all:vars]\nansible_user=ubuntu\n")
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	ini := filepath.Join(dir, "inventory.ini")
	must(os.WriteFile(ini, []byte(sb.String()), 0o644))
	must(os.MkdirAll(filepath.Join(dir, "group_vars", "all"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, "host_vars"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "group_vars", "all", "all.yml"), []byte("kube_version: v1.33.4\ndownload_run_once: false\nupstream_dns_servers: [8.8.8.8, 1.1.1.1]\n"), 0o644))
	for _, g := range append(groups, "k8s_cluster") {
		must(os.WriteFile(filepath.Join(dir, "group_vars", g+".yml"), []byte("group_marker: "+g+"\nenabled: yes\n"), 0o644))
	}
	for i := 0; i < n; i++ {
		must(os.WriteFile(filepath.Join(dir, "host_vars", fmt.Sprintf("node%05d.yml", i)),
			[]byte(fmt.Sprintf("node_index: %d\nnode_labels: {zone: z%d}\n", i, i%3)), 0o644))
	}
	return ini
}

// BenchmarkLoad loads 5,000 hosts with group_vars and a host_vars file per
// host, and resolves every host's variables.
func BenchmarkLoad(b *testing.B) {
	ini := genInventory(b, b.TempDir(), 5000)
	b.ResetTimer()
	cpu0 := cpuTime()
	defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
	for i := 0; i < b.N; i++ {
		inv, err := Load(ini)
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range inv.Hosts {
			inv.HostVars(h, nil)
		}
	}
}

// TestLoadLargeInventory loads and resolves 5,000 hosts with group_vars
// and host_vars. Its speed is measured by BenchmarkLoad and bench/, never
// asserted here.
func TestLoadLargeInventory(t *testing.T) {
	ini := genInventory(t, t.TempDir(), 5000)
	inv, err := Load(ini)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range inv.Hosts {
		hv := inv.HostVars(h, nil)
		if hv.Get("node_index") == nil || hv.Get("group_marker") == nil {
			t.Fatalf("%s: host_vars/group_vars not applied: %v", h.Name, hv.Keys)
		}
	}
	if len(inv.Hosts) != 5000 {
		t.Fatalf("loaded %d hosts, want 5000", len(inv.Hosts))
	}
}

// cpuTime is the user+system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLoadMillionHosts loads ten lines of r<N>-[0:99999]: 1,000,000
// hosts after range expansion, the default MaxHosts, and renders them as
// --list does.
func BenchmarkLoadMillionHosts(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&sb, "r%d-[0:99999]\n", i)
	}
	ini := filepath.Join(b.TempDir(), "hosts.ini")
	if err := os.WriteFile(ini, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		inv, err := Load(ini)
		if err != nil {
			b.Fatal(err)
		}
		if len(inv.Hosts) != 1_000_000 {
			b.Fatalf("%d hosts", len(inv.Hosts))
		}
		if _, err := inv.ListJSON(); err != nil {
			b.Fatal(err)
		}
	}
}
