#!/usr/bin/env bash
# Checks the arm64 .deb that `cpack -G DEB` makes in build-rpi3/: its
# architecture and files, that its binaries are stripped AArch64 programs,
# that every shared library they load is shipped by a package it declares as
# a dependency, and that the packaged binaries start (under qemu) against the
# arm64 sysroot. Usage: scripts/check-deb.sh <package.deb>
set -euo pipefail
cd "$(dirname "$0")/.."
deb=$1
cache=${FEDBERRY_SYSROOT_CACHE:-$PWD/.cache/sysroot-arm64}
sysroot=$(scripts/make-sysroot.sh)
index=$cache/file-packages.txt
fail() { echo "check-deb: $*" >&2; exit 1; }

[[ $(dpkg-deb -f "$deb" Architecture) == arm64 ]] || fail "not arm64: $deb"
files=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in ./usr/bin/fedberry-client ./usr/bin/fedberry-server ./usr/bin/fedberry-ckpt \
  ./usr/bin/fedberry-pki ./usr/lib/sysusers.d/fedberry.conf \
  ./usr/lib/systemd/system/fedberry-client.service \
  ./usr/lib/systemd/system/fedberry-server.service \
  ./etc/default/fedberry-client ./etc/default/fedberry-server; do
  grep -qx -- "$f" <<<"$files" || fail "$deb lacks $f"
done
conffiles=$(dpkg-deb -I "$deb" conffiles)
grep -qx /etc/default/fedberry-client <<<"$conffiles" ||
  fail "/etc/default/fedberry-client is not a conffile"
dpkg-deb -I "$deb" postinst | grep -q systemd-sysusers ||
  fail "$deb has no postinst creating the fedberry user"

depends=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' |
  sed -E 's/^ *//; s/ *\(.*//; s/ *$//')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp"
for bin in "$tmp"/usr/bin/*; do
  name=$(basename "$bin")
  # Captured first: grep -q closing a pipe early would fail under pipefail.
  header=$(aarch64-linux-gnu-readelf -h "$bin")
  sections=$(aarch64-linux-gnu-readelf -S "$bin")
  grep -q 'Machine: *AArch64' <<<"$header" ||
    fail "$name is not an AArch64 program"
  if grep -qE '\.symtab|\.debug_' <<<"$sections"; then
    fail "$name is not stripped"
  fi
  for lib in $(aarch64-linux-gnu-readelf -d "$bin" |
    sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p'); do
    pkg=$(awk -v lib="$lib" '$2 == "/usr/lib/aarch64-linux-gnu/" lib ||
      $2 == "/lib/aarch64-linux-gnu/" lib { print $1; exit }' "$index")
    [[ -n $pkg ]] || fail "$name needs $lib, which no arm64 package ships"
    grep -qx -- "$pkg" <<<"$depends" ||
      fail "$name needs $lib from $pkg, which the package does not depend on"
  done
  # Starting resolves every library; --help prints the usage and exits.
  usage=$(qemu-aarch64-static -L "$sysroot" "$bin" --help 2>&1 || true)
  grep -q "^Usage: $name" <<<"$usage" ||
    fail "$name does not start under qemu: $usage"
  echo "check-deb: $name: AArch64, stripped, $(stat -c %s "$bin") bytes"
done
echo "check-deb: $(basename "$deb") ok ($(stat -c %s "$deb") bytes;" \
  "Depends: $(dpkg-deb -f "$deb" Depends))"
