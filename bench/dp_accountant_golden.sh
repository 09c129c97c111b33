#!/usr/bin/env bash
# fedberry-dp against the published golden epsilons of Google's accountant:
# runs `fedberry-dp epsilon` on each case and prints a table of the inputs,
# the golden epsilon, fedberry-dp's and their difference. The cases:
#   TF Privacy  tensorflow/privacy, tensorflow_privacy/privacy/analysis/
#               compute_dp_sgd_privacy_test.py (test_compute_dp_sgd_privacy at
#               its own orders; test_compute_dp_sgd_example_privacy's RDP rows
#               and the RDP privacy statement at dp_accounting's default
#               orders), figures that dp_accounting's RdpAccountant computes.
# The golden values are those files' (statement ones to the 3 decimals they
# print); tests/privacy/rdp_test.cc asserts them with the tests' tolerances,
# and also dp_accounting's own golden values (rdp_privacy_accountant_test.py:
# RDP at given orders, conversions of given RDP curves), which are not
# inputs the command line takes.
# A benchmark: it prints figures and asserts nothing.
#
#   bench/dp_accountant_golden.sh [--bin=build/bin]
#
# Needs build/bin/fedberry-dp (cmake --build --preset default --target
# fedberry-dp).
set -euo pipefail
cd "$(dirname "$0")/.."

bin=build/bin
for arg in "$@"; do
  case "$arg" in
    --bin=*) bin=${arg#*=} ;;
    -h|--help) sed -n 2,20p "$0"; exit 0 ;;
    *) echo "dp_accountant_golden: unknown argument $arg" >&2; exit 2 ;;
  esac
done
dp=$bin/fedberry-dp
[[ -x $dp ]] || {
  echo "dp_accountant_golden: no $dp; build the fedberry-dp target" >&2
  exit 2
}

# TF Privacy's compute_dp_sgd_privacy orders.
tfp_orders=1.25,1.5,1.75,2,2.25,2.5,3,3.5,4,4.5,$(seq -s, 5 63),128,256,512

# name q z steps delta orders(default|tfp) golden_epsilon golden_order(- if
# the test has none)
cases=(
  "dp_sgd_0 0.0025 1.3 6000 1e-5 tfp 0.7242234026109595 19"
  "dp_sgd_1 0.001 1.0 30000 1e-7 tfp 1.4154988495444842 13"
  "dp_sgd_2 0.00001024 0.1 976563 1e-7 tfp 5907982.3113984 1.25"
  "example_nosub 1 0.7 2 1e-5 default 10.8602036 -"
  "example_nosub_mb 1 0.35 2 1e-5 default 26.2880374 -"
  "example_sub 0.01 0.7 120 1e-5 default 3.2392676 -"
  "example_sub_mb 0.01 0.35 120 1e-5 default 22.6248601 -"
  "statement_nosub 1 1.0 5 1e-6 default 13.376 -"
  "statement_sub 0.0064 1.0 782 1e-6 default 1.616 -"
)

printf '%-17s %-10s %-5s %-7s %-6s %-8s %-20s %-20s %-10s %s\n' \
  case q z steps delta orders golden fedberry-dp difference order
for c in "${cases[@]}"; do
  read -r name q z steps delta grid golden golden_order <<<"$c"
  flags=(--sampling_rate="$q" --noise_multiplier="$z" --steps="$steps"
    --delta="$delta")
  [[ $grid == tfp ]] && flags+=(--orders="$tfp_orders")
  last=$("$dp" epsilon "${flags[@]}" | tail -n 1)
  eps=$(sed -n 's/^epsilon=\([^ ]*\) order=.*/\1/p' <<<"$last")
  order=$(sed -n 's/.* order=\(.*\)$/\1/p' <<<"$last")
  [[ -n $eps ]] || { echo "dp_accountant_golden: $name: $last" >&2; exit 1; }
  diff=$(awk -v a="$eps" -v b="$golden" 'BEGIN { printf "%+.2e", a - b }')
  [[ $golden_order == - ]] || order="$order (golden $golden_order)"
  printf '%-17s %-10s %-5s %-7s %-6s %-8s %-20s %-20s %-10s %s\n' \
    "$name" "$q" "$z" "$steps" "$delta" "$grid" "$golden" "$eps" "$diff" \
    "$order"
done
