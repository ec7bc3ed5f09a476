#!/usr/bin/env bash
# Builds, from Go modules, what kubespray downloads, at the versions a
# release pins, into a files_repo tree laid out as kubespray's offline
# variables expect ({{ files_repo }}/github.com/etcd-io/etcd/releases/...),
# cached under $LAYERCHECK_E2E_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/layercheck/e2e).
# An artefact already built is kept.
#
#   artefacts.sh etcd VERSION    etcd, etcdctl and etcdutl as etcd's release tarball
#
# Prints the tarball's path and its sha256 (what the inventory's
# etcd_binary_checksum is set to).
set -euo pipefail
DIR=${LAYERCHECK_E2E_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/layercheck/e2e}
FILES=$DIR/files
ARCH=${ARCH:-amd64}
GO=${GO:-go}

# A throwaway module that requires the given modules: building a main
# package of a dependency ignores that dependency's own replace directives,
# which `go install pkg@version` refuses.
build_mains() { # outdir module@version... -- pkg=name...
  local out=$1; shift
  local mods=() pkgs=()
  while [[ $1 != -- ]]; do mods+=("$1"); shift; done
  shift
  pkgs=("$@")
  local tmp
  tmp=$(mktemp -d)
  (
    cd "$tmp"
    $GO mod init layercheck.invalid/artefacts >/dev/null 2>&1
    $GO get "${mods[@]}" >/dev/null 2>&1 || $GO get "${mods[@]}"
    for p in "${pkgs[@]}"; do
      CGO_ENABLED=0 GOOS=linux GOARCH=$ARCH $GO build -trimpath -ldflags='-s -w' -o "$out/${p#*=}" "${p%%=*}"
    done
  )
  rm -rf "$tmp"
}

etcd() {
  local v=${1#v}
  local name=etcd-v$v-linux-$ARCH
  local dest=$FILES/github.com/etcd-io/etcd/releases/download/v$v
  local tgz=$dest/$name.tar.gz
  if [[ ! -s $tgz ]]; then
    echo "artefacts: building etcd $v from go.etcd.io/etcd (a few minutes)" >&2
    local stage
    stage=$(mktemp -d)
    mkdir -p "$stage/$name" "$dest"
    build_mains "$stage/$name" go.etcd.io/etcd/server/v3@v$v go.etcd.io/etcd/etcdctl/v3@v$v go.etcd.io/etcd/etcdutl/v3@v$v -- \
      go.etcd.io/etcd/server/v3=etcd go.etcd.io/etcd/etcdctl/v3=etcdctl go.etcd.io/etcd/etcdutl/v3=etcdutl
    "$stage/$name/etcd" --version | grep -q "etcd Version: $v" || { echo "artefacts: built etcd is not $v" >&2; exit 1; }
    tar -C "$stage" --owner=0 --group=0 -czf "$tgz.tmp" "$name"
    mv "$tgz.tmp" "$tgz"
    rm -rf "$stage"
  fi
  echo "$tgz sha256:$(sha256sum "$tgz" | cut -d' ' -f1)"
}

case ${1:-} in
  etcd) shift; etcd "$@" ;;
  *) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
