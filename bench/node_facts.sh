#!/usr/bin/env bash
# node_facts benchmark: wall time of the node_facts module (run as Ansible
# runs a binary module: one JSON arguments file) on a healthy generated
# node tree with kubespray v2.31.0's layout and RSA-2048 keys (node1 of a
# three-host cluster: 21 certificates), and the module's size per arch as
# `make modules` builds it (-trimpath -ldflags '-s -w').
# The etcd and DNS layers contact their endpoints through addr_map on a
# closed loopback port (no server runs here), so they fail fast; the file
# layers are also timed on their own.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CGO_ENABLED=0
go build -o "$work/measure" ./bench/measure
go build -o "$work/gentree" ./test/harness/gentree
for arch in amd64 arm64; do
  GOOS=linux GOARCH=$arch go build -trimpath -ldflags='-s -w' -o "$work/node_facts_linux_$arch" ./cmd/node_facts
done
host_arch=$(go env GOARCH)
"$work/gentree" -rsa -out "$work/root" >/dev/null

closed=127.0.0.1:9
args() { # $1 = layers JSON list
  cat <<JSON
{"root": "$work/root", "inventory_hostname": "node1", "now": "2026-12-01T00:00:00Z",
 "group_names": ["etcd", "kube_control_plane", "kube_node", "k8s_cluster"],
 "etcd_members": ["node1", "node2", "node3"], "kube_version": "1.35.4",
 "layers": $1, "net_timeout": 2,
 "addr_map": {"127.0.0.1:2379": "$closed", "10.10.0.11:2379": "$closed",
              "169.254.25.10:53": "$closed", "10.233.0.3:53": "$closed"},
 "_ansible_module_name": "layercheck.kubespray.node_facts"}
JSON
}
args '["certificates", "install", "kubelet", "cni", "addons"]' > "$work/files.json"
args '[]' > "$work/all.json"
"$work/node_facts_linux_$host_arch" "$work/files.json" > "$work/files.out" || { cat "$work/files.out"; exit 1; }
grep -q '"status":"ok"' "$work/files.out" || { echo "file layers are not ok on the healthy tree:"; cat "$work/files.out"; exit 1; }
{
  "$work/measure" -name "node_facts (file layers)" -runs "$RUNS" -- "$work/node_facts_linux_$host_arch" "$work/files.json"
  "$work/measure" -name "node_facts (all layers)" -runs "$RUNS" -- "$work/node_facts_linux_$host_arch" "$work/all.json"
} > "$work/results.tsv"
echo "node_facts on a generated healthy node1 tree ($(nproc) cores, $host_arch)"
awk -F'\t' '{ printf "%-28s median %.3f s, peak RSS %.1f MiB, %d runs\n", $1, $2, $3, $4 }' "$work/results.tsv"
echo
echo "binary size (linux, -trimpath -ldflags '-s -w'):"
for arch in amd64 arm64; do
  f="$work/node_facts_linux_$arch"
  stat -c %s "$f" | awk -v a="$arch" '{ printf "  node_facts_linux_%-6s %10d bytes (%.1f MiB)\n", a, $1, $1 / 1048576 }'
done
