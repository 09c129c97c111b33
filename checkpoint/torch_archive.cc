#include "checkpoint/torch_archive.h"

#include <ATen/core/Generator.h>
#include <ATen/CPUGeneratorImpl.h>

#include <sstream>

#include "absl/strings/str_cat.h"

namespace fedberry::checkpoint {

absl::StatusOr<std::string> ArchiveToBytes(
    const std::function<void(torch::serialize::OutputArchive&)>& write) {
  try {
    torch::serialize::OutputArchive archive;
    write(archive);
    std::ostringstream out;
    archive.save_to(out);
    return out.str();
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("LibTorch could not serialize: ", e.what()));
  }
}

absl::Status ArchiveFromBytes(
    const std::string& bytes, const std::string& what,
    const std::function<void(torch::serialize::InputArchive&)>& read) {
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(bytes.data(), bytes.size());
    read(archive);
  } catch (const c10::Error& e) {
    return absl::DataLossError(absl::StrCat(
        "cannot read ", what, ": ", e.what_without_backtrace()));
  } catch (const std::exception& e) {
    return absl::DataLossError(absl::StrCat("cannot read ", what, ": ", e.what()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> CpuRngStateToBytes() {
  return ArchiveToBytes([](torch::serialize::OutputArchive& a) {
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    a.write("cpu_rng", gen.get_state());
  });
}

absl::Status RestoreCpuRngState(const std::string& bytes) {
  return ArchiveFromBytes(bytes, "RNG state", [](torch::serialize::InputArchive& a) {
    torch::Tensor state;
    a.read("cpu_rng", state);
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(state);
  });
}

}  // namespace fedberry::checkpoint
