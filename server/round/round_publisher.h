// The last steps of a round: its sum made into the next global model (or
// refused), and the closed round made durable and reported, in order. New
// kinds of round publish through the same steps: the snapshot is durable
// before the round is reported, a model that is not finite never goes out,
// and each round's report comes before the next one's.
#ifndef FEDBERRY_SERVER_ROUND_ROUND_PUBLISHER_H_
#define FEDBERRY_SERVER_ROUND_ROUND_PUBLISHER_H_

#include <functional>
#include <memory>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "base/clock.h"
#include "runtime/model.h"
#include "server/round/round_types.h"
#include "server/strategy/strategy.h"

namespace fedberry::server {

// Samples the overlapped evaluation checks before it publishes a model.
inline constexpr int64_t kEvaluationProbeSamples = 100;

// A closed round's result.
struct RoundResult {
  // The next global model; null when the round's result was refused
  // (`RoundReport::refused_result` says why).
  std::shared_ptr<const runtime::NamedTensors> model;
  // Its whole evaluation is still to run (overlapped with the next round).
  bool overlap = false;
};

// Aggregates `sum`, checks the result is finite and evaluates it with
// `evaluator` (may be empty): the whole evaluation set, or, when `overlap`,
// only its first kEvaluationProbeSamples. Fills `report`'s
// aggregation_seconds, eval_seconds, eval (not for a probe) and
// refused_result (timed on `clock`), and logs a refusal.
RoundResult MakeRoundResult(RoundAggregator& sum, const Evaluator& evaluator,
                            bool overlap, RoundReport& report,
                            Clock& clock = Clock::Real());

// Publishes closed rounds on the driver's thread; an overlapped evaluation
// runs on a thread of its own. Thread-compatible (one driver), except
// Persist, which any thread may call.
class RoundPublisher {
 public:
  // Records an overlapped evaluation's figures in the server's history and
  // returns the snapshot to persist with them.
  using RecordEvaluation =
      std::function<FederationSnapshot(const RoundReport&)>;

  // `evaluator`, `sink` may be empty. Overlapped evaluations are timed on
  // `clock`.
  RoundPublisher(Evaluator evaluator, ReportSink sink, RecordEvaluation record,
                 Clock& clock = Clock::Real());
  ~RoundPublisher();  // waits for an overlapped evaluation

  // Set before the first round.
  void SetSnapshotSink(SnapshotSink sink);

  // Persists `snapshot`, then reports `report`. When `result.overlap`, the
  // model's whole evaluation runs first: on a thread of its own (which
  // records, persists and reports when it ends), or now for the job's
  // `last` round.
  void Publish(RoundReport report, const FederationSnapshot& snapshot,
               const RoundResult& result, bool last);

  // Persists `snapshot` only: a closed round whose report waits (for its
  // evaluation on the boards) is durable meanwhile, and so is each update
  // an asynchronous buffer takes. One at a time, and a snapshot older than
  // one already persisted is dropped (the driver, an overlapped evaluation
  // and RPC threads persist).
  void Persist(const FederationSnapshot& snapshot);

  // Waits until an overlapped evaluation, if one runs, has reported.
  void FinishPending();

 private:
  void EvaluateAndReport(RoundReport report,
                         std::shared_ptr<const runtime::NamedTensors> model);

  const Evaluator evaluator_;
  const ReportSink sink_;
  const RecordEvaluation record_;
  Clock& clock_;
  absl::Mutex persist_mu_;
  SnapshotSink snapshot_sink_ ABSL_GUARDED_BY(persist_mu_);
  // FederationSnapshot::sequence of the last snapshot persisted.
  uint64_t persisted_sequence_ ABSL_GUARDED_BY(persist_mu_) = 0;
  std::thread pending_;
  bool overlap_logged_ = false;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_ROUND_PUBLISHER_H_
