#!/usr/bin/env bash
# Builds every binary of the local control plane and the e2e tests from this folder's one Go
# module (go.mod, written by gen-gomod.sh): etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl (one Kubernetes release), kwok (the fake kubelet; its Stage rules are in
# kwok/stages/), helm, cert-manager's controller and cainjector (cert-manager/cmd/, with
# cert-manager's CRDs copied beside bin/) and lua-health (lua-health/: Argo CD's Lua runtime for
# the documented health check) — with one `go build`, so that every package is compiled once and
# the links overlap the compiles. Into a cache outside the repo, a directory per build. Envoy
# Gateway's CRDs are copied beside bin/ too, out of its Go module (envoy-gateway.version), which is
# only downloaded for them: nothing of it is built, so it is no part of go.mod.
#
# Another Kubernetes minor (build-version.sh) builds from a copy of this script beside that minor's
# module, with KAOS_CLIENTS_BIN naming the default minor's bin directory: then only the release's
# commands and etcd are built, and the clients (kwok, helm, cert-manager's, lua-health) and the
# CRDs beside them are linked in from there (versions/clients says why).
#
# Skips the build when bin/.stamp names this exact build (a hash of go.mod, go.sum, our mains and
# the flags) and every binary is there; otherwise the Go build cache makes a rebuild pay only for
# what changed. Prints the cache's bin directory last.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version_of() { awk -v m="$1" '$1 == m { print $2; exit }' "$here/go.mod"; }
k8s_version=$(version_of k8s.io/kubernetes)
cache_root=${KAOS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kaos-operator}
mkdir -p "$cache_root"
# One build at a time per cache (parallel test files may all ask at once); the others wait here,
# then find the binaries in place and skip.
exec 9>"$cache_root/.build.lock"
flock 9

log() { printf '[cluster-build] %s\n' "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }

# name → package, in the order the launcher needs them: the release's, then the clients.
RELEASE_BINARIES=(
  "kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver"
  "kube-controller-manager=k8s.io/kubernetes/cmd/kube-controller-manager"
  "kube-scheduler=k8s.io/kubernetes/cmd/kube-scheduler"
  "kubectl=k8s.io/kubernetes/cmd/kubectl"
  "etcd=./etcd"
)
CLIENT_BINARIES=(
  "kwok=sigs.k8s.io/kwok/cmd/kwok"
  "helm=helm.sh/helm/v3/cmd/helm"
  "cert-manager-controller=./cert-manager/cmd/cert-manager-controller"
  "cert-manager-cainjector=./cert-manager/cmd/cert-manager-cainjector"
  "lua-health=./lua-health"
)
clients=${KAOS_CLIENTS_BIN:-}
if [ -n "$clients" ]; then
  BINARIES=("${RELEASE_BINARIES[@]}")
else
  BINARIES=("${RELEASE_BINARIES[@]}" "${CLIENT_BINARIES[@]}")
fi

minor=$(echo "$k8s_version" | cut -d. -f2)
# Every binary's version, stamped by the linker: the Kubernetes commands' as the release's own
# build does (or they report v0.0.0-master, and helm's kubeVersion and kubectl's skew checks
# misbehave), helm's and kwok's their releases', and ours (cert-manager's mains, lua-health) the
# stamp. One -X per variable for all binaries: a variable a binary does not link is ignored.
stamp_inputs() {
  cat "$here/go.mod" "$here/go.sum" "${BASH_SOURCE[0]}"
  local dir
  # A minor's copy (build-version.sh) has etcd/ alone.
  for dir in etcd cert-manager lua-health; do [ ! -d "$here/$dir" ] || find "$here/$dir" -name '*.go'; done | sort | xargs cat
}
stamp="$k8s_version+$(stamp_inputs | sha256sum | cut -c1-12)"
# A directory per build, so that checkouts of two versions of this folder (two branches, two
# worktrees) sharing the cache each keep theirs instead of rebuilding over each other's.
bin="$cache_root/cluster-${stamp/+/-}/bin"
ldflags="-s -w -X main.version=$stamp"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  ldflags+=" -X $pkg.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
done
ldflags+=" -X helm.sh/helm/v3/internal/version.version=$(version_of helm.sh/helm/v3)"
ldflags+=" -X sigs.k8s.io/kwok/pkg/consts.Version=$(version_of sigs.k8s.io/kwok)"

complete() {
  [ "$(cat "$bin/.stamp" 2>/dev/null)" = "$stamp" ] || return 1
  local entry
  for entry in "${BINARIES[@]}"; do [ -x "$bin/${entry%%=*}" ] || return 1; done
}
# A build of the clients elsewhere: its binaries hard-linked in (one copy on disk; a copy where the
# cache spans file systems), its CRD folders copied, again whenever that build changes.
link_clients() {
  local entry name crds from=$1
  [ "$(cat "$bin/.clients" 2>/dev/null)" = "$(cat "$from/.stamp")" ] && return 0
  for entry in "${CLIENT_BINARIES[@]}"; do
    name=${entry%%=*}
    [ -x "$from/$name" ] || fail "the clients' build $from has no $name"
    ln -f "$from/$name" "$bin/$name" 2>/dev/null || cp -f "$from/$name" "$bin/$name"
  done
  for crds in cert-manager-crds envoy-gateway-crds; do
    rm -rf "$bin/../$crds" && cp -R "$from/../$crds" "$bin/../$crds"
  done
  cat "$from/.stamp" >"$bin/.clients"
}

if ! complete; then
  command -v go >/dev/null 2>&1 || fail "no Go toolchain on PATH: install Go ≥ $(awk '$1 == "go" { print $2 }' "$here/go.mod") to build the control plane"
  log "building ${#BINARIES[@]} binaries ($stamp) — from an empty Go build cache this takes minutes"
  mkdir -p "$bin"
  out=$(mktemp) tmp=$(mktemp -d "$bin/../build.XXXXXX")
  packages=()
  for entry in "${BINARIES[@]}"; do packages+=("${entry#*=}"); done
  start=$SECONDS
  # -v names each package as it is compiled: the progress below, and what a failure was doing.
  # -dwarf=false: the compiler writes no debug info the linker's -w would drop anyway; 12% less
  # CPU (docs/development.md). Stack traces keep their file and line (pclntab is not DWARF).
  (cd "$here" && CGO_ENABLED=0 GOFLAGS=-mod=mod GOWORK=off go build -v -trimpath -gcflags=all=-dwarf=false -ldflags "$ldflags" -o "$tmp/" "${packages[@]}") >"$out" 2>&1 &
  pid=$!
  # ready: each binary as its link lands in $tmp, so a slow one shows (npm test's phase table).
  declare -A ready=()
  report_ready() {
    local entry name
    for entry in "${BINARIES[@]}"; do
      name=$(basename "${entry#*=}")
      if [ -z "${ready[$name]:-}" ] && [ -e "$tmp/$name" ]; then ready[$name]=1; log "  ready: ${entry%%=*} at $((SECONDS - start))s"; fi
    done
  }
  ticks=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 2
    report_ready
    ticks=$((ticks + 1))
    [ $((ticks % 5)) = 0 ] && kill -0 "$pid" 2>/dev/null && log "  … $((SECONDS - start))s, $(grep -c '^[a-z]' "$out" || true) packages compiled"
  done
  report_ready
  if ! wait "$pid"; then
    tail -n 40 "$out" >&2
    rm -rf "$out" "$tmp"
    fail "go build of ${packages[*]}"
  fi
  for entry in "${BINARIES[@]}"; do
    name=${entry%%=*} built=$(basename "${entry#*=}")
    mv "$tmp/$built" "$bin/$name"
  done
  rm -rf "$out" "$tmp"
  echo "$stamp" >"$bin/.stamp"
  log "  done in $((SECONDS - start))s"
fi
# Builds of other versions of this folder are left for the checkouts that use them; those unused
# for a week go (each holds about 600 MB of binaries).
touch "$(dirname "$bin")"
find "$cache_root" -mindepth 1 -maxdepth 1 \( -name 'cluster-*' -o -name 'k8s-v*' \) ! -path "$(dirname "$bin")" \
  ! -newermt '7 days ago' -exec rm -rf {} + 2>/dev/null || true

if [ -n "$clients" ]; then
  link_clients "$clients"
  log "control plane $k8s_version ready in $bin (its clients from $clients)"
  echo "$bin"
  exit 0
fi

# cert-manager's CRDs, from its module (the chart's e2e tests install them before its binaries run).
cm_version=$(version_of github.com/cert-manager/cert-manager)
cm_crds="$bin/../cert-manager-crds"
if [ "$(cat "$cm_crds/.version" 2>/dev/null)" != "$cm_version" ]; then
  cm_src=$(cd "$here" && GOFLAGS=-mod=mod go mod download -json "github.com/cert-manager/cert-manager@$cm_version" | awk -F'"' '$2 == "Dir" { print $4 }')
  rm -rf "$cm_crds" && mkdir -p "$cm_crds"
  cp "$cm_src"/deploy/crds/*.yaml "$cm_crds/"
  echo "$cm_version" >"$cm_crds/.version"
fi
# Envoy Gateway's CRDs (its SecurityPolicy, and the Gateway API release it ships), as its Helm
# chart carries them. The e2e tests install them into a stack that asks for them
# (scripts/local-stack.ts), so both a cluster with and one without them run. Downloaded outside
# this folder's module, which does not require it.
eg_version=$(cat "$here/envoy-gateway.version")
eg_crds="$bin/../envoy-gateway-crds"
if [ "$(cat "$eg_crds/.version" 2>/dev/null)" != "$eg_version" ]; then
  command -v go >/dev/null 2>&1 || fail "no Go toolchain on PATH: needed to download Envoy Gateway $eg_version's CRDs"
  scratch=$(mktemp -d)
  eg_src=$(cd "$scratch" && GOFLAGS= GOWORK=off go mod download -json "github.com/envoyproxy/gateway@$eg_version" | awk -F'"' '$2 == "Dir" { print $4 }')
  rmdir "$scratch"
  [ -n "$eg_src" ] || fail "go mod download github.com/envoyproxy/gateway@$eg_version"
  rm -rf "$eg_crds" && mkdir -p "$eg_crds"
  cp "$eg_src"/charts/gateway-helm/charts/crds/crds/gatewayapi-crds.yaml "$eg_src"/charts/gateway-helm/charts/crds/crds/generated/*.yaml "$eg_crds/"
  # The module cache is read-only; the copies need not be.
  chmod u+w "$eg_crds"/*.yaml
  echo "$eg_version" >"$eg_crds/.version"
fi
log "control plane $k8s_version ready in $bin"
echo "$bin"
