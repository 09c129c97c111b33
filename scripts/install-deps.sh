#!/usr/bin/env bash
# Installs fedberry's build and run dependencies from Debian 12's packages;
# with --test, also what only the tests need; with --cross, that and the
# tools of the Raspberry Pi (aarch64) cross build.
# Idempotent and quiet when everything is already installed.
set -euo pipefail

packages=(
  cmake ninja-build g++ make ccache pkg-config
  libtorch-dev
  libgrpc++-dev protobuf-compiler protobuf-compiler-grpc libprotobuf-dev
  libabsl-dev libspdlog-dev libfmt-dev nlohmann-json3-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libxxhash-dev
  libcsv-dev libstb-dev  # csv: and images: data sources
  libssl-dev  # SHA-256 of plan model files (OpenSSL's libcrypto)
  libmicrohttpd-dev  # the operators' HTTP listener (server/http_listener.cc)
  libglpk-dev
  dataset-fashion-mnist
  time
  patchelf  # the slim LibTorch copies (scripts/slim-library.sh)
  criu  # optional at run time: the watchdog detects it with `criu check`
)
# Cross compiler, emulator for the tests, and what scripts/make-sysroot.sh
# uses (apt, dpkg-deb, the Debian archive key).
cross_packages=(
  g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user-static
  apt dpkg-dev debian-archive-keyring
  # The emulated board (scripts/test-pi-vm.sh): its system, its machine,
  # its disk image.
  mmdebstrap arch-test qemu-system-arm e2fsprogs socat
)
# The RPC fuzz targets (scripts/fuzz.sh, run by scripts/test.sh), and
# Python PyTorch for the TorchScript fixtures.
test_packages=(clang-14 libclang-rt-14-dev openssl  # openssl: the PKI interop tests
  libcpp-httplib-dev  # the tests' HTTP client
  python3-torch  # the tests export TorchScript models as users do
  chromium)  # the fleet page test renders it as a person sees it
# --test: what the tests need too; --cross: that and the cross build's tools.
case ${1:-} in
  --cross) packages+=("${test_packages[@]}" "${cross_packages[@]}") ;;
  --test) packages+=("${test_packages[@]}") ;;
esac

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: missing packages: ${missing[*]}; run as root" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
