#!/usr/bin/env bash
# Builds kube-apiserver at the k8s.io/kubernetes version this module requires
# into <repo>/.cache/kube/<version>/ (git-ignored) for test/clusterverify.
# Idempotent: a binary that is already there and answers --version is kept.
# The first build takes about 7 minutes on 2 cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$here"
version=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
out="$repo/.cache/kube/$version"
bin="$out/kube-apiserver"
if [[ -x "$bin" ]] && "$bin" --version 2>/dev/null | grep -qx "Kubernetes $version"; then
  echo "kube-harness: $bin ($version) already built"
  exit 0
fi
mkdir -p "$out"
major=${version#v}; major=${major%%.*}
minor=${version#v*.}; minor=${minor%%.*}
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitVersion=$version -X k8s.io/client-go/pkg/version.gitMajor=$major -X k8s.io/client-go/pkg/version.gitMinor=$minor"
echo "kube-harness: building kube-apiserver $version into $out (first time: several minutes)"
CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" -o "$bin.tmp" k8s.io/kubernetes/cmd/kube-apiserver
mv "$bin.tmp" "$bin"
"$bin" --version
