#!/usr/bin/env bash
# API requests, time and memory of the cluster layers (layercheck cluster /
# cluster_facts, read-only layers) on the 3-node sample and on the same
# inventory grown to each of N1,N2,... simulated nodes (default 1000,5000),
# the inventory listing all of them, against a real kube-apiserver (make
# kube-harness) and embedded etcd on loopback. Prints, per size, the
# requests, the wall time, the bytes allocated during the run and their
# ratio to the 3-node run (target: 1,000 nodes at most 5x the time of 3,
# and under 1 s). The request count must not change with the node count;
# the test fails if it does.
#   bench/cluster_requests.sh [N1,N2,...]
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-1000,5000}
make -s kube-harness
out=$(LAYERCHECK_BENCH_NODES=$sizes go test -count=1 -v -timeout 25m -run '^TestRequestsConstantInNodeCount$' ./test/clusterverify/ 2>&1) || { echo "$out"; exit 1; }
grep -E 'wrote' <<<"$out" | sed -E 's/^ *[a-z_]+\.go:[0-9]+: //'
grep -E 'BENCH' <<<"$out" | sed -E 's/^ *[a-z_]+\.go:[0-9]+: BENCH //' | awk '
{
	for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	if (NR == 1) { t3 = v["time_ms"]; m3 = v["alloc_mib"] }
	printf "nodes=%-6s requests=%-4s time=%6d ms  alloc=%8.1f MiB  time x%.1f  alloc x%.1f (vs 3 nodes)  status=%s\n",
		v["nodes"], v["requests"], v["time_ms"], v["alloc_mib"],
		(t3 > 0 ? v["time_ms"] / t3 : 0), (m3 > 0 ? v["alloc_mib"] / m3 : 0), v["status"]
}'
