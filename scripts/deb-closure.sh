#!/usr/bin/env bash
# What installing a package costs a board: the packages apt would install
# for its dependencies on an empty Debian 12 arm64 system
# (--no-install-recommends), with their download and installed sizes, from
# the private arm64 apt state of scripts/make-sysroot.sh (nothing is
# downloaded but package lists).
#
# Usage: scripts/deb-closure.sh PACKAGE.deb       its Depends
#        scripts/deb-closure.sh PACKAGE...        these packages
# Prints "deb-closure: N packages, D MiB to download, I MiB installed" last;
# with FEDBERRY_CLOSURE_LIST=1 also each package and its installed KiB.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 1 ]] || { echo "Usage: $0 PACKAGE.deb | PACKAGE..." >&2; exit 2; }
cache=${FEDBERRY_SYSROOT_CACHE:-$PWD/.cache/sysroot-arm64}
mirror=${FEDBERRY_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${FEDBERRY_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
source scripts/arm64-apt.sh
if ! compgen -G "$apt_dir/lists/*Packages*" >/dev/null; then
  apt-get "${apt_opts[@]}" -qq update >&2
fi

if [[ $# -eq 1 && $1 == *.deb ]]; then
  # "a (>= 1), b | c" -> a b (the first of alternatives, as apt prefers)
  mapfile -t wanted < <(dpkg-deb -f "$1" Depends | tr ',' '\n' |
    sed -E 's/\|.*//; s/\(.*\)//; s/ //g' | grep .)
else
  wanted=("$@")
fi
mapfile -t closure < <(apt-get "${apt_opts[@]}" -s --no-install-recommends \
  install "${wanted[@]}" | awk '/^Inst /{print $2}')
[[ ${#closure[@]} -gt 0 ]] || { echo "deb-closure: nothing to install" >&2; exit 1; }
apt-cache "${apt_opts[@]}" show --no-all-versions "${closure[@]}" |
  awk -v list="${FEDBERRY_CLOSURE_LIST:-0}" '
    /^Package:/ { p = $2 }
    /^Size:/ { d += $2 }
    /^Installed-Size:/ { i += $2; if (list == 1) printf "%-40s %8d KiB\n", p, $2 }
    END { printf "deb-closure: %d packages, %.0f MiB to download, %.0f MiB installed\n",
          NR ? n : 0, d / 1048576, i / 1024 }' n="${#closure[@]}"
