#!/usr/bin/env bash
# FedProx against FedAvg where it matters: the emulated heterogeneous fleet
# (bench/heterogeneous_fleet.txt, as bench/fleet_bench.sh: two boards at this machine's speed, one
# 4x and one 8x slower with half a shard), the greedy planner (boards do
# unequal local work) and a Dirichlet(0.3) label split. Test accuracy per
# round side by side. A benchmark: it prints figures and asserts nothing.
#
#   bench/fedprox_bench.sh [--rounds=8] [--local_steps=100] [--mus="0.01 0.1"]
#                          [--out=bench-fedprox-out]
#
# Needs build/bin/fedberry-sim (scripts/sim.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=8
steps=100
mus="0.01 0.1"
out=bench-fedprox-out
for arg in "$@"; do
  case "$arg" in
    --rounds=*) rounds=${arg#*=} ;;
    --local_steps=*) steps=${arg#*=} ;;
    --mus=*) mus=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    -h|--help) sed -n 2,11p "$0"; exit 0 ;;
    *) echo "fedprox_bench: unknown argument $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
profile=bench/heterogeneous_fleet.txt
summary=()
run() {  # label, then fedberry-sim flags
  local label=$1
  shift
  echo "fedprox_bench: running $label"
  build/bin/fedberry-sim --fleet_profile="$profile" --planner=greedy \
    --partition=dirichlet --alpha=0.3 --rounds="$rounds" \
    --local_steps="$steps" --output="$out/$label" "$@" \
    >"$out/$label.log" 2>&1 ||
    { echo "fedprox_bench: $label failed, see $out/$label.log" >&2; exit 1; }
  summary+=("$label=$out/$label")
}
run fedavg
for mu in $mus; do
  run "fedprox_mu$mu" --strategy=fedprox --proximal_mu="$mu"
done
echo
/usr/bin/python3 bench/sim_summary.py --per_round "${summary[@]}"
