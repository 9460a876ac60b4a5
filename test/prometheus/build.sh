#!/usr/bin/env bash
# Builds promtool (the Prometheus rule checker and rule unit-test runner: test/prometheus/README.md)
# from this folder's Go module, which requires only the Prometheus module: a module of its own so
# that its dependency versions never move the control plane's (test/cluster/go.mod). Built with
# Prometheus' `remove_all_sd` tag, which leaves out the service-discovery plugins (AWS, Azure,
# GCE…) that promtool never uses to evaluate rules; the flags are the control plane's
# (test/cluster/build.sh), so that the standard library's packages come from the same Go build
# cache entries.
#
# Into the control plane's cache root, a directory per build (a hash of go.mod, go.sum, this
# script); skipped when that build is complete. Prints the binary's path last.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${KAOS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kaos-operator}
mkdir -p "$cache_root"
exec 9>"$cache_root/.prometheus-build.lock"
flock 9

log() { printf '[prometheus-build] %s\n' "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }

version=$(awk '$1 == "github.com/prometheus/prometheus" { print $2; exit }' "$here/go.mod")
stamp="$version+$(cat "$here/go.mod" "$here/go.sum" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-12)"
bin="$cache_root/prometheus-${stamp/+/-}/bin"

if [ "$(cat "$bin/.stamp" 2>/dev/null)" != "$stamp" ] || [ ! -x "$bin/promtool" ]; then
  command -v go >/dev/null 2>&1 || fail "no Go toolchain on PATH: install Go ≥ $(awk '$1 == "go" { print $2 }' "$here/go.mod") to build promtool"
  log "building promtool ($stamp)"
  mkdir -p "$bin"
  tmp=$(mktemp -d "$bin/../build.XXXXXX")
  start=$SECONDS
  if ! (cd "$here" && CGO_ENABLED=0 GOFLAGS=-mod=mod GOWORK=off go build -trimpath -tags remove_all_sd -gcflags=all=-dwarf=false \
      -ldflags "-s -w -X github.com/prometheus/common/version.Version=${version#v}" -o "$tmp/" github.com/prometheus/prometheus/cmd/promtool) >"$tmp/log" 2>&1; then
    tail -n 40 "$tmp/log" >&2
    rm -rf "$tmp"
    fail "go build of promtool"
  fi
  mv "$tmp/promtool" "$bin/promtool"
  rm -rf "$tmp"
  echo "$stamp" >"$bin/.stamp"
  log "  done in $((SECONDS - start))s"
fi
touch "$(dirname "$bin")"
find "$cache_root" -mindepth 1 -maxdepth 1 -name 'prometheus-*' ! -path "$(dirname "$bin")" ! -newermt '7 days ago' -exec rm -rf {} + 2>/dev/null || true
echo "$bin/promtool"
