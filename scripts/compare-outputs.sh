#!/usr/bin/env bash
# Compares what layercheck prints at a base commit with what the working tree
# prints, on the same inputs, so a claim like "outputs byte-identical except
# ..." can be checked and re-checked:
#   scripts/compare-outputs.sh BASE      e.g. scripts/compare-outputs.sh 32c6ded
#
# It builds ./cmd/layercheck twice (BASE in a temporary git worktree, removed
# afterwards, and the working tree as it is, uncommitted changes included),
# then runs both binaries on:
#   - `layercheck lint` on each inventory-samples/* (run from the repository's
#     top, as the README does), in every --format the lint's --help lists, and
#     the text with -v (each finding's why);
#   - `layercheck lint` on every inventory source of the real inventories in
#     ../shared/fixtures/inventories, found as test/lintcorpus finds them (a
#     directory holding group_vars/ or an inventory file), on a copy outside
#     any git repository, as a new user runs it; same formats; a source with
#     no host (only group_vars in the repository) gets test/lintcorpus's
#     stand-in hosts file first, three nodes as kubespray's sample has them;
#   - `layercheck node` on a copy of ../shared/fixtures/node/root (node1 of
#     kubespray v2.31.0's sample: groups etcd, kube_control_plane,
#     k8s_cluster; etcd members node1-3; judged at the fixture's oracle time
#     2026-11-30T14:22:06Z, with the /etc/kubernetes/pki link kubespray's
#     preinstall makes), in every --format node's --help lists. It runs in a
#     network namespace of its own (unshare -n), so etcd and DNS get the same
#     "network is unreachable" from both binaries and no machine is reached;
#     where unshare -n is not allowed, the etcd and dns layers are skipped
#     instead, and the script says so.
# Each run's exit status, standard output and standard error are compared
# after the per-run noise is masked: times (text "N ms", JSON duration_ms and
# latency_ms, JUnit time=, Prometheus duration, latency and last-run
# timestamp samples) and the temporary directory's path. It prints one line
# per input and format, identical or differs, with a unified diff of each
# difference (at most LAYERCHECK_DIFF_LINES lines, default 60), then the
# counts. Both binaries are built with -buildvcs=false, so neither prints a
# commit of its own. No network, no node machine.
#
# Environment:
#   LAYERCHECK_SHARED       the shared sources (default ../shared beside the repository)
#   LAYERCHECK_DIFF_LINES   lines of each diff shown (default 60; 0 shows none)
#   LAYERCHECK_COMPARE_KEEP a directory to keep every run's masked output in
#                           (base/ and work/, one file per input and format)
# Exit status: 0 when it ran (whatever differs), 2 when it could not.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

if [[ $# -ne 1 || $1 == -h || $1 == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 2
fi
base_rev=$(git rev-parse --verify --quiet "$1^{commit}") || { echo "compare-outputs: $1 is no commit" >&2; exit 2; }
shared=${LAYERCHECK_SHARED:-../shared}
[[ -d $shared/fixtures/inventories && -d $shared/fixtures/node/root ]] ||
  { echo "compare-outputs: $shared/fixtures/inventories and $shared/fixtures/node/root are needed (LAYERCHECK_SHARED)" >&2; exit 2; }
shared=$(cd "$shared" && pwd)
diff_lines=${LAYERCHECK_DIFF_LINES:-60}
[[ $diff_lines =~ ^[0-9]+$ ]] || { echo "compare-outputs: LAYERCHECK_DIFF_LINES=$diff_lines is no number" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/compare-outputs.XXXXXX")
basetree=$tmp/base-tree
cleanup() {
  if [[ -d $basetree ]]; then
    git worktree remove --force "$basetree" 2>/dev/null || true
  fi
  git worktree prune 2>/dev/null || true
  chmod -R u+w "$tmp" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "building layercheck at $1 ($(git rev-parse --short "$base_rev")) and at the working tree"
git worktree add --quiet --detach "$basetree" "$base_rev"
build() { # DIR OUT
  (cd "$1" && CGO_ENABLED=0 nice -n 19 go build -buildvcs=false -trimpath -o "$2" ./cmd/layercheck)
}
mkdir -p "$tmp/bin"
build "$basetree" "$tmp/bin/base"
git worktree remove --force "$basetree"
build "$repo" "$tmp/bin/work"

# formats CMD: the --format values both binaries' `layercheck CMD --help` list
formats() {
  for b in base work; do
    "$tmp/bin/$b" "$1" --help 2>&1 | sed -nE 's/.*--format ([a-z|]+) .*/\1/p' | head -n1 | tr '|' '\n'
  done | awk 'NF && !seen[$0]++'
}
mapfile -t lint_formats < <(formats lint)
mapfile -t node_formats < <(formats node)
[[ ${#lint_formats[@]} -gt 0 && ${#node_formats[@]} -gt 0 ]] ||
  { echo "compare-outputs: no --format values in the help of lint or node" >&2; exit 2; }

# mask FILE: hide what differs between two runs of the same binary.
mask() {
  sed -E -i \
    -e "s#$tmp#<tmp>#g" \
    -e 's/(, )[0-9]+ ms$/\1<t> ms/' \
    -e 's/("(duration_ms|latency_ms)": )[0-9.e+-]+/\1<t>/' \
    -e 's/( time=")[0-9.]+"/\1<t>"/g' \
    -e 's/^(layercheck_[a-z_]*(duration_seconds|latency_seconds|last_run_timestamp_seconds)(\{[^}]*\})?) .*/\1 <t>/' \
    "$1"
}

# run WHICH CWD OUT ARGS...: one run, its exit status and both streams in OUT.
run() {
  local which=$1 cwd=$2 out=$3 rc=0
  shift 3
  (cd "$cwd" && "${prefix[@]}" "$tmp/bin/$which" "$@" >"$out.stdout" 2>"$out.stderr") || rc=$?
  { echo "exit $rc"; echo "--- stdout"; cat "$out.stdout"; echo "--- stderr"; cat "$out.stderr"; } >"$out"
  rm -f "$out.stdout" "$out.stderr"
  mask "$out"
}

declare -A same differ
kinds=()
# compare KIND LABEL CWD ARGS...: run both binaries, print the verdict.
compare() {
  local kind=$1 label=$2 cwd=$3 key
  shift 3
  key=$(printf '%s' "$label" | tr '/ ' '__')
  mkdir -p "$tmp/out/base" "$tmp/out/work"
  run base "$cwd" "$tmp/out/base/$key" "$@"
  run work "$cwd" "$tmp/out/work/$key" "$@"
  [[ -n ${same[$kind]+x} ]] || { same[$kind]=0; differ[$kind]=0; kinds+=("$kind"); }
  if cmp -s "$tmp/out/base/$key" "$tmp/out/work/$key"; then
    same[$kind]=$((same[$kind] + 1))
    echo "identical  $label"
  else
    differ[$kind]=$((differ[$kind] + 1))
    echo "differs    $label"
    if ((diff_lines > 0)); then
      local d n
      d=$(diff -u --label "base $label" --label "work $label" "$tmp/out/base/$key" "$tmp/out/work/$key" || true)
      n=$(wc -l <<<"$d")
      head -n "$diff_lines" <<<"$d" | sed 's/^/    /'
      ((n <= diff_lines)) || echo "    ... $((n - diff_lines)) more diff lines"
    fi
  fi
}

# lint_all KIND LABEL CWD SOURCE: the lint of one source in every format.
lint_all() {
  local kind=$1 label=$2 cwd=$3 src=$4 f
  for f in "${lint_formats[@]}"; do
    compare "$kind" "$label [$f]" "$cwd" lint -i "$src" --color never --format "$f"
  done
  compare "$kind" "$label [text -v]" "$cwd" lint -i "$src" --color never -v
}

prefix=(env)
echo
echo "== layercheck lint on inventory-samples/*"
for d in inventory-samples/*/; do
  d=${d%/}
  lint_all samples "$d" "$repo" "$d"
done

# stand_in DIR: the hosts file test/lintcorpus gives a source that keeps
# its hosts elsewhere (only group_vars in the repository): kubespray's
# sample's three nodes, and the old group names its group_vars use.
stand_in() {
  local name
  {
    printf '[kube_control_plane]\nnode1\nnode2\nnode3\n[etcd:children]\nkube_control_plane\n'
    printf '[kube_node]\nnode1\nnode2\nnode3\n'
    for name in kube-master kube-node k8s-cluster; do
      if [[ -e $1/group_vars/$name ]] || compgen -G "$1/group_vars/$name.*" >/dev/null; then
        case $name in
          kube-master) printf '[kube-master:children]\nkube_control_plane\n' ;;
          kube-node) printf '[kube-node:children]\nkube_node\n' ;;
          k8s-cluster) printf '[k8s-cluster:children]\nkube_control_plane\nkube_node\n' ;;
        esac
      fi
    done
  } >"$1/layercheck-stand-in-hosts.ini"
}

echo
echo "== layercheck lint on the real inventories ($shared/fixtures/inventories)"
mkdir -p "$tmp/inventories"
cp -R "$shared/fixtures/inventories/." "$tmp/inventories/"
chmod -R u+w "$tmp/inventories"
for entry in "$tmp"/inventories/*/; do
  entry=${entry%/}
  name=${entry##*/}
  # the sources as test/lintcorpus finds them
  mapfile -t srcs < <(find "$entry" \( -type d -name group_vars -printf '%h\n' \) -o \
    \( -type f \( -name '*.ini' -o -name 'hosts*' -o -name 'inventory*.yml' -o -name 'inventory*.yaml' \) -printf '%h\n' \) |
    LC_ALL=C sort -u)
  [[ ${#srcs[@]} -gt 0 ]] || { echo "compare-outputs: no inventory source in $name" >&2; exit 2; }
  for s in "${srcs[@]}"; do
    rel=${s#"$tmp/inventories/"}
    label="inventories/$rel"
    if grep -q '"hostvars": {}' < <(cd "$tmp/inventories" && "$tmp/bin/work" inventory --list -i "$rel" 2>/dev/null); then
      stand_in "$s"
      label+=" (stand-in hosts)"
    fi
    lint_all inventories "$label" "$tmp/inventories" "$rel"
  done
done

echo
echo "== layercheck node on ../shared/fixtures/node (node1)"
mkdir -p "$tmp/node"
cp -R "$shared/fixtures/node/root" "$tmp/node/root"
chmod -R u+w "$tmp/node/root"
[[ -e $tmp/node/root/etc/kubernetes/pki ]] || ln -s /etc/kubernetes/ssl "$tmp/node/root/etc/kubernetes/pki"
node_args=(node --root "$tmp/node/root" --host node1 --now 2026-11-30T14:22:06Z
  --group etcd --group kube_control_plane --group k8s_cluster
  --etcd-member node1 --etcd-member node2 --etcd-member node3)
if unshare -n true 2>/dev/null; then
  prefix=(unshare -n)
elif unshare -rn true 2>/dev/null; then
  prefix=(unshare -rn)
else
  echo "(unshare -n is not allowed here: the etcd and dns layers, which reach the network, are skipped)"
  prefix=(env)
  node_args+=(--skip etcd --skip dns)
fi
for f in "${node_formats[@]}"; do
  compare node "node fixtures/node/root [$f]" "$tmp" "${node_args[@]}" --format "$f"
done

if [[ -n ${LAYERCHECK_COMPARE_KEEP:-} ]]; then
  mkdir -p "$LAYERCHECK_COMPARE_KEEP"
  cp -R "$tmp/out/." "$LAYERCHECK_COMPARE_KEEP/"
fi

echo
echo "== $1 ($(git rev-parse --short "$base_rev")) against the working tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD 2>/dev/null || echo ', with changes'))"
total_same=0 total_differ=0
for k in "${kinds[@]}"; do
  printf '%-12s %4d identical %4d differ\n' "$k" "${same[$k]}" "${differ[$k]}"
  total_same=$((total_same + same[$k]))
  total_differ=$((total_differ + differ[$k]))
done
printf '%-12s %4d identical %4d differ\n' total "$total_same" "$total_differ"
