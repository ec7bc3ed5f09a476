#!/usr/bin/env bash
# Creates .venv-ansible-<version> with the `ansible` package a kubespray
# release pins in its requirements.txt, for the tests that run the
# collection under that release's ansible-core (ansible 11.13.0 is
# kubespray v2.31.0's pin: ansible-core 2.18). Idempotent.
# usage: scripts/venv-pinned.sh [ANSIBLE_VERSION]   (default 11.13.0)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv-common.sh
version=${1:-11.13.0}
dir=.venv-ansible-$version
py=${PYTHON:-python3}
if [ -x "$dir/bin/ansible-playbook" ] && "$dir/bin/python" -c "import importlib.metadata as m, sys; sys.exit(0 if m.version('ansible') == '$version' and m.version('netaddr') == '1.3.0' else 1)" 2>/dev/null && constraints_met "$dir"; then
  exit 0
fi
rm -rf "$dir"
"$py" -m venv "$dir"
# netaddr and jmespath as kubespray v2.31.0's requirements.txt pins them:
# its playbooks/ansible_version.yml checks for ansible.utils.ipaddr.
"$dir/bin/pip" install --quiet --disable-pip-version-check "ansible==$version" netaddr==1.3.0 jmespath==1.1.0
"$dir/bin/python" -c 'import ansible.release as r, importlib.metadata as m; print("ansible", m.version("ansible"), "(ansible-core", r.__version__ + ")")'
