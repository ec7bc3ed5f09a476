#!/usr/bin/env bash
# Inventory benchmark: generates a 5,000-host kubespray inventory with
# group_vars and host_vars, then times in the same run
#   layercheck inventory --list, layercheck lint, ansible-inventory --list
# (median of several runs each, peak memory) and prints the ratios.
# Our target: layercheck inventory --list at least 30x faster than
# ansible-inventory --list. Needs `make venv build` first (make bench does it).
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${HOSTS:-5000}
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
echo "inventory: $HOSTS hosts, $(ls "$work/inv/host_vars" | wc -l) host_vars files; $(nproc) cores"
awk -F'\t' '
  { name[NR]=$1; t[NR]=$2; m[NR]=$3; r[NR]=$4 }
  END {
    printf "%-30s %12s %14s %5s\n", "command", "median (s)", "peak RSS (MiB)", "runs"
    for (i = 1; i <= NR; i++) printf "%-30s %12.3f %14.1f %5d\n", name[i], t[i], m[i], r[i]
    printf "\nratio ansible-inventory --list / layercheck inventory --list: %.1fx (target >= 30x)\n", t[3]/t[1]
    printf "ratio ansible-inventory --list / layercheck lint:             %.1fx\n", t[3]/t[2]
    printf "peak memory ansible-inventory / layercheck inventory:       %.1fx\n", m[3]/m[1]
  }' "$work/results.tsv"
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
