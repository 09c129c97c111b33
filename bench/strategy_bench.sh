#!/usr/bin/env bash
# Aggregation time per update and server peak RSS for each strategy with 4,
# 32 and 128 simulated updates of LeNet-5 and of a ~6 MB model, one process
# per configuration (bench/strategy_bench.cc). A benchmark: it prints figures
# and asserts nothing.
#
#   bench/strategy_bench.sh [--updates="4 32 128"] [--models="lenet5 6mb"]
#                           [--strategies="fedavg fedadam ..."]
#
# Needs build/bin/strategy_bench: cmake --preset default
# -DFEDBERRY_BUILD_BENCH=ON && cmake --build --preset default --target
# strategy_bench.
set -euo pipefail
cd "$(dirname "$0")/.."

updates="4 32 128"
models="lenet5 6mb"
strategies="fedavg fedadam fedyogi fedadagrad median trimmed_mean krum multikrum"
for arg in "$@"; do
  case "$arg" in
    --updates=*) updates=${arg#*=} ;;
    --models=*) models=${arg#*=} ;;
    --strategies=*) strategies=${arg#*=} ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "strategy_bench: unknown argument $arg" >&2; exit 2 ;;
  esac
done
bin=build/bin/strategy_bench
[[ -x $bin ]] || { echo "strategy_bench: build $bin first (see --help)" >&2; exit 2; }
spill=$(mktemp -d /tmp/fedberry-strategy-bench-XXXXXX)
trap 'rm -rf "$spill"' EXIT
printf '%-13s %-7s %8s %7s %12s %11s %16s %14s %15s\n' strategy model model_MB \
  updates add_ms/upd result_ms total_ms/update rss_before_MiB peak_rss_MiB
for model in $models; do
  for n in $updates; do
    for s in $strategies; do
      "$bin" --strategy="$s" --updates="$n" --model="$model" --spill_dir="$spill"
    done
  done
done
echo "strategy_bench: krum/multikrum run with f = min(floor((n-3)/2), n/4)," \
     "multikrum averages n - f; trimmed_mean trims 10% at each end"
