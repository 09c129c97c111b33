#!/usr/bin/env bash
# Synchronous rounds (uniform and greedy planner) against asynchronous
# buffered rounds (--mode=async) on an emulated heterogeneous fleet, with the
# same total training work: time to a target test accuracy, and the
# accuracy each run had reached at a fixed time (the shortest run's length).
# A benchmark, not a test: it prints figures and asserts nothing.
#
#   bench/async_bench.sh [--rounds=6] [--local_steps=100] [--buffer=2]
#                        [--target=0.7] [--profile=FILE]
#                        [--out=bench-async-out]
#
# Work: a synchronous job of R rounds trains 4R updates of S local steps;
# the asynchronous one publishes 4R/K versions of K updates each, so both
# train 4R x S steps. Needs build/bin/fedberry-sim. Compute slowdown is
# emulated (the board sleeps (k-1)x its training time), on this machine's
# cores: the figures are emulated, not a board's.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=6
steps=100
buffer=2
target=0.7
out=bench-async-out
profile=bench/async_fleet.txt
for arg in "$@"; do
  case "$arg" in
    --rounds=*) rounds=${arg#*=} ;;
    --local_steps=*) steps=${arg#*=} ;;
    --buffer=*) buffer=${arg#*=} ;;
    --target=*) target=${arg#*=} ;;
    --profile=*) profile=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    -h|--help) sed -n 2,17p "$0"; exit 0 ;;
    *) echo "async_bench: unknown argument $arg" >&2; exit 2 ;;
  esac
done
boards=$(grep -cv '^\s*\(#\|$\)' "$profile")
updates=$((boards * rounds))
versions=$((updates / buffer))
mkdir -p "$out"
echo "async_bench: profile $profile ($boards boards):"
grep -v '^#' "$profile" | sed 's/^/  /'
echo "async_bench: lenet5, Fashion-MNIST, $updates updates of $steps local" \
     "steps (batch 32): sync $rounds rounds, async $versions versions of" \
     "$buffer; target accuracy $target (emulated fleet, this machine)"

run() {
  local label=$1
  shift
  echo "async_bench: running $label"
  build/bin/fedberry-sim --clients="$boards" --fleet_profile="$profile" \
    --local_steps="$steps" --batch_size=32 --output="$out/$label" "$@" \
    > "$out/$label.log" 2>&1 ||
    { echo "async_bench: $label failed, see $out/$label.log" >&2; exit 1; }
}
run sync-uniform --rounds="$rounds" --planner=uniform
run sync-greedy --rounds="$rounds" --planner=greedy
run async --rounds="$versions" --mode=async --async_buffer="$buffer" \
  --max_staleness=100

python3 - "$out" "$target" sync-uniform sync-greedy async <<'PY'
import json, sys
out, target = sys.argv[1], float(sys.argv[2])
runs = {}
for label in sys.argv[3:]:
    runs[label] = [json.loads(l) for l in open(f"{out}/{label}/rounds.jsonl")]
horizon = min(r[-1]["elapsed_seconds"] for r in runs.values())
print(f"\n{'run':14} {'rounds':>6} {'wall_s':>8} {'to_target_s':>11} "
      f"{'acc@' + format(horizon, '.0f') + 's':>9} {'final_acc':>9} "
      f"{'staleness':>9}")
base = None
for label, rounds in runs.items():
    reached = next((r["elapsed_seconds"] for r in rounds
                    if r.get("test_accuracy", 0) >= target), None)
    at = [r.get("test_accuracy", float("nan")) for r in rounds
          if r["elapsed_seconds"] <= horizon + 1e-9]
    stale = [r["staleness_mean"] for r in rounds if "staleness_mean" in r]
    print(f"{label:14} {len(rounds):6d} {rounds[-1]['elapsed_seconds']:8.1f} "
          f"{(f'{reached:.1f}' if reached else 'never'):>11} "
          f"{(at[-1] if at else float('nan')):9.4f} "
          f"{rounds[-1].get('test_accuracy', float('nan')):9.4f} "
          f"{(f'{sum(stale) / len(stale):.2f}' if stale else '-'):>9}")
    if label == "sync-uniform":
        base = reached
if base:
    for label, rounds in runs.items():
        reached = next((r["elapsed_seconds"] for r in rounds
                        if r.get("test_accuracy", 0) >= target), None)
        if reached:
            print(f"time to target, sync-uniform / {label}: "
                  f"{base / reached:.2f}x")
PY
