#!/usr/bin/env bash
# Builds fedberry with its tests (default preset) and runs them with ctest,
# then proves the Raspberry Pi (aarch64) build: cross-build, unit tests and a
# federation under qemu as a Cortex-A53, the .deb and its ARMv8.0-only scan
# (scripts/test-rpi3.sh), and the .deb installed by apt on an emulated 1 GiB
# Cortex-A53 board whose clock starts in 1970 and whose systemd runs the
# client for a round (scripts/test-pi-vm.sh --quick). FEDBERRY_SKIP_RPI3=1
# skips that second part for quick local runs, FEDBERRY_SKIP_FUZZ=1 the
# fuzzing of the RPC handlers (scripts/fuzz.sh). Arguments go to the host
# ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
rpi3=1
[[ ${FEDBERRY_SKIP_RPI3:-0} == 1 ]] && rpi3=0
if ((rpi3)); then
  scripts/install-deps.sh --cross
  # The aarch64 sysroot is mostly downloading and unpacking: make it while the
  # host build keeps the CPU busy.
  mkdir -p build
  scripts/make-sysroot.sh >build/make-sysroot.log 2>&1 &
  sysroot_pid=$!
  # The emulated board's image (cached once made) too: beside the build, not
  # the host tests, some of which compare how fleets of processes fare.
  scripts/test-pi-vm.sh --image >build/pi-vm-image.log 2>&1 &
  image_pid=$!
else
  scripts/install-deps.sh --test
fi
# Warnings are errors here (FEDBERRY_WERROR), not in users' own builds,
# whose compilers may warn about more.
scripts/configure.sh default -DFEDBERRY_BUILD_TESTS=ON -DFEDBERRY_WERROR=ON >/dev/null
t=$SECONDS
cmake --build --preset default
echo "test.sh: host build done in $((SECONDS - t)) s"
t=$SECONDS
ctest --preset default -j2 -LE soak "$@"
echo "test.sh: host tests done in $((SECONDS - t)) s"
# Every RPC handler under libFuzzer for a bounded time (FUZZ_SECONDS each).
if [[ ${FEDBERRY_SKIP_FUZZ:-0} != 1 ]]; then
  t=$SECONDS
  scripts/fuzz.sh
  echo "test.sh: fuzzing done in $((SECONDS - t)) s"
fi
if ((rpi3)); then
  if ! wait "$sysroot_pid"; then
    cat build/make-sysroot.log >&2
    echo "test.sh: making the aarch64 sysroot failed" >&2
    exit 1
  fi
  if ! wait "$image_pid"; then
    cat build/pi-vm-image.log >&2
    echo "test.sh: making the emulated board's image failed" >&2
    exit 1
  fi
  cat build/pi-vm-image.log
  scripts/test-rpi3.sh
  # The package installed and run by systemd on an emulated 1 GiB board.
  scripts/test-pi-vm.sh --quick
else
  echo "test.sh: FEDBERRY_SKIP_RPI3=1: skipping the Raspberry Pi build and tests"
fi
