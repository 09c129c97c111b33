#!/usr/bin/env bash
# Transfer learning on the boards, end to end on this machine: a small CNN
# pretrained on the PC on Fashion-MNIST classes 0-4
# (examples/pretrain_transfer.py) is fine-tuned by a simulated fleet on
# classes 5-9, which the PC never trained on, in four jobs side by side:
#
#   pretrained_head     the pretrained model, only its head trains on the
#                       boards (--trainable='head\..*')
#   pretrained_last2    the pretrained model, its last two layers train
#                       (--trainable='features\.7\..*|head\..*')
#   pretrained_all      the pretrained model, every parameter trains
#   scratch_all         the same architecture from its random
#                       initialisation, every parameter trains
#   scratch_head        the random initialisation, only the head trains
#                       (what the frozen features are worth untrained)
#
# It prints, per job: final test accuracy (the server's test on the 5,000
# test images of classes 5-9), a board's peak RSS, the bytes one board sends
# a round and the seconds a round, then the accuracy of every round. A
# benchmark: figures only, no assertions. --new_task_train=N gives the
# fleet only the first N training images of classes 5-9 (all 30,000 by
# default), split among the clients.
#
#   examples/transfer.sh [--rounds=5] [--local_steps=100] [--clients=4]
#                        [--new_task_train=N] [--out=transfer-out]
#
# Needs build/bin/fedberry-sim (scripts/sim.sh builds it) and
# /usr/bin/python3 with Debian's python3-torch. The pretraining runs once
# (its files are kept in OUT/model and reused).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=5
steps=100
clients=4
samples=0
out=transfer-out
for arg in "$@"; do
  case "$arg" in
    --rounds=*) rounds=${arg#*=} ;;
    --local_steps=*) steps=${arg#*=} ;;
    --clients=*) clients=${arg#*=} ;;
    --new_task_train=*) samples=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    -h|--help) sed -n 2,29p "$0"; exit 0 ;;
    *) echo "transfer: unknown argument $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
if [[ ! -f $out/model/pretrained.pt || ! -f $out/model/scratch.pt ||
      ! -f $out/model/new-task/t10k-labels-idx1-ubyte.gz ]]; then
  echo "transfer: pretraining on classes 0-4 (examples/pretrain_transfer.py)"
  /usr/bin/python3 examples/pretrain_transfer.py --out="$out/model" \
    | tee "$out/pretrain.log"
fi
data=$out/model/new-task
jobs=$out
if ((samples > 0)); then
  data=$out/model-$samples/new-task
  jobs=$out/train-$samples
  mkdir -p "$jobs"
  [[ -f $data/t10k-labels-idx1-ubyte.gz ]] ||
    /usr/bin/python3 examples/pretrain_transfer.py --new_task_only \
      --new_task_train="$samples" --out="$out/model-$samples"
fi

# label model trainable-regex (- : everything)
runs=(
  "pretrained_head pretrained.pt head\\..*"
  "pretrained_last2 pretrained.pt features\\.7\\..*|head\\..*"
  "pretrained_all pretrained.pt -"
  "scratch_all scratch.pt -"
  "scratch_head scratch.pt head\\..*"
)
summary=()
for run in "${runs[@]}"; do
  read -r label model regex <<<"$run"
  [[ $regex == - ]] && regex=
  echo "transfer: running $label${regex:+ (--trainable=$regex)}"
  build/bin/fedberry-sim --clients="$clients" --rounds="$rounds" \
    --local_steps="$steps" --model="$out/model/$model" \
    --data="idx:$data" --trainable="$regex" \
    --output="$jobs/$label" >"$jobs/$label.log" 2>&1 ||
    { echo "transfer: $label failed, see $jobs/$label.log" >&2; exit 1; }
  summary+=("$label=$jobs/$label")
done
echo
/usr/bin/python3 bench/sim_summary.py --boards --per_round "${summary[@]}"
