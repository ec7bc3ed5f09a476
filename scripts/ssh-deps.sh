#!/usr/bin/env bash
# Installs what the SSH tests (test/sshverify) and bench/fleet.sh start:
# OpenSSH's sshd and sftp-server (Debian's openssh-server) and sudo (for
# become), and systemd-analyze (Debian's systemd), with which test/monitor
# verifies the monitor role's units (offline: systemd need not run).
# Idempotent: does nothing when they are there. The tests start
# their own sshd servers on loopback ports; the system's ssh service is
# neither configured nor started here.
set -euo pipefail
need=()
[ -x /usr/sbin/sshd ] && [ -x /usr/lib/openssh/sftp-server ] || need+=(openssh-server)
command -v sudo >/dev/null 2>&1 || need+=(sudo)
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "ssh-deps: ${need[*]} missing; install them as root: apt-get update && apt-get install -y ${need[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
echo "ssh-deps: installed ${need[*]}"
