#!/usr/bin/env bash
# Configures a CMake preset (arguments after it go to cmake). A build folder
# made by an older checkout with another generator (Unix Makefiles) cannot be
# switched to Ninja in place, so its cache is reset first, and this says so.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=$1
shift
case $preset in
  default) dir=build ;;
  *) dir=build-$preset ;;
esac
if [[ -f $dir/CMakeCache.txt ]] &&
   ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$dir/CMakeCache.txt"; then
  echo "configure: $dir/ was made with another CMake generator;" \
       "configuring it afresh for Ninja" >&2
  rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
fi
exec cmake --preset "$preset" "$@"
