#include "runtime/torch_libraries.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fedberry::runtime {
namespace {

// Name prefixes of the libraries scripts/slim-library.sh drops from
// libtorch_cpu's needs on every architecture; any one mapped means the
// original was loaded.
constexpr absl::string_view kUnusedPrefixes[] = {
    "libopencv_",  "libavcodec.", "libavformat.", "libavutil.",
    "libswscale.", "libzmq.",     "liblmdb.",     "libleveldb."};

absl::string_view BaseName(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

absl::string_view Folder(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? "" : path.substr(0, slash);
}

}  // namespace

MappedTorch MappedTorchOf(absl::string_view maps) {
  MappedTorch out;
  for (absl::string_view line : absl::StrSplit(maps, '\n')) {
    // address perms offset dev inode path: the path is the sixth field
    // and the only one that starts with '/'.
    const size_t at = line.find('/');
    if (at == absl::string_view::npos) continue;
    const absl::string_view path = line.substr(at);
    const absl::string_view name = BaseName(path);
    if (absl::StartsWith(name, "libtorch_cpu.so")) {
      out.torch_cpu = std::string(path);
      continue;
    }
    for (absl::string_view prefix : kUnusedPrefixes) {
      if (absl::StartsWith(name, prefix) &&
          (out.unused.empty() || out.unused.back() != path)) {
        out.unused.emplace_back(path);
      }
    }
  }
  return out;
}

std::string RepairedTorchDir(absl::string_view executable,
                             absl::string_view private_libdir) {
  std::filesystem::path dir(std::string(Folder(executable)));
  return (dir / ".." / std::string(private_libdir)).lexically_normal().string();
}

std::string UnrepairedTorchWarning(const MappedTorch& mapped,
                                   absl::string_view expected_dir) {
  if (mapped.torch_cpu.empty() || Folder(mapped.torch_cpu) == expected_dir) {
    return "";
  }
  std::string warning = absl::StrCat(
      "LibTorch was loaded from ", mapped.torch_cpu,
      ", not from the repaired copy this build made for it in ", expected_dir,
      " (missing? build the CMake target fedberry_slim_torch, or reinstall "
      "the package): this process maps the libraries LibTorch never calls, "
      "about 70 MiB more memory");
  if (!mapped.unused.empty()) {
    absl::StrAppend(&warning, " (", mapped.unused.size(),
                    " of them mapped, e.g. ", mapped.unused.front(), ")");
  }
  return warning;
}

std::string CheckTorchLibraries(ProcFiles& proc) {
#ifdef FEDBERRY_SLIM_TORCH_LIBDIR
  std::error_code error;
  const std::filesystem::path exe =
      std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "";
  absl::StatusOr<std::string> maps = proc.Read("/proc/self/maps");
  if (!maps.ok()) return "";
  return UnrepairedTorchWarning(
      MappedTorchOf(*maps),
      RepairedTorchDir(exe.string(), FEDBERRY_SLIM_TORCH_LIBDIR));
#else
  (void)proc;
  return "";
#endif
}

}  // namespace fedberry::runtime
