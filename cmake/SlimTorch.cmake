# FEDBERRY_SLIM_TORCH: fedberry's programs load repaired copies of Debian's
# LibTorch libraries (libtorch_cpu, libc10) from a private directory instead
# of the originals.
#
# Debian 12's libtorch_cpu.so names 45 libraries; 24 of them (OpenCV, FFmpeg,
# ZeroMQ, LMDB, LevelDB, Snappy, zstd, OpenCL, libnuma here) supply none of
# its symbols, yet every process that loads it loads them and their own
# dependencies (about 240 libraries, 57 MiB of memory, half of LibTorch's
# start on x86), and installing it installs them (532 MiB of image, video and
# desktop packages on arm64). scripts/slim-library.sh copies each library,
# drops those entries with patchelf, and fails the build if any symbol of the
# copy no longer resolves.
#
# The copies go to <build>/lib/fedberry (every program's build RUNPATH, so
# the simulator and the tests run on them too) and install to
# <prefix>/lib/fedberry (the installed programs' RUNPATH; /usr/lib/fedberry
# in the .deb, which then depends on what the copies still load instead of
# libtorch1.13). Defines FEDBERRY_PRIVATE_LIBDIR (relative to the prefix).
option(FEDBERRY_SLIM_TORCH
  "Load repaired copies of libtorch_cpu and libc10 without their dead library links (scripts/slim-library.sh)"
  ON)
set(FEDBERRY_PRIVATE_LIBDIR lib/fedberry)
# The BLAS the libtorch_cpu copy loads (its RUNPATH; empty: the system's
# libblas.so.3 alternative). On arm64 Debian's alternative is the reference
# BLAS, and oneDNN 2.6 has no optimised aarch64 kernels; OpenBLAS's OpenMP
# flavour (the pthread one hangs inside LibTorch's OpenMP, pytorch#52047)
# with LibTorch's own im2col convolutions trained LeNet-5 in 1.37 M
# instructions a sample where Debian's defaults took 6.37 M
# (scripts/test-pi-vm.sh --compute; docs/guide/cross-build.md, "The board's compute path"),
# so the arm64 copy is pinned to it without changing the board's
# alternatives.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(_fedberry_blas_default /usr/lib/aarch64-linux-gnu/openblas-openmp)
else()
  set(_fedberry_blas_default "")
endif()
set(FEDBERRY_TORCH_BLAS_DIR "${_fedberry_blas_default}" CACHE STRING
  "Where the libtorch_cpu copy loads libblas.so.3 and liblapack.so.3 from (empty: Debian's alternatives)")

if(FEDBERRY_SLIM_TORCH)
  find_program(FEDBERRY_PATCHELF patchelf)
  if(NOT FEDBERRY_PATCHELF)
    message(FATAL_ERROR "FEDBERRY_SLIM_TORCH needs patchelf (Debian's patchelf; "
                        "scripts/install-deps.sh installs it), or "
                        "-DFEDBERRY_SLIM_TORCH=OFF")
  endif()
  set(_fedberry_slim_dir ${CMAKE_BINARY_DIR}/${FEDBERRY_PRIVATE_LIBDIR})
  set(_fedberry_slim_root /)
  if(CMAKE_SYSROOT)
    set(_fedberry_slim_root ${CMAKE_SYSROOT})
  endif()
  set(_fedberry_readelf readelf)
  if(CMAKE_READELF)
    set(_fedberry_readelf ${CMAKE_READELF})
  endif()
  set(_fedberry_slim_outputs)
  foreach(lib c10 torch_cpu)
    set(_runpath)
    if(lib STREQUAL "torch_cpu" AND FEDBERRY_TORCH_BLAS_DIR)
      set(_runpath --runpath=${FEDBERRY_TORCH_BLAS_DIR})
    endif()
    get_target_property(_configs ${lib} IMPORTED_CONFIGURATIONS)
    list(GET _configs 0 _config)
    get_target_property(_location ${lib} IMPORTED_LOCATION_${_config})
    get_target_property(_soname ${lib} IMPORTED_SONAME_${_config})
    if(NOT _location OR NOT _soname)
      message(FATAL_ERROR "FEDBERRY_SLIM_TORCH: no file or soname for ${lib}")
    endif()
    add_custom_command(
      OUTPUT ${_fedberry_slim_dir}/${_soname}
      COMMAND ${CMAKE_SOURCE_DIR}/scripts/slim-library.sh
              --root=${_fedberry_slim_root} --readelf=${_fedberry_readelf}
              ${_runpath} ${_location} ${_fedberry_slim_dir}/${_soname}
      DEPENDS ${_location} ${CMAKE_SOURCE_DIR}/scripts/slim-library.sh
      COMMENT "Repairing ${_soname} (scripts/slim-library.sh)"
      VERBATIM)
    list(APPEND _fedberry_slim_outputs ${_fedberry_slim_dir}/${_soname})
  endforeach()
  add_custom_target(fedberry_slim_torch ALL DEPENDS ${_fedberry_slim_outputs})
  set(CMAKE_BUILD_RPATH ${_fedberry_slim_dir})
  set(CMAKE_INSTALL_RPATH ${CMAKE_INSTALL_PREFIX}/${FEDBERRY_PRIVATE_LIBDIR})
  install(FILES ${_fedberry_slim_outputs}
          DESTINATION ${FEDBERRY_PRIVATE_LIBDIR})
endif()
message(STATUS "fedberry: FEDBERRY_SLIM_TORCH ${FEDBERRY_SLIM_TORCH}, "
               "BLAS folder '${FEDBERRY_TORCH_BLAS_DIR}'")
