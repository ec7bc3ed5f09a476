package output

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The expected values are what Python 3 prints for the same input
// (repr(), json.dumps(sort_keys=True), str.rstrip()).
func TestPythonValues(t *testing.T) {
	for in, want := range map[string]string{
		"v's":          `"v's"`,
		`a'b"c`:        `'a\'b"c'`,
		"\x7f":         `'\x7f'`,
		"\u00a0":       `'\xa0'`,
		"é":            `'é'`,
		"\u200b":       `'\u200b'`,
		"\U0001F600":   "'\U0001F600'",
		"\U000E0001":   `'\U000e0001'`,
		"tab\there\\":  `'tab\there\\'`,
		"\x1b":         `'\x1b'`,
		"line\r\nnext": `'line\r\nnext'`,
	} {
		assert.Equal(t, want, pyStrRepr(in), "repr(%q)", in)
	}

	v, err := decodePy([]byte(`{"b": 1, "a": [true, null, "\u00e9\u2028\ud83d\ude00\u007f\u0000/<>"]}`))
	require.NoError(t, err)
	assert.Equal(t, `{"a": [true, null, "\u00e9\u2028\ud83d\ude00\u007f\u0000/<>"], "b": 1}`, pyJSON(v))

	v, err = decodePy([]byte(`["a", 1, null, true, {"k": "v's", "n": 2.5, "k": "again"}]`))
	require.NoError(t, err)
	assert.Equal(t, `['a', 1, None, True, {'k': 'again', 'n': 2.5}]`, pyStr(v), "a repeated key keeps its place and its last value")

	assert.Equal(t, "x", rstrip("x\x1c\x1d \u3000"))
	assert.Equal(t, "ab", truncate("ab", 2))
	assert.Equal(t, "éé...", truncate("ééé", 2))

	for in, want := range map[string]bool{`0`: false, `0.0`: false, `-0`: false, `1`: true, `""`: false, `"0"`: true,
		`[]`: false, `[0]`: true, `{}`: false, `{"a": null}`: true, `null`: false, `false`: false, `true`: true} {
		v, err := decodePy([]byte(in))
		require.NoError(t, err)
		assert.Equal(t, want, pyTruthy(v), "bool(%s)", in)
	}
	_, err = decodePy([]byte(`{"a": 1} {}`))
	assert.Error(t, err)
}

func TestGeneric(t *testing.T) {
	for _, c := range []struct{ text, host, want string }{
		{"node1 node10 xnode1 node1's node1", "node1", "<host> node10 xnode1 <host>'s <host>"},
		{"aaa", "aa", "aaa"},
		{"on n.1, not on nX1", "n.1", "on <host>, not on nX1"},
		{"nœud-1 fails", "nœud-1", "<host> fails"},
		{"nothing here", "", "nothing here"},
	} {
		assert.Equal(t, c.want, generic(c.text, c.host), "generic(%q, %q)", c.text, c.host)
	}
}

func TestReadPlayRejects(t *testing.T) {
	for in, want := range map[string]string{
		`{"scope": "all"}`:                                `scope must be play or host, got "all"`,
		`{"scope": "host", "hosts": ["a", "b"]}`:          "scope host: hosts must name one host, got 2",
		`{"scope": "play", "unknown": 1}`:                 `unknown field "unknown"`,
		`{"scope": "play"} {}`:                            "data after its JSON object",
		`{"scope": "play", "nodes": {"a": {"layers": }}}`: "invalid character",
		`[]`: "no verify play report request",
		`{"scope": "play", "hosts": ["a"], "nodes": {"a": [1, 2]}}`: "",
	} {
		p, err := ReadPlay(strings.NewReader(in))
		if want == "" {
			require.NoError(t, err, in)
			assert.Nil(t, p.nodes["a"], "facts that are no object are none")
			continue
		}
		if assert.Error(t, err, in) {
			assert.Contains(t, err.Error(), want, in)
		}
	}
}

func TestPlayVerdict(t *testing.T) {
	read := func(s string) *PlayResult {
		t.Helper()
		p, err := ReadPlay(strings.NewReader(s))
		require.NoError(t, err)
		r, err := p.Result()
		require.NoError(t, err)
		return r
	}
	r := read(`{"scope": "host", "hosts": ["cp1"], "cluster_host": "cp1", "order": ["kubelet", "etcd"],
		"nodes": {"cp1": {"layers": {"etcd": {"status": "fail"}, "dns": {"status": "warn"}, "kubelet": {"status": "error"}}}},
		"cluster": {"layers": {"probe": {"status": "fail"}, "nodes": {"status": "error"}}}}`)
	assert.Equal(t, &PlayResult{Failed: true, Msg: "layercheck: cp1 failed node layer(s) kubelet, etcd and cluster layer(s) nodes, probe; the report above says what is wrong and how to fix it"}, r)
	r = read(`{"scope": "host", "hosts": ["w1"], "fail_on_warn": true, "nodes": {"w1": {"layers": {"dns": {"status": "warn"}}}}}`)
	assert.Equal(t, &PlayResult{Failed: true, Msg: "layercheck: w1 failed node layer(s) dns; the report above says what is wrong and how to fix it"}, r)
	r = read(`{"scope": "host", "hosts": ["w1"], "nodes": {"w1": {"layers": {"dns": {"status": "warn"}}}}}`)
	assert.Equal(t, &PlayResult{Msg: "layercheck: w1 passed"}, r)
	r = read(`{"scope": "host", "hosts": ["w1"], "nodes": {"w1": null}}`)
	assert.Equal(t, &PlayResult{Failed: true, Msg: "layercheck: w1 has no layercheck_node facts"}, r)
}

func TestPlayText(t *testing.T) {
	p, err := ReadPlay(strings.NewReader(`{"scope": "play", "hosts": ["node2", "node1", "extra"], "inventory": ["node1", "node2"],
		"order": ["etcd"], "cluster_host": "node1", "cluster_skipped": "no kubeconfig",
		"nodes": {
			"node1": {"status": "ok", "layers": {"etcd": {"status": "ok", "results": []}, "dns": {"status": "skipped"}}},
			"node2": {"status": "fail", "layers": {"etcd": {"status": "fail", "results": [
				{"check": "members", "status": "fail", "msg": "node2 is no member", "remediation": "add node2", "expected": ["node2"], "actual": []}]}}}}}`))
	require.NoError(t, err)
	r, err := p.Result()
	require.NoError(t, err)
	assert.Equal(t, `HOST   etcd  dns   NODE
node1  ok    skip  OK
node2  fail  -     FAIL
extra  -     -     NO FACTS

cluster layers skipped: no kubeconfig

[FAIL] extra: no layercheck_node facts (the host was unreachable or node_facts failed: see its error above)

[FAIL] node2 etcd members: node2 is no member
    fix: add node2

layercheck verify: 3 hosts: 1 ok, 0 warn, 2 failed; cluster: skipped`, r.Text)
	assert.Equal(t, "layercheck verify: 3 hosts: 1 ok, 0 warn, 2 failed; cluster: skipped", r.Msg)
	assert.False(t, r.Failed)

	// A cluster layer that is no object cannot be drawn in the table.
	p, err = ReadPlay(strings.NewReader(`{"scope": "play", "hosts": [], "cluster_host": "cp1", "cluster": {"layers": {"nodes": 1}}}`))
	require.NoError(t, err)
	_, err = p.Result()
	assert.ErrorContains(t, err, "layercheck_cluster facts of cp1: layer nodes is no object")
}
