// A board's side of a round's data moves (--allow_data_moves, trusted
// clusters only): it hands the samples of the task's send moves to the
// server, each the next slice of the trainer's lending order, and fetches
// those of its receive moves, asking again through server failures while
// data_move_wait allows. A move that fails is logged and skipped (the round
// trains on what it has), never fatal.
// Thread-safety: the agent's thread only.
#ifndef FEDBERRY_CLIENT_AGENT_DATA_MOVES_H_
#define FEDBERRY_CLIENT_AGENT_DATA_MOVES_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "client/local_trainer.h"
#include "fedberry/v1/federation.grpc.pb.h"
#include "runtime/image_dataset.h"

namespace fedberry::client {

// What the agent lends its data moves; all must outlive them.
struct DataMoveCalls {
  v1::Federation::StubInterface* stub = nullptr;
  LocalTrainer* trainer = nullptr;  // lends the samples to send
  Clock* clock = &Clock::Real();
  absl::Duration rpc_timeout = absl::Seconds(60);
  absl::Duration data_move_wait = absl::Minutes(2);
  // Binds a call's context to the agent so its Stop() can cancel it (null:
  // the call is over).
  std::function<void(grpc::ClientContext*)> track;
  // Sleeps up to the duration unless the agent stops; false when stopped.
  std::function<bool(absl::Duration)> sleep;
  std::function<bool()> stopped;
};

class AgentDataMoves {
 public:
  explicit AgentDataMoves(DataMoveCalls calls) : calls_(std::move(calls)) {}

  // Hands over the samples of `task`'s send moves as board `client_id`;
  // those it does not hand over go in data->kept. Adds the time and bytes
  // to `moved`.
  void HandOver(const std::string& client_id, const v1::GetTaskResponse& task,
                RoundData* data, v1::ResourceMetrics* moved);
  // Fetches the samples of `task`'s receive moves into data->borrowed.
  void Fetch(const std::string& client_id, const v1::GetTaskResponse& task,
             RoundData* data, v1::ResourceMetrics* moved);
  // Sends the samples of `task`'s moves this board lent (not those it kept
  // and trained itself) again: the server lost them (it restarted).
  void HandOverLentAgain(const std::string& client_id,
                         const v1::GetTaskResponse& task,
                         const RoundData& data);

 private:
  absl::Status Push(const std::string& client_id,
                    const v1::GetTaskResponse& task, const v1::DataMove& move,
                    const runtime::ImageDataset& samples, uint64_t* bytes);
  absl::StatusOr<runtime::ImageDataset> Pull(const std::string& client_id,
                                             const v1::GetTaskResponse& task,
                                             const v1::DataMove& move,
                                             uint64_t* bytes);

  const DataMoveCalls calls_;
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_AGENT_DATA_MOVES_H_
