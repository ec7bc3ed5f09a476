#!/usr/bin/env bash
# Binary sizes: the layercheck CLI and the three module binaries, built as
# `make build` builds them (stripped: -trimpath -ldflags '-s -w'), for
# linux/amd64 by default (GOARCH=arm64 for the other shipped one), beside
# the targets (CLI <= 40 MB, node_facts <= 10 MB, cluster_facts <= 30 MB). Then, per binary, the
# largest modules it links (`go version -m` lists them; the size each adds
# is not known to Go, so the count of packages per module is printed as a
# hint of where the weight comes from). Figures only; nothing is asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0 GOOS=linux GOARCH=${GOARCH:-amd64}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

declare -A target=([layercheck]=40 [node_facts]=10 [cluster_facts]=30)
printf '%-16s %12s %9s %s\n' binary bytes MiB "target (MiB)"
for b in layercheck inventory_lint node_facts cluster_facts; do
  go build -trimpath -ldflags='-s -w' -o "$work/$b" "./cmd/$b"
  size=$(stat -c %s "$work/$b")
  awk -v b="$b" -v s="$size" -v t="${target[$b]:-}" 'BEGIN {
    mib = s / 1048576
    verdict = ""
    if (t != "") verdict = sprintf("<= %d %s", t, (mib <= t) ? "ok" : "OVER")
    printf "%-16s %12d %9.1f %s\n", b, s, mib, verdict }'
done

for b in layercheck cluster_facts; do
  echo
  echo "$b: linked modules with the most packages (go list -deps)"
  go list -deps -f '{{with .Module}}{{.Path}}{{end}}' "./cmd/$b" | sort | uniq -c | sort -rn | head -12
  echo "$b: $(go version -m "$work/$b" | grep -c $'^\tdep') dependency modules (go version -m)"
done
