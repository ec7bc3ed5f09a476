#!/usr/bin/env bash
# API requests, time and memory of the cluster layers (layercheck cluster /
# cluster_facts, read-only layers) on the 3-node sample and on the same
# inventory grown to each of N1,N2,... simulated nodes (default 1000,5000),
# the inventory listing all of them, against a real kube-apiserver (make
# kube-harness) and embedded etcd on loopback. Prints, per size, the
# requests, the median wall time of RUNS runs after one to warm up (RUNS,
# default 5; each run a fresh client, as cluster_facts is), the CPU time
# per run of the test process (the client, but also the embedded etcd and
# the fake metrics-server) and of kube-apiserver, the bytes allocated per
# run and their ratio to the 3-node run, all from the same run of the
# test. Goal: 1,000 nodes at most 3x the time of 3 and under
# 200 ms. The request count must not change with the node count; the test
# fails if it does. The API server and etcd share the machine with the
# client: on a loaded machine the times grow and vary, compare ratios; the
# CPU times (means of the runs) vary less with the load.
#   bench/cluster_requests.sh [N1,N2,...]
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-1000,5000}
make -s kube-harness
out=$(LAYERCHECK_BENCH_NODES=$sizes LAYERCHECK_BENCH_RUNS=${RUNS:-5} go test -count=1 -v -timeout 25m -run '^TestRequestsConstantInNodeCount$' ./test/clusterverify/ 2>&1) || { echo "$out"; exit 1; }
grep -E 'wrote' <<<"$out" | sed -E 's/^ *[a-z_]+\.go:[0-9]+: //'
grep -E 'BENCH' <<<"$out" | sed -E 's/^ *[a-z_]+\.go:[0-9]+: BENCH //' | awk '
{
	for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	if (NR == 1) { t3 = v["time_ms"]; m3 = v["alloc_mib"] }
	x = (t3 > 0 ? v["time_ms"] / t3 : 0)
	goal = ""
	if (v["nodes"] >= 1000 && v["nodes"] <= 1003)
		goal = sprintf("  goal <= 3x and < 200 ms: %s", (x <= 3 && v["time_ms"] < 200) ? "met" : "NOT MET")
	printf "nodes=%-6s requests=%-4s time=%7.1f ms (min %.1f, %s runs)  cpu=%.1f ms + API server %.1f ms  alloc=%7.1f MiB  time x%.1f  alloc x%.1f (vs 3 nodes)  status=%s%s\n",
		v["nodes"], v["requests"], v["time_ms"], v["min_ms"], v["runs"], v["cpu_ms"], v["server_cpu_ms"], v["alloc_mib"], x, (m3 > 0 ? v["alloc_mib"] / m3 : 0), v["status"], goal
}'
