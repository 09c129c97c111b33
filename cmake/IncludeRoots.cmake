# Include roots: a target sees its own headers and those of the targets it
# links, nothing else, so one that includes what it does not link fails to
# compile ("fatal error: pki/fleet_pki.h: No such file or directory")
# instead of building on a dependency nobody declared. No target puts the
# source root on an include path.
#
# A target's include root is ${CMAKE_BINARY_DIR}/include_roots/<target>/: a
# symlink per header the target owns, at the header's path under the source
# root (include_roots/fedberry_server/server/round/round_types.h ->
# <source>/server/round/round_types.h), so `#include "server/round/..."`
# lines stay as they are and an edited header rebuilds what includes it.
# Links are per file, not per folder, because folders hold several targets
# (server/: server and report; client/: backoff, client, client_app;
# checkpoint/: three; each module's testing/ is its own *_testing target) and
# a folder link would also expose the modules nested in it (server/strategy/,
# server/planner/, server/fleet/).
#
# A target owns the header beside each of its sources (foo.cc -> foo.h),
# the headers among its sources, and the header-only files it names in
# HEADERS; a header-only file belongs to the target whose code it goes with.
# Generated headers (proto's, in the build tree) are not linked: their
# target puts their folder on its path itself. The links are made at
# configure time; a new header beside a new source comes with the CMake edit
# that adds the source.

# fedberry_include_root(<target> [HEADERS <header>...])
#   Makes <target>'s include root and puts it on its include path: PUBLIC for
#   a library, INTERFACE for an interface library, PRIVATE for an
#   executable. HEADERS are relative to the calling CMakeLists.txt's folder.
function(fedberry_include_root target)
  cmake_parse_arguments(ARG "" "" "HEADERS" ${ARGN})
  get_target_property(type ${target} TYPE)
  get_target_property(target_dir ${target} SOURCE_DIR)
  get_target_property(sources ${target} SOURCES)
  if(NOT sources)
    set(sources)
  endif()
  set(headers)
  foreach(source IN LISTS sources)
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${target_dir} NORMALIZE
               OUTPUT_VARIABLE path)
    if(path MATCHES "\\.h$")
      list(APPEND headers ${path})
    else()
      string(REGEX REPLACE "\\.(cc|cpp)$" ".h" header ${path})
      if(NOT header STREQUAL path AND EXISTS ${header})
        list(APPEND headers ${header})
      endif()
    endif()
  endforeach()
  foreach(header IN LISTS ARG_HEADERS)
    cmake_path(ABSOLUTE_PATH header BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
               NORMALIZE OUTPUT_VARIABLE path)
    if(NOT EXISTS ${path})
      message(FATAL_ERROR "fedberry_include_root(${target}): no ${path}")
    endif()
    list(APPEND headers ${path})
  endforeach()
  list(REMOVE_DUPLICATES headers)

  set(root ${CMAKE_BINARY_DIR}/include_roots/${target})
  file(REMOVE_RECURSE ${root})  # a header moved to another target goes
  file(MAKE_DIRECTORY ${root})
  foreach(path IN LISTS headers)
    cmake_path(IS_PREFIX CMAKE_SOURCE_DIR ${path} NORMALIZE in_source_tree)
    if(NOT in_source_tree)
      continue()
    endif()
    file(RELATIVE_PATH relative ${CMAKE_SOURCE_DIR} ${path})
    cmake_path(GET relative PARENT_PATH folder)
    file(MAKE_DIRECTORY ${root}/${folder})
    file(CREATE_LINK ${path} ${root}/${relative} SYMBOLIC)
  endforeach()

  if(type STREQUAL "EXECUTABLE")
    set(scope PRIVATE)
  elseif(type STREQUAL "INTERFACE_LIBRARY")
    set(scope INTERFACE)
  else()
    set(scope PUBLIC)
  endif()
  target_include_directories(${target} ${scope} ${root})
endfunction()

# fedberry_library(<name> SOURCES <source>... [HEADERS <header>...])
#   The library fedberry_<name>, its alias fedberry::<name>, and its include
#   root (fedberry_include_root).
function(fedberry_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;HEADERS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "fedberry_library(${name}): unexpected "
                        "${ARG_UNPARSED_ARGUMENTS}")
  endif()
  add_library(fedberry_${name} ${ARG_SOURCES})
  add_library(fedberry::${name} ALIAS fedberry_${name})
  fedberry_include_root(fedberry_${name} HEADERS ${ARG_HEADERS})
endfunction()

# fedberry_tests_include_root(<target> PUBLIC|PRIVATE)
#   The tests' own helpers (`#include "tests/json_lines.h"`): one link to the
#   whole tests/ folder, which holds test code only. Whatever else a test
#   includes comes from the targets it links, as for any target.
function(fedberry_tests_include_root target scope)
  set(root ${CMAKE_BINARY_DIR}/include_roots/tests_folder)
  if(NOT IS_SYMLINK ${root}/tests)
    file(MAKE_DIRECTORY ${root})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/tests ${root}/tests SYMBOLIC)
  endif()
  target_include_directories(${target} ${scope} ${root})
endfunction()
