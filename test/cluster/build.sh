#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl (one Kubernetes
# release, from this folder's go.mod), kwok (kwok/: the fake kubelet for the local nodes), helm, and cert-manager's controller and cainjector (from the module in
# cert-manager/, with its CRDs copied beside bin/), Envoy Gateway's CRDs (copied from its module, no
# build) and lua-health (lua-health/: Argo CD's Lua runtime
# for the documented health check) into a cache outside the repo, keyed by version.
# Skips every binary that already reports its version. Prints the cache's bin directory last.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
k8s_version=$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$here/go.mod")
etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" { print $2; exit }' "$here/go.mod")
helm_version=$(cat "$here/helm.version")
cache_root=${KAOS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kaos-operator}
bin="$cache_root/k8s-$k8s_version/bin"
mkdir -p "$bin"
# One build at a time per cache (parallel test files may all ask at once); the others wait here,
# then find the binaries in place and skip.
exec 9>"$cache_root/.build.lock"
flock 9

log() { printf '[cluster-build] %s\n' "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }

need_go() {
  command -v go >/dev/null 2>&1 || fail "no Go toolchain on PATH: install Go ≥ $(awk '$1 == "go" { print $2 }' "$here/go.mod") to build the control plane"
}

# run CMD...: runs a build command, printing a package count every few seconds so a
# minutes-long build visibly progresses, and the failing command in full if it fails.
run() {
  local out; out=$(mktemp)
  local start=$SECONDS
  ( "$@" ) >"$out" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 10
    kill -0 "$pid" 2>/dev/null && log "  … $((SECONDS - start))s, $(grep -c '^[a-z]' "$out" || true) packages compiled"
  done
  if ! wait "$pid"; then
    tail -n 40 "$out" >&2
    rm -f "$out"
    fail "command: $*"
  fi
  rm -f "$out"
  log "  done in $((SECONDS - start))s"
}

minor=$(echo "$k8s_version" | cut -d. -f2)
build_date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
done

reports() { # reports BIN EXPECTED ARGS... : does BIN print EXPECTED when asked its version?
  local b=$1 want=$2 out; shift 2
  [ -x "$bin/$b" ] || return 1
  # Capture first: with pipefail, grep -q closing the pipe early would fail the check.
  out=$("$bin/$b" "$@" 2>/dev/null) || return 1
  grep -qF -- "$want" <<<"$out"
}

export CGO_ENABLED=0 GOFLAGS=-mod=mod
cd "$here"
build() { # build NAME PACKAGE
  need_go
  log "building $1 ($2) — the first build takes minutes"
  run go build -v -trimpath -ldflags "$ldflags" -o "$bin/$1.tmp" "$2"
  mv "$bin/$1.tmp" "$bin/$1"
}

reports kube-apiserver "Kubernetes $k8s_version" --version || build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
reports kube-controller-manager "Kubernetes $k8s_version" --version || build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager
reports kube-scheduler "Kubernetes $k8s_version" --version || build kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler
reports kubectl "$k8s_version" version --client || build kubectl k8s.io/kubernetes/cmd/kubectl
reports etcd "etcd Version: ${etcd_version#v}" --version || build etcd ./etcd
if ! reports helm "$helm_version" version --short; then
  need_go
  log "building helm $helm_version"
  run env GOBIN="$bin" go install -v -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version" "helm.sh/helm/v3/cmd/helm@$helm_version"
fi

# cert-manager: its own module (it pins its own k8s.io/* versions). The stamp is the release plus
# a hash of our mains and go.sum, so editing either invalidates the cached binaries.
cm_dir="$here/cert-manager"
cm_version=$(awk '$1 == "github.com/cert-manager/cert-manager" { print $2; exit }' "$cm_dir/go.mod")
cm_stamp="$cm_version+$(cat "$cm_dir"/go.sum "$cm_dir"/cmd/*/main.go | sha256sum | cut -c1-12)"
for cm in cert-manager-controller cert-manager-cainjector; do
  if ! reports "$cm" "$cm_stamp" --version; then
    need_go
    log "building $cm $cm_stamp — the first build takes minutes"
    (cd "$cm_dir" && run go build -v -trimpath -ldflags "-s -w -X main.version=$cm_stamp" -o "$bin/$cm.tmp" "./cmd/$cm")
    mv "$bin/$cm.tmp" "$bin/$cm"
  fi
done
cm_crds="$bin/../cert-manager-crds"
if [ "$(cat "$cm_crds/.version" 2>/dev/null)" != "$cm_version" ]; then
  cm_src=$(cd "$cm_dir" && go mod download -json "github.com/cert-manager/cert-manager@$cm_version" | awk -F'"' '$2 == "Dir" { print $4 }')
  rm -rf "$cm_crds" && mkdir -p "$cm_crds"
  cp "$cm_src"/deploy/crds/*.yaml "$cm_crds/"
  echo "$cm_version" >"$cm_crds/.version"
fi
# Envoy Gateway's CRDs (its SecurityPolicy, and the Gateway API release it ships), copied out of its
# Go module as its Helm chart carries them: nothing to build. The e2e tests install them into a
# stack that asks for them (scripts/local-stack.ts), so both a cluster with and one without them run.
eg_version=$(cat "$here/envoy-gateway.version")
eg_crds="$bin/../envoy-gateway-crds"
if [ "$(cat "$eg_crds/.version" 2>/dev/null)" != "$eg_version" ]; then
  need_go
  eg_src=$(cd "$(mktemp -d)" && GOFLAGS= go mod download -json "github.com/envoyproxy/gateway@$eg_version" | awk -F'"' '$2 == "Dir" { print $4 }')
  [ -n "$eg_src" ] || fail "go mod download github.com/envoyproxy/gateway@$eg_version"
  rm -rf "$eg_crds" && mkdir -p "$eg_crds"
  cp "$eg_src"/charts/gateway-helm/charts/crds/crds/gatewayapi-crds.yaml "$eg_src"/charts/gateway-helm/charts/crds/crds/generated/*.yaml "$eg_crds/"
  chmod u+w "$eg_crds"/*.yaml
  echo "$eg_version" >"$eg_crds/.version"
fi
# kwok: its own module (it pins its own k8s.io/* versions), stamped like cert-manager's. Its Stage
# rules (what a fake node and pod go through) are read by the launcher from kwok/stages/.
kwok_dir="$here/kwok"
kwok_version=$(awk '$1 == "sigs.k8s.io/kwok" { print $2; exit }' "$kwok_dir/go.mod")
kwok_stamp="$kwok_version+$(cat "$kwok_dir"/go.sum | sha256sum | cut -c1-12)"
if ! reports kwok "$kwok_stamp" --version; then
  need_go
  log "building kwok $kwok_stamp — the first build takes minutes"
  (cd "$kwok_dir" && run go build -v -trimpath -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$kwok_stamp" -o "$bin/kwok.tmp" sigs.k8s.io/kwok/cmd/kwok)
  mv "$bin/kwok.tmp" "$bin/kwok"
fi
# lua-health: Argo CD's Lua runtime (gopher-lua) for testing docs/argocd/health.lua. Seconds to
# build; stamped like cert-manager's so an edit of its main or go.sum rebuilds it.
lh_dir="$here/lua-health"
lh_stamp="lua-health+$(cat "$lh_dir"/go.sum "$lh_dir"/main.go | sha256sum | cut -c1-12)"
if ! reports lua-health "$lh_stamp" --version; then
  need_go
  log "building lua-health $lh_stamp"
  (cd "$lh_dir" && run go build -v -trimpath -ldflags "-s -w -X main.version=$lh_stamp" -o "$bin/lua-health.tmp" .)
  mv "$bin/lua-health.tmp" "$bin/lua-health"
fi
log "control plane $k8s_version ready in $bin"
echo "$bin"
