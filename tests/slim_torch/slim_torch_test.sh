#!/usr/bin/env bash
# The repaired LibTorch copies (cmake/SlimTorch.cmake) are what fedberry's
# programs load.
#   slim_torch_test.sh programs BUILD_DIR
#     each program in BUILD_DIR/bin resolves libtorch_cpu to
#     BUILD_DIR/lib/fedberry and loads no OpenCV; a client forced onto
#     Debian's libtorch_cpu (LD_LIBRARY_PATH) warns once, naming the folder.
#   slim_torch_test.sh fresh SOURCE_DIR WORK_DIR
#     configures a fresh build folder, builds one target (torch_probe) and
#     checks that it ran on the copies the build made for it.
set -euo pipefail
mode=$1
fail() { echo "slim_torch_test: $*" >&2; exit 1; }

programs() {
  local build=$1 copies
  copies=$(cd "$build/lib/fedberry" && pwd -P) ||
    fail "no $build/lib/fedberry: the copies were never made"
  for p in fedberry-server fedberry-client fedberry-emulated-client; do
    local resolved
    resolved=$(ldd "$build/bin/$p" | awk '/libtorch_cpu/ {print $3}')
    [[ $(dirname "$(readlink -f "$resolved")") == "$copies" ]] ||
      fail "$p loads libtorch_cpu from '$resolved', not $copies"
    if ldd "$build/bin/$p" | grep -q libopencv; then
      fail "$p loads OpenCV: $(ldd "$build/bin/$p" | grep -m1 libopencv)"
    fi
    echo "$p: libtorch_cpu from $copies, no OpenCV"
  done
  local debian out
  debian=/usr/lib/$(gcc -print-multiarch)
  [[ -e $debian/libtorch_cpu.so.1.13 ]] || fail "no Debian LibTorch in $debian"
  # Bad data ends the client right after its start-up checks (exit 2).
  out=$(LD_LIBRARY_PATH=$debian "$build/bin/fedberry-client" \
    --data=idx:/nonexistent --server=127.0.0.1:1 2>&1) && fail "client ran"
  grep -q "not from the repaired copy this build made for it in $copies" \
    <<<"$out" || fail "no warning on Debian's LibTorch: $out"
  [[ $(grep -c "LibTorch was loaded from" <<<"$out") == 1 ]] ||
    fail "the warning is not given once: $out"
  out=$("$build/bin/fedberry-client" --data=idx:/nonexistent \
    --server=127.0.0.1:1 2>&1) && fail "client ran"
  grep -q "LibTorch was loaded from" <<<"$out" &&
    fail "a warning on the copies: $out"
  echo "fedberry-client on Debian's LibTorch warns once; on the copies not"
}

fresh() {
  local source=$1 work=$2
  rm -rf "$work"
  cmake -S "$source" -B "$work" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFEDBERRY_BUILD_TESTS=ON -DFEDBERRY_BUILD_INTEGRATION_TESTS=OFF \
    >"$work.configure.log" 2>&1 ||
    { cat "$work.configure.log"; fail "configure failed"; }
  cmake --build "$work" --target torch_probe >"$work.build.log" 2>&1 ||
    { cat "$work.build.log"; fail "building torch_probe failed"; }
  grep -q "Repairing libtorch_cpu" "$work.build.log" ||
    fail "building one target did not make the copies"
  local copies mapped
  copies=$(cd "$work/lib/fedberry" && pwd -P)
  mapped=$("$work/bin/torch_probe")
  echo "torch_probe maps: $mapped"
  grep -qx "$copies/libtorch_cpu.so.1.13" <<<"$mapped" ||
    fail "torch_probe mapped '$mapped', not $copies/libtorch_cpu.so.1.13"
  grep -q libopencv <<<"$mapped" && fail "torch_probe maps OpenCV"
  rm -rf "$work" "$work".*.log
  echo "one target in a fresh folder: it made and loaded the copies"
}

case $mode in
  programs) programs "$2" ;;
  fresh) fresh "$2" "$3" ;;
  *) fail "unknown mode $mode" ;;
esac
