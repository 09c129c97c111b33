#!/usr/bin/env bash
# Synchronous rounds (uniform and greedy planner) against asynchronous
# buffered rounds (--mode=async) on emulated fleets, with the same total
# training work: time to a target test accuracy, and the accuracy each run
# had reached at fixed times (each run's length). One table per fleet; by
# default two: boards of different speeds (bench/async_fleet.txt) and equal
# boards of which two are paused part of the time
# (bench/async_paused_fleet.txt). A benchmark, not a test: it prints
# figures and asserts nothing.
#
#   bench/async_bench.sh [--rounds=6] [--local_steps=100] [--buffer=2]
#                        [--target=0.7] [--profile=FILE ...]
#                        [--out=bench-async-out]
#
# --profile may be given more than once; given, they replace the default
# pair.
# Work: a synchronous job of R rounds on B boards trains BR updates of S
# local steps; the asynchronous one publishes BR/K versions of K updates
# each, so all train BR x S steps. Needs build/bin/fedberry-sim. Compute
# slowdown and pauses are emulated (the board sleeps (k-1)x its training
# time, or stands still before it pushes), on this machine's cores: the
# figures are emulated, not a board's.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=6
steps=100
buffer=2
target=0.7
out=bench-async-out
profiles=()
for arg in "$@"; do
  case "$arg" in
    --rounds=*) rounds=${arg#*=} ;;
    --local_steps=*) steps=${arg#*=} ;;
    --buffer=*) buffer=${arg#*=} ;;
    --target=*) target=${arg#*=} ;;
    --profile=*) profiles+=("${arg#*=}") ;;
    --out=*) out=${arg#*=} ;;
    -h|--help) sed -n 2,22p "$0"; exit 0 ;;
    *) echo "async_bench: unknown argument $arg" >&2; exit 2 ;;
  esac
done
((${#profiles[@]})) ||
  profiles=(bench/async_fleet.txt bench/async_paused_fleet.txt)

# run PROFILE DIR LABEL SIM_FLAGS...: one job of the fleet into DIR/LABEL.
run() {
  local profile=$1 dir=$2 label=$3
  shift 3
  echo "async_bench: running $label"
  build/bin/fedberry-sim --fleet_profile="$profile" \
    --local_steps="$steps" --batch_size=32 --output="$dir/$label" "$@" \
    > "$dir/$label.log" 2>&1 ||
    { echo "async_bench: $label failed, see $dir/$label.log" >&2; exit 1; }
}

# table DIR: the fleet's runs side by side.
table() {
  python3 - "$1" "$target" sync-uniform sync-greedy async <<'PY'
import json, sys
out, target = sys.argv[1], float(sys.argv[2])
runs = {}
for label in sys.argv[3:]:
    runs[label] = [json.loads(l) for l in open(f"{out}/{label}/rounds.jsonl")]
# Fixed times: each run's length; a run's accuracy then is its last
# published model's ('-': none published yet).
horizons = sorted(r[-1]["elapsed_seconds"] for r in runs.values())
def reached(rounds):
    return next((r["elapsed_seconds"] for r in rounds
                 if r.get("test_accuracy", 0) >= target), None)
def accuracy_at(rounds, t):
    done = [r.get("test_accuracy") for r in rounds
            if r["elapsed_seconds"] <= t + 1e-9]
    return f"{done[-1]:.4f}" if done and done[-1] is not None else "-"
head = f"{'run':14} {'rounds':>6} {'wall_s':>8} {'to_target_s':>11}"
for t in horizons:
    head += f" {'acc@' + format(t, '.0f') + 's':>9}"
print("\n" + head + f" {'staleness':>9}")
for label, rounds in runs.items():
    t = reached(rounds)
    row = (f"{label:14} {len(rounds):6d} {rounds[-1]['elapsed_seconds']:8.1f} "
           f"{(f'{t:.1f}' if t else 'never'):>11}")
    for h in horizons:
        row += f" {accuracy_at(rounds, h):>9}"
    stale = [r["staleness_mean"] for r in rounds if "staleness_mean" in r]
    print(row + f" {(f'{sum(stale) / len(stale):.2f}' if stale else '-'):>9}")
base = reached(runs["sync-uniform"])
for label, rounds in runs.items():
    t = reached(rounds)
    if base and t and label != "sync-uniform":
        print(f"time to {target} accuracy, sync-uniform / {label}: "
              f"{base / t:.2f}x")
PY
}

for profile in "${profiles[@]}"; do
  boards=$(grep -cv '^\s*\(#\|$\)' "$profile")
  updates=$((boards * rounds))
  versions=$((updates / buffer))
  dir=$out/$(basename "$profile" .txt)
  mkdir -p "$dir"
  echo "async_bench: profile $profile ($boards boards):"
  grep -v '^#' "$profile" | sed 's/^/  /'
  echo "async_bench: lenet5, Fashion-MNIST, $updates updates of $steps local" \
       "steps (batch 32): sync $rounds rounds, async $versions versions of" \
       "$buffer; target accuracy $target (emulated fleet, this machine)"
  run "$profile" "$dir" sync-uniform --rounds="$rounds" --planner=uniform
  run "$profile" "$dir" sync-greedy --rounds="$rounds" --planner=greedy
  run "$profile" "$dir" async --rounds="$versions" --mode=async \
    --async_buffer="$buffer" --max_staleness=100
  table "$dir"
  echo
done
