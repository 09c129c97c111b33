// A board's way into the job: the job's plan (GetPlan, asked before every
// join), its model file from the cache or fetched (hashed as it arrives,
// client/model_file_cache.h), the trainer bound to it, then Join with what
// the trainer holds. Keeps the id the server gave and what the join
// declared. A plan the board's data does not fit is not an error here: the
// reason goes to the server with the join (plan_error), which refuses it.
// Thread-safety: the agent's thread only.
#ifndef FEDBERRY_CLIENT_AGENT_JOIN_H_
#define FEDBERRY_CLIENT_AGENT_JOIN_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/local_trainer.h"
#include "fedberry/v1/federation.grpc.pb.h"
#include "runtime/model_file.h"

namespace fedberry::client {

// What the agent lends its join (the stub and trainer must outlive it), and
// the AgentOptions it reads (see there).
struct JoinCalls {
  v1::Federation::StubInterface* stub = nullptr;
  LocalTrainer* trainer = nullptr;  // bound to the plan; declares the samples
  absl::Duration rpc_timeout = absl::Seconds(60);
  // Binds a call's context to the agent so its Stop() can cancel it (null:
  // the call is over).
  std::function<void(grpc::ClientContext*)> track;
  std::string name;
  v1::DeviceInfo device;
  bool allow_data_moves = false;
  std::string model_cache_dir;
  std::string required_model_sha256;
};

class AgentJoin {
 public:
  explicit AgentJoin(JoinCalls calls) : calls_(std::move(calls)) {}

  // Asks the job's plan, fetches its model file unless cached, and binds
  // the trainer to it. An error the trainer gives (data that does not fit)
  // is kept in plan_error() for Join to report; other errors are returned:
  // the call's, InvalidArgument for a plan this board cannot use,
  // FailedPrecondition for a model other than required_model_sha256,
  // DataLoss for a model file that does not arrive whole or hashes
  // otherwise, the model file cache's own.
  absl::Status PreparePlan();
  // Joins with the trainer's samples and boards, this build's version and
  // plan_error(); sets client_id(). The call's status otherwise.
  absl::Status Join();

  // Empty until a join succeeds, and after Forget().
  const std::string& client_id() const { return client_id_; }
  // The server no longer knows this board's id: the next turn joins again.
  void Forget() { client_id_.clear(); }
  // Why this board's data does not fit the job's plan (empty: it fits).
  const std::string& plan_error() const { return plan_error_; }
  // Whether the trainer now holds other samples or boards than the last
  // join declared (a gateway whose boards changed).
  bool DeclarationChanged() const;

 private:
  // Streams the plan's model file into the cache, hashed as it arrives.
  absl::StatusOr<runtime::VerifiedModelFile> FetchModelFile(
      const v1::TrainingPlan& plan);

  const JoinCalls calls_;
  std::string client_id_;
  uint64_t declared_samples_ = 0;  // at the last join
  uint32_t declared_boards_ = 0;
  std::string plan_error_;
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_AGENT_JOIN_H_
