#!/usr/bin/env bash
# Creates .venv-core-<X.Y> with the newest ansible-core X.Y for each series
# given (default: 2.16 2.17 2.20: the series kubespray v2.24-v2.30 pin, and
# the one after kubespray v2.32's 2.19; 2.18 is in .venv-ansible-11.13.0 and
# 2.19 in .venv), for the differential test of string booleans
# (test/boollint) and the collection tests. Idempotent.
#
# ansible-core 2.20 needs Python >= 3.12: its venv is made with the first
# working python3.14, python3.13 or python3.12 on PATH, else the newest
# pyenv Python 3.12 or later ($(pyenv root)/versions, then
# /root/.pyenv/versions); PYTHON312 names one explicitly. When there is
# none the script fails: the test matrix needs every series.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv-common.sh
py=${PYTHON:-python3}

# python_at_least MAJOR.MINOR: prints the first Python found that runs and
# is at least that version, or fails.
python_at_least() {
  local want=$1 c root
  local -a cands=()
  [ -n "${PYTHON312:-}" ] && cands+=("$PYTHON312")
  cands+=(python3.14 python3.13 python3.12)
  for root in "$(pyenv root 2>/dev/null || true)" /root/.pyenv; do
    if [ -z "$root" ] || [ ! -d "$root/versions" ]; then continue; fi
    # newest first; the version check below drops those before $want
    while IFS= read -r c; do cands+=("$c/bin/python3"); done < <(
      for d in "$root"/versions/3.*; do [ -d "$d" ] && printf '%s\n' "$d"; done | sort -rV)
  done
  for c in "${cands[@]}"; do
    # pyenv shims exist for versions that are not active and exit 127.
    if "$c" -c "import sys, venv; sys.exit(0 if sys.version_info[:2] >= tuple(map(int, '$want'.split('.'))) else 1)" >/dev/null 2>&1; then
      command -v "$c" 2>/dev/null || echo "$c"
      return 0
    fi
  done
  return 1
}

for s in "${@:-2.16 2.17 2.20}"; do
  for series in $s; do
    dir=.venv-core-$series
    next=${series%.*}.$(( ${series#*.} + 1 ))
    if [ -x "$dir/bin/ansible-playbook" ] && "$dir/bin/python" -c "import ansible.release as r, sys; sys.exit(0 if r.__version__.startswith('$series.') else 1)" 2>/dev/null && constraints_met "$dir"; then
      continue
    fi
    p=$py
    if [ "$series" = 2.20 ] || [ "${series#2.}" -gt 20 ] 2>/dev/null; then
      if ! p=$(python_at_least 3.12); then
        echo "venv-series.sh: ansible-core $series needs Python >= 3.12, and none was found" >&2
        echo "  (tried python3.14, python3.13, python3.12 on PATH and the Pythons in \$(pyenv root)/versions;" >&2
        echo "   install one, e.g. 'pyenv install 3.12', or name it with PYTHON312=/path/to/python3.12)" >&2
        exit 1
      fi
    fi
    rm -rf "$dir"
    "$p" -m venv "$dir"
    "$dir/bin/pip" install --quiet --disable-pip-version-check "ansible-core>=$series,<$next"
    "$dir/bin/python" -c 'import ansible.release as r, sys; print("ansible-core", r.__version__, "(Python %d.%d)" % sys.version_info[:2])'
  done
done
