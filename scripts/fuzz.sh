#!/usr/bin/env bash
# Builds the libFuzzer targets of the server's RPC handlers (preset "fuzz":
# clang-14, address sanitizer) and runs each for FUZZ_SECONDS (default 10)
# on a copy of its committed corpus (tests/fuzz/corpus/<rpc>), so the
# committed seeds never change. Runs one fuzzer per core at a time
# (FUZZ_JOBS). A crash, sanitizer report, timeout or a
# broken global model fails the run; the reproducer is kept in
# build-fuzz/findings/<rpc>/. Arguments: the targets to run (default all).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-10}
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(get_plan pull_model_file join get_task heartbeat pull_model
           pull_samples push_update push_samples secagg_step)
fi
scripts/configure.sh fuzz >/dev/null
cmake --build --preset fuzz
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1}
failed=()
# One fuzzer per core: each is single-threaded.
jobs=${FUZZ_JOBS:-$(nproc)}
run_one() {
  local rpc=$1
  local work=build-fuzz/corpus/$rpc findings=build-fuzz/findings/$rpc
  local log=build-fuzz/fuzz_$rpc.log
  mkdir -p "$work" "$findings"
  cp -n tests/fuzz/corpus/"$rpc"/* "$work"/ 2>/dev/null || true
  if build-fuzz/bin/fuzz_"$rpc" "$work" -max_total_time="$seconds" \
      -timeout=10 -rss_limit_mb=3072 -max_len=65536 \
      -artifact_prefix="$findings/" -print_final_stats=1 >"$log" 2>&1; then
    runs=$(grep -a -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" |
           grep -a -o '[0-9]*$' || echo "?")
    echo "fuzz: $rpc: no finding in ${seconds} s ($runs inputs)"
  else
    echo "fuzz: $rpc: FINDING (see $log and $findings)" >&2
    tail -n 40 "$log" >&2
    return 1
  fi
}
declare -A running=()
wait_one() {
  local done code=0
  wait -n -p done "${!running[@]}" || code=$?
  ((code == 0)) || failed+=("${running[$done]}")
  unset "running[$done]"
}
for rpc in "${targets[@]}"; do
  while ((${#running[@]} >= jobs)); do wait_one; done
  run_one "$rpc" &
  running[$!]=$rpc
done
while ((${#running[@]} > 0)); do wait_one; done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: findings in ${failed[*]}" >&2
  exit 1
fi
