// main() of the test executables that train: applies FEDBERRY_KERNELS
// (runtime/compute_kernels.h) before any test runs LibTorch, as the
// binaries do, so a test registered with FEDBERRY_KERNELS=reference runs on
// the kernels that give the same bits on every x86-64 CPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "runtime/compute_kernels.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  auto kernels = fedberry::runtime::UseComputeKernelsFromEnvironment();
  if (!kernels.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(kernels.status().message()).c_str());
    return 2;
  }
  return RUN_ALL_TESTS();
}
