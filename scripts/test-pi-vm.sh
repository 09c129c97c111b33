#!/usr/bin/env bash
# A Raspberry Pi 3 B+ in a box: does on an emulated 1 GiB arm64 board what a
# fleet operator does on a real one, and prints what it cost.
#
#  1. makes (once; cached like the sysroot) a Debian 12 arm64 system from
#     Debian's packages (mmdebstrap, arm64 code run by qemu-user through
#     binfmt_misc) with Debian's own arm64 kernel;
#  2. makes a local apt repository of the arm64 .deb (build-rpi3/, from
#     scripts/test-rpi3.sh) and of what it and the default data need that
#     the board lacks, so the board needs no network;
#  3. issues the fleet's certificates (fedberry-pki) and starts
#     fedberry-server with mutual TLS on the host's loopback;
#  4. boots the board: qemu-system-aarch64 -M virt -cpu cortex-a53 -smp 4
#     -m 1024, its network qemu's user mode, restricted, with one way out:
#     gateway.local:50051 forwarded to the server on 127.0.0.1; the host's
#     folder for this run shared over 9p. A unit in the image runs
#     scripts/pi-vm/guest-run.sh from the share: apt installs the package
#     from the local repository, the TLS files and /etc/default settings go
#     in place, systemd runs fedberry-client.service until the job ends,
#     and the board powers off;
#  5. prints the packages installed and their size, boot time, the client's
#     start, its peak RSS, PSS and USS inside the VM, per-round figures, and
#     "test-pi-vm: ok ..." last.
#  Without --quick, also the watchdog for real: the same job again against a
#  second server, while a balloon on the board eats its memory until the
#  client pauses, frees it (the client resumes), and eats it again until the
#  client releases its memory through CRIU (`criu check` first; where CRIU
#  cannot work, checkpoint-and-exit, and why); the two jobs' models must be
#  identical, bit for bit.
#
# Usage: scripts/test-pi-vm.sh [--quick] [--rounds=N]
#        scripts/test-pi-vm.sh [--compute] [--models] [--secagg] | --image
#   --quick    boot, install and one round (what CI runs)
#   --image    only make (or check) the cached image, then exit
#   --compute  no job: the board's compute paths compared by instructions
#              executed (qemu -icount shift=0: the guest clock advances 1 ns
#              per instruction, so guest seconds are instruction counts),
#              with build-rpi3's loop_bench (configure it with
#              -DFEDBERRY_BUILD_BENCH=ON): Debian's OpenBLAS with im2col
#              (the default), ATen's own kernels on the reference BLAS, and
#              oneDNN's convolutions, each training and evaluating LeNet-5
#              and ResNet-8 on one thread; fails unless the default path
#              trains both models in the fewest instructions
#   --models   no job: the per-board table (each model at batch 16 and 32
#              on the default path, its memory and PSI)
#   --secagg   no job: secure aggregation's work per board and at the
#              gateway for cohorts of 10, 50 and 200 (build-rpi3's
#              secagg_bench, -DFEDBERRY_BUILD_BENCH=ON), counted in
#              instructions on the emulated Cortex-A53 as --compute is
# The job's board starts with its clock in 1970 (a Pi without a real-time
# clock before NTP answers): the client must say so and wait, and join once
# the clock is put right. The board's CPU is a Cortex-A53 (-cpu cortex-a53,
# ARMv8.0), not qemu's default "max".
# Times are of qemu's software emulation on this machine (TCG), not of a
# Cortex-A53: they are labelled so. Cache: $FEDBERRY_PI_VM_CACHE (default
# .cache/pi-vm). FEDBERRY_PI_VM_KEEP=1 keeps the run's folder (the job
# outputs, the board's share with its logs) even when it passed. Needs root
# (mmdebstrap, binfmt_misc).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
rounds=3
local_steps=60
mode=job
compute=0
models=0
secagg=0
for arg in "$@"; do
  case $arg in
    --quick) quick=1; rounds=1; local_steps=20 ;;
    --compute) mode=compute; compute=1 ;;
    --models) mode=compute; models=1 ;;
    --secagg) mode=compute; secagg=1 ;;
    --image) mode=image ;;
    --rounds=*) rounds=${arg#--rounds=} ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "test-pi-vm: unknown argument $arg" >&2; exit 2 ;;
  esac
done

cache=${FEDBERRY_PI_VM_CACHE:-$PWD/.cache/pi-vm}
mirror=${FEDBERRY_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${FEDBERRY_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
step() { echo "test-pi-vm: $*"; }
fail() { echo "test-pi-vm: FAIL: $*" >&2; exit 1; }
# The board's system: what a minimal Debian 12 arm64 install with systemd,
# networking and Debian's kernel has.
image_packages=(systemd-sysv udev kmod iproute2 procps linux-image-arm64)
image_stamp="format 2; packages: ${image_packages[*]}; mirror: $mirror"

# qemu-user runs arm64 maintainer scripts in the image through binfmt_misc
# (F: the interpreter is opened now, so it works inside the chroot).
ensure_binfmt() {
  local f=/proc/sys/fs/binfmt_misc
  [[ -e $f/register ]] || mount -t binfmt_misc binfmt_misc "$f"
  [[ -e $f/qemu-aarch64 ]] ||
    cat /usr/lib/binfmt.d/qemu-aarch64.conf >"$f/register"
}

# The board's root file system as an ext4 image, its kernel and initrd, and
# its dpkg status (what the local repository need not carry).
build_image() {
  if [[ -f $cache/image.stamp && $(cat "$cache/image.stamp") == "$image_stamp" ]]; then
    return
  fi
  ensure_binfmt
  local rootfs=$cache/rootfs t=$SECONDS
  rm -rf "$rootfs" "$cache/image.stamp"
  mkdir -p "$cache"
  mmdebstrap --quiet --architectures=arm64 --variant=minbase \
    --include="$(IFS=,; echo "${image_packages[*]}")" \
    --aptopt='Acquire::Languages "none"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --essential-hook="scripts/pi-vm/initramfs-hook.sh \"\$1\"" \
    --customize-hook="scripts/pi-vm/customize-image.sh \"\$1\"" \
    bookworm "$rootfs" "deb $mirror bookworm main" \
    "deb $mirror bookworm-updates main" "deb $security bookworm-security main"
  cp "$rootfs"/boot/vmlinuz-* "$cache/vmlinuz"
  cp "$rootfs"/boot/initrd.img-* "$cache/initrd.img"
  cp "$rootfs/var/lib/dpkg/status" "$cache/dpkg-status"
  rm -f "$cache/base.img"
  mke2fs -q -t ext4 -L root -d "$rootfs" "$cache/base.img" 3G
  step "image: $(grep -c '^Package:' "$cache/dpkg-status") packages," \
    "$(du -sm "$rootfs" | cut -f1) MiB, made in $((SECONDS - t)) s"
  rm -rf "$rootfs"
  echo "$image_stamp" >"$cache/image.stamp"
}

# share/repo: the package, and what it and the default data need beyond the
# image, from a private arm64 apt whose status is the image's.
make_repo() {
  local deb=$1 repo=$2
  shift 2
  mkdir -p "$repo" "$cache/apt"
  cp "$cache/dpkg-status" "$cache/apt/status"
  source scripts/arm64-apt.sh
  apt-get "${apt_opts[@]}" -qq update
  apt-get "${apt_opts[@]}" -qq -y --download-only --no-install-recommends \
    -o Dir::Cache::Archives="$repo" install "$PWD/$deb" dataset-fashion-mnist "$@"
  cp "$deb" "$repo/"
  (cd "$repo" && dpkg-scanpackages --multiversion . /dev/null >Packages 2>/dev/null)
  step "local repository: $(ls "$repo"/*.deb | wc -l) packages," \
    "$(du -cm "$repo"/*.deb | tail -1 | cut -f1) MiB"
}

# The fleet's certificates: the server as gateway.local, the board as pi-1.
make_pki() {
  local dir=$1
  build/bin/fedberry-pki init --dir="$dir" >/dev/null
  build/bin/fedberry-pki server gateway --san=DNS:gateway.local --dir="$dir" >/dev/null
  build/bin/fedberry-pki board pi-1 --dir="$dir" >/dev/null
}

# A job on the host's loopback with mutual TLS; its output in $work/$name,
# its port in ports[$name].
declare -A ports=()
server_pids=()
start_server() {
  local work=$1 name=$2 pid
  setsid timeout 7200 build/bin/fedberry-server --listen=127.0.0.1:0 \
    --tls_cert="$work/pki/gateway.crt" --tls_key="$work/pki/gateway.key" \
    --client_ca="$work/pki/fleet-ca.crt" --rounds="$rounds" \
    --min_clients=1 --min_clients_to_start=1 --local_steps="$local_steps" \
    --batch_size=32 --lr=0.05 --output="$work/$name" >"$work/$name.log" 2>&1 &
  pid=$!
  server_pids+=("$pid")
  for _ in $(seq 600); do
    [[ -s $work/$name/server.addr ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [[ -s $work/$name/server.addr ]] || { cat "$work/$name.log" >&2; fail "the $name server did not start"; }
  ports[$name]=$(sed -E 's/.*://' "$work/$name/server.addr")
}

# Boots the board on a throwaway copy of the image; returns when it powers
# off (or after the timeout).
boot_board() {
  local work=$1 timeout=$2 icount=() net=(-nic none)
  [[ $mode == compute ]] && icount=(-icount shift=0,sleep=off)
  # The only ways out: gateway.local:50051 to the job's server (10.0.2.100)
  # or the pressure job's (10.0.2.101), a socat per connection (so a
  # restarted or restored client connects again).
  if [[ $mode == job ]]; then
    local fwd="guestfwd=tcp:10.0.2.100:50051-cmd:socat - TCP:127.0.0.1:${ports[job]}"
    [[ -n ${ports[pressure]:-} ]] &&
      fwd+=",guestfwd=tcp:10.0.2.101:50051-cmd:socat - TCP:127.0.0.1:${ports[pressure]}"
    net=(-netdev "user,id=net0,restrict=on,$fwd"
      -device virtio-net-pci,netdev=net0,romfile=)
  fi
  cp --sparse=always "$cache/base.img" "$work/board.img"
  timeout "$timeout" qemu-system-aarch64 -M virt -cpu cortex-a53 -smp 4 -m 1024 \
    "${icount[@]}" \
    -kernel "$cache/vmlinuz" -initrd "$cache/initrd.img" \
    -append "root=/dev/vda rw console=ttyAMA0 systemd.show_status=0" \
    -drive "file=$work/board.img,if=virtio,format=raw" \
    -virtfs "local,path=$work/share,mount_tag=host,security_model=none,id=host" \
    "${net[@]}" \
    -nographic -serial "file:$work/console.log" -monitor none -no-reboot
}

main() {
  if [[ $mode == image ]]; then
    build_image
    return
  fi
  local deb
  deb=$(ls build-rpi3/fedberry_*_arm64.deb 2>/dev/null | head -1)
  [[ -n $deb ]] || fail "no build-rpi3/fedberry_*_arm64.deb: run scripts/test-rpi3.sh first"
  [[ -x build/bin/fedberry-server ]] || fail "no build/bin/fedberry-server: build the default preset first"
  build_image
  work=$(mktemp -d /tmp/fedberry-pi-vm-XXXXXX)
  # The run's folder goes, unless the run failed: then it is kept to read.
  trap 'rc=$?; for pid in "${server_pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
    if ((rc == 0)) && [[ -z ${FEDBERRY_PI_VM_KEEP:-} ]]; then rm -rf "$work"; else echo "test-pi-vm: kept $work" >&2; fi' EXIT
  mkdir -p "$work/share/out"
  local extra=()
  [[ $mode == compute ]] && extra=(libblas3 liblapack3)  # the reference BLAS too
  # systemd-timesyncd, as a Pi has (it cannot reach NTP from the board).
  [[ $mode == job ]] && extra=(systemd-timesyncd)
  # CRIU, and iptables, with which criu locks the client's TCP connections.
  [[ $mode == job && $quick == 0 ]] && extra+=(criu iptables)
  make_repo "$deb" "$work/share/repo" "${extra[@]}"
  cp scripts/pi-vm/guest-run.sh "$work/share/"
  printf 'ROUNDS=%s\nQUICK=%s\nMODE=%s\nCOMPUTE=%s\nMODELS=%s\nSECAGG=%s\n' "$rounds" "$quick" \
    "$mode" "$compute" "$models" "$secagg" >"$work/share/guest.env"
  if [[ $mode == compute ]]; then
    if ((compute || models)); then
      [[ -x build-rpi3/bin/loop_bench ]] ||
        fail "no build-rpi3/bin/loop_bench: configure build-rpi3 with -DFEDBERRY_BUILD_BENCH=ON"
      cp build-rpi3/bin/loop_bench "$work/share/"
      # A user's TorchScript CNN (batch norm, dropout) for Fashion-MNIST.
      /usr/bin/python3 examples/export_cnn.py --channels 1 --size 28 \
        --classes 10 --out "$work/share/cnn.pt" >/dev/null
    fi
    if ((secagg)); then
      [[ -x build-rpi3/bin/secagg_bench ]] ||
        fail "no build-rpi3/bin/secagg_bench: configure build-rpi3 with -DFEDBERRY_BUILD_BENCH=ON"
      cp build-rpi3/bin/secagg_bench "$work/share/"
    fi
  else
    make_pki "$work/pki"
    cp "$work/pki/fleet-ca.crt" "$work/pki/pi-1.crt" "$work/pki/pi-1.key" "$work/share/"
    start_server "$work" job
    if ((!quick)); then
      [[ -x build-rpi3/bin/fedberry-test-balloon ]] ||
        fail "no build-rpi3/bin/fedberry-test-balloon: run scripts/cross-build.sh"
      cp build-rpi3/bin/fedberry-test-balloon "$work/share/"
      start_server "$work" pressure
    fi
  fi
  local t=$SECONDS
  boot_board "$work" 7200 || true
  step "board powered off after $((SECONDS - t)) s (emulated, TCG)"
  if [[ $mode == compute ]]; then
    report_compute "$work"
  else
    report "$work"
  fi
}

# The compute paths: instructions per sample (guest seconds x 1e9 under
# -icount shift=0), training and evaluation, and what they would give a
# 1.4 GHz Cortex-A53 at one instruction per cycle (an in-order core's best;
# an estimate, not a board's time). Then the per-board table (--models).
report_compute() {
  local work=$1
  cat "$work/share/out/summary.txt"
  ((compute)) && report_paths "$work"
  ((models)) && report_models "$work"
  ((secagg)) && report_secagg "$work"
  step "ok: measured by instruction count on the emulated Cortex-A53" \
    "(estimates assume 1.4 GHz, 1 instruction per cycle; not a board's time)"
}

# secagg_bench's CPU milliseconds, read on the guest's clock: under -icount
# shift=0 a millisecond is a million instructions. Each figure is restated
# as millions of instructions and as an estimate for a 1.4 GHz Cortex-A53
# at one instruction per cycle.
report_secagg() {
  local work=$1 file=$work/share/out/secagg.txt
  grep -q '^signed keys' "$file" 2>/dev/null || {
    tail -40 "$work/console.log" >&2
    fail "secagg_bench did not finish on the board"
  }
  step "secure aggregation on the emulated Cortex-A53, by instruction count" \
    "(M instr: millions of instructions; est. ms: at 1.4 GHz, 1 instruction a cycle, not a board's time)"
  awk '
    /^n=/ { print; printf "  %-10s %12s %9s %14s %11s %16s\n", "stage", "board M instr",
      "est. ms", "gateway M instr", "est. ms", "bytes_up/board"; next }
    /^  (advertise|share|mask|unmask) / { printf "  %-10s %12.2f %9.2f %14.1f %11.1f %16s\n",
      $1, $2, $2 / 1.4, $3, $3 / 1.4, $4; next }
    /^  stage/ { next }
    /^signed keys/ { gsub(/ ms/, " M instr"); print; next }
    { print }' "$file"
}

report_paths() {
  local work=$1 table
  [[ $(grep -c '^train ' "$work/share/out/compute.txt" 2>/dev/null) == 6 ]] || {
    tail -40 "$work/console.log" >&2
    fail "the board measured $(grep -c '^train ' "$work/share/out/compute.txt" 2>/dev/null || echo 0) of 6 runs"
  }
  # "train  batch=32 ... (median of 1: 160 samples in 0.219 s wall, ...)"
  table=$(awk '
    function per_sample(line,   s, w) { s = line; sub(/.*: /, "", s); split(s, w, " ")
      return w[4] * 1e9 / w[1] }
    /^path / { path = $2; model = $3; gemm = "-" }
    /^gemm / { split($2, n, "="); s = $0; sub(/.*: /, "", s); split(s, w, " ")
      gemm = sprintf("%.2f", 2 * n[2] ^ 3 / (w[1] * 1e9)) }
    /^train / { train = per_sample($0) }
    /^eval / { printf "%-17s %-8s %16.2f %15.2f %16.0f %16s\n", path, model,
      train / 1e6, per_sample($0) / 1e6, 1.4e9 / train, gemm }' \
    "$work/share/out/compute.txt")
  # Which kernels OpenBLAS chose on the emulated core (OPENBLAS_VERBOSE=2).
  step "OpenBLAS's run-time choice: $(grep -ah '^Core' "$work/share/out/compute.txt" |
    sort | uniq -c | sed -E 's/^ *([0-9]+) /\1 run(s): /' | paste -sd';' -)"
  printf '%-17s %-8s %16s %15s %16s %16s\n' path model "train M instr/sa" \
    "eval M instr/sa" "est. train sa/s" "gemm flops/instr"
  echo "(M instr/sa: millions of instructions a sample; est. train sa/s: samples a second at 1.4 GHz, IPC 1)"
  echo "$table"
  # The default must be the path that trains each model in the fewest
  # instructions (runtime/compute_kernels.h and the package pick it).
  local model best
  for model in lenet5 resnet8; do
    best=$(awk -v m="$model" '$2 == m { if (min == "" || $3 < min) { min = $3; p = $1 } } END { print p }' <<<"$table")
    [[ $best == openblas-im2col ]] ||
      fail "$model trains in fewer instructions on $best than on the default openblas-im2col"
    step "$model: the default path (openblas-im2col) trains in the fewest instructions"
  done
}

# The per-board table: the default path, one thread.
report_models() {
  local work=$1
  [[ $(grep -c '^train ' "$work/share/out/models.txt" 2>/dev/null) == 8 ]] ||
    fail "the board measured $(grep -c '^train ' "$work/share/out/models.txt" 2>/dev/null || echo 0) of 8 models: $(tail -3 "$work/share/out/models.txt" 2>/dev/null)"
  printf '%-12s %5s %14s %16s %12s %12s %14s %s\n' model batch "M instr/sample" \
    "est. samples/s" "peak RSS MiB" "PSS MiB" "state bytes" "memory PSI (some avg10/60)"
  awk '
    /^model / && NF == 3 && $2 != "state" { model = $2; batch = $3 }
    /^train / { s = $0; sub(/.*: /, "", s); split(s, w, " "); ips = w[4] * 1e9 / w[1] }
    /^peak RSS/ { rss = $3; pss = $7 }
    /^model state/ { bytes = $3 }
    /^psi / { printf "%-12s %5d %14.2f %16.0f %12.1f %12.1f %14d %s %s\n", model, batch,
      ips / 1e6, 1.4e9 / ips, rss, pss, bytes, $3, $4 }' "$work/share/out/models.txt"
}

# What the board wrote into the share, and the server's rounds.
report() {
  local work=$1
  if [[ ! -f $work/share/out/result.env ]]; then
    tail -40 "$work/console.log" >&2 || true
    fail "the board wrote no result (console above)"
  fi
  cat "$work/share/out/summary.txt"
  # One line a round from the server: the board's figures as it saw them.
  awk -F'[,:{}]' '{ for (i = 2; i < NF; i += 2) f[$i] = $(i + 1)
    printf "test-pi-vm: round %s: test accuracy %s, round %.1f s, board training %.1f s (emulated)\n",
      f["\"round\""], f["\"test_accuracy\""], f["\"round_seconds\""], f["\"max_train_seconds\""] }' \
    "$work/job/rounds.jsonl" 2>/dev/null || true
  source "$work/share/out/result.env"
  local done_rounds
  done_rounds=$(grep -c . "$work/job/rounds.jsonl" 2>/dev/null || echo 0)
  [[ ${CLIENT_EXIT:-1} == 0 && $done_rounds == "$rounds" ]] ||
    fail "the client ended with ${CLIENT_EXIT:-?} after $done_rounds of $rounds rounds"
  report_clock
  ((quick)) || report_pressure "$work"
  # The release the board joined with, as the server kept it (the version
  # gate and the fleet page read it): the package's, which is the host's.
  local board_release host_release
  board_release=$(grep -ho '"client_version": *"[^"]*"' \
    "$work"/job/checkpoints/ckpt-*/state.json 2>/dev/null | tail -1 |
    sed -E 's/.*"([^"]*)"$/\1/') || true
  host_release=$(build/bin/fedberry-server --version | awk '{ print $2 }')
  [[ $board_release == "$host_release" ]] ||
    fail "the board joined as release '${board_release}', not ${host_release}"
  step "ok: installed from the local repository, joined over mutual TLS as" \
    "release ${board_release}," \
    "$done_rounds round(s) trained; peak RSS ${PEAK_RSS_MIB} MiB, PSS ${PEAK_PSS_MIB} MiB," \
    "USS ${PEAK_USS_MIB} MiB in 1 GiB (emulated board)${PRESSURE_RESULT:+; $PRESSURE_RESULT}"
}

# The board started with its clock in 1970: the client said so in words and
# waited (still running, no TLS error) until the clock was put right, then
# joined.
report_clock() {
  [[ ${CLOCK_WORDS:-} == "the clock is 1970-"*"; waiting for NTP (systemd-timesyncd)"* ]] ||
    fail "clock: the client did not say it waits for NTP with its clock in 1970 (it said: '${CLOCK_WORDS:-nothing}')"
  [[ ${CLOCK_WAITING_STATE:-} == active ]] ||
    fail "clock: the client was ${CLOCK_WAITING_STATE:-?}, not waiting, with its clock in 1970"
  [[ ${CLOCK_TLS_ERRORS:-1} == 0 ]] ||
    fail "clock: the client logged ${CLOCK_TLS_ERRORS:-?} TLS error line(s)"
  awk -v s="${CLOCK_SET_AT:-}" -v j="${CLOCK_JOINED_AT:-}" 'BEGIN { exit !(s != "" && j != "" && j + 0 > s + 0) }' ||
    fail "clock: the board did not join after its clock was put right (set at ${CLOCK_SET_AT:-?} s, joined at ${CLOCK_JOINED_AT:-?} s)"
  step "clock: with the clock at 1970-01-02 the client said \"${CLOCK_WORDS:0:90}...\"," \
    "waited, and joined at ${CLOCK_JOINED_AT} s, after the clock was put right at ${CLOCK_SET_AT} s (emulated)"
}

# The pressure job: the same job, the board paused, resumed and released
# under a balloon. Its model must equal the unpressured job's, bit for bit.
report_pressure() {
  local work=$1
  [[ ${PRESSURE_EXIT:-1} == 0 ]] || fail "the pressured client ended with ${PRESSURE_EXIT:-?}"
  cmp -s "$work/job/global_model.pt" "$work/pressure/global_model.pt" ||
    fail "the pressured job's model differs from the unpressured job's"
  local back="restored by CRIU"
  [[ ${BACK_BY:-?} == restarted ]] && back="started again from its checkpoint"
  PRESSURE_RESULT="the pressured job (paused, resumed, released by ${RELEASED_BY:-?}, $back) ended with the same model, bit for bit"
  step "pressure: $PRESSURE_RESULT"
}

main
