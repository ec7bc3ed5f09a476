#!/usr/bin/env bash
# Creates .venvs/pre-commit with the pre-commit tool (pinned), for the test
# that runs layercheck's hooks (.pre-commit-hooks.yaml) the way an
# inventory repository does: pre-commit clones this repository and builds
# its Go module with `go install ./...`. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
version=4.7.0
dir=.venvs/pre-commit
py=${PYTHON:-python3}
if [ -x "$dir/bin/pre-commit" ] && [ "$("$dir/bin/pre-commit" --version 2>/dev/null)" = "pre-commit $version" ]; then
  exit 0
fi
rm -rf "$dir"
"$py" -m venv "$dir"
"$dir/bin/pip" install --quiet --disable-pip-version-check "pre-commit==$version"
"$dir/bin/pre-commit" --version
