#!/usr/bin/env bash
# Fleet benchmark: `layercheck verify` (one SSH connection per host, files
# over SFTP, nothing copied) against `ansible-playbook playbooks/verify.yml`
# (the node_facts module copied to every host) on the same simulated hosts,
# each a generated node tree behind its own real sshd on a loopback port.
# Prints the median wall time of each and the ratio (our target: >= 10x).
#   bench/fleet.sh [HOSTS,...]      default 20,100; RUNS=3
# Needs root (the sshd servers), `make venv ssh-deps` (make bench does it).
set -euo pipefail
cd "$(dirname "$0")/.."
counts=${1:-20,100}
./scripts/ssh-deps.sh
./scripts/venv.sh >/dev/null
out=$(LAYERCHECK_BENCH_FLEET=$counts LAYERCHECK_BENCH_RUNS=${RUNS:-3} \
  go test -tags bench -count=1 -v -timeout 60m -run '^TestBenchFleet$' ./test/sshverify/ 2>&1) || { echo "$out"; exit 1; }
echo "$(nproc) cores"
grep -E 'BENCH' <<<"$out" | sed -E 's/^ *[a-z_]+\.go:[0-9]+: //'
