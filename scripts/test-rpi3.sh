#!/usr/bin/env bash
# Proves the Raspberry Pi 3 B+ (aarch64) build on this x86-64 machine:
#  1. cross-builds the rpi3 preset (scripts/cross-build.sh);
#  2. runs its unit tests under qemu-aarch64-static as a Cortex-A53
#     (ctest --preset rpi3; the toolchain's emulator is -cpu cortex-a53);
#  3. makes the arm64 .deb and checks it (scripts/check-deb.sh), then proves
#     that every AArch64 file in it is ARMv8.0 code a Pi 3 B+ can run
#     (scripts/armv8-scan.sh, itself tested first by
#     scripts/armv8-scan-test.sh on objects with ldadd, sdot, SVE, ...);
#  4. runs a short federation on loopback: the host's fedberry-server (from
#     build/, which scripts/test.sh builds first) with two aarch64
#     fedberry-clients under qemu -cpu cortex-a53, on Fashion-MNIST, and
#     checks that the job
#     runs to the end with a test accuracy above chance.
# Prints each step's wall time, the binaries' sizes and the clients' peak RSS
# (qemu's, a rough figure) as it goes; asserts none of them.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { echo "test-rpi3: $*"; }
elapsed() { echo "$((SECONDS - $1)) s"; }

t=$SECONDS
scripts/cross-build.sh
step "cross build done in $(elapsed "$t")"
sysroot=$(scripts/make-sysroot.sh)
for b in fedberry-client fedberry-server; do
  step "build-rpi3/bin/$b: $(stat -c %s "build-rpi3/bin/$b") bytes (unstripped)"
done

t=$SECONDS
ctest --preset rpi3
step "unit tests under qemu done in $(elapsed "$t")"

t=$SECONDS
rm -f build-rpi3/fedberry_*_arm64.deb
(cd build-rpi3 && cpack -G DEB >/dev/null)
deb=$(ls build-rpi3/fedberry_*_arm64.deb)
scripts/check-deb.sh "$deb"
step "package checked in $(elapsed "$t")"

# Nothing beyond ARMv8.0 in what the package ships: its programs and the
# LibTorch copies (Debian's other libraries pick their code per CPU at run
# time and are not the package's).
t=$SECONDS
scripts/armv8-scan-test.sh
deb_root=$(mktemp -d /tmp/fedberry-deb-XXXXXX)
dpkg-deb -x "$deb" "$deb_root"
elf_files=()
while IFS= read -r -d '' f; do
  [[ $(head -c4 "$f" | od -An -c | tr -d ' ') == 177ELF ]] && elf_files+=("$f")
done < <(find "$deb_root" -type f -print0 | sort -z)
if ! scripts/armv8-scan.sh "${elf_files[@]}" | sed "s|$deb_root||"; then
  rm -rf "$deb_root"
  step "FAIL: the package ships instructions a Pi 3 B+'s Cortex-A53 lacks"
  exit 1
fi
rm -rf "$deb_root"
step "${#elf_files[@]} AArch64 files of the package scanned: ARMv8.0 only, in $(elapsed "$t")"

# The federation: 2 rounds of a few local steps, host server, qemu clients.
server_bin=build/bin/fedberry-server
[[ -x $server_bin ]] || cmake --build --preset default --target fedberry-server
data=${FEDBERRY_DATA:-/usr/share/datasets/fashion-mnist}
work=$(mktemp -d /tmp/fedberry-rpi3-XXXXXX)
pids=()
cleanup() {
  # Each process runs in its own session (setsid): end the whole group.
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

t=$SECONDS
setsid timeout 900 "$server_bin" --listen=127.0.0.1:0 --rounds=2 \
  --min_clients=2 --min_clients_to_start=2 --local_steps=20 --batch_size=32 \
  --lr=0.05 --eval_data="$data" --output="$work/out" \
  >"$work/server.log" 2>&1 &
server_pid=$!
pids+=("$server_pid")
for _ in $(seq 600); do
  [[ -s $work/out/server.addr ]] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [[ ! -s $work/out/server.addr ]]; then
  cat "$work/server.log" >&2
  step "FAIL: the server did not start"
  exit 1
fi
addr=$(cat "$work/out/server.addr")
client_pids=()
for i in 0 1; do
  setsid /usr/bin/time -v -o "$work/client-$i.time" timeout 900 \
    qemu-aarch64-static -cpu cortex-a53 -L "$sysroot" build-rpi3/bin/fedberry-client \
    --server="$addr" --data="$data" --partition_index="$i" \
    --partition_count=2 --threads=1 --name="rpi3-$i" --give_up_after=120s \
    >"$work/client-$i.log" 2>&1 &
  client_pids+=($!)
  pids+=($!)
done

# Wait for all three; the first one to fail ends the others (a client that
# cannot start would otherwise leave the server waiting for it).
declare -A running=([$server_pid]=server [${client_pids[0]}]=client-0
  [${client_pids[1]}]=client-1)
while [[ ${#running[@]} -gt 0 ]]; do
  code=0
  wait -n -p done "${!running[@]}" || code=$?
  who=${running[$done]}
  unset "running[$done]"
  if [[ $code -ne 0 ]]; then
    for log in "$work"/*.log; do
      echo "--- $(basename "$log")" >&2
      tail -15 "$log" >&2
    done
    step "FAIL: $who exited with status $code"
    exit 1
  fi
done
wall=$(elapsed "$t")

# rounds.jsonl: one JSON object per round; the last one's figures count.
rounds=$(grep -c . "$work/out/rounds.jsonl")
last=$(tail -1 "$work/out/rounds.jsonl")
field() { sed -nE "s/.*\"$1\": *([0-9.eE+-]+).*/\1/p" <<<"$last"; }
participants=$(field participants)
accuracy=$(field test_accuracy)
for i in 0 1; do
  rss=$(sed -nE 's/.*Maximum resident set size \(kbytes\): ([0-9]+)/\1/p' \
    "$work/client-$i.time")
  step "client $i (aarch64 under qemu): peak RSS $((rss / 1024)) MiB"
done
step "federation: $rounds rounds, $participants clients in the last," \
  "test accuracy $accuracy, wall time $wall"
if [[ $rounds -ne 2 || $participants -ne 2 ]] ||
  ! awk -v a="$accuracy" 'BEGIN { exit !(a > 0.2) }'; then
  step "FAIL: expected 2 rounds with 2 clients and accuracy above 0.2" \
    "(chance is 0.1)"
  exit 1
fi
step "ok"
