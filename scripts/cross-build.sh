#!/usr/bin/env bash
# Cross-builds fedberry for the Raspberry Pi 3 B+ (aarch64 Cortex-A53) on a
# Debian 12 x86-64 machine: installs the cross tools, makes (or reuses) the
# arm64 sysroot, then configures and builds the rpi3 preset into build-rpi3/
# (binaries in build-rpi3/bin/). Extra arguments go to `cmake --build`, e.g.
# `--target fedberry-client`. Package with: (cd build-rpi3 && cpack -G DEB).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --cross
FEDBERRY_SYSROOT=$(scripts/make-sysroot.sh)
export FEDBERRY_SYSROOT
scripts/configure.sh rpi3 -DFEDBERRY_SYSROOT="$FEDBERRY_SYSROOT" >/dev/null
cmake --build --preset rpi3 "$@"
