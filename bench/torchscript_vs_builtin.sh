#!/usr/bin/env bash
# The training loop of the built-in LeNet-5 against the same network as
# TorchScript (bench/reference/export_lenet5.py, torch.jit.script), one
# client's loop at 1 thread, batch 32 (build/bin/loop_bench). Runs alternate
# (built-in, TorchScript, built-in, ...) so a change in the machine's load
# hits both; prints each run's samples/s, then the medians and the best runs
# and their ratios. On a machine whose speed changes under other load (a
# shared VM), the best runs say more: interference only ever slows a run.
# A benchmark: it asserts nothing.
#
#   bench/torchscript_vs_builtin.sh            # PAIRS=8
#   PAIRS=3 BIN=build/bin bench/torchscript_vs_builtin.sh
#
# Needs build/bin/loop_bench (cmake --preset default -DFEDBERRY_BUILD_BENCH=ON)
# and python3-torch (/usr/bin/python3) for the export.
set -euo pipefail
cd "$(dirname "$0")/.."

pairs=${PAIRS:-8}
bin=${BIN:-build/bin}
python=/usr/bin/python3
[[ -x $bin/loop_bench ]] ||
  { echo "torchscript_vs_builtin.sh: no $bin/loop_bench; build with -DFEDBERRY_BUILD_BENCH=ON" >&2; exit 2; }
$python -c 'import torch' 2>/dev/null ||
  { echo "torchscript_vs_builtin.sh: $python cannot import torch: apt-get install python3-torch" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd bench/reference && $python export_lenet5.py "$work/lenet5.pt")

# samples/s of one loop_bench run (median of its 3 epochs).
rate() {
  "$bin/loop_bench" --model="$1" --reps=3 --eval_batches= 2>&1 |
    awk '/^train/ {print $3}'
}
echo "torchscript_vs_builtin.sh: $pairs pairs (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
builtin=() script=()
for ((i = 1; i <= pairs; i++)); do
  b=$(rate lenet5)
  s=$(rate "$work/lenet5.pt")
  builtin+=("$b")
  script+=("$s")
  echo "pair $i: built-in $b, TorchScript $s samples/s"
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
mb=$(median "${builtin[@]}")
ms=$(median "${script[@]}")
bb=$(printf '%s\n' "${builtin[@]}" | sort -n | tail -1)
bs=$(printf '%s\n' "${script[@]}" | sort -n | tail -1)
ratio() { awk -v s="$1" -v b="$2" 'BEGIN {printf "%.3f", s / b}'; }
echo "medians: built-in $mb, TorchScript $ms samples/s; TorchScript/built-in $(ratio "$ms" "$mb")x"
echo "best:    built-in $bb, TorchScript $bs samples/s; TorchScript/built-in $(ratio "$bs" "$bb")x"
