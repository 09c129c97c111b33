// Routes LibTorch's single-precision BLAS calls to oneDNN's sgemm.
//
// Debian's LibTorch does its float matrix products (linear layers, the
// im2col convolutions' gemm) through the Fortran BLAS symbol sgemm_ of
// libblas.so.3, which on a fresh Debian install is the unoptimised reference
// BLAS: a third of a training client's CPU and half of an evaluation's.
// oneDNN, which libtorch_cpu already loads, has a JIT-compiled sgemm
// (dnnl_sgemm). fast_sgemm.cc defines sgemm_ in the executable and exports it
// to the dynamic linker, so libtorch's (and LAPACK's) calls bind to it
// instead of libblas's, without changing the machine's BLAS for every other
// program. Arguments dnnl_sgemm refuses go to the next sgemm_ (libblas), so
// BLAS error reporting is unchanged. With FEDBERRY_KERNELS=reference in the
// environment (runtime/compute_kernels.h) every call goes there.
//
// Linked into an executable with the CMake target fedberry::fast_sgemm (an
// object library; empty when FEDBERRY_FAST_SGEMM is OFF).
#ifndef FEDBERRY_RUNTIME_FAST_SGEMM_H_
#define FEDBERRY_RUNTIME_FAST_SGEMM_H_

#include <cstdint>

namespace fedberry::runtime {

// Calls of this executable's sgemm_ so far (for tests and logs: proof that
// LibTorch's calls reached it).
uint64_t FastSgemmCalls();

// Of those, calls handed on to the next sgemm_ (libblas): oneDNN refused
// the arguments, or reference kernels are in use.
uint64_t FastSgemmFallbacks();

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_FAST_SGEMM_H_
