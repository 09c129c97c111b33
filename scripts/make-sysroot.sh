#!/usr/bin/env bash
# Builds the aarch64 (Debian 12 arm64) sysroot that the rpi3 preset compiles
# and links against: downloads Debian's arm64 packages of fedberry's libraries
# (LibTorch, gRPC, Protobuf, Abseil, GoogleTest, spdlog, fmt, nlohmann-json,
# zlib, libcsv, stb) and their dependencies with a private apt state, unpacks them with
# dpkg -x and fixes up symlinks. Cached: a second run with the same package
# list downloads nothing.
#
# Location: $FEDBERRY_SYSROOT_CACHE (default .cache/sysroot-arm64); the sysroot
# itself is <cache>/sysroot. Mirror: $FEDBERRY_DEBIAN_MIRROR (default
# http://deb.debian.org/debian). Prints the sysroot's path on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

cache=${FEDBERRY_SYSROOT_CACHE:-$PWD/.cache/sysroot-arm64}
mirror=${FEDBERRY_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${FEDBERRY_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
sysroot=$cache/sysroot

packages=(
  libc6-dev libstdc++-12-dev
  libtorch-dev
  libgrpc++-dev libprotobuf-dev libabsl-dev
  libspdlog-dev libfmt-dev nlohmann-json3-dev zlib1g-dev
  libgtest-dev libgmock-dev libxxhash-dev libcpp-httplib-dev libglpk-dev
  libmicrohttpd-dev
  libcsv-dev libstb-dev  # and, as their dependencies, libcsv3 and libstb0
  libssl-dev
  libopenblas0-openmp  # the arm64 libtorch_cpu copy's BLAS (cmake/SlimTorch.cmake)
  # Never run (the host's plugin is), but gRPC's CMake config refuses to load
  # when the files of its imported plugin targets are missing.
  protobuf-compiler-grpc
)

# The stamp names what the sysroot was made from (bump "format" when this
# script changes what it makes); same stamp, nothing to do.
stamp_want="format 3; packages: ${packages[*]}; mirror: $mirror"
if [[ -f $cache/stamp && "$(cat "$cache/stamp")" == "$stamp_want" ]]; then
  echo "$sysroot"
  exit 0
fi

# A private apt: arm64 only, its own lists, status (empty: nothing is
# installed, so every dependency is fetched) and package cache.
source scripts/arm64-apt.sh
echo "make-sysroot: fetching arm64 package lists" >&2
apt-get "${apt_opts[@]}" -qq update >&2
echo "make-sysroot: downloading ${packages[*]} and dependencies (arm64)" >&2
apt-get "${apt_opts[@]}" -qq -y --download-only --no-install-recommends \
  install "${packages[@]}" >&2
# Drop cached .debs that the archive has since replaced, so only current
# versions are unpacked.
apt-get "${apt_opts[@]}" -qq autoclean >&2

echo "make-sysroot: unpacking into $sysroot" >&2
rm -rf "$sysroot"
mkdir -p "$sysroot"
debs=("$apt_dir"/archives/*.deb)
# file-packages.txt: "package path" for every file, so checks can tell which
# package ships a library (there is no dpkg database in the sysroot).
: >"$cache/file-packages.txt"
for deb in "${debs[@]}"; do
  dpkg-deb -x "$deb" "$sysroot"
  pkg=$(dpkg-deb -f "$deb" Package)
  dpkg-deb --fsys-tarfile "$deb" | tar -t | sed "s|^\./|$pkg /|" \
    >>"$cache/file-packages.txt"
done

# Absolute symlinks point at the build host's /; make them relative so they
# resolve inside the sysroot.
while IFS= read -r -d '' link; do
  target=$(readlink "$link")
  [[ $target == /* ]] || continue
  ln -sfn "$(realpath -m -s --relative-to="$(dirname "$link")" \
    "$sysroot$target")" "$link"
done < <(find "$sysroot" -type l -print0)

# dpkg -x runs no maintainer scripts, so the alternatives that libblas3 and
# liblapack3 register are missing; LibTorch links against these names.
multiarch=$sysroot/usr/lib/aarch64-linux-gnu
for lib in blas lapack; do
  for so in "lib$lib.so.3" "lib$lib.so"; do
    if [[ ! -e $multiarch/$so && -e $multiarch/$lib/$so ]]; then
      ln -sfn "$lib/$so" "$multiarch/$so"
    fi
  done
done
[[ -e $multiarch/libblas.so.3 && -e $multiarch/liblapack.so.3 ]] || {
  echo "make-sysroot: BLAS/LAPACK not found in $multiarch" >&2
  exit 1
}

size=$(du -cb "${debs[@]}" | tail -1 | cut -f1)
echo "make-sysroot: ${#debs[@]} packages, $((size / 1048576)) MiB of .debs," \
  "sysroot $(du -sm "$sysroot" | cut -f1) MiB" >&2
echo "$stamp_want" >"$cache/stamp"
echo "$sysroot"
