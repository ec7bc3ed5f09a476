#!/usr/bin/env bash
# Inventory benchmark: generates a 5,000-host kubespray inventory with
# group_vars and host_vars, then times in the same run
#   layercheck inventory --list, layercheck lint, ansible-inventory --list
# (median of several runs each, peak memory) and prints the ratios; then
# lints a 1,000,000-host inventory (host ranges sharing their group_vars)
# once and prints its CPU time and peak memory.
# Targets: layercheck lint at least 80x and layercheck inventory --list at
# least 40x faster than ansible-inventory --list on 5,000 hosts; 1,000,000
# hosts linted in under 5 s of CPU and 1 GiB of peak memory. Needs `make
# venv build` first (make bench does it). MILLION=0 skips the
# 1,000,000-host lint.
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${HOSTS:-5000}
MILLION=${MILLION:-1000000}
RUNS=${RUNS:-5}
ARUNS=${ARUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/geninv" ./bench/geninv
go build -o "$work/measure" ./bench/measure
"$work/geninv" -hosts "$HOSTS" -out "$work/inv"
inv="$work/inv/inventory.ini"
: > "$work/ansible.cfg"
export ANSIBLE_CONFIG="$work/ansible.cfg" ANSIBLE_INVENTORY_UNPARSED_WARNING=0 ANSIBLE_LOCALHOST_WARNING=0
{
  "$work/measure" -name "layercheck inventory --list" -runs "$RUNS" -- bin/layercheck inventory -i "$inv" --list
  "$work/measure" -name "layercheck lint" -runs "$RUNS" -- bin/layercheck lint -i "$inv" --format json
  "$work/measure" -name "ansible-inventory --list" -runs "$ARUNS" -- .venv/bin/ansible-inventory -i "$inv" --list
} > "$work/results.tsv"
if [ "$MILLION" -gt 0 ]; then
  "$work/geninv" -hosts "$MILLION" -ranges -out "$work/million"
  "$work/measure" -name "layercheck lint, $MILLION hosts" -runs 1 -- bin/layercheck lint -i "$work/million/inventory.ini" --format json > "$work/million.tsv"
fi
echo "inventory: $HOSTS hosts, $(ls "$work/inv/host_vars" | wc -l) host_vars files; $(nproc) cores"
awk -F'\t' '
  { name[NR]=$1; t[NR]=$2; m[NR]=$3; r[NR]=$4; c[NR]=$5 }
  END {
    printf "%-30s %12s %14s %12s %5s\n", "command", "median (s)", "peak RSS (MiB)", "CPU (s)", "runs"
    for (i = 1; i <= NR; i++) printf "%-30s %12.3f %14.1f %12.3f %5d\n", name[i], t[i], m[i], c[i], r[i]
    printf "\nratio ansible-inventory --list / layercheck inventory --list: %.1fx (target >= 40x)\n", t[3]/t[1]
    printf "ratio ansible-inventory --list / layercheck lint:             %.1fx (target >= 80x)\n", t[3]/t[2]
    printf "peak memory ansible-inventory / layercheck inventory:       %.1fx\n", m[3]/m[1]
    printf "peak memory ansible-inventory / layercheck lint:            %.1fx\n", m[3]/m[2]
  }' "$work/results.tsv"
if [ -s "$work/million.tsv" ]; then
  awk -F'\t' '{ printf "\n%s: %.2f s CPU (target < 5 s), %.3f s wall, peak RSS %.1f MiB (target < 1024)\n", $1, $5, $2, $3 }' "$work/million.tsv"
fi
# The binaries that embed the bundled kubespray catalogues (every release,
# gzipped): the CLI and the lint module, as built by make build.
echo
# (the module binaries live in plugins/bin, see the Makefile.)
for b in bin/layercheck plugins/bin/inventory_lint_linux_amd64 plugins/bin/inventory_lint_linux_arm64; do
  if [ -f "$b" ]; then
    printf "%-46s %6.1f MiB\n" "$b" "$(awk -v s="$(stat -c %s "$b")" 'BEGIN { print s / 1048576 }')"
  else
    printf "%-46s missing: run make build\n" "$b"
  fi
done
