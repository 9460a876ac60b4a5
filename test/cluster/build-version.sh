#!/usr/bin/env bash
# Builds the local control plane of one Kubernetes version and prints its bin directory last, as
# build.sh does. The version: the first argument, else KAOS_KUBE_VERSION, else the default minor;
# a minor (1.37, v1.37) or that minor's full version (v1.37.2) as versions/table states it.
#
# The default minor (the one test/cluster/go.mod requires) is build.sh as it is. Any other is
# build.sh run on a copy of its inputs for the release alone (itself, etcd/, and versions/<minor>/'s
# go.mod and go.sum), made in the cache beside the builds, after the default minor's build, whose
# clients it links in (KAOS_CLIENTS_BIN; versions/clients says why): build.sh stays the one build,
# and its stamp (a hash of go.mod, go.sum, itself and our mains) keeps each minor's binaries in a
# cache directory of their own.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail() { printf '[cluster-build] FAILED: %s\n' "$*" >&2; exit 1; }

asked=${1:-${KAOS_KUBE_VERSION:-}}
default=$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$here/go.mod")
[ -n "$asked" ] || exec bash "$here/build.sh"

version=v${asked#v}
minor=$(cut -d. -f1,2 <<<"${version#v}")
row=$(awk -v m="$minor" '$1 == m' "$here/versions/table")
[ -n "$row" ] || fail "Kubernetes $asked: versions/table has no row for $minor (it has $(awk '/^[0-9]/ { printf "%s ", $1 }' "$here/versions/table"))"
read -r _ k8s _ <<<"$row"
case "$version" in
  "v$minor" | "$k8s") ;;
  *) fail "Kubernetes $asked: the $minor build is $k8s (versions/table); ask for $minor or $k8s" ;;
esac
[ "$k8s" != "$default" ] || exec bash "$here/build.sh"
[ -f "$here/versions/$minor/go.mod" ] || fail "Kubernetes $minor: no versions/$minor/go.mod; write it with test/cluster/gen-gomod.sh $minor"

# The clients, from the default minor's build (built first when it is not in the cache).
clients=$(bash "$here/build.sh" | tail -n 1)
[ -d "$clients" ] || fail "the default minor's build printed no bin directory"

cache_root=${KAOS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kaos-operator}
src="$cache_root/src-$minor"
mkdir -p "$cache_root"
# Parallel test files ask at once: one copies (only when something changed), the others wait.
exec 8>"$cache_root/.src-$minor.lock"
flock 8
fresh=$(mktemp -d "$cache_root/.src-$minor.XXXXXX")
cp -R "$here/build.sh" "$here/etcd" "$fresh/"
cp "$here/versions/$minor/go.mod" "$here/versions/$minor/go.sum" "$fresh/"
if diff -rq "$fresh" "$src" >/dev/null 2>&1; then
  rm -rf "$fresh"
else
  rm -rf "$src" && mv "$fresh" "$src"
fi
flock -u 8
KAOS_CLIENTS_BIN=$clients exec bash "$src/build.sh"
