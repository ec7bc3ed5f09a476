package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/layercheck/layercheck/module"
	"github.com/layercheck/layercheck/test/testutil"
	"github.com/layercheck/layercheck/verify/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	assert.NotEqual(t, 0, code, "missing kubeconfig: %v", res)
	assert.Equal(t, true, res["failed"], "missing kubeconfig")
	assert.Contains(t, res["msg"], "option kubeconfig")

	res, code = testutil.RunModule(t, bin, nil, with(map[string]any{"kubeconfg": "x"}))
	assert.NotEqual(t, 0, code, "misspelt option: %v", res)
	assert.Contains(t, res["msg"], "Unsupported parameters")
	assert.Contains(t, res["msg"], "kubeconfg")

	res, code = testutil.RunModule(t, bin, nil, with(map[string]any{"calico_vxlan_mode": "always"}))
	assert.NotEqual(t, 0, code, "bad calico_vxlan_mode: %v", res)
	assert.Contains(t, res["msg"], `option calico_vxlan_mode: "always" is not one of Always, Never, CrossSubnet`)

	// A TCP server on loopback that accepts and never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
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
	require.NoError(t, os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://"+l.Addr().String()+"\", insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user: {token: not-a-real-token}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"), 0o600))
	start := time.Now()
	res, code = testutil.RunModule(t, bin, []string{"K8S_AUTH_KUBECONFIG=" + kc}, with(map[string]any{"timeout": 2, "_ansible_check_mode": true}))
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("silent API server with timeout 2s took %s", d)
	}
	require.Equal(t, 0, code, "an unreachable API server is a report, not a failed task: %v", res)
	require.NotEqual(t, true, res["failed"], "an unreachable API server is a report, not a failed task: %v", res)
	b, err := json.Marshal(res)
	require.NoError(t, err)
	assert.Contains(t, string(b), "did not answer within 2s", "no clear error naming the server")
	assert.Contains(t, string(b), `"status":"error"`)
	assert.NotContains(t, string(b), "not-a-real-token", "token in module output")
}

func TestDocumentationMatchesOptions(t *testing.T) {
	name, options, documented := testutil.ModuleDoc(t, "cluster_facts")
	fields := module.OptionNames(reflect.TypeOf(cluster.Request{}))
	sort.Strings(fields)
	assert.Equal(t, "cluster_facts", name)
	assert.Equal(t, fields, documented, "documented options (plugins/modules/cluster_facts.yml) against the module's")
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
