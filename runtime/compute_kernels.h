// Which kernels LibTorch computes with in this process, chosen by the
// environment variable FEDBERRY_KERNELS when a binary starts.
//
// Float addition is not associative: a kernel that sums in another order
// gives other last bits. The fast kernels pick their order by CPU (oneDNN
// JIT-compiles AVX2 or AVX-512 code; ATen's vector code is 8 or 16 floats
// wide), so a job's last bits differ between CPUs, and a few training steps
// can carry them far (a max-pool or ReLU that a last bit routes another way).
//
//   fast (the default, or FEDBERRY_KERNELS unset): ATen's vector code for
//     this CPU, fast_sgemm.h's sgemm_ (x86-64), the threads asked for;
//     convolutions in oneDNN on x86-64, as im2col and the BLAS on aarch64
//     (fewer instructions there: oneDNN has no optimised aarch64 kernels).
//     Bit-identical from run to run on one machine with the same thread
//     count (what resume-after-a-kill relies on), not across CPUs.
//   reference: ATen's scalar code (ATEN_CPU_CAPABILITY=default),
//     convolutions as im2col and BLAS instead of oneDNN, the machine's own
//     BLAS sgemm_ (Debian's reference libblas3 on a fresh install) instead
//     of fast_sgemm's, one thread. No code path depends on the CPU, so a job
//     gives the same bits on every x86-64 CPU the build runs on (AVX2 or
//     AVX-512, Intel or AMD), slower. The tests that compare differently
//     grouped sums run on it (docs/architecture.md, "What is exact").
//
// Thread-safety: UseComputeKernelsFromEnvironment once, in main, before any
// LibTorch operation; the rest from any thread after it.
#ifndef FEDBERRY_RUNTIME_COMPUTE_KERNELS_H_
#define FEDBERRY_RUNTIME_COMPUTE_KERNELS_H_

#include <string>

#include "absl/status/statusor.h"

namespace fedberry::runtime {

enum class ComputeKernels { kFast, kReference };

inline constexpr char kComputeKernelsVariable[] = "FEDBERRY_KERNELS";

// The choice in FEDBERRY_KERNELS: unset, empty or "fast" is kFast,
// "reference" kReference; InvalidArgument names any other value.
absl::StatusOr<ComputeKernels> ComputeKernelsFromEnvironment();

// Applies the environment's choice to LibTorch. FailedPrecondition when
// reference kernels are asked for after ATen already chose its CPU code (a
// LibTorch operation ran first in this process).
absl::StatusOr<ComputeKernels> UseComputeKernelsFromEnvironment();

// What this process computes with (kFast until the above chose otherwise).
ComputeKernels ComputeKernelsInUse();

// Sets LibTorch's intra-op threads: `requested`, or 1 on reference kernels
// (a reduction split among threads is grouped by their number). 0 keeps
// LibTorch's default on fast kernels.
void SetComputeThreads(int requested);

// One line for the log: the kernels, the BLAS library and the threads.
std::string DescribeComputeKernels();

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_COMPUTE_KERNELS_H_
