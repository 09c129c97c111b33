// A closed round held while the boards evaluate its model (the
// coordinator's kEvaluating phase): the evaluation in progress, the task it
// hands the boards it asked, and the round's report and result, which are
// published once the evaluation is over with the boards' figures in the
// report.
//
// Thread-compatible: the coordinator's lock guards it.
#ifndef FEDBERRY_SERVER_ROUND_HELD_EVALUATION_H_
#define FEDBERRY_SERVER_ROUND_HELD_EVALUATION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/model.h"
#include "server/round/board_evaluation.h"
#include "server/round/client_registry.h"
#include "server/round/round_publisher.h"
#include "server/round/round_types.h"

namespace fedberry::server {

class HeldEvaluation {
 public:
  // The closed round waiting for the boards.
  struct Held {
    RoundReport report;
    RoundResult result;
    bool finished = false;  // the job's last round
  };

  // `seed` names the evaluations' tasks.
  HeldEvaluation(BoardEvalOptions options, uint64_t seed)
      : options_(std::move(options)), seed_(seed) {}

  bool open() const { return evaluation_.has_value(); }
  // Holds `held` and asks the boards `asked` (ids) to evaluate `model`, the
  // model of held.report.round, from `now` on. Returns them (to wake).
  const std::set<std::string>& Open(
      Held held, std::shared_ptr<const runtime::NamedTensors> model,
      std::set<std::string> asked, absl::Time now);

  // `id` was asked and has not answered.
  bool Awaits(const std::string& id) const {
    return evaluation_ && evaluation_->Awaits(id);
  }
  // `id`'s EVALUATE task (the round's `train` config) into `response`, when
  // it is awaited.
  bool Task(const std::string& id, const v1::TrainConfig& train,
            v1::GetTaskResponse& response) const;
  // The model a pull of this evaluation's task gets (FailedPrecondition for
  // a board not asked); nullopt when the pull is of another task.
  std::optional<absl::StatusOr<std::shared_ptr<const runtime::NamedTensors>>>
  ModelFor(const v1::PullModelRequest& request) const;
  // Takes `client`'s answer (see BoardEvaluation::Accept), its held-out
  // samples bounded by `declared_samples` (its declaration as capped for
  // training); FailedPrecondition when no evaluation is open.
  absl::Status Accept(const v1::EvaluationReport& report,
                      const ClientRecord& client, uint64_t declared_samples);
  bool Complete() const { return evaluation_ && evaluation_->Complete(); }
  // A board asked that joined again is asked under its new id (its old id
  // can no longer answer: without this the evaluation waited out its
  // deadline).
  void Rename(const std::string& old_id, const std::string& id) {
    if (evaluation_) evaluation_->Rename(old_id, id);
  }
  // Every asked board answered, its deadline passed, or the job `stopping`.
  bool Over(absl::Time now, bool stopping) const;
  // Ends the evaluation: the held round, its report carrying the boards'
  // figures; nullopt when no round is held.
  std::optional<Held> Finish(absl::Time now);

 private:
  const BoardEvalOptions options_;
  const uint64_t seed_;
  std::optional<BoardEvaluation> evaluation_;
  std::optional<Held> held_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_HELD_EVALUATION_H_
