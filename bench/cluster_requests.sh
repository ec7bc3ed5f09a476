#!/usr/bin/env bash
# API requests and time of the cluster layers (layercheck cluster /
# cluster_facts, read-only layers) on the 3-node sample and on the same
# inventory grown to N simulated nodes (default 1000), against a real
# kube-apiserver (make kube-harness) and embedded etcd on loopback. The
# request count must not change with the node count; the test fails if it
# does.
#   bench/cluster_requests.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${1:-1000}
make -s kube-harness
out=$(LAYERCHECK_BENCH_NODES=$nodes go test -count=1 -v -timeout 20m -run '^TestRequestsConstantInNodeCount$' ./test/clusterverify/ 2>&1) || { echo "$out"; exit 1; }
grep -E 'BENCH|wrote' <<<"$out" | sed -E 's/^ *[a-z_]+\.go:[0-9]+: //'
