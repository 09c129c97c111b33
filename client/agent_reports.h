// What a board tells the server about its task: heartbeats (its progress
// while it trains, at most every kProgressEvery; a pause, a run again or a
// memory release, best effort), its update (streamed once the server gives
// the go-ahead) and its evaluation's figures (retried while the failure is
// transient).
// Thread-safety: Heartbeat and Progress may run on any thread, alongside the
// rest; BeginTask, EndTask, PushUpdate and ReportEvaluation run on the
// agent's thread.
#ifndef FEDBERRY_CLIENT_AGENT_REPORTS_H_
#define FEDBERRY_CLIENT_AGENT_REPORTS_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "client/local_trainer.h"
#include "fedberry/v1/federation.grpc.pb.h"

namespace fedberry::client {

// What the agent lends its reports; all must outlive them.
struct ReportCalls {
  v1::Federation::StubInterface* stub = nullptr;
  absl::Duration rpc_timeout = absl::Seconds(60);
  Clock* clock = &Clock::Real();  // paces the progress heartbeats
  // Binds a call's context to the agent so its Stop() can cancel it (null:
  // the call is over).
  std::function<void(grpc::ClientContext*)> track;
  // The agent's backoff after a failure (false: give up), and whether it
  // was stopped.
  std::function<bool(const absl::Status&, const char*)> back_off;
  std::function<bool()> stopped;
};

class AgentReports {
 public:
  // The least time between two progress heartbeats of a training run.
  static constexpr absl::Duration kProgressEvery = absl::Seconds(10);

  explicit AgentReports(ReportCalls calls) : calls_(std::move(calls)) {}

  // The task board `client_id` trains from now on, until EndTask: what its
  // heartbeats name.
  void BeginTask(const std::string& client_id, uint64_t round,
                 const std::string& task_id);
  void EndTask();
  // Tells the server that training of the current task is paused, runs
  // again, or that this board released its memory (`state`). Does nothing
  // outside a task. Best effort: a failure is logged, never retried.
  void Heartbeat(v1::HeartbeatRequest::State state, absl::Duration paused_for);
  // After each training step: records the progress for heartbeats, and
  // sends a TRAINING heartbeat at most every kProgressEvery.
  void Progress(int64_t steps_done, int64_t steps_planned);

  // One push of `task`'s update as board `client_id`: the header (figures,
  // `resources`, the `kept` moves), then, once the server says it is this
  // push's turn, the update's chunks. The call's status (a refusal before
  // the go-ahead ends it without the chunks).
  absl::Status PushUpdate(const std::string& client_id,
                          const v1::GetTaskResponse& task,
                          const TrainOutcome& outcome,
                          const v1::ResourceMetrics& resources,
                          const std::vector<std::string>& kept);
  // Reports an evaluation, asking again after the agent's backoff while the
  // failure is transient. OK once delivered (AlreadyExists counts);
  // otherwise the last failure.
  absl::Status ReportEvaluation(const v1::EvaluationReport& report);

 private:
  void Send(const v1::HeartbeatRequest& request, absl::Duration deadline);

  const ReportCalls calls_;
  absl::Mutex mu_;
  // The task being trained, for heartbeats (empty task id: none).
  v1::HeartbeatRequest current_ ABSL_GUARDED_BY(mu_);
  absl::Time progress_sent_ ABSL_GUARDED_BY(mu_);  // or training began
};

// The serialized size of the chunks PushUpdate sends for `outcome`.
uint64_t EncodedUpdateBytes(const TrainOutcome& outcome, uint64_t round,
                            const std::string& task_id);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_AGENT_REPORTS_H_
