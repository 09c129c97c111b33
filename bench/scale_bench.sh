#!/usr/bin/env bash
# One gateway under many boards: a real fedberry-server against
# fedberry-loadgen's emulated boards (the real protocol over loopback, a
# connection each; they push the pulled model back, no training), for each
# board count and model. Prints per run: seconds per round (the server's
# rounds.jsonl), updates per second, the server's peak RSS, and the most
# threads and descriptors it held (sampled every 0.2 s), and the server's
# CPU ms per update. A benchmark: it prints figures and asserts nothing.
#
#   bench/scale_bench.sh [--boards="100 1000 3000 10000"]
#                        [--models="lenet5 wide-mlp"] [--rounds=3]
#                        [--max_inflight_updates=16] [--max_streams=32]
#                        [--max_threads=2048]
#                        [--out=bench-scale-out]
#                        [--compare=DIR]
#
# --compare=DIR runs each board count with DIR's fedberry-server and
# fedberry-loadgen too (e.g. a copy of an earlier build), one after the
# other, so two builds compare side by side in one run (the machine's
# speed drifts between runs); the `build` column says which.
#
# lenet5 is 247 KB, wide-mlp 4.8 MB. No evaluation (--eval_data=), the
# default fedavg. The load generator shares the machine's cores.
# Needs build/bin/fedberry-server and build/bin/fedberry-loadgen.
set -euo pipefail
cd "$(dirname "$0")/.."

boards_list="100 1000 3000 10000"
models="lenet5 wide-mlp"
rounds=3
inflight=16
streams=32
threads_max=2048
out=bench-scale-out
bins=build/bin
for arg in "$@"; do
  case "$arg" in
    --boards=*) boards_list=${arg#*=} ;;
    --models=*) models=${arg#*=} ;;
    --rounds=*) rounds=${arg#*=} ;;
    --max_inflight_updates=*) inflight=${arg#*=} ;;
    --max_streams=*) streams=${arg#*=} ;;
    --max_threads=*) threads_max=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    --compare=*) bins="${arg#*=} build/bin" ;;
    -h|--help) sed -n 2,24p "$0"; exit 0 ;;
    *) echo "scale_bench: unknown argument $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
ulimit -Sn "$(ulimit -Hn)"  # the load generator's own connections

printf '%-12s %-9s %6s %8s %9s %10s %8s %5s %7s %10s %9s %s\n' build model \
  boards round_s updates/s server_MiB threads fds cpu_ms "ms/update" \
  busy/upd result
for model in $models; do
  for n in $boards_list; do
  for bin in $bins; do
    label=current
    [[ $bin == build/bin ]] || label=$(basename "$bin")
    run=$out/$model-$n-$label
    rm -rf "$run"
    mkdir -p "$run"
    /usr/bin/time -v -o "$run/server.time" "$bin/fedberry-server" \
      --listen=127.0.0.1:0 --rounds="$rounds" --min_clients="$n" \
      --min_clients_to_start="$n" --max_clients=$((n + 10)) \
      --model="$model" --eval_data= --max_inflight_updates="$inflight" --max_streams="$streams" \
      --max_threads="$threads_max" --output="$run/out" >"$run/server.log" 2>&1 &
    time_pid=$!
    for _ in $(seq 300); do
      [[ -s $run/out/server.addr ]] && break
      sleep 0.1
    done
    pid=$(pgrep -P "$time_pid" fedberry-server)
    threads=0 fds=0
    (
      while kill -0 "$pid" 2>/dev/null; do
        t=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
        f=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
        echo "$t $f"
        sleep 0.2
      done
    ) >"$run/samples" &
    sampler=$!
    result=ok
    "$bin/fedberry-loadgen" --server="$(cat "$run/out/server.addr")" \
      --boards="$n" --progress=10s >"$run/loadgen.log" 2>&1 || result=failed
    wait "$time_pid" || result="$result,server-failed"
    wait "$sampler" || true
    threads=$(sort -k1 -n "$run/samples" | tail -1 | cut -d' ' -f1)
    fds=$(sort -k2 -n "$run/samples" | tail -1 | cut -d' ' -f2)
    rss_kb=$(sed -nE 's/.*Maximum resident set size \(kbytes\): ([0-9]+)/\1/p' "$run/server.time")
    cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$run/server.time")
    python3 - "$run" "$n" "$rounds" "$model" "$rss_kb" "$threads" "$fds" "$cpu" "$result" "$label" <<'PY'
import json, sys
run, n, rounds, model, rss_kb, threads, fds, cpu, result, label = sys.argv[1:]
rows = [json.loads(l) for l in open(f"{run}/out/rounds.jsonl") if l.strip()]
secs = [r.get("round_seconds", 0) for r in rows]
updates = sum(r.get("participants", 0) for r in rows)
round_s = sum(secs) / len(secs) if secs else float("nan")
ups = updates / sum(secs) if secs and sum(secs) > 0 else float("nan")
ms_update = 1000 * float(cpu) / updates if updates else float("nan")
# Pushes the server told to retry later (the load generator's report),
# per accepted update.
import re
m = re.search(r"(\d+) updates accepted.*?(\d+) pushes told to retry later",
              open(f"{run}/loadgen.log").read())
busy = int(m.group(2)) / max(1, int(m.group(1))) if m else float("nan")
print(f"{label[-12:]:<12} {model:<9} {n:>6} {round_s:>8.2f} {ups:>9.0f} {int(rss_kb)/1024:>10.0f} "
      f"{threads:>8} {fds:>5} {1000*float(cpu):>7.0f} {ms_update:>10.2f} "
      f"{busy:>9.2f} {result}"
      f" ({len(rows)}/{rounds} rounds)")
PY
  done
  done
done
