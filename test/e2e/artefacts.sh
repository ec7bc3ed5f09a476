#!/usr/bin/env bash
# Builds, from Go modules, what kubespray downloads, at the versions a
# release pins, into a files_repo tree laid out as kubespray's offline
# variables expect ({{ files_repo }}/github.com/etcd-io/etcd/releases/...),
# cached under $LAYERCHECK_E2E_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/layercheck/e2e).
# An artefact already built is kept.
#
#   artefacts.sh etcd VERSION    etcd, etcdctl and etcdutl as etcd's release tarball
#   artefacts.sh kubernetes VERSION  kubeadm, kubelet and kubectl as dl.k8s.io serves them;
#                                kube-apiserver, kube-controller-manager, kube-scheduler,
#                                kube-proxy and agnhost under $LAYERCHECK_E2E_DIR/build/kubernetes/vVERSION
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
# which `go install pkg@version` refuses. So the first module's replace
# directives that point at another module version are copied into the
# throwaway module; those that point into its own tree (k8s.io/kubernetes's
# ./staging/src/k8s.io/X) become k8s.io/X at $STAGING_VERSION.
# pkg=name builds pkg as name; plain pkgs are built in one go build into
# outdir (named after their last path element), which shares the work of
# common dependencies. Per call: CGO_ENABLED (default 0), TAGS, LDFLAGS
# (appended to -s -w).
build_mains() { # outdir module@version... -- pkg=name|pkg...
  local out=$1; shift
  local mods=() one=() batch=()
  while [[ $1 != -- ]]; do mods+=("$1"); shift; done
  shift
  for p in "$@"; do
    if [[ $p == *=* ]]; then one+=("$p"); else batch+=("$p"); fi
  done
  local tmp
  tmp=$(mktemp -d)
  (
    cd "$tmp"
    $GO mod init layercheck.invalid/artefacts >/dev/null 2>&1
    local gomod reps=()
    gomod=$($GO mod download -json "${mods[0]}" | jq -r .GoMod)
    mapfile -t reps < <($GO mod edit -json "$gomod" | jq -r --arg sv "${STAGING_VERSION:-}" '
      .Replace[]? | (.Old.Path + (if .Old.Version then "@" + .Old.Version else "" end)) as $old
      | if .New.Version then "-replace=\($old)=\(.New.Path)@\(.New.Version)"
        elif $sv != "" and (.New.Path | startswith("./staging/src/")) then "-replace=\($old)=\(.Old.Path)@\($sv)"
        else empty end')
    ((${#reps[@]} == 0)) || $GO mod edit "${reps[@]}"
    # go get each package at its module's version too, so that go.sum
    # holds what the packages import, not only the modules' go.mod files.
    local gets=("${mods[@]}") p m
    for p in "${one[@]%%=*}" "${batch[@]}"; do
      for m in "${mods[@]}"; do
        [[ $p != "${m%@*}" && $p != "${m%@*}"/* ]] || gets+=("$p@${m##*@}")
      done
    done
    $GO get "${gets[@]}" >/dev/null 2>&1 || $GO get "${gets[@]}"
    local flags=(-trimpath -ldflags="-s -w ${LDFLAGS:-}")
    [[ -z ${TAGS:-} ]] || flags+=(-tags "$TAGS")
    export CGO_ENABLED=${CGO_ENABLED:-0} GOOS=linux GOARCH=$ARCH
    for p in "${one[@]}"; do
      $GO build "${flags[@]}" -o "$out/${p#*=}" "${p%%=*}"
    done
    ((${#batch[@]} == 0)) || $GO build "${flags[@]}" -o "$out/" "${batch[@]}"
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

# Prints "path sha256:hex" for each file.
sums() {
  local f
  for f in "$@"; do echo "$f sha256:$(sha256sum "$f" | cut -d' ' -f1)"; done
}

# Builds into a fresh stage directory and moves it to dest only once every
# binary is there and answers for its version: an interrupted build is
# never taken for a cached one.
stage_to() { # dest
  rm -rf "$1.tmp" && mkdir -p "$1.tmp"
  echo "$1.tmp"
}

# Fails unless BINARY ARGS... prints VERSION.
check_version() { # binary version args...
  local bin=$1 v=$2; shift 2
  local said
  said=$("$bin" "$@" 2>&1 || true)
  grep -qF -- "$v" <<<"$said" || { echo "artefacts: built $(basename "$bin") is not $v: $said" >&2; exit 1; }
}

# Moves a checked stage directory to its cached place.
keep() { # stage dest
  rm -rf "$2" && mkdir -p "$(dirname "$2")" && mv "$1" "$2"
}

# Tars stage/NAMES... into the files_repo file tgz, owned by root as
# upstream's release archives are.
pack() { # tgz stage names...
  local tgz=$1 stage=$2; shift 2
  mkdir -p "$(dirname "$tgz")"
  tar -C "$stage" --owner=0 --group=0 -czf "$tgz.tmp" "$@"
  mv "$tgz.tmp" "$tgz"
}

moddir() { $GO mod download -json "$1" | jq -r .Dir; }

# kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy and
# agnhost for the images; kubeadm, kubelet and kubectl also as dl.k8s.io
# lays them out.
kubernetes() {
  local v=v${1#v}
  local out=$DIR/build/kubernetes/$v
  local dl=$FILES/dl.k8s.io/release/$v/bin/linux/$ARCH
  local cmds=(kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy)
  local bins=("${cmds[@]}" agnhost)
  if [[ ! -x $out/agnhost ]]; then
    echo "artefacts: building kubernetes $v from k8s.io/kubernetes (cold: 20+ minutes on 2 cores)" >&2
    local major=${v#v} minor
    minor=${major#*.}; minor=${minor%%.*}; major=${major%%.*}
    local cb=k8s.io/component-base/version cg=k8s.io/client-go/pkg/version
    local stage b
    stage=$(stage_to "$out")
    STAGING_VERSION=v0.${v#v*.} LDFLAGS="-X $cb.gitVersion=$v -X $cb.gitMajor=$major -X $cb.gitMinor=$minor -X $cb.gitTreeState=clean -X $cg.gitVersion=$v -X $cg.gitMajor=$major -X $cg.gitMinor=$minor -X $cg.gitTreeState=clean" \
      build_mains "$stage" "k8s.io/kubernetes@$v" -- "${cmds[@]/#/k8s.io/kubernetes/cmd/}" k8s.io/kubernetes/test/images/agnhost
    for b in "${cmds[@]}"; do
      local ask=(--version)
      case $b in kubeadm) ask=(version -o short) ;; kubectl) ask=(version --client) ;; esac
      "$stage/$b" "${ask[@]}" 2>&1 | grep -qw -- "$v" || { echo "artefacts: built $b is not $v: $("$stage/$b" "${ask[@]}" 2>&1)" >&2; exit 1; }
    done
    keep "$stage" "$out"
  fi
  mkdir -p "$dl"
  for b in kubeadm kubelet kubectl; do
    [[ -s $dl/$b ]] || ln -f "$out/$b" "$dl/$b" 2>/dev/null || cp "$out/$b" "$dl/$b"
  done
  sums "$dl/kubeadm" "$dl/kubelet" "$dl/kubectl"
  sums "${bins[@]/#/$out/}" | grep -v -e /kubeadm -e /kubelet -e /kubectl
}

case ${1:-} in
  etcd) shift; etcd "$@" ;;
  kubernetes) shift; kubernetes "$@" ;;
  *) sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; exit 2 ;;
esac
