#!/usr/bin/env bash
# Emulated heterogeneous fleet: round makespan, time to a target test
# accuracy and final accuracy for the uniform, greedy and ilp planners.
# A benchmark, not a test: it reports figures and asserts nothing.
#
#   bench/fleet_bench.sh [--rounds=6] [--local_steps=100] [--target=0.78]
#                        [--profile=FILE] [--out=bench-fleet-out]
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
for arg in "$@"; do
  case "$arg" in
    --rounds=*) rounds=${arg#*=} ;;
    --local_steps=*) steps=${arg#*=} ;;
    --target=*) target=${arg#*=} ;;
    --profile=*) profile=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "fleet_bench: unknown argument $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
if [[ -z "$profile" ]]; then
  profile="$out/fleet.txt"
  cat > "$profile" <<'PROFILE'
# 4 boards: two at this machine's speed, one 4x and one 8x slower holding
# half its shard.
data_fraction=1   compute_slowdown=1
data_fraction=1   compute_slowdown=1
data_fraction=1   compute_slowdown=4
data_fraction=0.5 compute_slowdown=8
PROFILE
fi
echo "fleet_bench: profile $profile:"
grep -v '^#' "$profile" | sed 's/^/  /'
echo "fleet_bench: lenet5, Fashion-MNIST, $rounds rounds of $steps local steps" \
     "(batch 32) per client, target accuracy $target"

for planner in uniform greedy ilp; do
  echo "fleet_bench: running planner $planner"
  build/bin/fedberry-sim --fleet_profile="$profile" --planner="$planner" \
    --rounds="$rounds" --local_steps="$steps" --batch_size=32 \
    --output="$out/$planner" > "$out/$planner.log" 2>&1 ||
    { echo "fleet_bench: $planner run failed, see $out/$planner.log" >&2; exit 1; }
done

python3 - "$out" "$target" <<'PY'
import json, sys
out, target = sys.argv[1], float(sys.argv[2])
rows = {}
for planner in ("uniform", "greedy", "ilp"):
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
        final=rounds[-1].get("test_accuracy", float("nan")))
print()
print(f"{'planner':<9} {'makespan_r1_s':>13} {'makespan_r2+_s':>14} "
      f"{'time_to_'+str(target)+'_s':>16} {'job_s':>8} {'final_acc':>9} "
      f"{'speedup_to_target':>17}")
base = rows["uniform"]["reached"]
for p, r in rows.items():
    t = f"{r['reached']:.1f}" if r["reached"] is not None else "not reached"
    sp = (f"{base / r['reached']:.2f}x" if base and r["reached"] else "-")
    print(f"{p:<9} {r['makespan_r1']:>13.2f} {r['makespan']:>14.2f} {t:>16} "
          f"{r['total']:>8.1f} {r['final']:>9.4f} {sp:>17}")
PY
