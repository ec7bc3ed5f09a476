#!/usr/bin/env bash
# ansible-test sanity on the built collection, without containers: the
# tarball of `make collection` is unpacked into
# .cache/sanity/ansible_collections/layercheck/kubespray (git-ignored; the
# path ansible-test requires) and tested there with ansible-core 2.19's
# ansible-test from .venvs/ansible-test, on this machine's Python 3.11
# (--local). Each sanity test's own virtual environment and pip cache live
# under .cache/ansible-test-home (HOME for ansible-test), so nothing is
# written to the user's ~/.ansible.
#
# ansible-test bootstraps pip into those environments with a get-pip.py it
# downloads from its own file server; here pip's wheel comes from the Python
# package index and scripts/get_pip_from_wheel.py stands in for get-pip.py.
#
# Skipped tests, and why:
#   pslint: PowerShell, which the collection has none of (and pwsh is not
#     installed here).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
python=${PYTHON:-python3.11}
venv=.venvs/ansible-test
if ! { [ -x "$venv/bin/ansible-test" ] && "$venv/bin/python" -c 'import ansible.release as r,sys; sys.exit(0 if r.__version__.startswith("2.19.") else 1)' 2>/dev/null; }; then
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'ansible-core>=2.19,<2.20'
fi
command -v shellcheck >/dev/null || { echo "sanity: shellcheck is not installed (apt-get install shellcheck)" >&2; exit 1; }

home=$repo/.cache/ansible-test-home
cache=$home/.ansible/test/cache
mkdir -p "$cache"
# The pip version ansible-test puts into its environments.
pipv=$("$venv/bin/python" -c 'from ansible_test._internal.python_requirements import get_venv_packages
class P: version = "3.11"
print(get_venv_packages(P)["pip"])')
if ! ls "$cache"/pip-"$pipv"-py3-none-any.whl >/dev/null 2>&1; then
  "$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --only-binary=:all: -d "$cache" "pip==$pipv"
fi
cp scripts/get_pip_from_wheel.py "$cache/get_pip_${pipv//./_}.py"

version=$(awk '/^version:/ {print $2}' galaxy.yml)
tarball=$repo/layercheck-kubespray-$version.tar.gz
[ -f "$tarball" ] || { echo "sanity: $tarball missing: run make collection" >&2; exit 1; }
dest=.cache/sanity/ansible_collections/layercheck/kubespray
rm -rf .cache/sanity
mkdir -p "$dest"
tar xzf "$tarball" -C "$dest"
cd "$dest"
# ANSIBLE_TEST_CONTENT_ROOT: the collection is its own content root, listed
# from the file system; without it ansible-test walks up to this checkout's
# git repository, where .cache/ is ignored, and finds no file to test.
ANSIBLE_TEST_CONTENT_ROOT=$PWD HOME=$home PIP_DISABLE_PIP_VERSION_CHECK=1 "$repo/$venv/bin/ansible-test" sanity --local --python 3.11 --requirements \
  --skip-test pslint "$@"
