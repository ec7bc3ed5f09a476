#!/usr/bin/env bash
# Node machines for the end-to-end tests: Debian bookworm systemd-nspawn
# containers, each in a network namespace of its own on a bridge that lives
# in a lab network namespace this script creates. Nothing listens on, or is
# routed to, the host's own network: the controller reaches the nodes by
# running inside the lab namespace (`nodes.sh exec CMD...`).
#
#   nodes.sh up [N]    build the root filesystem once (cached), boot N nodes
#                      (default 3), wait for sshd, write the inventory
#   nodes.sh down      power every node off through its own systemd, remove
#                      the namespaces, mounts and cgroups
#   nodes.sh status    one line per node
#   nodes.sh exec CMD  run CMD inside the lab namespace (where the nodes are)
#   nodes.sh ssh NODE [CMD]  ssh to a node as the harness user
#   nodes.sh nodelocaldns  on each running node, what kubespray's nodelocaldns
#                      needs of a kernel without the dummy link type or
#                      /proc/modules (see nodelocaldns_standin)
#   nodes.sh rootfs    only build (or check) the cached root filesystem
#
# Up and down are idempotent; an `up` that fails tears down what it started.
# Everything is kept under $LAYERCHECK_NODES_DIR (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/layercheck/nodes): rootfs/ (the base,
# rebuilt when its recipe changes), ssh/ (the harness key), run/ (per-node
# overlays, console logs, inventory). Needs root, debootstrap and
# systemd-container (installed with apt-get when missing).
set -euo pipefail

DIR=${LAYERCHECK_NODES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/layercheck/nodes}
RUN=$DIR/run
SUITE=bookworm
MIRROR=${LAYERCHECK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# The prefix of the network namespaces and cgroups the harness owns
# (LAYERCHECK_NODES_NETNS, default lc), so two labs can run side by side
# with different LAYERCHECK_NODES_DIR.
P=${LAYERCHECK_NODES_NETNS:-lc}
LAB=$P-lab
BRIDGE=lcbr0
# TEST-NET-1 (RFC 5737): documentation addresses, never routed anywhere;
# here they exist only inside the lab namespace.
NET=192.0.2
GATEWAY=$NET.1
# Not "kube" or "etcd": kubespray's adduser role makes those system users
# with shell /sbin/nologin, which locks an operator who logs in as one out.
USER_NAME=ansible

# debootstrap's own resolver installs these (the issue's measured set) ...
BASE_PKGS=systemd,systemd-sysv,dbus,openssh-server,python3,sudo,iproute2
# ... and apt installs the rest, which resolves virtual packages: what
# kubespray's system_packages role installs on Debian 12 (roles/system_packages/
# vars/main.yml), so that its package task finds them present with no
# network, plus kmod for modprobe, and python3-yaml, which kubespray's
# kubernetes-apps/helm role installs with apt.
EXTRA_PKGS="python3-apt kmod apparmor apt-transport-https bash-completion conntrack curl
 e2fsprogs ebtables gnupg ipset iptables iputils-ping libseccomp2 mergerfs openssl rsync
 socat software-properties-common tar unzip xfsprogs ipvsadm nftables ca-certificates
 dnsutils procps less python3-yaml"
RECIPE="v3 $USER_NAME $SUITE $BASE_PKGS $EXTRA_PKGS"

log() { echo "nodes: $*" >&2; }
die() { echo "nodes: $*" >&2; exit 1; }

need() {
  local missing=()
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  command -v systemd-nspawn >/dev/null || missing+=(systemd-container)
  command -v ssh >/dev/null || missing+=(openssh-client)
  if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  [[ $(id -u) == 0 ]] || die "needs root (network namespaces, mounts, systemd-nspawn)"
}

# nspawn without a host systemd: no machined registration, no scope unit.
nspawn_run() { systemd-nspawn -q --register=no --keep-unit "$@"; }

rootfs() {
  local base=$DIR/rootfs
  if [[ -f $DIR/rootfs.recipe && $(cat "$DIR/rootfs.recipe") == "$RECIPE" ]]; then
    return 0
  fi
  need
  log "building the $SUITE root filesystem into $base (once; about 2 minutes)"
  rm -rf "$base.tmp" "$DIR/rootfs.recipe"
  mkdir -p "$DIR"
  debootstrap --include="$BASE_PKGS" "$SUITE" "$base.tmp" "$MIRROR" >"$DIR/debootstrap.log" 2>&1 ||
    die "debootstrap failed; see $DIR/debootstrap.log"
  # shellcheck disable=SC2086
  nspawn_run -D "$base.tmp" --pipe -E DEBIAN_FRONTEND=noninteractive -- sh -ec "
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $(echo $EXTRA_PKGS) >/dev/null
    apt-get clean
    useradd -m -s /bin/bash $USER_NAME
    echo '$USER_NAME ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/$USER_NAME
    chmod 0440 /etc/sudoers.d/$USER_NAME
    systemctl mask getty@tty1.service serial-getty@console.service console-getty.service >/dev/null 2>&1 || true
  " >>"$DIR/debootstrap.log" 2>&1 || die "installing packages into the root failed; see $DIR/debootstrap.log"
  # Per-node identity is made at boot time: host keys, machine-id, hostname.
  rm -f "$base.tmp"/etc/ssh/ssh_host_*
  : >"$base.tmp/etc/machine-id"
  rm -rf "$base"
  mv "$base.tmp" "$base"
  echo "$RECIPE" >"$DIR/rootfs.recipe"
}

node_names() { local i; for ((i = 1; i <= $1; i++)); do echo "node$i"; done; }
node_ip() { echo "$NET.$((10 + ${1#node}))"; }
# Every node with a run directory, running or not; and those whose init runs.
node_dirs() { ls "$RUN" 2>/dev/null | grep -E '^node[0-9]+$' || true; }
running_nodes() {
  local n
  for n in $(node_dirs); do node_init "$n" >/dev/null && echo "$n"; done
  return 0
}

# The cgroup v1 hierarchies nspawn uses for the container's systemd: one
# directory per node, so that nodes never share /payload.
cg_dirs() {
  echo "/sys/fs/cgroup/systemd/$P-$1"
  [[ -d /sys/fs/cgroup/unified ]] && echo "/sys/fs/cgroup/unified/$P-$1"
  cg_ctrl_dirs "$1" | cut -d' ' -f2
}

# One directory per node in every controller hierarchy (cpu, memory, ...),
# under the cgroup this script runs in: "<mountpoint> <dir>" per line. The
# node's processes start there, so its cgroup namespace is rooted there, and
# kubelet and runc inside the node create kubepods/ in the node's own
# directory: three kubelets never see (or clean up) each other's pods.
cg_ctrl_dirs() {
  local id ctrls path mnt
  while IFS=: read -r id ctrls path; do
    [[ -n $ctrls && $ctrls != name=* ]] || continue
    mnt=/sys/fs/cgroup/$ctrls
    [[ -d $mnt ]] || continue
    echo "$mnt ${mnt}${path%/}/$P-$1"
  done </proc/self/cgroup
}

# A new cpuset cgroup has no CPUs or memory nodes until given its parent's.
cg_ctrl_make() {
  local mnt dir f
  while read -r mnt dir; do
    mkdir -p "$dir"
    for f in cpuset.cpus cpuset.mems; do
      if [[ -f $dir/$f && -z $(cat "$dir/$f") ]]; then cat "$(dirname "$dir")/$f" >"$dir/$f"; fi
    done
  done < <(cg_ctrl_dirs "$1")
}

# nspawn mounts the controller hierarchies read-only inside the node; kubelet
# (cgroup v1) needs them writable. Each is remounted read-write in the
# node's mount namespace, where its root is the node's own directory.
cg_ctrl_writable() {
  local init=$1 m
  for m in $(awk '$3 == "cgroup" {print $2}' "/proc/$init/mounts"); do
    [[ $m == /sys/fs/cgroup/systemd ]] && continue
    nsenter -t "$init" -m -- mount -o remount,bind,rw "$m" 2>/dev/null || true
  done
  nsenter -t "$init" -m -- mount -o remount,rw /sys/fs/cgroup 2>/dev/null || true
}

# modules.builtin for the running kernel, from its config: modprobe (and
# Ansible's community.general.modprobe) succeed for a built-in module only
# when this file lists it, and these machines have no /lib/modules.
# A kernel built without loadable-module support (CONFIG_MODULES unset) has
# no /proc/modules, which community.general.modprobe reads first and fails
# without. There br_netfilter is left out: kubespray's kubernetes/node role
# modprobes it only when modinfo finds it, and otherwise takes its path for
# a br_netfilter that is not a module (it sets net.bridge.bridge-nf-call-*).
modules_builtin() {
  local cfg
  cfg=$(zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)" 2>/dev/null || true)
  while read -r sym path; do
    if [[ $sym == BRIDGE_NETFILTER && ! -e /proc/modules ]]; then continue; fi
    grep -qx "CONFIG_$sym=y" <<<"$cfg" && echo "$path"
  done <<'TABLE'
OVERLAY_FS kernel/fs/overlayfs/overlay.ko
BRIDGE kernel/net/bridge/bridge.ko
BRIDGE_NETFILTER kernel/net/bridge/br_netfilter.ko
VXLAN kernel/drivers/net/vxlan/vxlan.ko
VETH kernel/drivers/net/veth.ko
DUMMY kernel/drivers/net/dummy.ko
NF_CONNTRACK kernel/net/netfilter/nf_conntrack.ko
NF_NAT kernel/net/netfilter/nf_nat.ko
NF_TABLES kernel/net/netfilter/nf_tables.ko
IP_SET kernel/net/netfilter/ipset/ip_set.ko
IP_VS kernel/net/netfilter/ipvs/ip_vs.ko
IP_VS_RR kernel/net/netfilter/ipvs/ip_vs_rr.ko
IP_VS_WRR kernel/net/netfilter/ipvs/ip_vs_wrr.ko
IP_VS_SH kernel/net/netfilter/ipvs/ip_vs_sh.ko
NET_IPIP kernel/net/ipv4/ipip.ko
IP_NF_IPTABLES kernel/net/ipv4/netfilter/ip_tables.ko
IP6_NF_IPTABLES kernel/net/ipv6/netfilter/ip6_tables.ko
NETFILTER_XT_MATCH_COMMENT kernel/net/netfilter/xt_comment.ko
NETFILTER_XT_MATCH_CONNTRACK kernel/net/netfilter/xt_conntrack.ko
NETFILTER_XT_SET kernel/net/netfilter/xt_set.ko
TUN kernel/drivers/net/tun.ko
MACVLAN kernel/drivers/net/macvlan.ko
TABLE
}

lab_up() {
  ip netns list | grep -qw "^$LAB" || ip netns add "$LAB"
  ip -n "$LAB" link set lo up
  if ! ip -n "$LAB" link show "$BRIDGE" >/dev/null 2>&1; then
    ip -n "$LAB" link add "$BRIDGE" type bridge
    ip -n "$LAB" addr add "$GATEWAY/24" dev "$BRIDGE"
  fi
  ip -n "$LAB" link set "$BRIDGE" up
}

# The init (PID 1) of a node's container: the child of its nspawn.
node_init() {
  local pid
  pid=$(cat "$RUN/$1/nspawn.pid" 2>/dev/null) || return 1
  [[ -d /proc/$pid ]] || return 1
  pgrep -P "$pid" | head -n1
}

node_boot() {
  local n=$1 d=$RUN/$1 ip
  ip=$(node_ip "$n")
  if node_init "$n" >/dev/null; then return 0; fi
  mkdir -p "$d/upper" "$d/work" "$d/root"
  mountpoint -q "$d/root" ||
    mount -t overlay overlay -o "lowerdir=$DIR/rootfs,upperdir=$d/upper,workdir=$d/work" "$d/root"
  local r=$d/root
  echo "$n" >"$r/etc/hostname"
  [[ -s $r/etc/machine-id ]] || tr -d - </proc/sys/kernel/random/uuid >"$r/etc/machine-id"
  ls "$r"/etc/ssh/ssh_host_ed25519_key >/dev/null 2>&1 || ssh-keygen -q -A -f "$r" >/dev/null
  install -d -m 0700 -o 1000 -g 1000 "$r/home/$USER_NAME/.ssh"
  install -m 0600 -o 1000 -g 1000 "$DIR/ssh/id_ed25519.pub" "$r/home/$USER_NAME/.ssh/authorized_keys"
  mkdir -p "$r/lib/modules/$(uname -r)"
  modules_builtin >"$r/lib/modules/$(uname -r)/modules.builtin"
  chroot "$r" depmod "$(uname -r)" 2>/dev/null
  printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' "$n" >"$r/etc/hosts"
  # No upstream DNS reaches the lab: the lab gateway is the only resolver.
  rm -f "$r/etc/resolv.conf"; echo "nameserver $GATEWAY" >"$r/etc/resolv.conf"
  # apt's cache counts as fresh (kubespray's package task updates it only
  # when older than a day, and these machines have no route to a mirror).
  mkdir -p "$r/var/lib/apt/periodic"; touch "$r/var/lib/apt/periodic/update-success-stamp" "$r"/var/lib/apt/lists/*Packages 2>/dev/null || true

  ip netns list | grep -qw "^$P-$n" || ip netns add "$P-$n"
  if ! ip -n "$LAB" link show "lc$n" >/dev/null 2>&1; then
    ip -n "$LAB" link add "lc$n" type veth peer name eth0 netns "$P-$n"
    ip -n "$LAB" link set "lc$n" master "$BRIDGE" up
    ip -n "$P-$n" addr add "$ip/24" dev eth0
    ip -n "$P-$n" link set eth0 up
    ip -n "$P-$n" link set lo up
    ip -n "$P-$n" route add default via "$GATEWAY"
  fi

  local cg
  for cg in $(cg_dirs "$n"); do mkdir -p "$cg"; done
  cg_ctrl_make "$n"
  # containerd's overlayfs snapshotter cannot put its layers on the node's
  # own overlay root: its state lives on the host's filesystem.
  mkdir -p "$d/containerd"
  # SYSTEMD_NSPAWN_API_VFS_WRITABLE lets kubespray (and later kubelet) set
  # sysctls; keyctl (@keyring) is what runc needs; /dev/kmsg is kubelet's.
  (
    for cg in $(cg_dirs "$n"); do echo "$BASHPID" >"$cg/cgroup.procs"; done
    export SYSTEMD_NSPAWN_API_VFS_WRITABLE=1
    exec setsid systemd-nspawn -q --boot --register=no --keep-unit -M "$n" -D "$r" \
      --network-namespace-path="/run/netns/$P-$n" --capability=all \
      --system-call-filter='@keyring bpf' --bind=/dev/kmsg \
      --bind="$d/containerd:/var/lib/containerd" \
      ${LAYERCHECK_NODES_NSPAWN_ARGS:-} \
      >"$d/console.log" 2>&1 </dev/null
  ) &
  echo $! >"$d/nspawn.pid"
}

wait_ssh() {
  local n=$1 ip i
  ip=$(node_ip "$n")
  for ((i = 0; i < 120; i++)); do
    if ip netns exec "$LAB" ssh -F none -i "$DIR/ssh/id_ed25519" -o BatchMode=yes -o ConnectTimeout=2 \
      -o UserKnownHostsFile="$RUN/known_hosts" -o StrictHostKeyChecking=yes \
      "$USER_NAME@$ip" 'systemctl is-system-running --wait >/dev/null 2>&1; sudo -n true' >/dev/null 2>&1; then
      return 0
    fi
    [[ -d /proc/$(cat "$RUN/$n/nspawn.pid") ]] || die "$n: systemd-nspawn exited; see $RUN/$n/console.log"
    sleep 0.5
  done
  die "$n: no ssh on $ip after 60 s; see $RUN/$n/console.log"
}

write_inventory() {
  local n ip
  : >"$RUN/known_hosts"
  install -d -m 0700 "$RUN/cp"
  {
    echo "# Written by test/nodes/nodes.sh: the node machines and how to reach them."
    echo "[all]"
    for n in "$@"; do
      ip=$(node_ip "$n")
      echo "$n ansible_host=$ip ip=$ip access_ip=$ip"
      echo "$ip $(cut -d' ' -f1,2 "$RUN/$n/root/etc/ssh/ssh_host_ed25519_key.pub")" >>"$RUN/known_hosts"
    done
    echo
    echo "[all:vars]"
    echo "ansible_user=$USER_NAME"
    echo "ansible_become=true"
    echo "ansible_python_interpreter=/usr/bin/python3"
    echo "ansible_ssh_private_key_file=$DIR/ssh/id_ed25519"
    # ControlPath in the lab's own directory: Ansible's default (~/.ansible/cp,
    # named from host, port and user) is the same for every lab, so a second
    # lab's run would reuse the first lab's open connections and run its
    # tasks on the other lab's machines.
    echo "ansible_ssh_common_args='-F none -o UserKnownHostsFile=$RUN/known_hosts -o StrictHostKeyChecking=yes -o ControlPath=$RUN/cp/%C'"
  } >"$RUN/hosts.ini"
}

up() {
  local count=${1:-3} n
  need
  rootfs
  mkdir -p "$DIR/ssh" "$RUN"
  [[ -f $DIR/ssh/id_ed25519 ]] || ssh-keygen -q -t ed25519 -N '' -C layercheck-nodes -f "$DIR/ssh/id_ed25519"
  trap 'log "up failed; tearing down"; down' ERR
  lab_up
  local names
  mapfile -t names < <(node_names "$count")
  for n in "${names[@]}"; do node_boot "$n"; done
  write_inventory "${names[@]}"
  for n in "${names[@]}"; do wait_ssh "$n"; cg_ctrl_writable "$(node_init "$n")"; done
  trap - ERR
  log "up: ${names[*]} on $NET.0/24 (lab namespace $LAB); inventory $RUN/hosts.ini"
}

# What kubespray's nodelocaldns (enable_nodelocaldns, its default) needs of
# a kernel it was not made for, given to each running node; idempotent.
#   - Without the dummy link type (CONFIG_DUMMY unset): node-cache (k8s.io/dns
#     pkg/netif EnsureDummyDevice) puts nodelocaldns_ip on a link named
#     nodelocaldns and makes that link, of type dummy, only when there is
#     none of that name. The node gets a bridge of that name, which
#     node-cache takes as it finds it (it only adds its address). node-cache
#     deletes the link when it exits (TeardownNetworking; kubespray passes
#     -skipteardown only with enable_nodelocaldns_secondary) and could not
#     make it again here, so the unit layercheck-nodelocaldns-link.service
#     puts it back, without an address, within a second. kubespray's
#     preinstall checks the dummy module the link stands in for ("Check
#     dummy module": modprobe dummy numdummies=0): /etc/modprobe.d
#     installs it as /bin/true.
#   - Without /proc/modules (no loadable-module support): Ansible's
#     community.general.modprobe reads it before it runs modprobe and fails
#     without it; Python on the node reads it as empty, as such a kernel has
#     no module loaded.
nodelocaldns_standin() {
  local n r py d i names
  need
  mapfile -t names < <(running_nodes)
  ((${#names[@]})) || die "no node is running (nodes.sh up first)"
  local dummy=true
  # The kernel's link types, tried in the lab namespace.
  if ip -n "$LAB" link add lcdummytry type dummy 2>/dev/null; then
    ip -n "$LAB" link del lcdummytry
  else
    dummy=false
  fi
  for n in "${names[@]}"; do
    r=$RUN/$n/root
    if [[ ! -e /proc/modules ]]; then
      py=
      for d in "$r"/usr/lib/python3.[0-9]*; do [[ -d $d ]] && py=${d##*/}; done
      [[ -n $py ]] || die "$n: no Python 3 under /usr/lib"
      mkdir -p "$r/usr/local/lib/$py/dist-packages"
      cat >"$r/usr/local/lib/$py/dist-packages/layercheck_proc_modules.py" <<'PY'
"""Written by test/nodes/nodes.sh: this kernel has no loadable-module support
and so no /proc/modules, which Ansible's community.general.modprobe reads
before it runs modprobe, and fails without. Here it reads as empty: no
module is loaded."""
import builtins
import os

if not os.path.exists("/proc/modules"):
    _open = builtins.open

    def _open_proc_modules(file, *args, **kwargs):
        if file == "/proc/modules":
            return _open(os.devnull, *args, **kwargs)
        return _open(file, *args, **kwargs)

    builtins.open = _open_proc_modules
PY
      echo "import layercheck_proc_modules" >"$r/usr/local/lib/$py/dist-packages/layercheck_proc_modules.pth"
    fi
    $dummy && continue
    mkdir -p "$r/etc/modprobe.d"
    printf '%s\n' "# Written by test/nodes/nodes.sh: a bridge named nodelocaldns stands in for the dummy link node-cache makes (no dummy link type in this kernel)." \
      "install dummy /bin/true" >"$r/etc/modprobe.d/layercheck-nodelocaldns.conf"
    cat >"$r/etc/systemd/system/layercheck-nodelocaldns-link.service" <<'UNIT'
# Written by test/nodes/nodes.sh: this kernel has no dummy link type, so
# node-cache (kubespray's nodelocaldns) cannot make the link it puts its
# address on; it takes one of that name as it finds it, and deletes it when
# it exits.
[Unit]
Description=A link named nodelocaldns for node-cache (no dummy link type in this kernel)

[Service]
ExecStart=/bin/sh -c 'while :; do ip link show nodelocaldns >/dev/null 2>&1 || ip link add nodelocaldns type bridge; sleep 1; done'

[Install]
WantedBy=multi-user.target
UNIT
    ip netns exec "$LAB" ssh -F none -i "$DIR/ssh/id_ed25519" -o BatchMode=yes -o ConnectTimeout=5 \
      -o UserKnownHostsFile="$RUN/known_hosts" -o StrictHostKeyChecking=yes "$USER_NAME@$(node_ip "$n")" \
      'sudo -n systemctl daemon-reload && sudo -n systemctl enable --now layercheck-nodelocaldns-link.service' >/dev/null ||
      die "$n: could not start layercheck-nodelocaldns-link.service"
  done
  if $dummy; then
    log "nodelocaldns: this kernel makes dummy links, node-cache makes its own"
    return 0
  fi
  for n in "${names[@]}"; do
    for ((i = 0; i < 20; i++)); do
      ip -n "$P-$n" link show nodelocaldns >/dev/null 2>&1 && break
      sleep 0.5
    done
    ip -n "$P-$n" link show nodelocaldns >/dev/null 2>&1 || die "$n: no link nodelocaldns 10 s after its unit started"
  done
  log "nodelocaldns: a bridge named nodelocaldns on ${names[*]}, kept by layercheck-nodelocaldns-link.service"
}

node_down() {
  local n=$1 d=$RUN/$1 init pid i cg
  pid=$(cat "$d/nspawn.pid" 2>/dev/null || true)
  if init=$(node_init "$n"); then
    # SIGRTMIN+4: systemd's poweroff; nspawn exits when the init does.
    kill -s RTMIN+4 "$init" 2>/dev/null || true
    for ((i = 0; i < 60; i++)); do [[ -d /proc/$pid ]] || break; sleep 0.5; done
    if [[ -d /proc/$pid ]]; then
      log "$n: still running after 30 s; killing its processes"
      for cg in $(cg_dirs "$n"); do
        find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -9 2>/dev/null || true
      done
      kill -9 "$pid" 2>/dev/null || true
      sleep 1
    fi
  fi
  mountpoint -q "$d/root" 2>/dev/null && { umount "$d/root" 2>/dev/null || umount -l "$d/root"; }
  for cg in $(cg_dirs "$n"); do
    [[ -d $cg ]] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  ip netns list | grep -qw "^$P-$n" && ip netns del "$P-$n"
  rm -rf "$d"
}

down() {
  local n
  for n in $(node_dirs); do node_down "$n"; done
  # nodes whose run directory was lost still have their namespace
  for n in $(ip netns list | awk '{print $1}' | grep -E "^$P-node[0-9]+\$" | sed "s/^$P-//"); do node_down "$n"; done
  ip netns list | grep -qw "^$LAB" && ip netns del "$LAB"
  rm -rf "$RUN/hosts.ini" "$RUN/known_hosts" "$RUN/cp"
  return 0
}

status() {
  local n
  for n in $(node_dirs); do
    if node_init "$n" >/dev/null; then echo "$n $(node_ip "$n") running"; else echo "$n $(node_ip "$n") stopped"; fi
  done
}

cmd=${1:-}
shift || true
case "$cmd" in
  up) up "$@" ;;
  down) down ;;
  status) status ;;
  rootfs) need; rootfs ;;
  exec) exec ip netns exec "$LAB" "$@" ;;
  ssh)
    n=$1; shift
    exec ip netns exec "$LAB" ssh -F none -i "$DIR/ssh/id_ed25519" -o BatchMode=yes \
      -o UserKnownHostsFile="$RUN/known_hosts" -o StrictHostKeyChecking=yes "$USER_NAME@$(node_ip "$n")" "$@" ;;
  inventory) echo "$RUN/hosts.ini" ;;
  nodelocaldns) nodelocaldns_standin ;;
  *) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
