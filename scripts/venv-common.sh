# shellcheck shell=bash
# Sourced by scripts/venv*.sh from the checkout's root: pip installs there
# follow scripts/constraints.txt, and constraints_met says whether an
# existing venv still does (a venv made before a constraint is remade).
export PIP_CONSTRAINT="$PWD/scripts/constraints.txt"

# constraints_met VENV_DIR: every package of scripts/constraints.txt the
# venv has is within its constraint, read with the requirement parser pip
# itself carries.
constraints_met() {
  "$1/bin/python" - "$PIP_CONSTRAINT" <<'PY' 2>/dev/null
import importlib.metadata as m, sys
from pip._vendor.packaging.requirements import Requirement
for line in open(sys.argv[1]):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    req = Requirement(line)
    try:
        have = m.version(req.name)
    except m.PackageNotFoundError:
        continue
    if not req.specifier.contains(have, prereleases=True):
        sys.exit(1)
PY
}
