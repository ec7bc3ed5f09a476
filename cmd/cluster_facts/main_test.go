package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/layercheck/layercheck/internal/testutil"
	"github.com/layercheck/layercheck/module"
	"github.com/layercheck/layercheck/verify/cluster"
)

// The module against a real API server is tested in test/clusterverify;
// here: the documentation, bad options, and an API server that never
// answers (found through K8S_AUTH_KUBECONFIG).

func TestModuleBadOptionsAndSilentAPIServer(t *testing.T) {
	dir := t.TempDir()
	bin := testutil.Build(t, "./cmd/cluster_facts", filepath.Join(dir, "cluster_facts"))
	groups := map[string]any{"kube_control_plane": []string{"node1"}, "kube_node": []string{"node1"}}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{"_ansible_module_name": "layercheck.kubespray.cluster_facts"}
		for k, v := range groups {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}

	res, code := testutil.RunModule(t, bin, nil, with(map[string]any{"kubeconfig": "/nonexistent/admin.conf"}))
	if code == 0 || res["failed"] != true || !strings.Contains(res["msg"].(string), "option kubeconfig") {
		t.Errorf("missing kubeconfig: %d %v", code, res)
	}
	res, code = testutil.RunModule(t, bin, nil, with(map[string]any{"kubeconfg": "x"}))
	if code == 0 || !strings.Contains(res["msg"].(string), "Unsupported parameters") || !strings.Contains(res["msg"].(string), "kubeconfg") {
		t.Errorf("misspelt option: %d %v", code, res)
	}
	res, code = testutil.RunModule(t, bin, nil, with(map[string]any{"calico_vxlan_mode": "always"}))
	if code == 0 || !strings.Contains(res["msg"].(string), `option calico_vxlan_mode: "always" is not one of Always, Never, CrossSubnet`) {
		t.Errorf("bad calico_vxlan_mode: %d %v", code, res)
	}

	// A TCP server on loopback that accepts and never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		var held []net.Conn
		for {
			c, err := l.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://"+l.Addr().String()+"\", insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user: {token: not-a-real-token}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, code = testutil.RunModule(t, bin, []string{"K8S_AUTH_KUBECONFIG=" + kc}, with(map[string]any{"timeout": 2, "_ansible_check_mode": true}))
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("silent API server with timeout 2s took %s", d)
	}
	if code != 0 || res["failed"] == true {
		t.Fatalf("an unreachable API server is a report, not a failed task: %d %v", code, res)
	}
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), "did not answer within 2s") || !strings.Contains(string(b), `"status":"error"`) {
		t.Errorf("no clear error naming the server: %s", b)
	}
	if strings.Contains(string(b), "not-a-real-token") {
		t.Errorf("token in module output")
	}
}

func TestDocumentationMatchesOptions(t *testing.T) {
	name, options, documented := testutil.ModuleDoc(t, "cluster_facts")
	fields := module.OptionNames(reflect.TypeOf(cluster.Request{}))
	sort.Strings(fields)
	if name != "cluster_facts" || !reflect.DeepEqual(documented, fields) {
		t.Errorf("documented options %v\nmodule options %v", documented, fields)
	}
	// Documented string and number defaults are the ones Defaults applies.
	var o cluster.Options
	o.KubeNode = []string{"a"}
	o.Defaults()
	ob, _ := json.Marshal(o)
	var applied map[string]any
	_ = json.Unmarshal(ob, &applied)
	for name, spec := range options {
		d, ok := spec["default"]
		if !ok {
			continue
		}
		a, ok := applied[name]
		if !ok || a == nil {
			continue
		}
		if af, ok := a.(float64); ok {
			if df, ok := d.(int); !ok || float64(df) != af {
				t.Errorf("option %s: documented default %v, applied %v", name, d, a)
			}
			continue
		}
		if a != d {
			t.Errorf("option %s: documented default %v, applied %v", name, d, a)
		}
	}
}
