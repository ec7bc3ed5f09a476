#!/usr/bin/env bash
# The lint's cluster preflight (layercheck lint --kubeconfig: the cluster
# read, the inventory load and the lint) against a real kube-apiserver (make
# kube-harness) and embedded etcd on loopback, for the 3-node cluster built
# from kubespray v2.31.0's defaults and for the same cluster grown to each
# of N1,N2,... Nodes (default 1000,5000), the inventory listing them all.
# Prints, per size, the time per run, the API requests and the time's
# ratio to the 3-node run (target: 1,000 nodes under 2 s, the requests the
# same at every size; TestPreflightRequestsConstant asserts the count).
#   bench/preflight.sh [N1,N2,...]
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-1000,5000}
make -s kube-harness
t3=""
for n in 3 ${sizes//,/ }; do
  out=$(LAYERCHECK_BENCH_NODES=$n go test -count=1 -timeout 25m -run '^$' -bench '^BenchmarkPreflight$' -benchtime 5x ./test/clusterverify/ 2>&1) || { echo "$out"; exit 1; }
  line=$(grep -E '^BenchmarkPreflight' <<<"$out")
  ns=$(awk '{print $3}' <<<"$line")
  req=$(grep -oE '[0-9.]+ requests/op' <<<"$line" | awk '{print $1}')
  [ -z "$t3" ] && t3=$ns
  awk -v n="$n" -v ns="$ns" -v req="$req" -v t3="$t3" 'BEGIN {
    s = ns / 1e9
    verdict = (n == 1000) ? ((s < 2) ? "  (< 2 s: ok)" : "  (< 2 s: OVER)") : ""
    printf "nodes=%-6s time=%8.3f s  requests=%-3s  time x%.1f (vs 3 nodes)%s\n", n, s, req, ns / t3, verdict }'
done
