# Sourced by scripts/venv*.sh from the checkout's root: pip installs there
# follow scripts/constraints.txt, and constraints_met says whether an
# existing venv still does (a venv made before a constraint is remade).
export PIP_CONSTRAINT="$PWD/scripts/constraints.txt"

# constraints_met VENV_DIR: the venv's cryptography, when it has one, is
# within scripts/constraints.txt.
constraints_met() {
  "$1/bin/python" -c "import importlib.metadata as m, sys
try:
    v = m.version('cryptography')
except m.PackageNotFoundError:
    sys.exit(0)
sys.exit(0 if int(v.split('.')[0]) < 51 else 1)" 2>/dev/null
}
