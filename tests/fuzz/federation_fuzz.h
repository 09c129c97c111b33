// The shared set-up of the RPC fuzz targets: one real fedberry server in the
// fuzzing process (so a crash, sanitizer report or hang in a handler is the
// fuzzer's finding), a client stub on loopback, and one well-behaved board
// ("seed") in the open round, whose client id, task id and round stand in
// for placeholders in the fuzz input, so mutated messages reach past the
// first identity checks. Inputs are wire messages: one serialized request
// for unary calls, varint-length-delimited messages for streams. Each
// target parses its input, calls its RPC and checks the invariants.
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
inline constexpr char kModelSha[] = "$SHA";
inline constexpr char kSession[] = "$SESSION";

class FuzzFederation {
 public:
  // Started on first use; lives until the process ends.
  static FuzzFederation& Get();
  // The same under secure aggregation (SecAgg+): rounds of two seed boards,
  // short stage deadlines so sessions turn over while fuzzing; the first
  // seed's session name stands in for kSession.
  static FuzzFederation& GetSecAgg();

  v1::Federation::Stub& stub() { return *stub_; }
  // A short deadline: no input may hold the fuzzer for long.
  void SetDeadline(grpc::ClientContext& context) const;

  // Brings the seed board up to date (it rejoins when a fuzzed join took
  // its name).
  void Refresh();
  // Replaces placeholders in `message` and its sub-messages: a client_id of
  // kClientId or a task_id of kTaskId become the seed's, round 0 becomes
  // the open round, a model_sha256 of kModelSha the served file's, a
  // session of kSession the seed's secure-aggregation session.
  void Fill(google::protobuf::Message& message) const;

  // Parses one request, brings the seed board up to date and fills the
  // placeholders. False: not a request (the input is of no use).
  template <typename Request>
  bool ParseRequest(const uint8_t* data, size_t size, Request& request) {
    if (!request.ParseFromArray(data, static_cast<int>(size))) return false;
    Refresh();
    Fill(request);
    return true;
  }

  // The messages of a stream input (at most 64), placeholders filled.
  template <typename Message>
  std::vector<Message> ParseStream(const uint8_t* data, size_t size) {
    std::vector<Message> out;
    google::protobuf::io::CodedInputStream in(data, static_cast<int>(size));
    while (out.size() < 64) {
      Message m;
      bool clean_eof = false;
      if (!google::protobuf::util::ParseDelimitedFromCodedStream(&m, &in,
                                                                 &clean_eof)) {
        break;
      }
      out.push_back(std::move(m));
    }
    if (!out.empty()) Refresh();
    for (Message& m : out) Fill(m);
    return out;
  }

  // Aborts (a finding) when the server publishes a global model that is
  // not finite or of another layout.
  void CheckInvariants() const;

  // The plan the server serves (a TorchScript plan whose model file is
  // 1.5 MiB of fixed bytes, so PullModelFile streams two chunks).
  const v1::TrainingPlan& plan() const;
  const std::string& model_file() const;

 private:
  explicit FuzzFederation(bool secagg);
  // Joins (again) the board `name` and asks for its task; its id in `id`.
  // False when the server could not be asked.
  bool Poll(const std::string& name, std::string& id,
            v1::GetTaskResponse& task);
  struct Impl;
  std::shared_ptr<Impl> impl_;
  std::unique_ptr<v1::Federation::Stub> stub_;
  const bool secagg_;
  std::string id_, task_, session_;
  std::string second_id_;  // secure aggregation's second seed
  uint64_t round_ = 0;
};

// Reads a server stream of `Message`s to its end.
template <typename Message, typename Reader>
void Drain(Reader& reader) {
  Message m;
  while (reader->Read(&m)) {
  }
  (void)reader->Finish();
}

// Writes a client stream and ends it.
template <typename Writer, typename Message>
void Send(Writer& writer, const std::vector<Message>& stream) {
  for (const Message& m : stream) {
    if (!writer->Write(m)) break;
  }
  writer->WritesDone();
  (void)writer->Finish();
}

}  // namespace fedberry::fuzz

#endif  // FEDBERRY_TESTS_FUZZ_FEDERATION_FUZZ_H_
