#!/usr/bin/env bash
# Creates .venv-core-<X.Y> with the newest ansible-core X.Y for each series
# given (default: 2.16 2.17, the series kubespray v2.24-v2.30 pin; 2.18 is
# in .venv-ansible-11.13.0 and 2.19 in .venv), for the differential test of
# string booleans (test/boollint). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
for s in "${@:-2.16 2.17}"; do
  for series in $s; do
    dir=.venv-core-$series
    next=${series%.*}.$(( ${series#*.} + 1 ))
    if [ -x "$dir/bin/ansible-playbook" ] && "$dir/bin/python" -c "import ansible.release as r, sys; sys.exit(0 if r.__version__.startswith('$series.') else 1)" 2>/dev/null; then
      continue
    fi
    rm -rf "$dir"
    "$py" -m venv "$dir"
    "$dir/bin/pip" install --quiet --disable-pip-version-check "ansible-core>=$series,<$next"
    "$dir/bin/python" -c 'import ansible.release as r; print("ansible-core", r.__version__)'
  done
done
