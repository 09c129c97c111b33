// The choice of compute kernels (runtime/compute_kernels.h). ctest runs
// these tests twice: as the process starts by default (fast kernels), and
// with FEDBERRY_KERNELS=reference, which compute_kernels_main.cc applies
// before the tests run, as the binaries do.
#include "runtime/compute_kernels.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "runtime/fast_sgemm.h"

namespace fedberry::runtime::compute_kernels_test {
namespace {

// Sets FEDBERRY_KERNELS for one test and restores it.
class KernelsVariable {
 public:
  KernelsVariable() {
    if (const char* v = std::getenv(kComputeKernelsVariable)) old_ = v;
  }
  ~KernelsVariable() {
    if (old_) {
      setenv(kComputeKernelsVariable, old_->c_str(), 1);
    } else {
      unsetenv(kComputeKernelsVariable);
    }
  }
  void Set(const char* value) { setenv(kComputeKernelsVariable, value, 1); }

 private:
  std::optional<std::string> old_;
};

bool AtenRunsScalarCode() {
  return absl::StrContains(at::show_config(), "CPU capability usage: NO AVX");
}

TEST(ComputeKernels, ReadsTheChoiceFromTheEnvironment) {
  KernelsVariable variable;
  unsetenv(kComputeKernelsVariable);
  EXPECT_EQ(*ComputeKernelsFromEnvironment(), ComputeKernels::kFast);
  for (const char* fast : {"", "fast"}) {
    variable.Set(fast);
    EXPECT_EQ(*ComputeKernelsFromEnvironment(), ComputeKernels::kFast);
  }
  variable.Set("reference");
  EXPECT_EQ(*ComputeKernelsFromEnvironment(), ComputeKernels::kReference);
  variable.Set("avx9000");
  auto bad = ComputeKernelsFromEnvironment();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.status().message(),
                                "FEDBERRY_KERNELS=avx9000 is not a choice"))
      << bad.status();
}

// Whichever kernels this process started with are the ones in use: on
// reference kernels, scalar ATen code, no oneDNN, one thread whatever is
// asked, and every sgemm_ handed to the machine's BLAS.
TEST(ComputeKernels, TheProcessComputesWithTheKernelsItStartedWith) {
  const ComputeKernels asked = *ComputeKernelsFromEnvironment();
  ASSERT_EQ(ComputeKernelsInUse(), asked);
  SetComputeThreads(2);
#ifdef FEDBERRY_FAST_SGEMM
  const uint64_t calls = FastSgemmCalls(), handed_on = FastSgemmFallbacks();
#endif
  const torch::Tensor product =
      torch::mm(torch::ones({64, 32}), torch::ones({32, 16}));
  EXPECT_TRUE(product.equal(torch::full({64, 16}, 32.f)));
  const std::string described = DescribeComputeKernels();
  if (asked == ComputeKernels::kReference) {
    EXPECT_EQ(at::get_num_threads(), 1);
    EXPECT_FALSE(at::globalContext().userEnabledMkldnn());
    EXPECT_TRUE(AtenRunsScalarCode()) << at::show_config();
#ifdef FEDBERRY_FAST_SGEMM
    EXPECT_EQ(FastSgemmFallbacks() - handed_on, FastSgemmCalls() - calls);
#endif
    EXPECT_TRUE(absl::StartsWith(described, "reference kernels")) << described;
  } else {
    EXPECT_EQ(at::get_num_threads(), 2);
#if defined(__aarch64__)
    EXPECT_FALSE(at::globalContext().userEnabledMkldnn());  // im2col there
#else
    EXPECT_TRUE(at::globalContext().userEnabledMkldnn());
#endif
#ifdef FEDBERRY_FAST_SGEMM
    EXPECT_EQ(FastSgemmFallbacks(), handed_on);
#endif
    EXPECT_TRUE(absl::StartsWith(described, "fast kernels")) << described;
  }
  EXPECT_TRUE(absl::StrContains(described, "1 thread") ||
              absl::StrContains(described, "2 thread"))
      << described;
#ifdef FEDBERRY_FAST_SGEMM
  EXPECT_GT(FastSgemmCalls(), calls);  // LibTorch's product reached sgemm_
#endif  // (without it, as on arm64, LibTorch calls the BLAS directly)
}

// Reference kernels asked for after ATen chose its vector code would be a
// mixture: refused, so a test cannot believe it ran on them.
TEST(ComputeKernels, RefusesReferenceKernelsOnceLibTorchChoseItsCode) {
  if (ComputeKernelsInUse() == ComputeKernels::kReference) {
    GTEST_SKIP() << "this process started on reference kernels";
  }
  (torch::ones({16}) + 1).sum().item<float>();  // ATen picks its code
  if (AtenRunsScalarCode()) {
    GTEST_SKIP() << "ATen has no vector code for this CPU";
  }
  KernelsVariable variable;
  variable.Set("reference");
  auto used = UseComputeKernelsFromEnvironment();
  ASSERT_FALSE(used.ok());
  EXPECT_EQ(used.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(used.status().message(),
                                "set it in the environment the process starts"))
      << used.status();
  EXPECT_EQ(ComputeKernelsInUse(), ComputeKernels::kFast);
}

}  // namespace
}  // namespace fedberry::runtime::compute_kernels_test
