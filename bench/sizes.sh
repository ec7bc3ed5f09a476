#!/usr/bin/env bash
# Binary sizes: the layercheck CLI and the three module binaries, built as
# `make build` builds them (stripped: -trimpath -ldflags '-s -w'), for
# linux/amd64 by default (GOARCH=arm64 for the other shipped one), beside
# the targets (CLI <= 40 MB, node_facts <= 10 MB, cluster_facts <= 30 MB).
# Then, per binary, the modules with the most packages it links (go list
# -deps) and the packages with the most code and read-only data (go tool nm
# -size of the same build unstripped). Figures only; nothing is asserted.
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
  go list -deps -f '{{with .Module}}{{.Path}}{{end}}' "./cmd/$b" | sort | uniq -c | sort -rn | awk 'NR <= 12'
  echo "$b: $(go version -m "$work/$b" | grep -c $'^\tdep') dependency modules (go version -m)"
  # Where the bytes are: code and read-only data of each package, from the
  # symbol table of the same build unstripped (the stripped binary also
  # holds pclntab and type data, roughly in proportion).
  echo "$b: largest packages, KiB of code and read-only data (go tool nm -size)"
  go build -trimpath -o "$work/$b.syms" "./cmd/$b"
  go tool nm -size "$work/$b.syms" | awk '$3 ~ /^[TtRr]$/ {
    name = $4
    sub(/^(type:|go:itab\.)\*?/, "", name); sub(/\[.*/, "", name)
    n = split(name, parts, "/"); last = parts[n]; d = index(last, "."); if (d > 0) last = substr(last, 1, d - 1)
    pkg = ""; for (i = 1; i < n; i++) pkg = pkg parts[i] "/"; pkg = pkg last
    size[pkg] += $2 }
    END { for (p in size) printf "%8.0f %s\n", size[p] / 1024, p }' | sort -rn | awk 'NR <= 12'
done
