#!/usr/bin/env bash
# install-packages.sh PACKAGE...: installs the Debian packages `npm run image` needs (podman and
# runc for the engine, mmdebstrap for a local base) that are not installed yet, so a fresh machine
# needs nothing installed by hand. Installed already: returns at once, without apt. Otherwise it
# needs root and apt-get, and says which packages to install when it has neither.
set -euo pipefail

log() { printf '[image] %s\n' "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }

missing=()
for pkg in "$@"; do
  # "install ok installed" is dpkg's word for a package that is really there (not just known).
  [ "$(dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null || true)" = "install ok installed" ] || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

command -v apt-get >/dev/null 2>&1 || fail "no apt-get here: install ${missing[*]} (or Docker) with this system's package manager"
[ "$(id -u)" -eq 0 ] || fail "installing ${missing[*]} needs root: run 'apt-get install --no-install-recommends ${missing[*]}' as root, or npm run image as root"

log "installing ${missing[*]} (apt-get)"
start=$SECONDS
export DEBIAN_FRONTEND=noninteractive
# Another apt on this machine (a parallel run, an engineer) holds dpkg's lock for a while: wait
# for it rather than fail.
apt_opts=(-q -o DPkg::Lock::Timeout=600)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! apt-get "${apt_opts[@]}" update >"$out" 2>&1; then
  tail -n 20 "$out" >&2
  fail "apt-get update"
fi
# Recommends left out: podman runs here without buildah's, criu's or slirp4netns' extras.
if ! apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}" >"$out" 2>&1; then
  tail -n 40 "$out" >&2
  fail "apt-get install ${missing[*]}"
fi
log "  installed in $((SECONDS - start))s"
