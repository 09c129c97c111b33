#!/usr/bin/env bash
# Builds fedberry (default preset) and runs a whole federation on this
# machine: a server and 4 clients on loopback, LeNet-5 on Fashion-MNIST.
# Extra arguments go to fedberry-sim (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/configure.sh default -DFEDBERRY_BUILD_TESTS=OFF >/dev/null
cmake --build --preset default --target fedberry-sim
exec build/bin/fedberry-sim "$@"
