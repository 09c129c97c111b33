// A job's state as the coordinator and the parts it delegates to share it:
// the phase, the round, the model boards train from, the boards, the round
// in progress and the closed rounds, all under one lock. A round kind sees
// part of it through its RoundContext.
// Thread-safety: every field is guarded by `mu`.
#ifndef FEDBERRY_SERVER_ROUND_JOB_STATE_H_
#define FEDBERRY_SERVER_ROUND_JOB_STATE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/model.h"
#include "server/round/client_registry.h"
#include "server/round/job_history.h"
#include "server/round/round_kind.h"
#include "server/round/round_types.h"
#include "server/strategy/strategy.h"

namespace fedberry::server {

struct JobState {
  explicit JobState(int max_clients) : clients(max_clients) {}

  // Something the driver acts on changed (RunOnce runs).
  void WorkChanged() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    work_pending = true;
    changed.SignalAll();
  }

  mutable absl::Mutex mu;
  absl::CondVar changed;
  RoundPhase phase ABSL_GUARDED_BY(mu) = RoundPhase::kWaiting;
  uint64_t round ABSL_GUARDED_BY(mu) = 1;
  int attempt ABSL_GUARDED_BY(mu) = 0;  // restarts of the current round
  // What the open round's boards train (the job's config, seeded per
  // round, or the parent's), and the job's rounds as boards are told.
  v1::TrainConfig train ABSL_GUARDED_BY(mu);
  uint32_t total_rounds ABSL_GUARDED_BY(mu) = 0;
  std::shared_ptr<const runtime::NamedTensors> global ABSL_GUARDED_BY(mu);
  ClientRegistry clients ABSL_GUARDED_BY(mu);
  // The open round's sum, and its report so far.
  std::unique_ptr<RoundAggregator> aggregate ABSL_GUARDED_BY(mu);
  RoundReport pending ABSL_GUARDED_BY(mu);
  // Updates claimed whose add into `aggregate` runs outside mu; a round
  // closes only when none is left.
  int adds_in_flight ABSL_GUARDED_BY(mu) = 0;
  absl::Time round_start ABSL_GUARDED_BY(mu);
  // When each board of the open round began pushing its update: the
  // planner learns its upload time.
  std::map<std::string, absl::Time> upload_start ABSL_GUARDED_BY(mu);
  absl::Time last_update ABSL_GUARDED_BY(mu);
  JobHistory history ABSL_GUARDED_BY(mu);
  bool work_pending ABSL_GUARDED_BY(mu) = true;
  bool shutdown ABSL_GUARDED_BY(mu) = false;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_JOB_STATE_H_
