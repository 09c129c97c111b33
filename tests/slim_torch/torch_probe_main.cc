// A program that links LibTorch as every fedberry program does
// (fedberry::torch) and prints the libtorch_cpu file the dynamic linker
// mapped, and any library mapped that LibTorch never calls. The slim-copy
// test builds it alone in a fresh build folder: building one target must
// make the repaired copies too (issue: a single-target build ran every
// program on Debian's libtorch_cpu).
#include <c10/core/CPUAllocator.h>

#include <cstdio>
#include <fstream>
#include <string>

int main() {
  // A call into LibTorch, so the program needs it whatever the linker's
  // as-needed setting.
  if (c10::GetCPUAllocator() == nullptr) return 2;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const size_t at = line.find('/');
    if (at == std::string::npos) continue;
    const std::string path = line.substr(at);
    if (path.find("libtorch_cpu.so") != std::string::npos ||
        path.find("libopencv_") != std::string::npos) {
      std::printf("%s\n", path.c_str());
    }
  }
  return 0;
}
