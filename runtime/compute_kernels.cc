#include "runtime/compute_kernels.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <link.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace fedberry::runtime {
namespace {

std::atomic<bool> reference_in_use{false};

// The file behind the libblas.so.3 this process loaded (Debian's
// alternatives link resolved), or "" when none is loaded.
std::string LoadedBlas() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const char* name = info->dlpi_name;
        if (name == nullptr || std::strstr(name, "/libblas.so") == nullptr) {
          return 0;
        }
        char resolved[PATH_MAX];
        *static_cast<std::string*>(out) =
            realpath(name, resolved) != nullptr ? resolved : name;
        return 1;
      },
      &found);
  return found;
}

// Whether ATen runs its scalar code. Its CPU capability is not exported;
// show_config() reports it ("NO AVX" is the default, scalar code).
bool UsesScalarCode() {
  const std::string config = at::show_config();
  return config.find("CPU capability usage: NO AVX") != std::string::npos ||
         config.find("CPU capability usage: DEFAULT") != std::string::npos;
}

}  // namespace

absl::StatusOr<ComputeKernels> ComputeKernelsFromEnvironment() {
  const char* value = std::getenv(kComputeKernelsVariable);
  const absl::string_view v = value == nullptr ? "" : value;
  if (v.empty() || v == "fast") return ComputeKernels::kFast;
  if (v == "reference") return ComputeKernels::kReference;
  return absl::InvalidArgumentError(
      absl::StrCat(kComputeKernelsVariable, "=", v.substr(0, 64),
                   " is not a choice of kernels: use fast or reference"));
}

absl::StatusOr<ComputeKernels> UseComputeKernelsFromEnvironment() {
  absl::StatusOr<ComputeKernels> kernels = ComputeKernelsFromEnvironment();
  if (!kernels.ok()) return kernels;
  if (*kernels == ComputeKernels::kFast) {
#if defined(__aarch64__)
    // oneDNN 2.6 has no optimised aarch64 convolutions; LibTorch's im2col
    // on the copy's OpenBLAS took fewer instructions a training sample on
    // an emulated Cortex-A53 (docs/guide/cross-build.md, "The board's compute path").
    at::globalContext().setUserEnabledMkldnn(false);
#endif
    return kernels;
  }
  // ATen reads ATEN_CPU_CAPABILITY once, at its first dispatch.
  setenv("ATEN_CPU_CAPABILITY", "default", 1);
  if (!UsesScalarCode()) {
    return absl::FailedPreconditionError(absl::StrCat(
        kComputeKernelsVariable,
        "=reference came after LibTorch chose its CPU kernels: set it in the "
        "environment the process starts with"));
  }
  at::globalContext().setUserEnabledMkldnn(false);
  at::set_num_threads(1);
  reference_in_use = true;
  return kernels;
}

ComputeKernels ComputeKernelsInUse() {
  return reference_in_use ? ComputeKernels::kReference : ComputeKernels::kFast;
}

void SetComputeThreads(int requested) {
  if (reference_in_use) {
    at::set_num_threads(1);
  } else if (requested > 0) {
    at::set_num_threads(requested);
  }
}

std::string DescribeComputeKernels() {
  const std::string blas = LoadedBlas();
  return absl::StrCat(
      reference_in_use ? "reference kernels (ATen's scalar code"
                       : "fast kernels (ATen's code for this CPU",
      at::globalContext().userEnabledMkldnn()
          ? ", convolutions in oneDNN"
          : ", convolutions as im2col and BLAS",
      blas.empty() ? "" : absl::StrCat(", BLAS ", blas), "), ",
      at::get_num_threads(), " thread(s)");
}

}  // namespace fedberry::runtime
