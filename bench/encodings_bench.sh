#!/usr/bin/env bash
# Compressed updates: the default 5-round job (4 clients, LeNet-5,
# Fashion-MNIST IID) with each update encoding, and with the fp16 model
# downlink, side by side in one run: bytes per round up and down (the
# clients' RPC counters) and final test accuracy. A benchmark: it prints
# figures and asserts nothing.
#
#   bench/encodings_bench.sh [--rounds=5] [--out=bench-encodings-out]
#
# Needs build/bin/fedberry-sim (scripts/sim.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=5
out=bench-encodings-out
for arg in "$@"; do
  case "$arg" in
    --rounds=*) rounds=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    -h|--help) sed -n 2,10p "$0"; exit 0 ;;
    *) echo "encodings_bench: unknown argument $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
# label:update_encoding:topk_fraction:model_encoding
runs="raw:raw:0.01:raw fp16:fp16:0.01:raw int8:int8:0.01:raw
      topk_1%:topk:0.01:raw topk_10%:topk:0.1:raw int8+fp16_down:int8:0.01:fp16"
summary=()
for run in $runs; do
  IFS=: read -r label enc frac down <<<"$run"
  echo "encodings_bench: running $label"
  build/bin/fedberry-sim --rounds="$rounds" --update_encoding="$enc" \
    --topk_fraction="$frac" --model_encoding="$down" --output="$out/$label" \
    >"$out/$label.log" 2>&1 ||
    { echo "encodings_bench: $label failed, see $out/$label.log" >&2; exit 1; }
  summary+=("$label=$out/$label")
done
echo
/usr/bin/python3 bench/sim_summary.py "${summary[@]}"
