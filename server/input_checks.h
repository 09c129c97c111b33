// What the server accepts from a board, checked at the door before anything
// is stored, logged or counted: names, declared sizes, training figures,
// resource readings and the weight an update claims. Everything here comes
// from the wire and is untrusted. A refusal is InvalidArgument naming the
// field and the value; readings that are merely implausible are dropped
// (absent, as a board that could not take them) rather than refusing an
// honest update. Thread-safe: pure functions.
#ifndef FEDBERRY_SERVER_INPUT_CHECKS_H_
#define FEDBERRY_SERVER_INPUT_CHECKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fedberry/v1/federation.pb.h"

namespace fedberry::server {

struct InputLimits {
  size_t max_name_bytes = 128;         // client_name
  size_t max_device_text_bytes = 256;  // each DeviceInfo string
  size_t max_version_bytes = 64;       // client_version
  uint64_t max_declared_samples = uint64_t{1} << 40;
  uint64_t max_sample_bytes = uint64_t{1} << 30;  // one sample's size
  uint32_t max_gateway_boards = 1000000;  // boards one gateway speaks for
};

// OK for a name of 1..max_name_bytes printable ASCII bytes, a sample count
// and sample size within bounds. Cuts DeviceInfo strings and client_version
// to their bounds on a character boundary (invalid UTF-8 becomes U+FFFD).
absl::Status CheckJoin(v1::JoinRequest& request, const InputLimits& limits);

// OK when loss, accuracy and seconds are finite, accuracy is in [0, 1] and
// seconds are not negative.
absl::Status CheckTrainMetrics(const v1::TrainMetrics& metrics);

// Clears every reading that is not finite, negative, or beyond what any
// board could measure in a round (e.g. cpu_utilization -1e15); returns the
// names of the fields cleared.
std::vector<std::string> SanitizeResources(v1::ResourceMetrics& resources);

// A board's condition as shown to operators: its reason made printable and
// cut to 256 characters, a SoC temperature that is not finite or not in
// (-60, 200) C dropped, a progress beyond the planned steps capped.
v1::BoardCondition SanitizeCondition(const v1::BoardCondition& untrusted);

// The most samples an update may claim to weigh: the task's steps x batch
// (times the boards a gateway speaks for) in step mode, else epochs x
// (samples declared at join + samples received by data moves).
uint64_t MaxUpdateWeight(const v1::TrainConfig& task, uint64_t declared,
                         uint64_t received, uint32_t boards = 0);

// OK for 1 <= claimed <= allowed; InvalidArgument otherwise.
absl::Status CheckUpdateWeight(uint64_t claimed, uint64_t allowed);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_INPUT_CHECKS_H_
