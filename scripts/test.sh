#!/usr/bin/env bash
# Builds fedberry with its tests (default preset) and runs them with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default -DFEDBERRY_BUILD_TESTS=ON >/dev/null
cmake --build --preset default
ctest --preset default -j2 -LE soak "$@"
