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
  [[ ${MODE:-job} == compute ]] && extra=(libopenblas0-openmp)
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

run_client() {
  local code started first joined
  systemctl enable -q --now fedberry-client
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
  grep -E 'round [0-9]+: trained' "$out/client.log" |
    sed -E 's/.*(round [0-9]+: trained)/guest: \1/' >>"$out/summary.txt"
}

# loop_bench on every compute path, idle OpenMP workers asleep rather
# than spinning. OpenBLAS stays out of the system's
# libblas.so.3 (its alternative would win by priority); a run picks it with
# LD_LIBRARY_PATH. loop_bench finds the package's LibTorch there too.
run_compute() {
  local openblas=/usr/lib/aarch64-linux-gnu/openblas-openmp blas conv t dirs
  update-alternatives --quiet --set libblas.so.3-aarch64-linux-gnu \
    /usr/lib/aarch64-linux-gnu/blas/libblas.so.3
  for blas in reference openblas; do
    for conv in onednn im2col; do
      for t in 1 2 4; do
        dirs=/usr/lib/fedberry
        [[ $blas == openblas ]] && dirs=$dirs:$openblas
        echo "config $blas $conv $t" >>"$out/compute.txt"
        # Passive: OpenMP's idle workers would otherwise spin, and every
        # spin is an instruction on this clock.
        OMP_WAIT_POLICY=PASSIVE LD_LIBRARY_PATH=$dirs \
          "$share/loop_bench" --threads="$t" --steps=10 \
          --reps=1 --eval_batches= --gemm_size=256 \
          --mkldnn=$([[ $conv == onednn ]] && echo true || echo false) \
          >>"$out/compute.txt" 2>&1
      done
    done
  done
  log "compute paths measured ($(grep -c '^train ' "$out/compute.txt") of 12 runs)"
}

: >"$out/summary.txt"
: >"$out/result.env"
boot
install_package || { log "apt failed"; exit 1; }
if [[ ${MODE:-job} == compute ]]; then
  run_compute
else
  configure_client
  run_client
fi
