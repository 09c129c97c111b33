# FEDBERRY_FAST_SGEMM: route LibTorch's sgemm_ (reference BLAS on a fresh
# Debian) to oneDNN's dnnl_sgemm (runtime/fast_sgemm.h says why).
#
# The check decides the default: ON when the oneDNN library that Debian's
# LibTorch loads (libdnnl.so.2, a dependency of libtorch_cpu) is found for
# the target and a program calling dnnl_sgemm links against it, and the
# target is x86-64, where oneDNN JIT-compiles its sgemm for the CPU it runs
# on (AVX2, AVX-512). On other targets (the aarch64 Pi build) Debian's oneDNN
# 2.6 exports dnnl_sgemm too, but as its portable C++ reference gemm: no
# faster kernel to gain, so the default is OFF there; -DFEDBERRY_FAST_SGEMM=ON
# still builds it where the link check passes.
#
# Defines the object library fedberry::fast_sgemm, empty when OFF: link it
# into every executable that trains or evaluates.
include(CheckCXXSourceCompiles)
include(CMakePushCheckState)

find_library(FEDBERRY_DNNL_LIBRARY NAMES dnnl libdnnl.so.2 libdnnl.so.3
  DOC "oneDNN, the library of dnnl_sgemm")
set(_fedberry_have_dnnl_sgemm OFF)
if(FEDBERRY_DNNL_LIBRARY)
  cmake_push_check_state(RESET)
  set(CMAKE_REQUIRED_LIBRARIES ${FEDBERRY_DNNL_LIBRARY})
  set(CMAKE_REQUIRED_QUIET ON)
  check_cxx_source_compiles([[
    #include <cstdint>
    extern "C" int dnnl_sgemm(char, char, int64_t, int64_t, int64_t, float,
                              const float*, int64_t, const float*, int64_t,
                              float, float*, int64_t);
    int main() {
      float a = 1, b = 1, c = 0;
      return dnnl_sgemm('N', 'N', 1, 1, 1, 1.f, &a, 1, &b, 1, 0.f, &c, 1);
    }]] FEDBERRY_HAVE_DNNL_SGEMM)
  cmake_pop_check_state()
  if(FEDBERRY_HAVE_DNNL_SGEMM)
    set(_fedberry_have_dnnl_sgemm ON)
  endif()
endif()

set(_fedberry_fast_sgemm_default OFF)
if(_fedberry_have_dnnl_sgemm AND
   CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(_fedberry_fast_sgemm_default ON)
endif()
option(FEDBERRY_FAST_SGEMM
  "Route LibTorch's sgemm_ to oneDNN's dnnl_sgemm (default: ON on x86-64 when dnnl_sgemm links)"
  ${_fedberry_fast_sgemm_default})
if(FEDBERRY_FAST_SGEMM AND NOT _fedberry_have_dnnl_sgemm)
  message(FATAL_ERROR "FEDBERRY_FAST_SGEMM=ON, but no oneDNN library with "
                      "dnnl_sgemm was found for this target")
endif()
message(STATUS "fedberry: dnnl_sgemm ${_fedberry_have_dnnl_sgemm} "
               "(${FEDBERRY_DNNL_LIBRARY}), FEDBERRY_FAST_SGEMM ${FEDBERRY_FAST_SGEMM}")

if(FEDBERRY_FAST_SGEMM)
  add_library(fedberry_fast_sgemm OBJECT
    ${CMAKE_CURRENT_LIST_DIR}/../runtime/fast_sgemm.cc)
  # The executable's sgemm_ must be in its dynamic symbol table for
  # libtorch_cpu's (and liblapack's) references to bind to it.
  target_link_options(fedberry_fast_sgemm INTERFACE
    "LINKER:--export-dynamic-symbol=sgemm_")
  target_link_libraries(fedberry_fast_sgemm PUBLIC ${FEDBERRY_DNNL_LIBRARY}
    ${CMAKE_DL_LIBS})
  target_compile_definitions(fedberry_fast_sgemm INTERFACE FEDBERRY_FAST_SGEMM=1)
else()
  add_library(fedberry_fast_sgemm INTERFACE)
endif()
add_library(fedberry::fast_sgemm ALIAS fedberry_fast_sgemm)
# fast_sgemm.h declares nothing that needs the object: whoever links the
# target may include it, ON or OFF.
fedberry_include_root(fedberry_fast_sgemm HEADERS runtime/fast_sgemm.h)

# The same sgemm_ as a preloadable library, for programs fedberry does not
# build: bench/vs_python.sh runs its Python reference with
# LD_PRELOAD=libfedberry_sgemm_preload.so so that both sides of the
# comparison do their matrix products in oneDNN.
if(FEDBERRY_FAST_SGEMM)
  add_library(fedberry_sgemm_preload MODULE
    ${CMAKE_CURRENT_LIST_DIR}/../runtime/fast_sgemm.cc)
  fedberry_include_root(fedberry_sgemm_preload)
  target_link_libraries(fedberry_sgemm_preload PRIVATE
    ${FEDBERRY_DNNL_LIBRARY} ${CMAKE_DL_LIBS})
  set_target_properties(fedberry_sgemm_preload PROPERTIES
    PREFIX "lib" LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
endif()
