#!/usr/bin/env bash
# Evaluation on the boards against evaluation on the server: the default
# 5-round job (4 clients, LeNet-5, Fashion-MNIST IID) evaluated by the server
# on the test split, by the boards on a fifth of their samples with no
# server-side data (--eval_data=), and both at once, side by side in one
# run: the accuracy per round each way and what a round costs. A benchmark:
# it prints figures and asserts nothing.
#
#   bench/board_eval_bench.sh [--rounds=5] [--out=bench-board-eval-out]
#
# Needs build/bin/fedberry-sim (scripts/sim.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=5
out=bench-board-eval-out
for arg in "$@"; do
  case "$arg" in
    --rounds=*) rounds=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    -h|--help) sed -n 2,11p "$0"; exit 0 ;;
    *) echo "board_eval_bench: unknown argument $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
# label|flags
runs=("server|--evaluate_on_boards=0"
      "boards|--eval_data= --evaluate_on_boards=0.2"
      "both|--evaluate_on_boards=0.2")
for run in "${runs[@]}"; do
  label=${run%%|*}
  echo "board_eval_bench: running $label"
  # shellcheck disable=SC2086  # the flags are words
  build/bin/fedberry-sim --rounds="$rounds" ${run#*|} --output="$out/$label" \
    >"$out/$label.log" 2>&1 ||
    { echo "board_eval_bench: $label failed, see $out/$label.log" >&2; exit 1; }
done
/usr/bin/python3 - "$out" <<'PY'
import json, re, sys
out = sys.argv[1]
runs = {}
for label in ("server", "boards", "both"):
    with open(f"{out}/{label}/rounds.jsonl") as f:
        runs[label] = [json.loads(line) for line in f]
def cell(r, key, fmt="%.4f"):
    return fmt % r[key] if key in r else "-"
print("\nper round (x86, this machine; wall times from one run)")
print("%-6s %-22s %-22s %-22s %-22s" % ("round", "server: test_acc",
      "boards: boards_acc", "both: test_acc", "both: boards_acc"))
for i, r in enumerate(runs["server"]):
    b, both = runs["boards"][i], runs["both"][i]
    print("%-6d %-22s %-22s %-22s %-22s" % (r["round"], cell(r, "test_accuracy"),
          cell(b, "boards_eval_accuracy"), cell(both, "test_accuracy"),
          cell(both, "boards_eval_accuracy")))
print("\n%-8s %-10s %-16s %-18s %-18s" % ("run", "job_s", "mean round_s",
      "mean server eval_s", "mean boards_eval_s"))
for label, rows in runs.items():
    n = len(rows)
    wall = re.search(r"wall time ([\d.]+) s", open(f"{out}/{label}.log").read())
    print("%-8s %-10s %-16.2f %-18.2f %-18.2f" % (label,
          wall.group(1) if wall else "-",
          sum(r["round_seconds"] for r in rows) / n,
          sum(r["eval_seconds"] for r in rows) / n,
          sum(r.get("boards_eval_seconds", 0) for r in rows) / n))
PY
