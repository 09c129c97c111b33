#!/usr/bin/env bash
# Repairs a copy of a shared library the way Python's wheel tooling
# (auditwheel) repairs binaries: drops the NEEDED entries that supply none of
# the symbols the library uses, so that loading it no longer loads them (and
# installing it no longer installs them). Debian 12's libtorch_cpu.so names
# OpenCV, FFmpeg, ZeroMQ, LMDB, LevelDB, Snappy, SLEEF and libnuma without
# calling any of them: 23 of its 45 libraries.
#
# Then proves the copy still links: every symbol it needs that is not weak
# must be defined by a library of its remaining NEEDED closure, and every
# dropped library must have supplied nothing, so a later Debian update of a
# library cannot make the copy fail silently: this script runs in the build.
#
# Usage: scripts/slim-library.sh [--root=DIR] [--readelf=PROG] [--runpath=DIR]
#                                SOURCE OUTPUT
#   --root     the file system the libraries live in (a sysroot; default /)
#   --readelf  readelf to read SOURCE's ELF files (default readelf, which
#              reads any architecture's)
#   --runpath  where the copy looks for its libraries first (its RUNPATH, a
#              folder on the target: e.g. one BLAS among Debian's
#              alternatives)
# Prints one line: what was kept and dropped. Exits 1 when a symbol does not
# resolve or a library is missing.
set -euo pipefail

root=/
readelf=readelf
runpath=
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --root=*) root=${1#--root=} ;;
    --readelf=*) readelf=${1#--readelf=} ;;
    --runpath=*) runpath=${1#--runpath=} ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0 ;;
    *) echo "slim-library: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ $# -eq 2 ]] || { echo "Usage: $0 [--root=DIR] [--readelf=PROG] [--runpath=DIR] SOURCE OUTPUT" >&2; exit 2; }
source_lib=$1
output=$2
fail() { echo "slim-library: $*" >&2; exit 1; }
command -v patchelf >/dev/null || fail "patchelf is missing (apt-get install patchelf)"

# Where the dynamic linker would look by default, inside $root.
machine=$($readelf -h "$source_lib" | sed -nE 's/.*Machine: *//p')
case $machine in
  *X86-64*) multiarch=x86_64-linux-gnu ;;
  *AArch64*) multiarch=aarch64-linux-gnu ;;
  *) fail "$source_lib: unsupported machine '$machine'" ;;
esac
dirs=("$root/lib/$multiarch" "$root/usr/lib/$multiarch" "$root/lib" "$root/usr/lib")
[[ -z $runpath ]] || dirs=("$root$runpath" "${dirs[@]}")

needed() { $readelf -d "$1" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p'; }
find_lib() {
  local d
  for d in "${dirs[@]}"; do
    [[ -e $d/$1 ]] && { echo "$d/$1"; return; }
  done
  fail "$1 (needed by $(basename "$source_lib")) is not in ${dirs[*]}"
}
# Dynamic symbols without their version: defined ones, or undefined ones
# (weak ones marked "weak ").
defined() {
  $readelf -W --dyn-syms "$1" | awk '$7 != "UND" && ($5 == "GLOBAL" ||
    $5 == "WEAK" || $5 == "UNIQUE") && $8 != "" { sub(/@.*/, "", $8); print $8 }'
}
undefined() {
  $readelf -W --dyn-syms "$1" | awk '$7 == "UND" && $8 != "" {
    sub(/@.*/, "", $8); print ($5 == "WEAK" ? "weak " : "") $8 }'
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
undefined "$source_lib" | sed 's/^weak //' | sort -u >"$tmp/uses"
keep=()
drop=()
for lib in $(needed "$source_lib"); do
  path=$(find_lib "$lib")
  # Counted, not grep -q: a reader that stops early fails the pipe.
  supplied=$(defined "$path" | sort -u | comm -12 - "$tmp/uses" | wc -l)
  if [[ $supplied -gt 0 ]]; then
    keep+=("$lib")
  else
    drop+=("$lib")
  fi
done

mkdir -p "$(dirname "$output")"
cp "$source_lib" "$tmp/lib"
chmod u+w "$tmp/lib"
for lib in "${drop[@]}"; do
  patchelf --remove-needed "$lib" "$tmp/lib"
done
[[ -z $runpath ]] || patchelf --set-rpath "$runpath" "$tmp/lib"

# The proof: what the copy needs, strong symbols, is defined somewhere in
# the closure of what it still loads (breadth first, each library once).
declare -A seen=()
queue=($(needed "$tmp/lib"))
: >"$tmp/closure"
while [[ ${#queue[@]} -gt 0 ]]; do
  lib=${queue[0]}
  queue=("${queue[@]:1}")
  [[ -n ${seen[$lib]:-} ]] && continue
  seen[$lib]=1
  path=$(find_lib "$lib")
  defined "$path" >>"$tmp/closure"
  queue+=($(needed "$path"))
done
sort -u -o "$tmp/closure" "$tmp/closure"
undefined "$tmp/lib" | grep -v '^weak ' | sort -u | comm -23 - "$tmp/closure" \
  >"$tmp/unresolved"
if [[ -s $tmp/unresolved ]]; then
  fail "$(wc -l <"$tmp/unresolved") symbols of $(basename "$source_lib") no" \
    "longer resolve, e.g. $(head -3 "$tmp/unresolved" | tr '\n' ' ')"
fi
mv "$tmp/lib" "$output"
# Out of the page cache: pages written by cp and patchelf sit there as large
# folios, and a process that maps the library then maps whole folios around
# each page it touches (Linux 6.x): measured, a waiting client's libtorch_cpu
# took 60 MiB of RSS instead of 31 until the file was read back from disk as
# libraries installed long ago are.
sync "$output"
dd if="$output" iflag=nocache count=0 status=none
echo "slim-library: $(basename "$source_lib"): kept ${#keep[@]} of" \
  "$((${#keep[@]} + ${#drop[@]})) libraries, dropped: ${drop[*]:-none};" \
  "every symbol it needs resolves in ${#seen[@]} libraries${runpath:+; RUNPATH $runpath}"
