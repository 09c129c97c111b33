#!/usr/bin/env bash
# Robust aggregation against poisoned boards: the default job (LeNet-5,
# Fashion-MNIST IID, 5 rounds) with 1 of 4 and 3 of 10 boards sending scaled
# (x10) or sign-flipped (x-4) updates (fedberry-emulated-client --attack, a
# test-only flag), aggregated by fedavg, median, trimmed_mean and krum; and each
# fleet without attackers under fedavg for reference. Final test accuracy
# side by side. A benchmark: it prints figures and asserts nothing.
#
#   bench/robust_bench.sh [--rounds=5] [--attacks="scale:10 signflip:4"]
#                         [--out=bench-robust-out]
#
# trimmed_mean trims the attackers' share at each end (0.25 of 4, 0.3 of
# 10). Krum needs n > 2f + 2: with 4 boards it runs with f = 0 (it still
# picks the update closest to its n - 2 nearest others); with 10, f = 3.
# Krum runs with --quorum=1 (every round waits for all boards), so every
# round has the n > 2f + 2 updates it needs. The server's update bound
# (--max_update_ratio, default 1000) stays on.
# Needs build/bin/fedberry-sim (scripts/sim.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=5
attacks="scale:10 signflip:4"
out=bench-robust-out
for arg in "$@"; do
  case "$arg" in
    --rounds=*) rounds=${arg#*=} ;;
    --attacks=*) attacks=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    -h|--help) sed -n 2,19p "$0"; exit 0 ;;
    *) echo "robust_bench: unknown argument $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
run() {  # label, then fedberry-sim flags
  local label=$1
  shift
  echo "robust_bench: running $label"
  build/bin/fedberry-sim --rounds="$rounds" --output="$out/$label" "$@" \
    >"$out/$label.log" 2>&1 ||
    { echo "robust_bench: $label failed, see $out/$label.log" >&2; return; }
  summary+=("$label=$out/$label")
}
summary=()
# clients:attackers:trim_fraction:krum_f
for fleet in 4:1:0.25:0 10:3:0.3:3; do
  IFS=: read -r n k trim f <<<"$fleet"
  run "${k}of${n}-none-fedavg" --clients="$n"
  for attack in $attacks; do
    a="--attackers=$k"
    run "${k}of${n}-$attack-fedavg" --clients="$n" $a --attack="$attack"
    run "${k}of${n}-$attack-median" --clients="$n" $a --attack="$attack" \
      --strategy=median
    run "${k}of${n}-$attack-trimmed" --clients="$n" $a --attack="$attack" \
      --strategy=trimmed_mean --trim_fraction="$trim"
    run "${k}of${n}-$attack-krum" --clients="$n" $a --attack="$attack" \
      --strategy=krum --byzantine="$f" --quorum=1
  done
done
echo
/usr/bin/python3 bench/sim_summary.py "${summary[@]}"
