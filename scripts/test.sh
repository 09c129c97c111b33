#!/usr/bin/env bash
# Builds fedberry with its tests (default preset) and runs them with ctest,
# then proves the Raspberry Pi (aarch64) build: cross-build, unit tests and a
# federation under qemu, the .deb (scripts/test-rpi3.sh). FEDBERRY_SKIP_RPI3=1
# skips that second part for quick local runs. Arguments go to the host ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default -DFEDBERRY_BUILD_TESTS=ON >/dev/null
cmake --build --preset default
ctest --preset default -j2 -LE soak "$@"
if [[ ${FEDBERRY_SKIP_RPI3:-0} == 1 ]]; then
  echo "test.sh: FEDBERRY_SKIP_RPI3=1: skipping the Raspberry Pi build and tests"
else
  scripts/test-rpi3.sh
fi
