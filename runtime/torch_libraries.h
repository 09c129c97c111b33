// Whether this process runs on the repaired LibTorch copies that the build
// made (cmake/SlimTorch.cmake, scripts/slim-library.sh) or on Debian's own
// libtorch_cpu, which maps 24 libraries LibTorch never calls (OpenCV,
// FFmpeg, ...) and about 70 MiB more. Every program's RUNPATH names the
// copies' folder, but when the folder is missing (a build that never made
// them, a package installed by hand) the dynamic linker falls back to
// Debian's files without a word; this says so once, at start-up.
// Thread-safety: pure functions, and CheckTorchLibraries reads through the
// thread-safe ProcFiles seam.
#ifndef FEDBERRY_RUNTIME_TORCH_LIBRARIES_H_
#define FEDBERRY_RUNTIME_TORCH_LIBRARIES_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "runtime/proc_files.h"

namespace fedberry::runtime {

// What a process's /proc/self/maps says of its LibTorch.
struct MappedTorch {
  std::string torch_cpu;            // the libtorch_cpu.so* file; "" if none
  std::vector<std::string> unused;  // mapped files of libraries LibTorch
                                    // never calls (libopencv*, libav*, ...)
};

// Parses the text of /proc/PID/maps.
MappedTorch MappedTorchOf(absl::string_view maps);

// The folder holding the repaired copies for the program at `executable`:
// `<its folder>/../<private_libdir>` made lexically normal (build/bin ->
// build/lib/fedberry, /usr/bin -> /usr/lib/fedberry).
std::string RepairedTorchDir(absl::string_view executable,
                             absl::string_view private_libdir);

// A warning naming what was loaded and the folder expected, or "" when
// libtorch_cpu came from `expected_dir` (or is not loaded at all).
std::string UnrepairedTorchWarning(const MappedTorch& mapped,
                                   absl::string_view expected_dir);

// The warning for this process ("" when fine, or when the build did not
// repair LibTorch: -DFEDBERRY_SLIM_TORCH=OFF): reads /proc/self/maps
// through `proc` and the link /proc/self/exe.
std::string CheckTorchLibraries(ProcFiles& proc);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_TORCH_LIBRARIES_H_
