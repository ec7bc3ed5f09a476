#!/usr/bin/env bash
# Creates one .venv-ansible-<version> per `ansible` version that a bundled
# kubespray release pins in its requirements.txt (kubespray-full/<release>
# next to this checkout), for the differential test that runs each
# release's own inventory asserts under its own ansible
# (lint/assert_tasks_shared_test.go).
# Releases pinning the same ansible share one venv. Nothing to do without
# the kubespray trees (a checkout without them runs no such test).
# usage: scripts/venv-kubespray.sh [KUBESPRAY_FULL_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
full=${1:-../shared/kubespray-full}
[ -d "$full" ] || exit 0
for v in $(sed -n 's/^ansible==\([0-9.]*\).*/\1/p' "$full"/*/requirements.txt | sort -uV); do
  ./scripts/venv-pinned.sh "$v"
done
