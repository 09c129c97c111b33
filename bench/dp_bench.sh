#!/usr/bin/env bash
# Accuracy against privacy (fedberry-server --dp_*): LeNet-5 on
# Fashion-MNIST over 100 emulated boards (fedberry-sim client processes on
# this machine, 600 samples each, IID), each joining a round with
# probability q = 0.1 (Poisson sampling, 10 boards expected), 50 rounds of
# one local epoch; three noise multipliers and a job without DP (a fixed
# 10% cohort), side by side in one run. Prints, per job: the final and best
# test accuracy, the epsilon spent (delta 1e-5) and the rounds charged, the
# share of updates clipped, and the server's aggregation seconds a round
# (clipping and noise happen there; the boards' clip is a few
# milliseconds of their round). A benchmark: it prints figures and asserts
# nothing. Emulated boards on an x86 host: wall times are this machine's.
#
#   bench/dp_bench.sh [--clients=100] [--rounds=50] [--fraction=0.1]
#                     [--clip=0.5] [--noise="0.5 1.0 2.0"]
#                     [--out=bench-dp-out] [--limit=20m (a job's wall time)]
#                     [--adaptive (also each noise level with --dp_adaptive_clip,
#                      starting from --clip)]
#
# Needs build/bin/fedberry-sim and fedberry-dp (scripts/sim.sh builds them).
set -euo pipefail
cd "$(dirname "$0")/.."

clients=100
rounds=50
fraction=0.1
clip=0.5
noise="0.5 1.0 2.0"
out=bench-dp-out
limit=20m
adaptive=0
for arg in "$@"; do
  case "$arg" in
    --clients=*) clients=${arg#*=} ;;
    --rounds=*) rounds=${arg#*=} ;;
    --fraction=*) fraction=${arg#*=} ;;
    --clip=*) clip=${arg#*=} ;;
    --noise=*) noise=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    --limit=*) limit=${arg#*=} ;;
    --adaptive) adaptive=1 ;;
    -h|--help) sed -n 2,20p "$0"; exit 0 ;;
    *) echo "dp_bench: unknown argument $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
common=(--clients="$clients" --rounds="$rounds" --fraction="$fraction"
        --min_clients=1 --local_epochs=1 --local_steps=0 --batch_size=32
        --round_deadline=60s)
runs=("no_dp:-")
for z in $noise; do runs+=("dp_z$z:$z"); done
if [[ $adaptive == 1 ]]; then
  for z in $noise; do runs+=("dp_z${z}_adaptive:$z"); done
fi
summary=()
for run in "${runs[@]}"; do
  label=${run%%:*}
  z=${run#*:}
  dp=()
  [[ $z != - ]] && dp=(--dp_noise_multiplier="$z" --dp_clip="$clip")
  [[ $label == *_adaptive ]] && dp+=(--dp_adaptive_clip=true)
  echo "dp_bench: running $label (${clients} boards, q=$fraction, $rounds rounds)"
  # A model the noise wrecks trains to NaN on the boards: its rounds are
  # refused and abandoned until the time limit, and the table shows the
  # rounds it published.
  timeout "$limit" build/bin/fedberry-sim "${common[@]}" "${dp[@]}" \
    --output="$out/$label" >"$out/$label.log" 2>&1 ||
    echo "dp_bench: $label did not finish (see $out/$label.log)" >&2
  summary+=("$label=$out/$label")
done
echo
/usr/bin/python3 - "${summary[@]}" <<'PY'
import json, sys
print(f"{'job':<18} {'rounds':>6} {'final_acc':>9} {'best_acc':>8} "
      f"{'epsilon':>9} {'charged':>7} {'clipped':>7} {'last_clip':>9} "
      f"{'agg_ms/round':>12} {'round_s':>7}")
for arg in sys.argv[1:]:
    label, out = arg.split("=", 1)
    try:
        with open(f"{out}/rounds.jsonl") as f:
            rounds = [json.loads(l) for l in f if l.strip()]
    except FileNotFoundError:
        rounds = []
    if not rounds:
        print(f"{label:<18} {0:>6}  (no round published)")
        continue
    acc = [r.get("test_accuracy", float("nan")) for r in rounds]
    last = rounds[-1]
    n = len(rounds)
    eps = last.get("dp_epsilon")
    print(f"{label:<18} {n:>6} {acc[-1]:>9.4f} {max(acc):>8.4f} "
          f"{eps if eps is not None else float('inf'):>9.3f} "
          f"{last.get('dp_steps', '-'):>7} "
          f"{sum(r.get('dp_clipped_fraction', 0) for r in rounds) / n:>7.2f} "
          f"{last.get('dp_clip', float('nan')):>9.3g} "
          f"{1e3 * sum(r['aggregation_seconds'] for r in rounds) / n:>12.1f} "
          f"{sum(r['round_seconds'] for r in rounds) / n:>7.2f}")
PY
