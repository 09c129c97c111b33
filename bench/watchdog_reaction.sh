#!/usr/bin/env bash
# The watchdog's reaction times under real memory pressure, as figures (a
# benchmark, not a test): a client trains on Fashion-MNIST; a balloon
# (fedberry-test-balloon) then takes memory until MemAvailable is 4 GiB below
# the reading at start, with the client's pause level 3 GiB below it and its
# resume level 2 GiB below it. A poller notes when MemAvailable crosses
# each level; the client's log says when it decided to pause, when training
# stopped at a batch boundary, and when it resumed. The poller and the
# client race for the same reading, so with short polls and no hold the
# figures sit within a few tens of milliseconds of zero, either side.
# Usage: bench/watchdog_reaction.sh [bin_dir]   (default build/bin)
# Env: POLL (default 1s, the client's default), PAUSE_HOLD (3s),
# RESUME_HOLD (10s), FEDBERRY_DATA.
set -euo pipefail
bin=${1:-build/bin}
data=${FEDBERRY_DATA:-/usr/share/datasets/fashion-mnist}
poll=${POLL:-1s}
pause_hold=${PAUSE_HOLD:-3s}
resume_hold=${RESUME_HOLD:-10s}
work=$(mktemp -d /tmp/fedberry-reaction-XXXXXX)
cleanup() {
  kill $(jobs -p) 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Bash builtins only: the poller must not lag behind the client's reading.
available() {
  local key value rest
  while read -r key value rest; do
    [[ $key == MemAvailable: ]] && echo "$value" && return
  done </proc/meminfo
}
now() { date +%s.%N; }
# Seconds since the epoch of the first log line containing $2 in file $1.
logged_at() {
  local stamp
  stamp=$(grep -m1 -F "$2" "$1" | sed -E 's/^\[([^]]+)\].*/\1/')
  [[ -n $stamp ]] && date -d "$stamp" +%s.%N
}
wait_for() {  # file, text, seconds
  for _ in $(seq $(($3 * 20))); do
    grep -qF "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  echo "watchdog_reaction: no '$2' in $1 after $3 s" >&2
  tail -5 "$1" >&2
  exit 1
}
# Polls MemAvailable every few ms until it is below (or, with "above", at or
# above) $1 KiB; prints the time.
crossing() {
  local level=$1 dir=${2:-below} a
  while true; do
    a=$(available)
    if [[ $dir == below ]] && ((a < level)); then break; fi
    if [[ $dir == above ]] && ((a >= level)); then break; fi
    sleep 0.002
  done
  now
}

a0=$(available)
gib=$((1024 * 1024))
pause=$((a0 - 3 * gib))
resume=$((a0 - 2 * gib))
target=$((a0 - 4 * gib))
echo "watchdog_reaction: MemAvailable $((a0 / 1024)) MiB; pause below" \
  "$((pause / 1024)) MiB, resume at $((resume / 1024)) MiB; poll $poll," \
  "pause hold $pause_hold, resume hold $resume_hold"

"$bin/fedberry-server" --listen=127.0.0.1:0 --output="$work/out" --rounds=1 \
  --min_clients=1 --min_clients_to_start=1 --local_steps=20000 \
  --batch_size=32 --eval_data= >"$work/server.log" 2>&1 &
wait_for "$work/out/server.addr" "" 30
"$bin/fedberry-client" --server="$(cat "$work/out/server.addr")" \
  --data="$data" --threads=1 --watchdog_release=off \
  --watchdog_poll_interval="$poll" --watchdog_pause_hold="$pause_hold" \
  --watchdog_resume_hold="$resume_hold" \
  --watchdog_soft_available="${pause}KiB" --watchdog_pause_available="${pause}KiB" \
  --watchdog_resume_available="${resume}KiB" \
  --watchdog_critical_available=off --watchdog_soft_psi=100 \
  --watchdog_pause_psi=100 --watchdog_resume_psi=100 --watchdog_micro_batches=1 \
  --watchdog_critical_psi=0 >"$work/client.log" 2>&1 &
wait_for "$work/client.log" "pulling the global model" 60
sleep 3  # training is under way

crossing "$pause" below >"$work/crossed" &
"$bin/fedberry-test-balloon" "$target" 6144 >"$work/balloon.log" 2>&1 &
balloon=$!
wait_for "$work/client.log" "paused at a batch boundary" 60
crossed=$(cat "$work/crossed")
decided=$(logged_at "$work/client.log" "pausing training")
stopped=$(logged_at "$work/client.log" "paused at a batch boundary")

sleep 2
crossing "$resume" above >"$work/relieved" &
kill -TERM "$balloon"
wait_for "$work/client.log" "resuming training" 120
relieved=$(cat "$work/relieved")
resumed=$(logged_at "$work/client.log" "resuming training")

awk -v c="$crossed" -v d="$decided" -v s="$stopped" -v r="$relieved" \
  -v u="$resumed" 'BEGIN {
  printf "watchdog_reaction: pressure to pause decision %.3f s, to training stopped at a batch boundary %.3f s\n", d - c, s - c
  printf "watchdog_reaction: relief to resume %.3f s\n", u - r
}'
