#!/usr/bin/env bash
# Emulated heterogeneous fleet: round makespan, time to a target test
# accuracy and final accuracy for the uniform, greedy and ilp planners.
# A benchmark, not a test: it reports figures and asserts nothing.
#
#   bench/fleet_bench.sh [--rounds=6] [--local_steps=100] [--target=0.78]
#                        [--profile=FILE] [--out=bench-fleet-out]
#                        [--data_moves]
#
# --data_moves compares, in epoch mode (1 local epoch a round), uniform,
# greedy (planned local steps: fast boards make extra passes over their own
# data) and greedy and ilp with data moves (the slow boards' samples move
# to fast boards for the round; trusted clusters only).
#
# Needs build/bin/fedberry-sim (cmake --preset default && cmake --build
# --preset default). Compute slowdown is emulated by throttling the client
# (--compute_slowdown: it sleeps (k-1)x its training time each round).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=6
steps=100
target=0.78
out=bench-fleet-out
profile=""
moves=0
for arg in "$@"; do
  case "$arg" in
    --rounds=*) rounds=${arg#*=} ;;
    --local_steps=*) steps=${arg#*=} ;;
    --target=*) target=${arg#*=} ;;
    --profile=*) profile=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    --data_moves) moves=1 ;;
    -h|--help) sed -n 2,18p "$0"; exit 0 ;;
    *) echo "fleet_bench: unknown argument $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
[[ -n "$profile" ]] || profile=bench/heterogeneous_fleet.txt
echo "fleet_bench: profile $profile:"
grep -v '^#' "$profile" | sed 's/^/  /'
# Runs as label:planner:data_moves.
if ((moves)); then
  steps=0
  runs="uniform:uniform:false greedy:greedy:false greedy+moves:greedy:true ilp+moves:ilp:true"
  work="1 local epoch"
else
  runs="uniform:uniform:false greedy:greedy:false ilp:ilp:false"
  work="$steps local steps"
fi
echo "fleet_bench: lenet5, Fashion-MNIST, $rounds rounds of $work" \
     "(batch 32) per client, target accuracy $target"

labels=""
for run in $runs; do
  IFS=: read -r label planner data_moves <<<"$run"
  labels="$labels $label"
  echo "fleet_bench: running $label"
  build/bin/fedberry-sim --fleet_profile="$profile" --planner="$planner" \
    --data_moves="$data_moves" --rounds="$rounds" --local_steps="$steps" \
    --local_epochs=1 --batch_size=32 \
    --output="$out/$label" > "$out/$label.log" 2>&1 ||
    { echo "fleet_bench: $label run failed, see $out/$label.log" >&2; exit 1; }
done

python3 - "$out" "$target" $labels <<'PY'
import json, sys
out, target = sys.argv[1], float(sys.argv[2])
rows = {}
for planner in sys.argv[3:]:
    rounds = [json.loads(l) for l in open(f"{out}/{planner}/rounds.jsonl")]
    elapsed, reached = 0.0, None
    for r in rounds:
        elapsed += r["round_seconds"]
        if reached is None and r.get("test_accuracy", 0) >= target:
            reached = elapsed
    later = [r["makespan_seconds"] for r in rounds if r["round"] > 1]
    rows[planner] = dict(
        makespan_r1=rounds[0]["makespan_seconds"],
        makespan=sum(later) / max(1, len(later)),
        total=elapsed, reached=reached,
        final=rounds[-1].get("test_accuracy", float("nan")),
        moved=sum(r.get("moved_samples", 0) for r in rounds))
print()
print(f"{'planner':<13} {'makespan_r1_s':>13} {'makespan_r2+_s':>14} "
      f"{'time_to_'+str(target)+'_s':>16} {'job_s':>8} {'final_acc':>9} "
      f"{'speedup_to_target':>17} {'moved_samples':>13}")
base = rows["uniform"]["reached"]
for p, r in rows.items():
    t = f"{r['reached']:.1f}" if r["reached"] is not None else "not reached"
    sp = (f"{base / r['reached']:.2f}x" if base and r["reached"] else "-")
    print(f"{p:<13} {r['makespan_r1']:>13.2f} {r['makespan']:>14.2f} {t:>16} "
          f"{r['total']:>8.1f} {r['final']:>9.4f} {sp:>17} {r['moved']:>13}")
PY
