#!/usr/bin/env bash
# local-base.sh ENGINE NODE: makes, where the Dockerfile's default base (node:24-bookworm-slim)
# cannot be pulled, a local image to build on instead, laid out as that base is: a minimal Debian
# bookworm (mmdebstrap's minbase, trimmed of docs, man pages and locales as Debian's slim images
# are), the Node.js binary NODE (the project's `node` devDependency) in /usr/local/bin, npm beside
# it in /usr/local/lib/node_modules, and the user `node` with uid and gid 1000.
#
# Two things differ from the published base, both for the build stages' `npm ci`: the base has
# Debian's ca-certificates, and npm's global config (/usr/local/etc/npmrc) tells npm to trust that
# bundle (`cafile`), so a build on a machine whose HTTPS goes through an intercepting proxy can
# lend the bundle it trusts for the build's duration (scripts/image/build.ts) and nothing of the
# machine stays in an image.
#
# The image is tagged with a key of everything that determines it (this script, the Node and npm
# versions), so it is made once per machine and reused until one of them changes: the engine's
# storage is its cache. Prints the tag last.
set -euo pipefail

engine=$1
node_bin=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${KAOS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kaos-operator}
cache="$cache_root/image"
mkdir -p "$cache"

log() { printf '[image] %s\n' "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }

suite=bookworm
# The npm that Node 24.21.0 ships (the node devDependency's release); only the build stages use it.
npm_version=11.19.0
node_version=$("$node_bin" --version) || fail "$node_bin does not run"
node_version=${node_version#v}
key=$( { cat "${BASH_SOURCE[0]}"; echo "$suite $node_version $npm_version"; } | sha256sum | cut -c1-12)
tag="localhost/kaos-operator-base:node-$node_version-$key"

if "$engine" image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag"
  exit 0
fi

npm_tgz="$cache/npm-$npm_version.tgz"
if [ ! -s "$npm_tgz" ]; then
  log "fetching npm $npm_version"
  (cd "$cache" && npm pack --silent "npm@$npm_version" >/dev/null) || fail "npm pack npm@$npm_version"
fi

log "making $tag: Debian $suite (mmdebstrap), Node.js $node_version, npm $npm_version, user node (1000)"
start=$SECONDS
command -v mmdebstrap >/dev/null 2>&1 || "$here/install-packages.sh" mmdebstrap
export NODE_BIN=$node_bin NPM_TGZ=$npm_tgz
out=$(mktemp)
trap 'rm -f "$out"' EXIT
quiet=(); [ "$engine" = podman ] && quiet=(--quiet) # docker import prints no progress
# mmdebstrap writes the root filesystem as a tarball to stdout, which the engine imports. The
# hooks run on this machine with the root filesystem's path as $1.
# The merged-usr hook lays out /usr as Debian's own images do, without the usrmerge package (and
# the perl it needs).
if ! mmdebstrap --variant=minbase --include=ca-certificates --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/groff/*' \
  --dpkgopt='path-exclude=/usr/share/lintian/*' \
  --customize-hook='install -m 0755 "$NODE_BIN" "$1/usr/local/bin/node"' \
  --customize-hook='mkdir -p "$1/usr/local/lib/node_modules/npm" && tar -xzf "$NPM_TGZ" -C "$1/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner' \
  --customize-hook='ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm" && ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"' \
  --customize-hook='mkdir -p "$1/usr/local/etc" && printf "cafile=/etc/ssl/certs/ca-certificates.crt\nupdate-notifier=false\n" >"$1/usr/local/etc/npmrc"' \
  --customize-hook='chroot "$1" groupadd --gid 1000 node && chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node' \
  "$suite" - \
  "deb http://deb.debian.org/debian $suite main" \
  "deb http://deb.debian.org/debian $suite-updates main" \
  "deb http://deb.debian.org/debian-security $suite-security main" \
  2>"$out" | "$engine" import "${quiet[@]}" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV NODE_VERSION=$node_version" \
    --change 'CMD ["node"]' \
    - "$tag" >/dev/null; then
  tail -n 30 "$out" >&2
  fail "making the local base $tag"
fi
log "  made in $((SECONDS - start))s"
# An older key's base is 220 MB that nothing will build on again (an image built on it keeps its
# layers).
for old in $("$engine" images --format '{{.Repository}}:{{.Tag}}' "${tag%%:*}"); do
  [ "$old" = "$tag" ] || "$engine" rmi "$old" >/dev/null 2>&1 || true
done
echo "$tag"
