#include "client/memory_release.h"

#include "absl/strings/cord.h"

namespace fedberry::client {
namespace {
constexpr char kPayloadUrl[] = "type.fedberry/memory-release";
}  // namespace

absl::Status MemoryReleaseError(const std::string& why) {
  absl::Status s = absl::ResourceExhaustedError(
      "memory released under persistent pressure: " + why);
  s.SetPayload(kPayloadUrl, absl::Cord("1"));
  return s;
}

bool IsMemoryRelease(const absl::Status& status) {
  return absl::IsResourceExhausted(status) &&
         status.GetPayload(kPayloadUrl).has_value();
}

}  // namespace fedberry::client
