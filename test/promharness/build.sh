#!/usr/bin/env bash
# Builds promtool at the github.com/prometheus/prometheus version this module
# requires into <repo>/.cache/prom/<version>/ (git-ignored) for the alert-rule
# tests (`promtool check rules`, `promtool test rules`). Idempotent: a binary
# that is already there and answers --version is kept.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$here"
version=$(go list -m -f '{{.Version}}' github.com/prometheus/prometheus)
out="$repo/.cache/prom/$version"
bin="$out/promtool"
if [[ -x "$bin" ]] && "$bin" --version 2>/dev/null | grep -q "version $version "; then
  echo "prom-harness: $bin ($version) already built"
  exit 0
fi
mkdir -p "$out"
ldflags="-s -w -X github.com/prometheus/common/version.Version=$version"
echo "prom-harness: building promtool $version into $out (first time: a few minutes)"
CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" -o "$bin.tmp" github.com/prometheus/prometheus/cmd/promtool
mv "$bin.tmp" "$bin"
"$bin" --version
