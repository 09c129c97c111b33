// The shared set-up of the RPC fuzz targets: one real fedberry server in the
// fuzzing process (so a crash, sanitizer report or hang in a handler is the
// fuzzer's finding), a client stub on loopback, and one well-behaved board
// ("seed") in the open round, whose client id, task id and round stand in
// for placeholders in the fuzz input, so mutated messages reach past the
// first identity checks. Inputs are wire messages: one serialized request
// for unary calls, varint-length-delimited messages for streams.
#ifndef FEDBERRY_TESTS_FUZZ_FEDERATION_FUZZ_H_
#define FEDBERRY_TESTS_FUZZ_FEDERATION_FUZZ_H_

#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fedberry/v1/federation.grpc.pb.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/util/delimited_message_util.h"

namespace fedberry::fuzz {

// Placeholders a corpus entry may use; Fill* put the live values in.
inline constexpr char kClientId[] = "$ID";
inline constexpr char kTaskId[] = "$TASK";

class FuzzFederation {
 public:
  // Started on first use; lives until the process ends.
  static FuzzFederation& Get();

  v1::Federation::Stub& stub() { return *stub_; }
  // A short deadline: no input may hold the fuzzer for long.
  void SetDeadline(grpc::ClientContext& context) const;

  // Brings the seed board up to date (it rejoins when a fuzzed join took
  // its name) and replaces placeholders: an id of kClientId or a task of
  // kTaskId become the seed's, round 0 becomes the open round.
  void Refresh();
  void Fill(std::string* client_id, std::string* task_id,
            uint64_t* round) const;

  // Aborts (a finding) when the server publishes a global model that is
  // not finite or of another layout.
  void CheckInvariants() const;

 private:
  FuzzFederation();
  struct Impl;
  std::shared_ptr<Impl> impl_;
  std::unique_ptr<v1::Federation::Stub> stub_;
  std::string id_, task_;
  uint64_t round_ = 0;
};

// The messages of a stream input, at most `max` of them.
template <typename Message>
std::vector<Message> ReadDelimited(const uint8_t* data, size_t size,
                                   int max = 64) {
  std::vector<Message> out;
  google::protobuf::io::CodedInputStream in(data, static_cast<int>(size));
  while (static_cast<int>(out.size()) < max) {
    Message m;
    bool clean_eof = false;
    if (!google::protobuf::util::ParseDelimitedFromCodedStream(&m, &in,
                                                               &clean_eof)) {
      break;
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace fedberry::fuzz

#endif  // FEDBERRY_TESTS_FUZZ_FEDERATION_FUZZ_H_
