#!/usr/bin/env bash
# Creates .venv with ansible-core 2.19.x (what kubespray v2.32 requires) for
# the tests. Idempotent: does nothing when the right version is there.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv-common.sh
want='ansible-core>=2.19,<2.20'
py=${PYTHON:-python3}
if [ -x .venv/bin/ansible-playbook ] && .venv/bin/python -c 'import ansible.release as r,sys; sys.exit(0 if r.__version__.startswith("2.19.") else 1)' 2>/dev/null && constraints_met .venv; then
  exit 0
fi
"$py" -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check "$want"
# Print the version without a pipe: `ansible --version | head -n 1` dies of
# SIGPIPE now and then, and pipefail would fail the whole install.
.venv/bin/python -c 'import ansible.release as r; print("ansible-core", r.__version__)'
