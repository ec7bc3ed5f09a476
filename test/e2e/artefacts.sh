#!/usr/bin/env bash
# Builds, from Go modules (from source trees under ../shared where the
# proxy serves none; nginx and runit from Debian's packages), what
# kubespray downloads, at the versions a release pins, into a files_repo
# tree laid out as kubespray's offline variables expect
# ({{ files_repo }}/github.com/etcd-io/etcd/releases/...),
# and the binaries its images run into build/<component>/<version>/, all
# cached under $LAYERCHECK_E2E_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/layercheck/e2e).
# An artefact already built is kept.
#
# files_repo (as upstream's release files):
#   artefacts.sh etcd VERSION        etcd-vV-linux-amd64.tar.gz (etcd, etcdctl, etcdutl)
#   artefacts.sh kubernetes VERSION  dl.k8s.io/release/vV/bin/linux/amd64/{kubeadm,kubelet,kubectl},
#                                    and kube-apiserver, kube-controller-manager, kube-scheduler,
#                                    kube-proxy, agnhost in build/kubernetes/vV/
#   artefacts.sh containerd VERSION  containerd-V-linux-amd64.tar.gz (bin/containerd, bin/ctr,
#                                    bin/containerd-shim-runc-v2)
#   artefacts.sh runc VERSION        runc.amd64 (static, cgo, with libseccomp)
#   artefacts.sh cni VERSION         cni-plugins-linux-amd64-vV.tgz (./bridge ./host-local ...)
#   artefacts.sh crictl VERSION      crictl-vV-linux-amd64.tar.gz
#   artefacts.sh nerdctl VERSION     nerdctl-V-linux-amd64.tar.gz
#   artefacts.sh helm VERSION        get.helm.sh/helm-vV-linux-amd64.tar.gz (linux-amd64/helm)
# images' binaries (static), in build/<component>/:
#   artefacts.sh pause VERSION                    pause/V/pause (k8s.io/kubernetes's pause.c)
#   artefacts.sh coredns VERSION                  coredns/vV/coredns
#   artefacts.sh metrics-server VERSION           metrics-server/vV/metrics-server
#   artefacts.sh local-path-provisioner VERSION   local-path-provisioner/vV/local-path-provisioner
#   artefacts.sh flannel VERSION                  flannel/vV/flanneld
#   artefacts.sh flannel-cni-plugin VERSION       flannel-cni-plugin/vV/flannel
#   artefacts.sh calico VERSION                   calico/vV/{calico-node,calico,install,kube-controllers,
#                           check-status,wrapper,calicoctl}, node-filesystem/ (calico's rc.local,
#                           runit services, start_runit) and runit/ (Debian's runit), from
#                           ../shared/calico-src/vV; into files_repo calicoctl-linux-amd64 and
#                           raw/vV/manifests/crds.yaml, as kubespray's offline.yml names them
#   artefacts.sh node-cache VERSION               node-cache/V/node-cache (../shared/k8s-dns-src/V)
#   artefacts.sh cluster-proportional-autoscaler VERSION
#                                                 cluster-proportional-autoscaler/vV/ (../shared/cpa-src/vV)
#   artefacts.sh nginx TAG                        nginx/TAG/root/: Debian's nginx and stream module with
#                                                 their libraries, for kubespray's nginx_image_tag TAG
#   artefacts.sh cluster [RELEASE [KUBE]]  all of the above at the versions set below for
#                           kubespray RELEASE (v2.31.0, the default, or v2.30.0), then
#                           prints the inventory variables that make kubespray take
#                           them offline (*_version, *_checksum) as YAML; KUBE is a
#                           kube_version other than the release's default (v2.30.0
#                           with 1.33.x: day 2's cluster two minors behind v2.31.0),
#                           with the pause and coredns the release pins for its minor.
#                           The network plugin is flannel (its two images); with
#                           E2E_CNI=calico (v2.31.0) it is kubespray's default, calico,
#                           with nodelocaldns, dns-autoscaler and nginx, what the
#                           release's defaults pull beside it, and calicoctl's checksum
#
# Installs jq, gcc, pkg-config and libseccomp-dev with apt-get when missing.
# Each prints "path sha256:hex" per file (what the inventory's checksum
# variables are set to); log lines go to stderr.
set -euo pipefail
DIR=${LAYERCHECK_E2E_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/layercheck/e2e}
FILES=$DIR/files
ARCH=${ARCH:-amd64}
GO=${GO:-go}

# Installs the Debian packages the builds need when they are missing (as
# test/nodes/nodes.sh does): jq, gcc (pause, runc, flanneld), and libseccomp's
# static library for runc.
need() {
  local missing=()
  command -v jq >/dev/null || missing+=(jq)
  command -v gcc >/dev/null || missing+=(gcc libc6-dev)
  command -v pkg-config >/dev/null || missing+=(pkg-config)
  [[ -e /usr/lib/$(uname -m)-linux-gnu/libseccomp.a ]] || missing+=(libseccomp-dev)
  if ((${#missing[@]})); then
    echo "artefacts: installing ${missing[*]}" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

# A throwaway module that requires the given modules: building a main
# package of a dependency ignores that dependency's own replace directives,
# which `go install pkg@version` refuses. So the first module's replace
# directives that point at another module version are copied into the
# throwaway module; those that point into its own tree (k8s.io/kubernetes's
# ./staging/src/k8s.io/X) become k8s.io/X at $STAGING_VERSION.
# pkg=name builds pkg as name; plain pkgs are built in one go build into
# outdir (named after their last path element), which shares the work of
# common dependencies. Per call: CGO_ENABLED (default 0), TAGS, LDFLAGS
# (appended to -s -w), EDITS (more go mod edit flags).
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
    # shellcheck disable=SC2086 # EDITS is a list of flags
    [[ -z ${EDITS:-} ]] || $GO mod edit $EDITS
    $GO get "${mods[@]}" >/dev/null 2>&1 || $GO get "${mods[@]}"
    # -mod=mod: go build records the go.sum lines of the packages it
    # imports, from the module versions go get chose.
    local flags=(-mod=mod -trimpath -ldflags="-s -w ${LDFLAGS:-}")
    [[ -z ${TAGS:-} ]] || flags+=(-tags "$TAGS")
    export CGO_ENABLED=${CGO_ENABLED:-0} GOOS=linux GOARCH=$ARCH
    for p in "${one[@]}"; do
      $GO build "${flags[@]}" -o "$out/${p#*=}" "${p%%=*}"
    done
    ((${#batch[@]} == 0)) || $GO build "${flags[@]}" -o "$out/" "${batch[@]}"
  )
  rm -rf "$tmp"
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
# upstream's release archives are. Sorted, dated 1970 and gzipped without
# a timestamp: the same binaries give the same checksum.
pack() { # tgz stage names...
  local tgz=$1 stage=$2; shift 2
  mkdir -p "$(dirname "$tgz")"
  tar -C "$stage" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - "$@" | gzip -n >"$tgz.tmp"
  mv "$tgz.tmp" "$tgz"
}

# Builds a files_repo archive once: BUILD (a function, called with a
# fresh stage directory; it sees its caller's locals, such as v) fills the
# stage, then NAMES... of it are tarred into TGZ.
archive() { # tgz build names...
  local tgz=$1 build=$2; shift 2
  if [[ ! -s $tgz ]]; then
    local stage
    stage=$(mktemp -d)
    chmod 0755 "$stage" # the CNI tarball's ./ is unpacked onto /opt/cni/bin
    "$build" "$stage"
    pack "$tgz" "$stage" "$@"
    rm -rf "$stage"
  fi
  sums "$tgz"
}

# The module's directory in the module cache; fails, naming the module,
# when the proxy does not serve it.
moddir() {
  local j dir
  j=$($GO mod download -json "$1" 2>/dev/null || true)
  dir=$(jq -r '.Dir // empty' <<<"$j")
  [[ -n $dir ]] || { echo "artefacts: $1 is not on the Go module proxy: $(jq -r '.Error // empty' <<<"$j")" >&2; exit 1; }
  echo "$dir"
}

# A writable copy of a module's source (module@version), for a build that
# must leave out a file or an import of a module no proxy serves; the
# caller removes it.
modcopy() {
  local copy src
  src=$(moddir "$1")
  copy=$(mktemp -d)
  cp -r "$src/." "$copy" && chmod -R u+w "$copy"
  echo "$copy"
}

# etcd's release tarball: etcd-vV-linux-ARCH/{etcd,etcdctl,etcdutl}.
etcd() {
  local v=${1#v}
  local name=etcd-v$v-linux-$ARCH
  local tgz=$FILES/github.com/etcd-io/etcd/releases/download/v$v/$name.tar.gz
  archive "$tgz" etcd_build "$name"
  # The server also as the binary of kubeadm's etcd image
  # ({{ etcd_image_repo }}:v{{ etcd_version }}, etcd_deployment_type kubeadm).
  local out=$DIR/build/etcd/v$v
  if [[ ! -x $out/etcd ]]; then
    mkdir -p "$out.tmp"
    tar -xzf "$tgz" -C "$out.tmp" --strip-components=1 "$name/etcd"
    rm -rf "$out" && mv "$out.tmp" "$out"
  fi
}
# The etcd source tree (with its api, client, pkg, raft, server, etcdctl
# and etcdutl modules) for the versions the Go module proxy refuses:
# ../shared/etcd-src/vV beside this checkout (LAYERCHECK_ETCD_SRC).
ETCD_SRC=${LAYERCHECK_ETCD_SRC:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/etcd-src}
etcd_build() { # stage
  local out=$1/$name
  if [[ -d $ETCD_SRC/v$v ]]; then
    # The proxy refuses go.etcd.io/etcd/server/v3 and etcdctl/v3 at
    # v3.5.25 and v3.5.26 (kubespray v2.30.0's default).
    echo "artefacts: building etcd $v from its source tree $ETCD_SRC/v$v (a few minutes)" >&2
    etcd_from_src "$ETCD_SRC/v$v" "$out" etcd etcdctl etcdutl
  elif [[ $v == 3.5.2[0-4] ]]; then
    # The proxy serves the 3.5 server up to v3.5.24, but etcdctl and
    # etcdutl of the 3.5 line only at v3.5.11: the tools come from the
    # newest 3.5 source tree here (kubespray reads the running version from
    # `etcd --version`, the server's).
    local src
    src=$(ls -d "$ETCD_SRC"/v3.5.* 2>/dev/null | sort -V | tail -1)
    [[ -n $src ]] || { echo "artefacts: etcd $v needs etcdctl and etcdutl of the 3.5 line: no $ETCD_SRC/v3.5.*" >&2; exit 1; }
    echo "artefacts: building etcd $v from go.etcd.io/etcd/server/v3, etcdctl and etcdutl from $src" >&2
    build_mains "$out" "go.etcd.io/etcd/server/v3@v$v" -- go.etcd.io/etcd/server/v3=etcd
    etcd_from_src "$src" "$out" etcdctl etcdutl
  else
    echo "artefacts: building etcd $v from go.etcd.io/etcd (a few minutes)" >&2
    build_mains "$out" "go.etcd.io/etcd/server/v3@v$v" "go.etcd.io/etcd/etcdctl/v3@v$v" "go.etcd.io/etcd/etcdutl/v3@v$v" -- \
      go.etcd.io/etcd/server/v3=etcd go.etcd.io/etcd/etcdctl/v3=etcdctl go.etcd.io/etcd/etcdutl/v3=etcdutl
  fi
  check_version "$out/etcd" "etcd Version: $v" --version
}
# Builds the named tools (etcd is the server module) of an etcd source
# tree into out, from a writable copy (its modules replace each other by
# relative path; -mod=mod fills go.sum from the proxy).
etcd_from_src() { # src out tools...
  local src=$1 out=$2 copy tool dir; shift 2
  copy=$(mktemp -d)
  cp -r "$src/." "$copy" && chmod -R u+w "$copy"
  mkdir -p "$out"
  for tool in "$@"; do
    dir=$tool; [[ $tool != etcd ]] || dir=server
    (cd "$copy/$dir" && CGO_ENABLED=0 GOOS=linux GOARCH=$ARCH $GO build -mod=mod -trimpath -ldflags="-s -w" -o "$out/$tool" .)
  done
  rm -rf "$copy"
}

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
    echo "artefacts: building kubernetes $v from k8s.io/kubernetes (minutes; more with a cold Go build cache)" >&2
    local major=${v#v} minor
    minor=${major#*.}; minor=${minor%%.*}; major=${major%%.*}
    local cb=k8s.io/component-base/version cg=k8s.io/client-go/pkg/version
    local stage b gv
    stage=$(stage_to "$out")
    # With the Go its release was built with (.go-version; the go command
    # fetches that toolchain from the module proxy): kubeadm 1.33.5 built
    # with Go 1.26 fails init at its HTTPProxyCIDR check, since Go 1.24.8
    # and 1.25.2's url.Parse refuse the "https://[10.233.0.1]:1234/" it
    # builds (CVE-2025-47912).
    gv=$(cat "$(moddir "k8s.io/kubernetes@$v")/.go-version")
    echo "artefacts: kubernetes $v with go$gv, its .go-version" >&2
    GOTOOLCHAIN=go$gv STAGING_VERSION=v0.${v#v*.} LDFLAGS="-X $cb.gitVersion=$v -X $cb.gitMajor=$major -X $cb.gitMinor=$minor -X $cb.gitTreeState=clean -X $cg.gitVersion=$v -X $cg.gitMajor=$major -X $cg.gitMinor=$minor -X $cg.gitTreeState=clean" \
      build_mains "$stage" "k8s.io/kubernetes@$v" -- "${cmds[@]/#/k8s.io/kubernetes/cmd/}" k8s.io/kubernetes/test/images/agnhost
    for b in "${cmds[@]}"; do
      local ask=(--version)
      case $b in kubeadm) ask=(version -o short) ;; kubectl) ask=(version --client) ;; esac
      check_version "$stage/$b" "$v" "${ask[@]}"
    done
    keep "$stage" "$out"
  fi
  mkdir -p "$dl"
  for b in kubeadm kubelet kubectl; do
    ln -f "$out/$b" "$dl/$b" 2>/dev/null || cp -f "$out/$b" "$dl/$b"
  done
  sums "$dl/kubeadm" "$dl/kubelet" "$dl/kubectl"
  sums "${bins[@]/#/$out/}" | grep -v -e /kubeadm -e /kubelet -e /kubectl
}

# One statically linked binary for an image: $DIR/build/COMPONENT/VERSION/BINARY.
image() { # component version binary module@version pkg version-args...
  local comp=$1 v=$2 bin=$3 mod=$4 pkg=$5; shift 5
  local out=$DIR/build/$comp/$v
  if [[ ! -x $out/$bin ]]; then
    echo "artefacts: building $comp $v from $mod" >&2
    local stage
    stage=$(stage_to "$out")
    build_mains "$stage" "$mod" -- "$pkg=$bin"
    check_version "$stage/$bin" "${v#v}" "$@"
    keep "$stage" "$out"
  fi
  sums "$out/$bin"
}

# containerd's release tarball: bin/containerd, bin/containerd-shim-runc-v2,
# bin/ctr (kubespray unpacks it with --strip-components=1). btrfs needs cgo,
# so it is left out, as in containerd's static release.
containerd() {
  local v=${1#v} m=github.com/containerd/containerd/v2
  archive "$FILES/github.com/containerd/containerd/releases/download/v$v/containerd-$v-linux-$ARCH.tar.gz" containerd_build bin
}
containerd_build() { # stage
  local stage=$1
  echo "artefacts: building containerd $v from $m" >&2
  TAGS="no_btrfs urfave_cli_no_docs" LDFLAGS="-X $m/version.Version=v$v -X $m/version.Package=github.com/containerd/containerd/v2" \
    build_mains "$stage/bin" "$m@v$v" -- "$m/cmd/containerd" "$m/cmd/containerd-shim-runc-v2" "$m/cmd/ctr"
  check_version "$stage/bin/containerd" "v$v" --version
  check_version "$stage/bin/ctr" "v$v" --version
}

# runc.ARCH, as runc's `make static`: cgo (nsenter) with libseccomp linked
# in statically (Debian: libseccomp-dev), because kubespray's CoreDNS and
# metrics-server pods ask for the RuntimeDefault seccomp profile, which a
# runc without seccomp refuses.
runc() {
  local v=${1#v} m=github.com/opencontainers/runc
  local bin=$FILES/github.com/opencontainers/runc/releases/download/v$v/runc.$ARCH
  if [[ ! -s $bin ]]; then
    [[ -e $(pkg-config --variable=libdir libseccomp 2>/dev/null)/libseccomp.a ]] ||
      { echo "artefacts: runc needs libseccomp's static library (Debian: libseccomp-dev)" >&2; exit 1; }
    echo "artefacts: building runc $v from $m (cgo, static, seccomp)" >&2
    local stage
    stage=$(mktemp -d)
    CGO_ENABLED=1 TAGS="seccomp urfave_cli_no_docs netgo osusergo" LDFLAGS="-extldflags -static" \
      build_mains "$stage" "$m@v$v" -- "$m=runc"
    check_version "$stage/runc" "runc version $v" --version
    check_version "$stage/runc" "seccomp" --version
    mkdir -p "$(dirname "$bin")"
    mv "$stage/runc" "$bin"
    rm -rf "$stage"
  fi
  sums "$bin"
}

# The CNI plugins' release tarball: every Linux plugin of plugins/main,
# plugins/ipam and plugins/meta, flat (./bridge, ./host-local ...).
cni() {
  local v=${1#v} m=github.com/containernetworking/plugins
  archive "$FILES/github.com/containernetworking/plugins/releases/download/v$v/cni-plugins-linux-$ARCH-v$v.tgz" cni_build .
}
cni_build() { # stage
  local stage=$1 src pkgs=() d
  echo "artefacts: building the CNI plugins $v from $m" >&2
  src=$(moddir "$m@v$v")
  for d in "$src"/plugins/{meta,main,ipam}/*/; do
    d=${d%/}
    [[ ${d##*/} == windows ]] || pkgs+=("$m/${d#"$src"/}")
  done
  LDFLAGS="-X $m/pkg/utils/buildversion.BuildVersion=v$v" build_mains "$stage" "$m@v$v" -- "${pkgs[@]}"
  check_version "$stage/bridge" "v$v"
  [[ -x $stage/host-local && -x $stage/loopback && -x $stage/portmap ]] ||
    { echo "artefacts: the CNI plugins $v lack host-local, loopback or portmap" >&2; exit 1; }
}

crictl() {
  local v=${1#v} m=sigs.k8s.io/cri-tools
  archive "$FILES/github.com/kubernetes-sigs/cri-tools/releases/download/v$v/crictl-v$v-linux-$ARCH.tar.gz" crictl_build crictl
}
crictl_build() { # stage
  echo "artefacts: building crictl $v from $m" >&2
  LDFLAGS="-X $m/pkg/version.Version=v$v" build_mains "$1" "$m@v$v" -- "$m/cmd/crictl=crictl"
  check_version "$1/crictl" "v$v" --version
}

nerdctl() {
  local v=${1#v} m=github.com/containerd/nerdctl/v2
  archive "$FILES/github.com/containerd/nerdctl/releases/download/v$v/nerdctl-$v-linux-$ARCH.tar.gz" nerdctl_build \
    nerdctl containerd-rootless-setuptool.sh containerd-rootless.sh
}
nerdctl_build() { # stage
  echo "artefacts: building nerdctl $v from $m" >&2
  # nerdctl's test framework, github.com/containerd/nerdctl/mod/tigron, is
  # a module inside nerdctl's tree (replace => ./mod/tigron), so it is not
  # in nerdctl's module zip, nor on the proxy. Only the test helpers of
  # cmd/nerdctl/helpers/testing_linux.go import it: nerdctl is built from a
  # copy of its module without that file, tigron being an empty module.
  local copy
  copy=$(modcopy "$m@v$v")
  rm "$copy/cmd/nerdctl/helpers/testing_linux.go"
  mkdir -p "$copy/mod/tigron"
  printf 'module github.com/containerd/nerdctl/mod/tigron\n' >"$copy/mod/tigron/go.mod"
  EDITS="-replace=$m=$copy -replace=github.com/containerd/nerdctl/mod/tigron=$copy/mod/tigron" \
    LDFLAGS="-X $m/pkg/version.Version=v$v" build_mains "$1" "$m@v$v" -- "$m/cmd/nerdctl=nerdctl"
  check_version "$1/nerdctl" "$v" --version
  install -m 0755 "$copy"/extras/rootless/containerd-rootless{,-setuptool}.sh "$1/"
  rm -rf "$copy"
}

helm() {
  local v=${1#v} m=helm.sh/helm/v3
  archive "$FILES/get.helm.sh/helm-v$v-linux-$ARCH.tar.gz" helm_build "linux-$ARCH"
}
helm_build() { # stage
  local dir=$1/linux-$ARCH src
  echo "artefacts: building helm $v from $m" >&2
  LDFLAGS="-X $m/internal/version.version=v$v -X $m/internal/version.gitTreeState=clean" \
    build_mains "$dir" "$m@v$v" -- "$m/cmd/helm=helm"
  check_version "$dir/helm" "v$v" version
  src=$(moddir "$m@v$v")
  install -m 0644 "$src/LICENSE" "$src/README.md" "$dir/"
}

# The source trees of what the Go module proxy does not serve, under
# ../shared beside this checkout: calico (LAYERCHECK_CALICO_SRC),
# k8s.io/dns (LAYERCHECK_K8S_DNS_SRC) and cluster-proportional-autoscaler
# (LAYERCHECK_CPA_SRC), each with one directory per version.
SHARED_SRC=$(cd "$(dirname "$0")/../../.." && pwd)/shared
CALICO_SRC=${LAYERCHECK_CALICO_SRC:-$SHARED_SRC/calico-src}
K8S_DNS_SRC=${LAYERCHECK_K8S_DNS_SRC:-$SHARED_SRC/k8s-dns-src}
CPA_SRC=${LAYERCHECK_CPA_SRC:-$SHARED_SRC/cpa-src}

# Builds main packages of a source tree into out, static, from a writable
# copy under $DIR/src (the trees are read-only; -mod=mod fills go.sum from
# the proxy), removed afterwards (and by the next build after a failed
# one). EDITS (go mod edit flags) are applied to the copy's go.mod first;
# LDFLAGS is appended to -s -w. Each package is named after its last path
# element.
src_build() { # src out pkg...
  local src=$1 out=$2 copy; shift 2
  copy=$DIR/src/$(basename "$(dirname "$src")")-${src##*/}
  rm -rf "$copy" && mkdir -p "$copy" "$out"
  cp -r "$src/." "$copy" && chmod -R u+w "$copy"
  (
    cd "$copy"
    # shellcheck disable=SC2086 # EDITS is a list of flags
    [[ -z ${EDITS:-} ]] || $GO mod edit $EDITS
    CGO_ENABLED=0 GOOS=linux GOARCH=$ARCH $GO build -mod=mod -trimpath -ldflags="-s -w ${LDFLAGS:-}" -o "$out/" "$@"
  )
  rm -rf "$copy"
}

# The source tree SRC/VERSION, or a clear error naming what needs it.
src_tree() { # src version what
  [[ -d $1/$2 ]] || { echo "artefacts: $3 $2 is built from its source tree $1/$2, which is not there (the Go module proxy does not serve it)" >&2; exit 1; }
  echo "$1/$2"
}

# Runs a command chrooted in root (needs root, as the e2e runs do).
in_root() { # root command...
  ((EUID == 0)) || { echo "artefacts: running $2 in the Debian root $1 needs root (chroot)" >&2; exit 1; }
  chroot "$@"
}

# Unpacks the Debian packages (apt-get download, dpkg-deb -x: the
# candidates of this host's apt sources) into root as dpkg lays them out,
# and lists them ("package version") in root.debs. apt's lists are
# refreshed once when a package is not found.
debroot() { # root package...
  local root=$1 tmp d; shift
  tmp=$(mktemp -d)
  if ! (cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$@" >/dev/null 2>&1); then
    echo "artefacts: refreshing apt's package lists for $*" >&2
    apt-get update -qq
    (cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$@" >/dev/null) ||
      { echo "artefacts: apt-get download $* failed" >&2; exit 1; }
  fi
  mkdir -p "$root"
  for d in "$tmp"/*.deb; do
    dpkg-deb -x "$d" "$root"
    # shellcheck disable=SC2016 # dpkg-deb's fields, not the shell's
    dpkg-deb --show --showformat='${Package} ${Version}\n' "$d"
  done >"$root.debs"
  rm -rf "$tmp"
}

# calico, kubespray's default network plugin, from its source tree (the Go
# module proxy does not serve github.com/projectcalico/calico), into
# build/calico/vV/: calico-node; the CNI plugin calico (also calico-ipam,
# by its name) and its installer install; kube-controllers with the
# check-status its probes run and the wrapper its image starts it with;
# calicoctl. For the calico/node image also node-filesystem/ (calico's
# rc.local, runit services and start_runit, laid out as its Dockerfile
# copies them) and runit/ (Debian's runit, which start_runit execs, with
# its libc). files_repo gets calicoctl-linux-ARCH and manifests/crds.yaml
# at the paths kubespray's offline.yml names; crds.yaml is calico's own,
# which kubespray's calico_crds_checksums accepts unchanged (checked
# against CALICO_CRDS_CHECKSUM for the release's CALICO_VERSION).
calico() {
  local v=v${1#v} m=github.com/projectcalico/calico
  local out=$DIR/build/calico/$v src
  local ctl=$FILES/github.com/projectcalico/calico/releases/download/$v/calicoctl-linux-$ARCH
  local crds=$FILES/github.com/projectcalico/calico/raw/$v/manifests/crds.yaml
  src=$(src_tree "$CALICO_SRC" "$v" calico)
  if [[ ! -x $out/calico-node ]]; then
    echo "artefacts: building calico $v from $src (minutes)" >&2
    local stage edits p said
    stage=$(stage_to "$out")
    # The proxy refuses k8s.io/kubernetes v1.33.10 and several k8s.io/*
    # v0.33.10 that calico's go.mod names: v1.33.13 and v0.33.13. That
    # bump lets -mod=mod raise sigs.k8s.io/knftables to v0.0.21, whose
    # New felix/nftables does not compile against: kept at v0.0.18.
    edits=$($GO mod edit -json "$src/go.mod" | jq -r --arg from v0.33.10 --arg to v0.33.13 '
      (.Require[]? | select((.Path | startswith("k8s.io/")) and .Version == $from) | "-require=\(.Path)@\($to)"),
      (.Replace[]? | select((.New.Path | startswith("k8s.io/")) and .New.Version == $from) | "-replace=\(.Old.Path)=\(.New.Path)@\($to)")')
    EDITS="$edits -require=k8s.io/kubernetes@v1.33.13 -replace=sigs.k8s.io/knftables=sigs.k8s.io/knftables@v0.0.18" \
      LDFLAGS="-X $m/pkg/buildinfo.Version=$v" src_build "$src" "$stage" ./node/cmd/calico-node ./cni-plugin/cmd/calico \
      ./cni-plugin/cmd/install ./kube-controllers/cmd/kube-controllers ./kube-controllers/cmd/check-status \
      ./kube-controllers/cmd/wrapper ./calicoctl/calicoctl
    check_version "$stage/calico-node" "$v" -v
    check_version "$stage/calico" "$v" -v
    check_version "$stage/kube-controllers" "$v" -version
    check_version "$stage/calicoctl" "Client Version:    $v" version
    mkdir -p "$stage/node-filesystem/usr/sbin"
    cp -r "$src/node/filesystem/etc" "$stage/node-filesystem/"
    cp "$src"/node/filesystem/sbin/* "$stage/node-filesystem/usr/sbin/"
    chmod -R u+w "$stage/node-filesystem"
    [[ -x $stage/node-filesystem/usr/sbin/start_runit && -e $stage/node-filesystem/etc/rc.local ]] ||
      { echo "artefacts: calico $v's node/filesystem has no sbin/start_runit or etc/rc.local" >&2; exit 1; }
    debroot "$stage/runit" runit libc6
    # Each runs in that root: with no arguments it prints its usage.
    for p in runsvdir runsv sv svlogd chpst; do
      said=$(in_root "$stage/runit" "/usr/bin/$p" 2>&1 || true)
      [[ $said == *"usage: "* ]] || { echo "artefacts: runit's $p does not run in its root $stage/runit: $said" >&2; exit 1; }
    done
    keep "$stage" "$out"
  fi
  mkdir -p "$(dirname "$ctl")" "$(dirname "$crds")"
  ln -f "$out/calicoctl" "$ctl" 2>/dev/null || cp -f "$out/calicoctl" "$ctl"
  local sum
  sum=$(sums "$src/manifests/crds.yaml")
  [[ $v != "v${CALICO_VERSION:-}" || ${sum#* } == "$CALICO_CRDS_CHECKSUM" ]] ||
    { echo "artefacts: $src/manifests/crds.yaml is ${sum#* }, not kubespray's calico_crds_checksums entry for $v, $CALICO_CRDS_CHECKSUM" >&2; exit 1; }
  cp -f "$src/manifests/crds.yaml" "$crds"
  sums "$ctl" "$crds"
  sums "$out"/{calico-node,calico,install,kube-controllers,check-status,wrapper}
}

# node-cache, the binary of kubespray's nodelocaldns image
# (k8s-dns-node-cache), from k8s.io/dns's source tree (the Go module proxy
# does not serve k8s.io/dns): build/node-cache/V/node-cache.
node_cache() {
  local v=${1#v} src
  local out=$DIR/build/node-cache/$v
  src=$(src_tree "$K8S_DNS_SRC" "$v" node-cache)
  if [[ ! -x $out/node-cache ]]; then
    echo "artefacts: building node-cache $v from $src" >&2
    local stage
    stage=$(stage_to "$out")
    LDFLAGS="-X k8s.io/dns/pkg/version.VERSION=$v" src_build "$src" "$stage" ./cmd/node-cache
    check_version "$stage/node-cache" "Starting node-cache image: $v" -h
    keep "$stage" "$out"
  fi
  sums "$out/node-cache"
}

# cluster-proportional-autoscaler, kubespray's dns-autoscaler, from its
# source tree (the Go module proxy does not serve it at kubespray's
# version): build/cluster-proportional-autoscaler/vV/. Its own build sets
# pkg/version.Version, a variable the package does not have; VERSION is
# what --version prints.
cluster_proportional_autoscaler() {
  local v=v${1#v} src m=github.com/kubernetes-sigs/cluster-proportional-autoscaler
  local out=$DIR/build/cluster-proportional-autoscaler/$v
  src=$(src_tree "$CPA_SRC" "$v" cluster-proportional-autoscaler)
  if [[ ! -x $out/cluster-proportional-autoscaler ]]; then
    echo "artefacts: building cluster-proportional-autoscaler $v from $src" >&2
    local stage
    stage=$(stage_to "$out")
    LDFLAGS="-X $m/pkg/version.VERSION=$v" src_build "$src" "$stage" ./cmd/cluster-proportional-autoscaler
    check_version "$stage/cluster-proportional-autoscaler" "$v" --version
    keep "$stage" "$out"
  fi
  sums "$out/cluster-proportional-autoscaler"
}

# nginx for kubespray's nginx-proxy (each worker's local load balancer to
# the API servers), from Debian's packages: nginx, its stream module and
# the libraries they link or load, unpacked into build/nginx/TAG/root/ (TAG the
# image tag kubespray pulls, as for the flannel CNI plugin; root.debs says
# which versions). Debian builds the stream module kubespray's nginx.conf
# uses as a dynamic module (--with-stream=dynamic), and that nginx.conf
# loads no module: the image's command adds NGINX_GLOBALS, as the upstream
# image's adds "daemon off;". Checked in that root: nginx -t refuses a
# conf rendered from kubespray's template without them and accepts it
# with them.
NGINX_GLOBALS="daemon off; load_module /usr/lib/nginx/modules/ngx_stream_module.so;"
nginx() {
  local tag=$1
  local out=$DIR/build/nginx/$tag
  if [[ ! -x $out/root/usr/sbin/nginx ]]; then
    echo "artefacts: nginx for the $tag image from Debian's packages" >&2
    local stage root said
    stage=$(stage_to "$out")
    root=$stage/root
    # libgcc-s1: glibc loads libgcc_s with dlopen when a thread exits, and
    # kubespray's conf turns nginx's thread pool on (aio threads); without
    # it each worker aborts when it stops.
    debroot "$root" nginx libnginx-mod-stream libc6 libcrypt1 libpcre2-8-0 libssl3 zlib1g libgcc-s1
    compgen -G "$root/*lib/x86_64-linux-gnu/libgcc_s.so.1" >/dev/null ||
      { echo "artefacts: libgcc-s1 left no libgcc_s.so.1 in $root" >&2; exit 1; }
    said=$(in_root "$root" /usr/sbin/nginx -V 2>&1 || true)
    [[ $said == *--with-stream=dynamic* && -f $root/usr/lib/nginx/modules/ngx_stream_module.so ]] ||
      { echo "artefacts: Debian's nginx in $root has no dynamic stream module: $said" >&2; exit 1; }
    # What nginx -t needs, as the image has it: its user (nobody, the
    # built-in default), the temp path's parent, /run for its pid file.
    mkdir -p "$root/etc/nginx" "$root/var/lib/nginx" "$root/var/log/nginx" "$root/run"
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' >"$root/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
    nginx_conf >"$root/etc/nginx/nginx.conf"
    said=$(in_root "$root" /usr/sbin/nginx -t 2>&1 || true)
    [[ $said == *'unknown directive "stream"'* ]] ||
      { echo "artefacts: nginx -t without the stream module loaded did not refuse kubespray's conf: $said" >&2; exit 1; }
    said=$(in_root "$root" /usr/sbin/nginx -t -g "$NGINX_GLOBALS" 2>&1 || true)
    [[ $said == *"test is successful"* ]] ||
      { echo "artefacts: nginx -t -g '$NGINX_GLOBALS' refuses kubespray's conf: $said" >&2; exit 1; }
    keep "$stage" "$out"
  fi
  sums "$out/root/usr/sbin/nginx" "$out/root/usr/lib/nginx/modules/ngx_stream_module.so"
}

# kubespray v2.31.0's roles/kubernetes/node/templates/loadbalancer/nginx.conf.j2
# rendered for one control plane at 192.0.2.11 (node1 of test/nodes),
# kube_apiserver_port 6443, the sample inventory's
# loadbalancer_apiserver_healthcheck_port 8081, IPv4 only.
nginx_conf() {
  cat <<'CONF'
error_log stderr notice;

worker_processes 2;
worker_rlimit_nofile 130048;
worker_shutdown_timeout 10s;

events {
  multi_accept on;
  use epoll;
  worker_connections 16384;
}

stream {
  upstream kube_apiserver {
    least_conn;
    server 192.0.2.11:6443;
    }

  server {
    listen        127.0.0.1:6443;
    proxy_pass    kube_apiserver;
    proxy_timeout 10m;
    proxy_connect_timeout 1s;
  }
}

http {
  aio threads;
  aio_write on;
  tcp_nopush on;
  tcp_nodelay on;

  keepalive_timeout 5m;
  keepalive_requests 100;
  reset_timedout_connection on;
  server_tokens off;
  autoindex off;

  server {
    listen 8081;
    location /healthz {
      access_log off;
      return 200;
    }
    location /stub_status {
      stub_status on;
      access_log off;
    }
  }
  }
CONF
}

# Kubernetes' own pause.c (build/pause/linux in k8s.io/kubernetes), built
# as its Makefile does.
pause() {
  local v=${1#v} kv=${2:-v$KUBERNETES_VERSION}
  local out=$DIR/build/pause/$v
  if [[ ! -x $out/pause ]]; then
    echo "artefacts: building pause $v from k8s.io/kubernetes@$kv build/pause/linux/pause.c" >&2
    local stage
    stage=$(stage_to "$out")
    gcc -Os -Wall -Werror -static -DVERSION="v$v" -o "$stage/pause" "$(moddir "k8s.io/kubernetes@$kv")/build/pause/linux/pause.c"
    strip "$stage/pause"
    check_version "$stage/pause" "v$v" -v
    keep "$stage" "$out"
  fi
  sums "$out/pause"
}

coredns() {
  image coredns "v${1#v}" coredns "github.com/coredns/coredns@v${1#v}" github.com/coredns/coredns -version
}

metrics_server() {
  LDFLAGS="-X k8s.io/client-go/pkg/version.gitVersion=v${1#v}" \
    image metrics-server "v${1#v}" metrics-server "sigs.k8s.io/metrics-server@v${1#v}" sigs.k8s.io/metrics-server/cmd/metrics-server --version
}

local_path_provisioner() {
  LDFLAGS="-X main.VERSION=v${1#v}" \
    image local-path-provisioner "v${1#v}" local-path-provisioner "github.com/rancher/local-path-provisioner@v${1#v}" github.com/rancher/local-path-provisioner --version
}

# flanneld as flannel's Makefile builds it on amd64: with cgo (its UDP
# backend is C), linked statically. The Tencent Cloud VPC backend is left out:
# github.com/tencentcloud/tencentcloud-sdk-go is not on the module proxy, so
# flanneld is built from a copy of flannel whose main.go does not import it.
flannel() {
  local v=v${1#v} m=github.com/flannel-io/flannel
  local backend=$m/pkg/backend/tencentvpc copy
  copy=$(modcopy "$m@$v")
  grep -q "\"$backend\"" "$copy/main.go" || { echo "artefacts: flannel $v's main.go does not import $backend" >&2; exit 1; }
  sed -i "\\|\"$backend\"|d" "$copy/main.go"
  CGO_ENABLED=1 TAGS="netgo osusergo" EDITS="-replace=$m=$copy" LDFLAGS="-X $m/pkg/version.Version=$v -extldflags -static" \
    image flannel "$v" flanneld "$m@$v" "$m" --version
  rm -rf "$copy"
}

# The flannel CNI plugin. Its own module (github.com/flannel-io/cni-plugin)
# is not on the Go module proxy; the same plugin lived in
# github.com/containernetworking/plugins as plugins/meta/flannel until
# v0.9.1 (v1.0.0 dropped it), so that is what is built, into the image's
# version directory.
flannel_cni_plugin() {
  local v=v${1#v} m=github.com/containernetworking/plugins from=v0.9.1
  local out=$DIR/build/flannel-cni-plugin/$v
  if [[ ! -x $out/flannel ]]; then
    echo "artefacts: building the flannel CNI plugin for $v from $m@$from plugins/meta/flannel (github.com/flannel-io/cni-plugin is not on the module proxy)" >&2
    local stage
    stage=$(stage_to "$out")
    LDFLAGS="-X $m/pkg/utils/buildversion.BuildVersion=$from" build_mains "$stage" "$m@$from" -- "$m/plugins/meta/flannel=flannel"
    check_version "$stage/flannel" "$from"
    keep "$stage" "$out"
  fi
  sums "$out/flannel"
}

# What `cluster RELEASE` builds: the release's defaults, except where the
# Go module proxy does not serve that version (then a version the release
# also accepts, said in the printed YAML). v2.31.0 is the default release.
# The printed variables that are not the release's default: NOT_DEFAULT,
# lines of "variable value why".
versions() { # release [kube_version]
  NOT_DEFAULT=()
  # What E2E_CNI=calico adds (kubespray's default network plugin and the
  # add-ons its defaults turn on), where a release has them set here.
  CALICO_VERSION='' CALICO_CRDS_CHECKSUM='' NODELOCALDNS_VERSION='' DNSAUTOSCALER_VERSION='' NGINX_IMAGE_TAG=''
  case $1 in
    v2.31.0)
      KUBERNETES_VERSION=1.35.4 ETCD_VERSION=3.6.10 CONTAINERD_VERSION=2.2.3 RUNC_VERSION=1.4.2 CNI_VERSION=1.9.1
      CRICTL_VERSION=1.34.0 NERDCTL_VERSION=2.2.2 HELM_VERSION=3.18.4 PAUSE_VERSION=3.10.1 COREDNS_VERSION=1.12.4
      METRICS_SERVER_VERSION=0.8.0 LOCAL_PATH_PROVISIONER_VERSION=0.0.30 FLANNEL_VERSION=0.28.4
      FLANNEL_CNI_PLUGIN_VERSION=1.7.1-flannel1
      # calico_crds_checksums.no_arch['3.31.5'] of roles/kubespray_defaults/vars/main/checksums.yml.
      CALICO_VERSION=3.31.5 CALICO_CRDS_CHECKSUM=sha256:1d6d5e523f92ee1e8227a48c016229c668f94035431b82f19139affeb45dbeff
      NODELOCALDNS_VERSION=1.25.0 DNSAUTOSCALER_VERSION=1.8.8 NGINX_IMAGE_TAG=1.28.2-alpine
      NOT_DEFAULT=(
        "crictl_version $CRICTL_VERSION default 1.35.0: sigs.k8s.io/cri-tools v1.35.0 is not on the Go module proxy."
        "metrics_server_version $METRICS_SERVER_VERSION default 0.8.1: sigs.k8s.io/metrics-server v0.8.1 is not on the Go module proxy."
        "local_path_provisioner_version $LOCAL_PATH_PROVISIONER_VERSION default 0.0.32: only v0.0.30 of github.com/rancher/local-path-provisioner is on the Go module proxy.")
      ;;
    v2.30.0)
      # etcd 3.5.26 is built from its source tree (the proxy refuses it).
      KUBERNETES_VERSION=1.34.3 ETCD_VERSION=3.5.26 CONTAINERD_VERSION=2.2.1 RUNC_VERSION=1.3.4 CNI_VERSION=1.8.0
      CRICTL_VERSION=1.34.0 NERDCTL_VERSION=2.2.1 HELM_VERSION=3.18.4 PAUSE_VERSION=3.10.1 COREDNS_VERSION=1.12.1
      METRICS_SERVER_VERSION=0.8.0 LOCAL_PATH_PROVISIONER_VERSION=0.0.30 FLANNEL_VERSION=0.27.4
      FLANNEL_CNI_PLUGIN_VERSION=1.7.1-flannel1
      NOT_DEFAULT=(
        "flannel_version $FLANNEL_VERSION default 0.27.3: github.com/flannel-io/flannel v0.27.3 is not on the Go module proxy; 0.27.4 is the same minor's next patch."
        "local_path_provisioner_version $LOCAL_PATH_PROVISIONER_VERSION default 0.0.32: only v0.0.30 of github.com/rancher/local-path-provisioner is on the Go module proxy.")
      ;;
    *) echo "artefacts: no version set for kubespray $1 (v2.30.0, v2.31.0)" >&2; exit 2 ;;
  esac
  [[ -n ${2:-} && $2 != "$KUBERNETES_VERSION" ]] || return 0
  # Another kube_version: the images and files kubespray chooses by its
  # minor (pod_infra_supported_versions, coredns_supported_versions).
  case $1:${2%.*} in
    v2.30.0:1.33)
      PAUSE_VERSION=3.10 COREDNS_VERSION=1.12.0
      NOT_DEFAULT+=("crictl_version $CRICTL_VERSION default 1.33.0 for Kubernetes 1.33: sigs.k8s.io/cri-tools v1.33.0 is not on the Go module proxy.") ;;
    *) echo "artefacts: no versions set for kubespray $1 at Kubernetes $2 (v2.30.0 at 1.33.x)" >&2; exit 2 ;;
  esac
  NOT_DEFAULT+=("kube_version $2 default $KUBERNETES_VERSION: a cluster two minors behind the next release (day 2's trap 9).")
  KUBERNETES_VERSION=$2
}
versions v2.31.0

# The sha256 of the file a `sums` line names, as kubespray's checksum
# variables hold it.
sum_of() { # file lines...
  local f=$1; shift
  local l
  for l in "$@"; do [[ ${l%% *} != "$f" ]] || { echo "${l#* }"; return; }; done
  echo "artefacts: no checksum for $f" >&2; exit 1
}

# Builds everything the release's cluster.yml downloads or pulls (default
# v2.31.0), and prints the inventory variables that make it take them
# offline. E2E_CNI picks the network plugin: flannel (the default) with
# nodelocaldns, dns-autoscaler and the workers' nginx-proxy left to the
# inventory to turn off, or calico, kubespray's default, with those three.
cluster() { # [release [kube_version]]
  local rel=${1:-v2.31.0} cni=${E2E_CNI:-flannel}
  versions "$rel" "${2:-}"
  case $cni in
    flannel) ;;
    calico)
      [[ -n $CALICO_VERSION ]] || { echo "artefacts: E2E_CNI=calico: no calico, nodelocaldns, dns-autoscaler and nginx set for kubespray $rel (v2.31.0 has them)" >&2; exit 2; } ;;
    *) echo "artefacts: E2E_CNI=$cni: flannel (the default) or calico" >&2; exit 2 ;;
  esac
  # Each build runs in this shell, so that a failed one stops here.
  local t k e c r n cr nd h l ca=()
  t=$(mktemp -d)
  kubernetes "$KUBERNETES_VERSION" >"$t/k"
  etcd "$ETCD_VERSION" >"$t/e"
  containerd "$CONTAINERD_VERSION" >"$t/c"
  runc "$RUNC_VERSION" >"$t/r"
  cni "$CNI_VERSION" >"$t/n"
  crictl "$CRICTL_VERSION" >"$t/cr"
  nerdctl "$NERDCTL_VERSION" >"$t/nd"
  helm "$HELM_VERSION" >"$t/h"
  mapfile -t k <"$t/k"; mapfile -t e <"$t/e"; mapfile -t c <"$t/c"; mapfile -t r <"$t/r"
  mapfile -t n <"$t/n"; mapfile -t cr <"$t/cr"; mapfile -t nd <"$t/nd"; mapfile -t h <"$t/h"
  rm -rf "$t"
  pause "$PAUSE_VERSION" >&2
  coredns "$COREDNS_VERSION" >&2
  metrics_server "$METRICS_SERVER_VERSION" >&2
  local_path_provisioner "$LOCAL_PATH_PROVISIONER_VERSION" >&2
  local plugin
  if [[ $cni == flannel ]]; then
    flannel "$FLANNEL_VERSION" >&2
    flannel_cni_plugin "$FLANNEL_CNI_PLUGIN_VERSION" >&2
    plugin="# flannel $FLANNEL_VERSION, flannel-cni $FLANNEL_CNI_PLUGIN_VERSION (built from github.com/containernetworking/plugins v0.9.1)."
  else
    t=$(mktemp -d)
    calico "$CALICO_VERSION" >"$t/ca"
    mapfile -t ca <"$t/ca"
    rm -rf "$t"
    node_cache "$NODELOCALDNS_VERSION" >&2
    cluster_proportional_autoscaler "$DNSAUTOSCALER_VERSION" >&2
    nginx "$NGINX_IMAGE_TAG" >&2
    local ng
    ng=$(awk '$1 == "nginx" { print $2 }' "$DIR/build/nginx/$NGINX_IMAGE_TAG/root.debs")
    plugin="# calico $CALICO_VERSION (from its source tree; its crds.yaml is the one calico_crds_checksums names),
# nodelocaldns $NODELOCALDNS_VERSION, dns-autoscaler $DNSAUTOSCALER_VERSION, nginx-proxy (E2E_CNI=calico);
# the image kubespray pulls as nginx $NGINX_IMAGE_TAG is Debian's nginx $ng."
  fi
  printf '%s\n' "${k[@]}" "${e[@]}" "${c[@]}" "${r[@]}" "${n[@]}" "${cr[@]}" "${nd[@]}" "${h[@]}" "${ca[@]}" >&2
  local kdl=$FILES/dl.k8s.io/release/v$KUBERNETES_VERSION/bin/linux/$ARCH
  cat <<YAML
# kubespray $rel inventory variables for the artefacts under $FILES
# (files_repo) and $DIR/build (images); made by test/e2e/artefacts.sh cluster $rel.
# The release's defaults for the rest: kube_version $KUBERNETES_VERSION, etcd $ETCD_VERSION, containerd $CONTAINERD_VERSION,
# runc $RUNC_VERSION, cni $CNI_VERSION, nerdctl $NERDCTL_VERSION, helm $HELM_VERSION, pause $PAUSE_VERSION, coredns $COREDNS_VERSION,
$plugin
YAML
  for l in "${NOT_DEFAULT[@]}"; do
    # "variable value why..."
    local var=${l%% *} rest=${l#* }
    printf '# Not the release'"'"'s %s\n%s: "%s"\n' "${rest#* }" "$var" "${rest%% *}"
  done
  cat <<YAML
kubeadm_binary_checksum: "$(sum_of "$kdl/kubeadm" "${k[@]}")"
kubelet_binary_checksum: "$(sum_of "$kdl/kubelet" "${k[@]}")"
kubectl_binary_checksum: "$(sum_of "$kdl/kubectl" "${k[@]}")"
etcd_binary_checksum: "${e[0]#* }"
containerd_archive_checksum: "${c[0]#* }"
runc_binary_checksum: "${r[0]#* }"
cni_binary_checksum: "${n[0]#* }"
crictl_binary_checksum: "${cr[0]#* }"
nerdctl_archive_checksum: "${nd[0]#* }"
helm_archive_checksum: "${h[0]#* }"
YAML
  # calico's first line is calicoctl (files_repo), its second crds.yaml.
  [[ $cni != calico ]] || echo "calicoctl_binary_checksum: \"${ca[0]#* }\""
}

case ${1:-} in
  etcd | kubernetes | containerd | runc | cni | crictl | nerdctl | helm | pause | coredns | flannel | calico | nginx) need; "$@" ;;
  metrics-server | local-path-provisioner | flannel-cni-plugin | node-cache | cluster-proportional-autoscaler)
    need; f=${1//-/_}; shift; "$f" "$@" ;;
  cluster) need; shift; cluster "$@" ;;
  *) sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; exit 2 ;;
esac
