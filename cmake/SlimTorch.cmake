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
# libtorch1.13). Defines FEDBERRY_PRIVATE_LIBDIR (relative to the prefix)
# and the interface target fedberry::torch, which every fedberry target
# links instead of LibTorch's `torch`: it depends on the copies, so building
# any one program (scripts/sim.sh builds fedberry-sim only) makes them first.
# A program built without them would run, silently, on Debian's files
# (runtime/torch_libraries.h warns at start-up).
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

# LibTorch as fedberry's targets link it. CMake follows an interface
# library's dependencies in its place, so a target linking this one (or a
# library that links it) is built after the copies.
add_library(fedberry_torch INTERFACE)
target_link_libraries(fedberry_torch INTERFACE torch)
add_library(fedberry::torch ALIAS fedberry_torch)

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
  add_dependencies(fedberry_torch fedberry_slim_torch)
  set(CMAKE_BUILD_RPATH ${_fedberry_slim_dir})
  set(CMAKE_INSTALL_RPATH ${CMAKE_INSTALL_PREFIX}/${FEDBERRY_PRIVATE_LIBDIR})
  install(FILES ${_fedberry_slim_outputs}
          DESTINATION ${FEDBERRY_PRIVATE_LIBDIR})
endif()
message(STATUS "fedberry: FEDBERRY_SLIM_TORCH ${FEDBERRY_SLIM_TORCH}, "
               "BLAS folder '${FEDBERRY_TORCH_BLAS_DIR}'")

# Fails the configure when a target links LibTorch's `torch` itself rather
# than fedberry::torch: it could be built before the copies and run on
# Debian's files. Called once every target is defined.
function(fedberry_check_torch_links)
  set(_dirs ${CMAKE_SOURCE_DIR})
  set(_offenders)
  while(_dirs)
    list(POP_FRONT _dirs _dir)
    get_property(_subdirs DIRECTORY ${_dir} PROPERTY SUBDIRECTORIES)
    list(APPEND _dirs ${_subdirs})
    get_property(_targets DIRECTORY ${_dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(_target IN LISTS _targets)
      if(_target STREQUAL "fedberry_torch")
        continue()
      endif()
      get_target_property(_type ${_target} TYPE)
      set(_links)
      if(NOT _type STREQUAL "INTERFACE_LIBRARY")
        get_target_property(_links ${_target} LINK_LIBRARIES)
      endif()
      get_target_property(_interface ${_target} INTERFACE_LINK_LIBRARIES)
      if("torch" IN_LIST _links OR "torch" IN_LIST _interface)
        list(APPEND _offenders ${_target})
      endif()
    endforeach()
  endwhile()
  if(_offenders)
    message(FATAL_ERROR "link fedberry::torch, not torch (cmake/SlimTorch.cmake): "
                        "${_offenders}")
  endif()
endfunction()
