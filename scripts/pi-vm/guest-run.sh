#!/bin/bash
# Runs inside the emulated board (scripts/test-pi-vm.sh), from the host's
# share at /mnt/host, as the board's operator would: install the package
# with apt, put the TLS files and settings in place, start the service, and
# watch it until the job ends. Writes out/summary.txt (for people) and
# out/result.env (for the host script), then powers the board off.
set -uo pipefail
share=/mnt/host
out=$share/out
source "$share/guest.env"
exec >>"$out/guest.log" 2>&1
log() { echo "guest: $*" | tee -a "$out/summary.txt"; }
trap 'sync; systemctl poweroff' EXIT

uptime_s() { cut -d' ' -f1 /proc/uptime; }
installed_kib() { dpkg-query -W -f='${Installed-Size}\n' | awk '{s += $1} END {print s}'; }

boot() {
  log "booted to the runner in $(uptime_s) s (emulated)"
  log "kernel $(uname -r), $(nproc) cpus, $(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo) MiB," \
    "PSI $([[ -r /proc/pressure/memory ]] && echo yes || echo no)," \
    "cgroup $(stat -fc %T /sys/fs/cgroup)"
}

install_package() {
  local before_n before_kib t0 t1 deb extra=()
  [[ ${MODE:-job} == compute ]] && extra=(libblas3 liblapack3)
  # systemd-timesyncd, as on a Pi: it cannot reach NTP from here.
  [[ ${MODE:-job} == job ]] && extra=(systemd-timesyncd)
  [[ ${MODE:-job} == job && $QUICK == 0 ]] && extra+=(criu iptables)
  before_n=$(dpkg-query -W | wc -l)
  before_kib=$(installed_kib)
  deb=$(ls "$share"/repo/fedberry_*_arm64.deb | head -1)
  t0=$(uptime_s)
  apt-get -qq update && apt-get -y -q --no-install-recommends install \
    "$deb" dataset-fashion-mnist "${extra[@]}" || return 1
  t1=$(uptime_s)
  log "apt installed $(( $(dpkg-query -W | wc -l) - before_n )) packages," \
    "$(( ($(installed_kib) - before_kib) / 1024 )) MiB, in $(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}') s (emulated)"
}

configure_client() {
  install -d -m 0750 -o fedberry -g fedberry /etc/fedberry
  install -m 0644 "$share/fleet-ca.crt" /etc/fedberry/fleet-ca.crt
  install -m 0644 "$share/pi-1.crt" /etc/fedberry/board.crt
  install -m 0600 -o fedberry -g fedberry "$share/pi-1.key" /etc/fedberry/board.key
  sed -i 's|^FEDBERRY_CLIENT_FLAGS=.*|FEDBERRY_CLIENT_FLAGS="--server=gateway.local:50051 --data=/usr/share/datasets/fashion-mnist --partition_index=0 --partition_count=2 --threads=4 --checkpoint_dir=checkpoints"|' \
    /etc/default/fedberry-client
}

# Samples the client's memory until the service stops: peak RSS (VmHWM),
# and the largest PSS and USS (private pages) seen.
watch_client() {
  local pid rss=0 pss=0 uss=0 v p u
  while systemctl is-active -q fedberry-client; do
    pid=$(systemctl show -p MainPID --value fedberry-client)
    if [[ $pid -gt 0 && -r /proc/$pid/smaps_rollup ]]; then
      v=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
      read -r p u < <(awk '/^Pss:/ {p = $2} /^Private_(Clean|Dirty):/ {u += $2}
        END {print p + 0, u + 0}' "/proc/$pid/smaps_rollup" 2>/dev/null || echo "0 0")
      ((v > rss)) && rss=$v
      ((p > pss)) && pss=$p
      ((u > uss)) && uss=$u
    fi
    sleep 0.5
  done
  echo "PEAK_RSS_MIB=$((rss / 1024))" >>"$out/result.env"
  echo "PEAK_PSS_MIB=$((pss / 1024))" >>"$out/result.env"
  echo "PEAK_USS_MIB=$((uss / 1024))" >>"$out/result.env"
  log "client peak RSS $((rss / 1024)) MiB, PSS $((pss / 1024)) MiB, USS $((uss / 1024)) MiB"
}

# Seconds since boot of the first journal line of the client's log that
# matches a pattern ("[  82.101907] host unit[pid]: ...").
at() { awk -v re="$1" '$0 ~ re { sub(/^\[ */, ""); sub(/\].*/, ""); print; exit }' "$out/client.log"; }
since() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "?"; else printf "%.1f", b - a }'; }

# A board without a real-time clock that NTP has not set: the clock goes
# back to 1970 before the client starts. The client must say so in words
# and wait (no TLS error, no exit); once the clock is put right (as NTP
# would, here from the time kept by the monotonic clock), it goes on and
# joins. Writes CLOCK_WORDS and CLOCK_SET_AT for the host.
clock_before_start() {
  real0=$(date +%s.%N)
  up0=$(uptime_s)
  date -u -s '1970-01-02 00:00:00' >/dev/null ||
    { log "clock: could not set the clock to 1970"; return 1; }
  log "clock: set to $(date -u '+%Y-%m-%d %H:%M:%S UTC') before starting the client" \
    "(timesyncd: $(systemctl is-active systemd-timesyncd))"
}
clock_put_right() {
  local i words
  for ((i = 0; i < 300; i += 2)); do
    # The first such line, its spdlog time and level taken off.
    words=$(journalctl -q -u fedberry-client -o cat |
      awk '/waiting for NTP/ && !n { n = 1; sub(/^\[[^]]*\] \[[a-z]+\] /, ""); print }')
    [[ -n $words ]] && break
    systemctl is-active -q fedberry-client || break
    sleep 2
  done
  echo "CLOCK_WORDS=$(printf '%q' "${words:-}")" >>"$out/result.env"
  [[ -n $words ]] || { log "clock: the client never said it waits for NTP"; date -s "@$(awk -v r="$real0" -v a="$up0" -v b="$(uptime_s)" 'BEGIN { printf "%.3f", r + b - a }')" >/dev/null; return 1; }
  log "clock: the client said: ${words:0:200}"
  sleep 12  # two more looks at the wrong clock: it waits, it does not fail
  local state
  state=$(systemctl is-active fedberry-client)
  echo "CLOCK_WAITING_STATE=$state" >>"$out/result.env"
  local set_at
  set_at=$(uptime_s)
  date -s "@$(awk -v r="$real0" -v a="$up0" -v b="$set_at" 'BEGIN { printf "%.3f", r + b - a }')" >/dev/null
  echo "CLOCK_SET_AT=$set_at" >>"$out/result.env"
  log "clock: client $state after 12 s more of 1970; clock put right to" \
    "$(date -u '+%Y-%m-%d %H:%M:%S UTC') at $set_at s"
}

run_client() {
  local code started first joined
  clock_before_start
  systemctl enable -q --now fedberry-client
  clock_put_right
  watch_client
  code=$(systemctl show -p ExecMainStatus --value fedberry-client)
  echo "CLIENT_EXIT=$code" >>"$out/result.env"
  journalctl -q -u fedberry-client -o short-monotonic >"$out/client.log"
  started=$(at 'Started fedberry-client')
  first=$(at 'fedberry-client\\[')
  joined=$(at 'joined job')
  log "client: started by systemd at ${started:-?} s; its first log line" \
    "$(since "$started" "$first") s later, joined the server" \
    "$(since "$started" "$joined") s later (emulated); exit status $code"
  local back
  back=$(grep -m1 'the clock is now' "$out/client.log" | sed -E 's/.*\] //')
  log "clock: ${back:-the client never said the clock was right}; joined at ${joined:-?} s"
  echo "CLOCK_JOINED_AT=${joined:-}" >>"$out/result.env"
  echo "CLOCK_TLS_ERRORS=$(grep -ciE 'handshake|not valid before|client failed' "$out/client.log")" >>"$out/result.env"
  grep -E 'round [0-9]+: trained' "$out/client.log" |
    sed -E 's/.*(round [0-9]+: trained)/guest: \1/' >>"$out/summary.txt"
}

# loop_bench on every compute path, idle OpenMP workers asleep rather
# than spinning. The package's LibTorch copy loads OpenBLAS by its RUNPATH;
# LD_LIBRARY_PATH (searched first) picks the BLAS of a run, and the board's
# own libblas.so.3 alternative is left as it is.
blas_dirs() {
  local a=/usr/lib/aarch64-linux-gnu
  case $1 in
    reference) echo "/usr/lib/fedberry:$a/blas:$a/lapack" ;;
    openblas) echo "/usr/lib/fedberry:$a/openblas-openmp" ;;
  esac
}
bench() {  # BLAS, then loop_bench's flags
  local blas=$1
  shift
  # OPENBLAS_VERBOSE=2: OpenBLAS names the core whose kernels it chose.
  OMP_WAIT_POLICY=PASSIVE OPENBLAS_VERBOSE=2 LD_LIBRARY_PATH=$(blas_dirs "$blas") \
    "$share/loop_bench" --reps=1 "$@" >>"$out/compute.txt" 2>&1
}

# The compute paths (docs/guide/speed.md, "The A53's compute paths"), one
# thread: Debian's OpenBLAS with ATen's im2col convolutions (the package's
# default), ATen's own kernels on Debian's reference BLAS (what Debian's
# LibTorch does with oneDNN off), and OpenBLAS with oneDNN's convolutions
# (oneDNN 2.6 has no optimised aarch64 kernels: its reference and gemm
# ones). Each model trains and evaluates in one process per path; few
# samples, since every one costs seconds of emulation and the count per
# sample is steady after a warm-up. The 256^3 product anchors the BLAS.
# OpenBLAS's threads wait for each other spinning, and under this
# single-threaded emulation a spin runs until the other vCPU's turn:
# counted as instructions, it says nothing of a board. So one thread.
run_compute() {
  local path blas conv spec
  for path in openblas-im2col reference-im2col openblas-onednn; do
    blas=${path%-*}
    conv=${path#*-}
    for spec in "lenet5 --batch_size=32 --warmup_steps=3 --steps=5 --eval_samples=400 --eval_batches=100 --gemm_size=256" \
      "resnet8 --synthetic_shape=3,32,32 --synthetic_rows=256 --batch_size=16 --warmup_steps=1 --steps=3 --eval_samples=64 --eval_batches=32"; do
      echo "path $path ${spec%% *}" >>"$out/compute.txt"
      bench "$blas" --threads=1 \
        --mkldnn=$([[ $conv == onednn ]] && echo true || echo false) --model=$spec
    done
  done
  log "compute paths measured ($(grep -c '^train ' "$out/compute.txt") of 6 runs)"
}

# Secure aggregation's work (bench/secagg_bench.cc) for cohorts of 10, 50
# and 200, one process; its CPU times are instruction counts here.
run_secagg() {
  "$share/secagg_bench" 10 50 200 >"$out/secagg.txt" 2>&1
  log "secagg_bench: exit $?"
}

# The per-board table, on the default path (the package's LibTorch copy
# with its OpenBLAS, im2col convolutions, one thread):
# each model at batch 16 and 32, and the board's memory pressure after it.
run_models() {
  local spec model batch
  for spec in "lenet5" "resnet8 --synthetic_shape=3,32,32" \
    "tabular-mlp --synthetic_shape=8" "$share/cnn.pt"; do
    for batch in 16 32; do
      model=${spec%% *}
      echo "model ${model##*/} $batch" >>"$out/models.txt"
      OMP_WAIT_POLICY=PASSIVE LD_LIBRARY_PATH=/usr/lib/fedberry \
        "$share/loop_bench" --reps=1 --eval_batches= --steps=10 --threads=1 \
        --mkldnn=false --batch_size="$batch" --model=$spec \
        >>"$out/models.txt" 2>&1
      echo "psi $(head -1 /proc/pressure/memory)" >>"$out/models.txt"
    done
  done
  log "models measured ($(grep -c '^train ' "$out/models.txt") of 8 runs)"
}

# --- The watchdog under real pressure (without --quick) ---
# The pressure job logs to a file, not the journal: criu cannot dump a
# process whose output is journald's socket ("External socket is used").
pressure_log=/var/log/fedberry-client-pressure.log
journal() { cat "$pressure_log" 2>/dev/null; }
# Waits at most $2 s for a journal line matching $1 (an ERE); the line, or 1.
wait_log() {
  local i line
  for ((i = 0; i < $2; i += 2)); do
    # All of it read (no grep -m1): a reader that stops early fails the pipe.
    line=$(journal | grep -E -- "$1" || true)
    [[ -n $line ]] && { echo "${line%%$'\n'*}"; return 0; }
    sleep 2
  done
  log "pressure: no line matching '$1' within $2 s"
  return 1
}
# What the journal says, shortened for the summary.
say() { log "pressure: $(sed -E 's/^\[[0-9-]+ ([0-9:.]+)\] \[[a-z]+\] /at \1: /' <<<"$1" | cut -c1-220)"; }

balloon_pid=
inflate() {
  local total target
  total=$(awk '/MemTotal/ {print $2}' /proc/meminfo)
  target=$((total * 10 / 100))  # under the 15% pause level, over the 5% critical one
  "$share/fedberry-test-balloon" "$target" 900 >>"$out/balloon.log" 2>&1 &
  balloon_pid=$!
  for _ in $(seq 120); do
    grep -q inflated "$out/balloon.log" && break
    sleep 1
  done
  log "pressure: balloon $(grep inflated "$out/balloon.log" | tail -1) (MemAvailable target $((target / 1024)) MiB)"
}
deflate() { kill "$balloon_pid" 2>/dev/null; wait "$balloon_pid" 2>/dev/null; }

# The same job against the second server: the client under --supervise with
# CRIU releases (root: CRIU needs it), a fresh checkpoint folder.
configure_pressure_job() {
  sed -i 's/^10\.0\.2\.100 gateway.local/10.0.2.101 gateway.local/' /etc/hosts
  mkdir -p /etc/systemd/system/fedberry-client.service.d
  # CRIU dumps and restores the client: root; and its output must be a
  # file, which criu can dump, not journald's socket, which it cannot.
  printf '[Service]\nUser=root\nGroup=root\nStandardOutput=append:%s\nStandardError=inherit\n' \
    "$pressure_log" >/etc/systemd/system/fedberry-client.service.d/criu.conf
  # Whole batches only (micro-batches regroup the sums: not bit for bit);
  # a release only after 90 s paused, and at once only past 90% PSI 'full':
  # emulated reclaim is slow, and the balloon's inflation alone took PSI
  # 'full' past the default 40% and released before the pause could end.
  sed -i 's|--checkpoint_dir=checkpoints"|--checkpoint_dir=checkpoints-pressure --supervise --watchdog_release=criu --watchdog_micro_batches=1 --watchdog_release_after=90s --watchdog_critical_psi=90"|' \
    /etc/default/fedberry-client
  systemctl daemon-reload
  log "pressure: criu check: $(criu check 2>&1 | tail -2 | tr '\n' ' ')"
}

run_pressure_job() {
  local line back by=checkpoint-and-exit
  systemctl restart fedberry-client
  wait_log 'training: [0-9]+/' 900 >/dev/null || return 1
  inflate
  line=$(wait_log 'pausing training' 300) && say "$line" || return 1
  deflate
  line=$(wait_log 'resuming training' 300) && say "$line" || return 1
  inflate
  line=$(wait_log 'releasing memory' 300) && say "$line" || return 1
  line=$(wait_log 'waiting for memory to come back|telling the client to exit|exited with status 75' 300) &&
    say "$line" || return 1
  grep -q 'dumped the client' <<<"$line" && by=CRIU
  deflate
  line=$(wait_log 'memory is back' 600) && say "$line" || return 1
  # Back by CRIU's restore, or started afresh from its checkpoint.
  line=$(wait_log 'restored the client from its CRIU dump|starting the client afresh|started the client \(pid [0-9]+\) again' 120) &&
    say "$line" || return 1
  back=restarted
  grep -q 'restored the client from its CRIU dump' <<<"$line" && back=restored
  printf 'RELEASED_BY=%s\nBACK_BY=%s\n' "$by" "$back" >>"$out/result.env"
  while systemctl is-active -q fedberry-client; do sleep 1; done
  echo "PRESSURE_EXIT=$(systemctl show -p ExecMainStatus --value fedberry-client)" >>"$out/result.env"
  journal >"$out/pressure.log"
  grep -E 'round [0-9]+: trained' "$out/pressure.log" |
    sed -E 's/.*(round [0-9]+: trained)/guest: pressure job: \1/' >>"$out/summary.txt"
}

: >"$out/summary.txt"
: >"$out/result.env"
boot
install_package || { log "apt failed"; exit 1; }
if [[ ${MODE:-job} == compute ]]; then
  [[ ${COMPUTE:-1} == 1 ]] && run_compute
  [[ ${MODELS:-0} == 1 ]] && run_models
  [[ ${SECAGG:-0} == 1 ]] && run_secagg
else
  configure_client
  run_client
  if [[ $QUICK == 0 ]]; then
    configure_pressure_job
    run_pressure_job || { deflate; journal >"$out/pressure.log"; }
    cp /var/lib/fedberry-client/checkpoints-pressure/criu/*.log "$out/" 2>/dev/null
    # Why a CRIU dump or restore failed, in criu's own words.
    for f in dump restore; do
      [[ -f $out/$f.log ]] || continue
      grep -E '^\([ 0-9.]+\) Error|^Error|^\([ 0-9.]+\) [0-9]+: Error' "$out/$f.log" |
        head -8 | while read -r e; do log "pressure: criu $f.log: $e"; done
    done
  fi
fi
