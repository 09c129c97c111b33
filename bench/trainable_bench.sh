#!/usr/bin/env bash
# Training part of the model (fedberry-server --trainable): LeNet-5 and
# ResNet-8 on Fashion-MNIST (4 clients, IID), each trained whole and with
# only its fully connected layers or its head, side by side in one run: a
# board's peak RSS, the bytes one board sends a round, seconds a round and
# final test accuracy. A benchmark: it prints figures and asserts nothing.
# The models start from the zoo's random initialisation (no pretrained
# backbone), so a frozen backbone is a random feature extractor here: the
# accuracy column shows what freezing costs from scratch, not what
# fine-tuning a pretrained model reaches.
#
#   bench/trainable_bench.sh [--rounds=5] [--local_steps=200]
#                            [--out=bench-trainable-out]
#
# Needs build/bin/fedberry-sim (scripts/sim.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=5
steps=200
out=bench-trainable-out
for arg in "$@"; do
  case "$arg" in
    --rounds=*) rounds=${arg#*=} ;;
    --local_steps=*) steps=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    -h|--help) sed -n 2,15p "$0"; exit 0 ;;
    *) echo "trainable_bench: unknown argument $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
# label model trainable-regex (- : everything)
runs=(
  "lenet5_all lenet5 -"
  "lenet5_fc.* lenet5 fc.*"
  "lenet5_fc3 lenet5 fc3\\..*"
  "resnet8_all resnet8 -"
  "resnet8_fc.* resnet8 fc.*"
)
summary=()
for run in "${runs[@]}"; do
  read -r label model regex <<<"$run"
  [[ $regex == - ]] && regex=
  echo "trainable_bench: running $label${regex:+ (--trainable=$regex)}"
  build/bin/fedberry-sim --rounds="$rounds" --model="$model" \
    --local_steps="$steps" --trainable="$regex" --output="$out/$label" \
    >"$out/$label.log" 2>&1 ||
    { echo "trainable_bench: $label failed, see $out/$label.log" >&2; exit 1; }
  summary+=("$label=$out/$label")
done
echo
/usr/bin/python3 bench/sim_summary.py --boards "${summary[@]}"
