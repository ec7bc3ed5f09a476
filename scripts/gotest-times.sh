#!/usr/bin/env bash
# Runs `go test ARGS...` (GO overrides the go command), passing its output
# through, then prints the time go test reported for every package, slowest
# first, and a closing count of passed and failed packages. Exits with go
# test's status. The log is a private temporary file, so runs in parallel
# (other checkouts, make -j) do not mix.
set -uo pipefail
log=$(mktemp "${TMPDIR:-/tmp}/gotest-times.XXXXXX")
trap 'rm -f "$log"' EXIT
start=$SECONDS
"${GO:-go}" test "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
wall=$((SECONDS - start))
echo
echo "Per-package times of go test $*, slowest first:"
# "ok  <pkg>  12.3s" and "FAIL  <pkg>  12.3s" (a package that timed out
# ends with FAIL and its time too); "FAIL <pkg> [build failed]" has none.
awk '($1 == "ok" || $1 == "FAIL") && NF >= 3 && $3 ~ /^[0-9.]+s$/ {
       t = $3; sub(/s$/, "", t); printf "%9.1fs  %-4s  %s\n", t, $1, $2 }' "$log" | sort -rn
awk '$1 == "FAIL" && NF >= 3 && $3 !~ /^[0-9.]+s$/ { $1 = ""; printf "%10s  FAIL %s\n", "-", $0 }' "$log"
passed=$(awk '$1 == "ok" && NF >= 3' "$log" | wc -l)
failed=$(awk '$1 == "FAIL" && NF >= 2' "$log" | wc -l)
echo "Wall time: ${wall}s (exit status $rc)"
echo "packages: $passed passed, $failed failed"
exit "$rc"
