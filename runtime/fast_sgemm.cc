#include "runtime/fast_sgemm.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string_view>

// oneDNN's C API (oneapi/dnnl/dnnl.h; declared here so no -dev package is
// needed): row-major C := alpha * op(A) * op(B) + beta * C, op(A) M x K,
// op(B) K x N; returns dnnl_success (0) or an error status.
extern "C" int dnnl_sgemm(char transa, char transb, int64_t M, int64_t N,
                          int64_t K, float alpha, const float* A, int64_t lda,
                          const float* B, int64_t ldb, float beta, float* C,
                          int64_t ldc);

namespace {

std::atomic<uint64_t> calls{0};
std::atomic<uint64_t> fallbacks{0};

using BlasSgemm = void (*)(const char*, const char*, const int*, const int*,
                           const int*, const float*, const float*, const int*,
                           const float*, const int*, const float*, float*,
                           const int*);

// libblas's sgemm_, looked up the first time oneDNN refuses a call.
BlasSgemm NextSgemm() {
  static const BlasSgemm next =
      reinterpret_cast<BlasSgemm>(dlsym(RTLD_NEXT, "sgemm_"));
  return next;
}

// FEDBERRY_KERNELS=reference (runtime/compute_kernels.h): every call goes
// to the machine's BLAS, whose sums do not depend on the CPU. Read once:
// the choice is made when the process starts.
bool Bypassed() {
  static const bool bypassed = [] {
    const char* kernels = std::getenv("FEDBERRY_KERNELS");
    return kernels != nullptr && std::string_view(kernels) == "reference";
  }();
  return bypassed;
}

// BLAS takes 'N', 'T' or 'C' in either case ('C', conjugate transpose, is a
// transpose for real matrices); anything else is left for BLAS to report.
char Trans(char t) {
  switch (t) {
    case 'n':
    case 'N':
      return 'N';
    case 't':
    case 'T':
    case 'c':
    case 'C':
      return 'T';
    default:
      return '?';
  }
}

// C := beta * C, column-major m x n; beta 0 clears C without reading it.
void ScaleC(int m, int n, float beta, float* c, int ldc) {
  for (int j = 0; j < n; ++j) {
    float* col = c + static_cast<int64_t>(j) * ldc;
    for (int i = 0; i < m; ++i) col[i] = beta == 0 ? 0.f : beta * col[i];
  }
}

}  // namespace

// The Fortran BLAS sgemm (column-major; every argument by pointer):
//   C(m x n) := alpha * op(A)(m x k) * op(B)(k x n) + beta * C.
// A column-major matrix with leading dimension ld is, read row-major with
// the same ld, its transpose; so column-major C = op(A) op(B) is row-major
// C^T = op(B)^T op(A)^T: swap A and B and m and n, keep the flags.
extern "C" __attribute__((visibility("default"))) void sgemm_(
    const char* transa, const char* transb, const int* m, const int* n,
    const int* k, const float* alpha, const float* a, const int* lda,
    const float* b, const int* ldb, const float* beta, float* c,
    const int* ldc) {
  calls.fetch_add(1, std::memory_order_relaxed);
  const char ta = Trans(*transa), tb = Trans(*transb);
  if (!Bypassed() && ta != '?' && tb != '?' && *m >= 0 && *n >= 0 && *k >= 0) {
    if (*m == 0 || *n == 0) return;  // BLAS's quick return
    if (*k == 0) {  // C := beta * C (dnnl_sgemm leaves C as it is)
      ScaleC(*m, *n, *beta, c, *ldc);
      return;
    }
    if (dnnl_sgemm(tb, ta, *n, *m, *k, *alpha, b, *ldb, a, *lda, *beta, c,
                   *ldc) == 0) {
      return;
    }
  }
  fallbacks.fetch_add(1, std::memory_order_relaxed);
  if (BlasSgemm next = NextSgemm()) {
    next(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

namespace fedberry::runtime {

uint64_t FastSgemmCalls() { return calls.load(std::memory_order_relaxed); }

uint64_t FastSgemmFallbacks() {
  return fallbacks.load(std::memory_order_relaxed);
}

}  // namespace fedberry::runtime
