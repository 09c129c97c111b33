#!/usr/bin/env bash
# fedberry against a plain Python PyTorch federation, side by side: the
# default job (4 clients, LeNet-5, Fashion-MNIST IID, batch 32, SGD 0.05
# momentum 0.9, 1 local epoch, 5 rounds, 1 thread per process, the server
# evaluating the 10k test split after each round) run by build/bin/fedberry-sim
# and by bench/reference/fedavg_job.py (Debian's python3-torch, the same
# LibTorch underneath; the same model, shards, optimizer and evaluation; one
# spawned process per client, training concurrently). Repetitions are
# interleaved (fedberry, then each Python variant, fedberry, ...) so a change
# in the machine's load hits all. The Python variants:
#   python             Python PyTorch as Debian installs it (libblas.so.3);
#   python+sgemm       with fedberry's oneDNN sgemm_ preloaded
#                      (build/bin/libfedberry_sgemm_preload.so,
#                      runtime/fast_sgemm.h): both sides on the same fast BLAS;
#   python+sgemm+heap  also with fedberry's malloc thresholds
#                      (runtime/heap_tuning.h) as glibc tunables: both
#                      processes' fixes, so only the languages differ.
# Prints each run, then the medians and the ratios python / fedberry of wall
# time, CPU time (all processes), peak RSS per process and final accuracy.
# A benchmark: it asserts nothing.
#
#   bench/vs_python.sh                  # REPS=3
#   REPS=1 bench/vs_python.sh           # a quick look
#   OUT=/tmp/vs BIN=build/bin bench/vs_python.sh   # default OUT: build/vs-python-out
#
# Needs build/bin/fedberry-sim (cmake --preset default && cmake --build
# --preset default) and python3-torch (apt-get install python3-torch); runs
# /usr/bin/python3, not a virtualenv's.
set -euo pipefail
cd "$(dirname "$0")/.."

reps=${REPS:-3}
bin=${BIN:-build/bin}
out=${OUT:-build/vs-python-out}
python=/usr/bin/python3
ref=bench/reference

[[ -x $bin/fedberry-sim ]] || { echo "vs_python.sh: no $bin/fedberry-sim; build first" >&2; exit 2; }
$python -c 'import torch' 2>/dev/null ||
  { echo "vs_python.sh: $python cannot import torch: apt-get install python3-torch" >&2; exit 2; }

# fedberry's sgemm_ for the Python side (built where FEDBERRY_FAST_SGEMM is on).
preload=$(realpath -e "$bin/libfedberry_sgemm_preload.so" 2>/dev/null || true)
[[ -n $preload ]] ||
  echo "vs_python.sh: no $bin/libfedberry_sgemm_preload.so (FEDBERRY_FAST_SGEMM off?): no python+sgemm runs" >&2

rm -rf "$out"
mkdir -p "$out"
results=$out/results.jsonl
echo "vs_python.sh: $reps repetitions, output in $out (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
# One run of the Python reference under LABEL, with the environment given
# after it (VAR=value ...).
run_python() {
  local label=$1 r=$2
  shift 2
  env "$@" $python $ref/measure.py --label "$label" --log "$out/$label-$r.log" \
    --results "$results" -- $python $ref/fedavg_job.py ||
    echo "vs_python.sh: $label run $r failed, see $out/$label-$r.log" >&2
}
# fedberry's fixed malloc thresholds (runtime/heap_tuning.h) as glibc tunables.
heap=GLIBC_TUNABLES=glibc.malloc.mmap_threshold=16777216:glibc.malloc.trim_threshold=67108864
for ((r = 1; r <= reps; r++)); do
  $python $ref/measure.py --label fedberry --log "$out/fedberry-$r.log" \
    --results "$results" -- "$bin/fedberry-sim" --output="$out/fedberry-$r" ||
    echo "vs_python.sh: fedberry run $r failed, see $out/fedberry-$r.log" >&2
  run_python python "$r"
  if [[ -n $preload ]]; then
    run_python python+sgemm "$r" LD_PRELOAD="$preload"
    run_python python+sgemm+heap "$r" LD_PRELOAD="$preload" "$heap"
  fi
done
$python $ref/summarize.py "$results"
