#!/usr/bin/env bash
# Checks the arm64 .deb that `cpack -G DEB` makes in build-rpi3/: its
# architecture and files, that its binaries are stripped AArch64 programs
# that load LibTorch from the package's repaired copies in /usr/lib/fedberry,
# that every shared library they and the copies load is shipped by the
# package or a package it declares as a dependency, that it declares no
# dependency nothing loads (libtorch1.13 above all), and that the packaged
# binaries start (under qemu as a Cortex-A53, every symbol bound at once)
# against the arm64 sysroot. Usage: scripts/check-deb.sh <package.deb>
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
  ./usr/bin/fedberry-pki ./usr/bin/fedberry-dp ./usr/lib/sysusers.d/fedberry.conf \
  ./usr/lib/systemd/system/fedberry-client.service \
  ./usr/lib/systemd/system/fedberry-server.service \
  ./usr/lib/fedberry/libtorch_cpu.so.1.13 ./usr/lib/fedberry/libc10.so.1.13 \
  ./etc/default/fedberry-client ./etc/default/fedberry-server \
  ./usr/share/fedberry/grafana/fedberry.json; do
  grep -qx -- "$f" <<<"$files" || fail "$deb lacks $f"
done
conffiles=$(dpkg-deb -I "$deb" conffiles)
grep -qx /etc/default/fedberry-client <<<"$conffiles" ||
  fail "/etc/default/fedberry-client is not a conffile"
# Captured first, here and below: grep -q leaving a pipe early fails the
# writer with SIGPIPE, and under pipefail the check then fails at random.
postinst=$(dpkg-deb -I "$deb" postinst)
grep -q systemd-sysusers <<<"$postinst" ||
  fail "$deb has no postinst creating the fedberry user"

depends=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' |
  sed -E 's/^ *//; s/ *\(.*//; s/ *$//')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp"
# Every library an ELF file of the package loads: shipped beside it in
# /usr/lib/fedberry, or by a package it depends on; "used" collects those.
used=()
check_needed() {
  local elf=$1 lib pkg runpath
  # A RUNPATH folder is searched first (the LibTorch copy's BLAS).
  runpath=$(aarch64-linux-gnu-readelf -d "$elf" |
    sed -nE 's/.*\(RUNPATH\).*\[(.*)\]/\1/p' | tr ':' ' ')
  for lib in $(aarch64-linux-gnu-readelf -d "$elf" |
    sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p'); do
    [[ -e $tmp/usr/lib/fedberry/$lib ]] && continue
    pkg=
    for dir in $runpath; do
      [[ -n $pkg ]] || pkg=$(awk -v f="$dir/$lib" '$2 == f { print $1; exit }' "$index")
    done
    [[ -n $pkg ]] || pkg=$(awk -v lib="$lib" '$2 == "/usr/lib/aarch64-linux-gnu/" lib ||
      $2 == "/lib/aarch64-linux-gnu/" lib || $2 == "/usr/lib/" lib ||
      $2 == "/lib/" lib { print $1; exit }' "$index")
    # A library behind Debian's alternatives (libblas.so.3, liblapack.so.3)
    # is shipped in a folder of its own (blas/libblas.so.3).
    [[ -n $pkg ]] || pkg=$(awk -v lib="$lib" '
      index($2, "/usr/lib/aarch64-linux-gnu/") == 1 &&
      $2 ~ "^/usr/lib/aarch64-linux-gnu/[a-z]+/" &&
      substr($2, length($2) - length(lib) + 1) == lib &&
      substr($2, length($2) - length(lib), 1) == "/" { print $1; exit }' "$index")
    [[ -n $pkg ]] || fail "$(basename "$elf") needs $lib, which no arm64 package ships"
    grep -qx -- "$pkg" <<<"$depends" ||
      fail "$(basename "$elf") needs $lib from $pkg, which the package does not depend on"
    used+=("$pkg")
  done
}
for lib in "$tmp"/usr/lib/fedberry/*; do
  check_needed "$lib"
done
for bin in "$tmp"/usr/bin/*; do
  name=$(basename "$bin")
  # Captured first: grep -q closing a pipe early would fail under pipefail.
  header=$(aarch64-linux-gnu-readelf -h "$bin")
  sections=$(aarch64-linux-gnu-readelf -S "$bin")
  dynamic=$(aarch64-linux-gnu-readelf -d "$bin")
  grep -q 'Machine: *AArch64' <<<"$header" ||
    fail "$name is not an AArch64 program"
  if grep -qE '\.symtab|\.debug_' <<<"$sections"; then
    fail "$name is not stripped"
  fi
  if grep -q 'NEEDED.*libtorch_cpu' <<<"$dynamic" &&
    ! grep -q 'RUNPATH.*\[/usr/lib/fedberry\]' <<<"$dynamic"; then
    fail "$name loads LibTorch without RUNPATH /usr/lib/fedberry"
  fi
  check_needed "$bin"
  # Starting resolves every library and, with LD_BIND_NOW, every symbol;
  # LD_LIBRARY_PATH stands in for RUNPATH (the package is not installed
  # in the sysroot). --help prints the usage and exits.
  usage=$(LD_BIND_NOW=1 LD_LIBRARY_PATH="$tmp/usr/lib/fedberry" \
    qemu-aarch64-static -cpu cortex-a53 -L "$sysroot" "$bin" --help 2>&1 || true)
  grep -q "^Usage: $name" <<<"$usage" ||
    fail "$name does not start under qemu: $usage"
  echo "check-deb: $name: AArch64, stripped, $(stat -c %s "$bin") bytes"
done
used_list=$(printf '%s\n' "${used[@]}")
for pkg in $depends; do
  grep -qx -- "$pkg" <<<"$used_list" ||
    fail "the package depends on $pkg, which none of its files loads"
done
echo "check-deb: $(basename "$deb") ok ($(stat -c %s "$deb") bytes;" \
  "Depends: $(dpkg-deb -f "$deb" Depends))"
