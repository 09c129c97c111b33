# Cross-compiles fedberry for the Raspberry Pi 3 B+ (Cortex-A53, aarch64,
# Debian 12 arm64 / 64-bit Raspberry Pi OS) with Debian's
# aarch64-linux-gnu toolchain (g++-aarch64-linux-gnu).
#
# Libraries, headers and CMake package configs come from a sysroot made of
# Debian's arm64 packages (scripts/make-sysroot.sh); programs (protoc,
# grpc_cpp_plugin) come from the build host. Tests and gtest discovery run
# under qemu-aarch64-static with the sysroot as its library root, emulating
# a Cortex-A53 (-cpu cortex-a53: ARMv8.0, no LSE atomics, no dot product, no
# SVE), not qemu's default "max" CPU, so code that needs a newer core fails
# here as it would on the board.
#
# The sysroot is FEDBERRY_SYSROOT (cache variable or environment variable),
# by default .cache/sysroot-arm64/sysroot in the source tree.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

if(NOT FEDBERRY_SYSROOT)
  if(DEFINED ENV{FEDBERRY_SYSROOT})
    set(FEDBERRY_SYSROOT "$ENV{FEDBERRY_SYSROOT}")
  else()
    get_filename_component(FEDBERRY_SYSROOT
      "${CMAKE_CURRENT_LIST_DIR}/../../.cache/sysroot-arm64/sysroot" ABSOLUTE)
  endif()
endif()
if(NOT EXISTS "${FEDBERRY_SYSROOT}/usr/lib/aarch64-linux-gnu")
  message(FATAL_ERROR "No aarch64 sysroot at ${FEDBERRY_SYSROOT}: run "
                      "scripts/make-sysroot.sh or set FEDBERRY_SYSROOT.")
endif()
set(FEDBERRY_SYSROOT "${FEDBERRY_SYSROOT}" CACHE PATH "aarch64 sysroot")
# try_compile projects re-read this file; hand them the same sysroot.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES FEDBERRY_SYSROOT)

set(CMAKE_SYSROOT "${FEDBERRY_SYSROOT}")
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-a53")
set(CMAKE_CXX_FLAGS_INIT "-mcpu=cortex-a53")

# Libraries, headers and packages only from the sysroot; programs only from
# the host.
set(CMAKE_FIND_ROOT_PATH "${FEDBERRY_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# pkg-config (used by some package configs) reads the sysroot's .pc files.
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${FEDBERRY_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR}
  "${FEDBERRY_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${FEDBERRY_SYSROOT}/usr/share/pkgconfig")

find_program(FEDBERRY_QEMU qemu-aarch64-static)
if(FEDBERRY_QEMU)
  set(CMAKE_CROSSCOMPILING_EMULATOR
    "${FEDBERRY_QEMU};-cpu;cortex-a53;-L;${FEDBERRY_SYSROOT}")
endif()
