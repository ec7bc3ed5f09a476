#!/usr/bin/env bash
# Fleet benchmark on real machines: `layercheck verify` (one SSH connection
# per host, files over SFTP, nothing copied) against `ansible-playbook
# playbooks/verify.yml` (the node_facts module copied to every host) on the
# same inventory of N node machines (test/nodes/nodes.sh: Debian 12
# systemd-nspawn machines, each with its own sshd, sudo and systemd).
#   bench/fleet-real.sh [N,N,...]    default 10,50,100; FORKS=50
# Needs root (the node machines), Go, python3 and debootstrap (nodes.sh
# builds the machines' root filesystem once, about 500 MB).
#
# The machines are a lab of their own (network namespaces LAYERCHECK_BENCH_NETNS,
# default lcb; state in LAYERCHECK_BENCH_NODES_DIR, default
# ~/.cache/layercheck/bench-nodes), never the end-to-end tests' lab, and are
# torn down when the script ends, also when it fails. When that directory has
# no root filesystem yet and the end-to-end lab's has one made from the same
# recipe, it is hard-linked (read only: the machines write to overlays).
#
# Each machine gets a kubespray-shaped node tree of its own name and address
# (test/harness/gentree): node1-3 control plane and etcd, the others workers
# behind kubespray's nginx-proxy (socat answers TLS on 127.0.0.1:6443 with the
# worker's apiserver certificate in its stead) with the link vxlan.calico.
# There is no cluster: no etcd or cluster DNS to ask, so the inventory skips
# the etcd and dns layers and the cluster layers. node1's apiserver.crt has
# expired: both tools must fail node1 and only node1.
#
# For each tool: wall time, CPU time, peak RSS (GNU time: the largest single
# process), the peak of the memory charged to all its processes (their
# memory cgroup: what they allocated and the page cache they brought in, not
# pages that were in memory before, so it can be below one process's RSS);
# the ratio of the two wall times; whether the verdicts are the
# same per host and per layer (layercheck's JSON report against node_facts'
# facts from Ansible's fact cache, and the failed hosts against the
# PLAY RECAP); what each node machine takes in memory.
#
# Where the time goes: the node machines share this machine's cores with the
# tool being timed, so each tool's line also gives the CPU time its run took
# on the node machines (their cpuacct cgroups: sshd, PAM and logind, sudo,
# sftp-server or python, the worker's TLS stand-in), and a floor line times
# what a tool logging in with OpenSSH pays per host, one login running `sudo -n true`
# (FORKS at a time, no connection kept). Before each timed run the script
# waits until the machine is idle (the machines' boot and the previous run's
# logouts done: at least 90% of the CPU idle for 3 s in a row, at most 120 s).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
counts=${1:-10,50,100}
FORKS=${FORKS:-50}
die() { echo "fleet-real: $*" >&2; exit 1; }
[[ $counts =~ ^[0-9]+(,[0-9]+)*$ ]] || die "usage: bench/fleet-real.sh [N,N,...] (host counts, e.g. 10,50,100)"
for n in ${counts//,/ }; do
  ((n >= 2 && n <= 240)) || die "host count $n: between 2 and 240 (one broken host and healthy ones; the lab's /24 holds 240 machines)"
done
[[ $(id -u) == 0 ]] || die "needs root (node machines: network namespaces, mounts, systemd-nspawn)"
command -v /usr/bin/time >/dev/null || die "needs GNU time (/usr/bin/time; apt-get install time)"

cache=${XDG_CACHE_HOME:-$HOME/.cache}/layercheck
export LAYERCHECK_NODES_NETNS=${LAYERCHECK_BENCH_NETNS:-lcb}
export LAYERCHECK_NODES_DIR=${LAYERCHECK_BENCH_NODES_DIR:-$cache/bench-nodes}
[[ $LAYERCHECK_NODES_NETNS != lc && $LAYERCHECK_NODES_DIR != "$cache/nodes" ]] ||
  die "LAYERCHECK_BENCH_NETNS / LAYERCHECK_BENCH_NODES_DIR name the end-to-end lab (lc, $cache/nodes): give the bench its own"
nodes=$repo/test/nodes/nodes.sh
P=$LAYERCHECK_NODES_NETNS
# The harness's addresses (nodes.sh node_ip): nodeI is 192.0.2.(10+I).
ip_of() { echo "192.0.2.$((10 + $1))"; }
NOW=2026-11-30T14:22:06Z       # when the trees' certificates are made
JUDGED=2026-11-30T15:22:06Z    # when verify judges them
BROKEN=node1
BROKEN_CERT=/etc/kubernetes/ssl/apiserver.crt

work=$(mktemp -d)
memcg=
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  local rc=$?
  close_masters
  "$nodes" down >/dev/null 2>&1 || echo "fleet-real: nodes.sh down failed; run LAYERCHECK_NODES_NETNS=$P LAYERCHECK_NODES_DIR=$LAYERCHECK_NODES_DIR $nodes down" >&2
  [[ -n $memcg && -d $memcg ]] && rmdir "$memcg" 2>/dev/null
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The root filesystem: linked from the end-to-end lab's when it is the same
# recipe (nodes.sh checks the recipe and rebuilds it otherwise).
if [[ ! -f $LAYERCHECK_NODES_DIR/rootfs.recipe && -f $cache/nodes/rootfs.recipe && -d $cache/nodes/rootfs ]]; then
  mkdir -p "$LAYERCHECK_NODES_DIR"
  rm -rf "$LAYERCHECK_NODES_DIR/rootfs"
  if cp -al "$cache/nodes/rootfs" "$LAYERCHECK_NODES_DIR/rootfs" 2>/dev/null; then
    cp "$cache/nodes/rootfs.recipe" "$LAYERCHECK_NODES_DIR/rootfs.recipe"
  else
    rm -rf "$LAYERCHECK_NODES_DIR/rootfs"
  fi
fi

./scripts/venv.sh >/dev/null
py=$repo/.venv/bin/python
arch=$(go env GOARCH)
# The collection as bench/fleet.sh lays it out (testutil.LayOutCollection):
# links to the checkout, node_facts and the controller's layercheck built.
coll=$work/collections/ansible_collections/layercheck/kubespray
mkdir -p "$coll/plugins/modules" "$coll/plugins/bin" "$coll/playbooks"
for l in meta roles galaxy.yml plugins/action plugins/plugin_utils playbooks/verify.yml; do ln -s "$repo/$l" "$coll/$l"; done
for m in plugins/modules/*; do [[ $m == *_linux_* ]] || ln -s "$repo/$m" "$coll/$m"; done
for m in node_facts layercheck; do
  CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags='-s -w' -o "$coll/plugins/bin/${m}_linux_$arch" "./cmd/$m"
done
cli=$coll/plugins/bin/layercheck_linux_$arch
CGO_ENABLED=0 go build -o "$work/gentree" ./test/harness/gentree
: >"$work/ansible.cfg"

# A memory cgroup (v1) under this script's own for each timed command: its
# peak is that of all the command's processes together.
memroot=$(awk -F: '$2 == "memory" {print $3}' /proc/self/cgroup)
# the cpuacct hierarchy's directory of this script, where nodes.sh makes each
# machine's (cgroup v1; "cpuacct" or "cpu,cpuacct")
cpubase=$(awk -F: '$2 ~ /(^|,)cpuacct(,|$)/ {sub(/\/$/, "", $3); print "/sys/fs/cgroup/" $2 $3}' /proc/self/cgroup)
if [[ -n $memroot && -d /sys/fs/cgroup/memory$memroot ]]; then
  memcg=/sys/fs/cgroup/memory${memroot%/}/$P-bench
  mkdir -p "$memcg"
fi

# settle: waits until the CPUs have been at least 90% idle for 3 seconds in
# a row (at most 120 s): timing a tool while 100 machines finish booting, or
# log out of the previous run, charges their work to it.
# cpu_ticks: "idle total", the CPUs' idle (idle + iowait) and all ticks so far.
cpu_ticks() {
  awk '/^cpu / {print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat
}

settle() {
  local quiet=0 i a b
  a=$(cpu_ticks)
  for ((i = 0; i < 120 && quiet < 3; i++)); do
    sleep 1
    b=$(cpu_ticks)
    if awk -v a="$a" -v b="$b" 'BEGIN {split(a, x); split(b, y); exit !((y[1] - x[1]) >= 0.9 * (y[2] - x[2]))}'; then
      quiet=$((quiet + 1))
    else
      quiet=0
    fi
    a=$b
  done
}

# node_cpu N: the CPU time (ns) the first N node machines have used so far
# (their cpuacct cgroups, v1; 0 when there are none).
node_cpu() {
  local n=$1 i d sum=0
  for ((i = 1; i <= n; i++)); do
    d=$cpubase/$P-node$i/cpuacct.usage
    [[ -n $cpubase && -f $d ]] || { echo 0; return; }
    sum=$((sum + $(cat "$d")))
  done
  echo "$sum"
}

# timed NAME MAXRC CMD...: runs CMD in the lab namespace under GNU time (and
# the memory cgroup); an exit status up to MAXRC (a failed host: layercheck
# 1, ansible-playbook 2) is a result.
timed() {
  local name=$1 maxrc=$2 rc=0 t0 t1 c0
  shift 2
  settle
  [[ -n $memcg ]] && echo 0 >"$memcg/memory.max_usage_in_bytes"
  c0=$(node_cpu "$n")
  t0=$EPOCHREALTIME
  # into the cgroup before `ip netns exec`, which mounts a /sys without it
  (
    [[ -z $memcg ]] || echo "$BASHPID" >"$memcg/cgroup.procs"
    exec "$nodes" exec /usr/bin/time -v -o "$work/$name.time" "$@"
  ) >"$work/$name.out" 2>"$work/$name.err" || rc=$?
  t1=$EPOCHREALTIME
  echo $(($(node_cpu "$n") - c0)) >"$work/$name.nodecpu"
  ((rc <= maxrc)) || { tail -n 40 "$work/$name.out" "$work/$name.err" >&2; die "$name exited $rc"; }
  echo "$t0 $t1" >"$work/$name.wall"
  if [[ -n $memcg ]]; then cat "$memcg/memory.max_usage_in_bytes" >"$work/$name.cgpeak"; else echo 0 >"$work/$name.cgpeak"; fi
}

# figures NAME: "wall cpu maxrss_mib cgpeak_mib nodecpu_s"
figures() {
  local name=$1
  awk -v wall="$(cat "$work/$name.wall")" -v cg="$(cat "$work/$name.cgpeak")" -v nc="$(cat "$work/$name.nodecpu")" '
    /User time/ {u = $NF} /System time/ {s = $NF} /Maximum resident set size/ {rss = $NF}
    END { split(wall, w, " "); printf "%.2f %.2f %.1f %.1f %.2f\n", w[2] - w[1], u + s, rss / 1024, cg / 1048576, nc / 1e9 }' "$work/$name.time"
}

# lay N I: node I's tree, made for its name and address, copied into the
# running machine (its /run and /tmp too, which are the machine's own
# tmpfs); workers get their nginx-proxy stand-in and vxlan.calico.
lay() {
  local n=$1 i=$2 name=node$2 tree=$work/trees/node$2 args=() cps c start=
  args=(-out "$tree" -now "$NOW" -host "$name" -ip "$(ip_of "$i")")
  if ((i > ctrl)); then
    cps=
    for ((c = 1; c <= ctrl; c++)); do cps+=${cps:+,}$(ip_of "$c"):6443; done
    args+=(-lb "$cps")
    start="systemd-run --quiet --unit=layercheck-bench-apiserver socat OPENSSL-LISTEN:6443,bind=127.0.0.1,reuseaddr,fork,cert=/etc/kubernetes/ssl/apiserver.crt,key=/etc/kubernetes/ssl/apiserver.key,verify=0 SYSTEM:true"
  fi
  [[ $name != "$BROKEN" ]] || args+=(-expired "$BROKEN_CERT")
  "$work/gentree" "${args[@]}" >/dev/null || return 1
  tar -C "$tree" --exclude=./sys --exclude=./etc/resolv.conf -c . |
    "$nodes" ssh "$name" "sudo -n tar -x -C / && sudo -n sh -c '$start'" || return 1
  rm -rf "$tree"
  ip -n "$P-$name" link add vxlan.calico type vxlan id 4096 dstport 4789 dev eth0 2>/dev/null ||
    ip -n "$P-$name" link add vxlan.calico type bridge || return 1
  ip -n "$P-$name" link set vxlan.calico up
}

# Ansible's ssh connections kept open (ControlPersist) are closed, so that
# a timed run opens its own.
close_masters() {
  local s
  for s in "$LAYERCHECK_NODES_DIR"/run/cp/*; do
    [[ -S $s ]] || continue
    "$nodes" exec ssh -o ControlPath="$s" -O exit lab >/dev/null 2>&1 || true
  done
}

inventory() {
  local n=$1 inv=$2 i
  {
    echo "# kubespray's inventory/sample shape: node1-$ctrl control plane and etcd, the others workers."
    echo "[all]"
    for ((i = 1; i <= n; i++)); do echo "node$i ansible_host=$(ip_of "$i") ip=$(ip_of "$i") access_ip=$(ip_of "$i")"; done
    echo
    echo "[kube_control_plane]"
    for ((i = 1; i <= ctrl; i++)); do echo "node$i"; done
    echo
    echo "[etcd:children]"
    echo "kube_control_plane"
    echo
    echo "[kube_node]"
    for ((i = ctrl + 1; i <= n; i++)); do echo "node$i"; done
    echo
    # how to reach the machines, as nodes.sh writes it
    sed -n '/^\[all:vars\]/,$p' "$("$nodes" inventory)"
    echo "layercheck_cluster_enabled=false"
    echo "layercheck_verify_now=$JUDGED"
    echo "# no cluster: no etcd and no cluster DNS answer"
    echo 'layercheck_verify_skip=["etcd", "dns"]'
  } >"$inv"
}

# what the node machines take: their memory cgroups (v1), "usage rss" in MiB
node_memory() {
  local n=$1 i d use=0 rss=0
  [[ -n $memroot ]] || { echo "0 0"; return; }
  for ((i = 1; i <= n; i++)); do
    d=/sys/fs/cgroup/memory${memroot%/}/$P-node$i
    [[ -f $d/memory.usage_in_bytes ]] || { echo "0 0"; return; }
    use=$((use + $(cat "$d/memory.usage_in_bytes")))
    rss=$((rss + $(awk '$1 == "total_rss" {print $2}' "$d/memory.stat")))
  done
  awk -v u="$use" -v r="$rss" -v n="$n" 'BEGIN {printf "%.1f %.1f\n", u / n / 1048576, r / n / 1048576}'
}

# The floor: one OpenSSH login per host, FORKS at a time, each running
# `sudo -n true` and closing (no connection kept, as neither tool keeps one
# between runs).
cat >"$work/floor.sh" <<SH
for ((i = 1; i <= \$1; i++)); do echo "192.0.2.\$((10 + i))"; done |
  xargs -P "$FORKS" -I{} ssh -F none -o BatchMode=yes -o ControlMaster=no -o ControlPath=none \\
    -o UserKnownHostsFile="$LAYERCHECK_NODES_DIR/run/known_hosts" -o StrictHostKeyChecking=yes \\
    -i "$LAYERCHECK_NODES_DIR/ssh/id_ed25519" ansible@{} sudo -n true
SH

# tool_line NAME WALL CPU RSS CHARGED NODECPU: one tool's figures at $n hosts.
tool_line() {
  printf '  %-29s wall %7.2f s  cpu %7.2f s  peak RSS %6.1f MiB  charged %7.1f MiB  %5.1f ms/host  node machines cpu %6.2f s\n' \
    "$1" "$2" "$3" "$4" "$5" "$(awk -v w="$2" -v n="$n" 'BEGIN {print w * 1000 / n}')" "$6"
}

cat >"$work/compare.py" <<'PY'
"""Compares layercheck verify's JSON report with verify.yml's outcome: per
host and layer, the statuses of node_facts' layercheck_node facts (Ansible's
fact cache); the hosts each failed (layercheck: fail, error, unreachable;
the PLAY RECAP: failed or unreachable); both must fail exactly `broken`."""
import json, os, re, sys

lc_json, recap_out, facts_dir, broken, hosts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
rep = json.load(open(lc_json))
ours = {h["host"]: h for h in rep["hosts"]}
theirs = {}
for name in os.listdir(facts_dir):
    facts = json.load(open(os.path.join(facts_dir, name)))
    if isinstance(facts.get("__payload__"), str):
        facts = json.loads(facts["__payload__"])
    if "layercheck_node" not in facts:
        continue
    # ansible-core 2.19 names a cache file with its schema's prefix (s1_)
    host = name if name in ours else re.sub(r"^s\d+_", "", name)
    theirs[host] = facts["layercheck_node"]
recap = {}
for line in open(recap_out):
    m = re.match(r"^(\S+)\s+:\s+ok=\d+\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)", line)
    if m:
        recap[m.group(1)] = int(m.group(2)) + int(m.group(3)) > 0

def verdict(r):
    return (r.get("status"), {k: v.get("status") for k, v in (r.get("layers") or {}).items()})

diffs = []
for h in sorted(set(ours) | set(theirs), key=lambda s: (len(s), s)):
    a = verdict(ours[h]["report"]) if h in ours and ours[h].get("report") else (ours.get(h, {}).get("status"), {})
    b = verdict(theirs[h]) if h in theirs else (None, {})
    if a != b:
        diffs.append("%s: layercheck %s, verify.yml %s" % (h, a, b))
failed_ours = sorted(h for h, r in ours.items() if r["status"] in ("fail", "error", "unreachable"))
failed_theirs = sorted(h for h, f in recap.items() if f)
if len(ours) != hosts or len(recap) != hosts:
    diffs.append("hosts: layercheck reported %d, the PLAY RECAP %d, of %d" % (len(ours), len(recap), hosts))
if failed_ours != failed_theirs:
    diffs.append("failed hosts: layercheck %s, verify.yml %s" % (failed_ours, failed_theirs))
if failed_ours != [broken]:
    diffs.append("layercheck failed %s, not only the broken host %s" % (failed_ours, broken))
durs = [r.get("duration_ms", 0) for r in ours.values()]
print("per-host time inside layercheck (connect + layers): mean %d ms, max %d ms" % (sum(durs) / len(durs), max(durs)))
if diffs:
    print("verdicts DIFFER:")
    for d in diffs:
        print("  " + d)
    sys.exit(1)
print("verdicts identical on %d hosts, per host and per layer (%d facts compared); both fail exactly %s"
      % (hosts, len(theirs), broken))
PY

echo "$(nproc) cores, forks $FORKS; lab $P in $LAYERCHECK_NODES_DIR"
status=0
for n in ${counts//,/ }; do
  ctrl=3
  ((n >= 6)) || ctrl=1
  "$nodes" down >/dev/null 2>&1
  free0=$(free -b | awk '/^Mem:/ {print $3}')
  "$nodes" up "$n" 2>"$work/up.log" || { cat "$work/up.log" >&2; die "nodes.sh up $n failed"; }
  mkdir -p "$work/trees"
  rm -f "$work/lay.failed"
  for ((i = 1; i <= n; i++)); do
    { lay "$n" "$i" || { echo "fleet-real: node$i: could not lay its tree" >&2; touch "$work/lay.failed"; }; } &
    (($(jobs -rp | wc -l) < 8)) || wait -n || true
  done
  wait
  [[ ! -e $work/lay.failed ]] || die "laying the trees failed"
  free1=$(free -b | awk '/^Mem:/ {print $3}')
  read -r mem_use mem_rss < <(node_memory "$n")
  inv=$work/hosts-$n.ini
  inventory "$n" "$inv"
  facts=$work/facts-$n
  rm -rf "$facts"
  pbenv=(env "PATH=$repo/.venv/bin:$PATH" "ANSIBLE_CONFIG=$work/ansible.cfg" "ANSIBLE_COLLECTIONS_PATH=$work/collections"
    "ANSIBLE_LOCAL_TEMP=$work/tmp" ANSIBLE_STDOUT_CALLBACK=default ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0
    ANSIBLE_CACHE_PLUGIN=jsonfile "ANSIBLE_CACHE_PLUGIN_CONNECTION=$facts")
  # Warm-up, untimed: each machine's sshd, sudo, sftp-server and python
  # read from disk once; ansible's connections of the warm-up are closed.
  "$nodes" exec "$cli" verify -i "$inv" --forks "$FORKS" >/dev/null 2>&1 || true
  "$nodes" exec "${pbenv[@]}" ANSIBLE_CACHE_PLUGIN=memory ansible -i "$inv" -f "$FORKS" all -m ping >/dev/null 2>&1 || true
  close_masters
  timed "lc-$n" 1 "$cli" verify -i "$inv" --forks "$FORKS" --format json
  timed "pb-$n" 2 "${pbenv[@]}" ansible-playbook -i "$inv" -f "$FORKS" "$coll/playbooks/verify.yml"
  close_masters
  timed "floor-$n" 0 bash "$work/floor.sh" "$n"
  read -r lw lc lr lg ln < <(figures "lc-$n")
  read -r pw pc pr pg pn < <(figures "pb-$n")
  read -r fw fc _ _ fn < <(figures "floor-$n")
  echo
  echo "hosts=$n ($ctrl control plane + etcd, $((n - ctrl)) worker(s); $BROKEN's ${BROKEN_CERT##*/} expired)"
  echo "  each node machine: ${mem_use} MiB (its memory cgroup: ${mem_rss} MiB RSS, the rest page cache and kernel); used memory (free) +$(((free1 - free0) / n / 1048576)) MiB per machine, other jobs included"
  tool_line "layercheck verify" "$lw" "$lc" "$lr" "$lg" "$ln"
  tool_line "ansible-playbook verify.yml" "$pw" "$pc" "$pr" "$pg" "$pn"
  echo "  ratio verify.yml / layercheck: $(awk -v a="$pw" -v b="$lw" 'BEGIN {printf "%.1fx", a / b}') (wall), $(awk -v a="$pc" -v b="$lc" 'BEGIN {printf "%.1fx", a / b}') (cpu on the controller)"
  printf '  %-29s wall %7.2f s  cpu %7.2f s  node machines cpu %6.2f s (%.0f ms per login)\n' \
    "floor: ssh + sudo -n true" "$fw" "$fc" "$fn" "$(awk -v c="$fn" -v n="$n" 'BEGIN {print c * 1000 / n}')"
  echo "  layercheck / floor: $(awk -v a="$lw" -v b="$fw" 'BEGIN {printf "%.2fx", a / b}') (wall); the most a tool logging in with OpenSSH could be ahead of verify.yml here: $(awk -v a="$pw" -v b="$fw" 'BEGIN {printf "%.1fx", a / b}')"
  "$py" "$work/compare.py" "$work/lc-$n.out" "$work/pb-$n.out" "$facts" "$BROKEN" "$n" | sed 's/^/  /' || status=1
  "$nodes" down >/dev/null 2>&1
done
exit "$status"
