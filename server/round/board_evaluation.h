// Evaluation on the boards: a published model sent to the boards that are
// there, each evaluating it on the share of its data it holds out and
// reporting its figures (or why it declined), combined weighted by samples.
// One BoardEvaluation is one model's evaluation in progress: who was asked,
// who answered, and what. It owns no lock: the round coordinator guards it
// with its own. Thread-compatible.
#ifndef FEDBERRY_SERVER_ROUND_BOARD_EVALUATION_H_
#define FEDBERRY_SERVER_ROUND_BOARD_EVALUATION_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/model.h"
#include "server/round/round_types.h"

namespace fedberry::server {

struct BoardEvalOptions {
  // The share of each board's samples it holds out (the plan's
  // eval_holdout_fraction); 0: no evaluation on the boards.
  double holdout_fraction = 0;
  int every = 1;  // rounds between evaluations; the last round always is
  // How long an evaluation waits for boards that have not answered.
  absl::Duration deadline = absl::Minutes(2);
  bool regression = false;    // the plan's task: which figures count
  bool own_loss = false;      // the plan's loss is the model's own
  int personalize_steps = 0;  // >= 0
};

// Whether round `round`'s model is evaluated on the boards: every
// `options.every` rounds, and the job's `last` one.
bool EvaluatesOnBoards(const BoardEvalOptions& options, uint64_t round,
                       bool last);

// Checks a board's evaluation report before it counts: figures in range
// (a loss >= 0 unless the model has its own loss, every figure at most
// 1e12 in size, accuracy in [0, 1]), a sample count the board's
// declaration allows (its held-out share of `declared_samples` training
// samples, the declaration as capped for training, at
// `options.holdout_fraction`), personalised figures only when asked for,
// over the same samples. InvalidArgument naming what is wrong.
absl::Status CheckEvaluationReport(const v1::EvaluationReport& report,
                                   uint64_t declared_samples,
                                   const BoardEvalOptions& options);

// The most held-out samples a board that declared `declared_samples`
// training samples can have at `fraction`.
uint64_t MaxHeldOutSamples(uint64_t declared_samples, double fraction);

// One line for the log: "the boards' evaluation: accuracy 0.8123 (loss
// 0.53) over 812 samples of 8 of 9 boards asked (1 declined); per board
// min 0.70, median 0.81, max 0.90".
std::string DescribeBoardEvaluation(const BoardEvalSummary& summary);

class BoardEvaluation {
 public:
  // Evaluates `model`, the model of `round`, on the boards `asked` (ids),
  // under the task id `task_id`, from `opened` on.
  BoardEvaluation(uint64_t round, std::string task_id,
                  std::shared_ptr<const runtime::NamedTensors> model,
                  std::set<std::string> asked, absl::Time opened);

  uint64_t round() const { return round_; }
  const std::string& task_id() const { return task_id_; }
  const std::shared_ptr<const runtime::NamedTensors>& model() const {
    return model_;
  }
  const std::set<std::string>& asked() const { return asked_; }
  // Asked and has not answered yet.
  bool Awaits(const std::string& client_id) const;
  // Everyone asked answered (reported or declined).
  bool Complete() const { return answered_ == asked_.size(); }
  bool PastDeadline(absl::Time now, absl::Duration deadline) const {
    return now - opened_ >= deadline;
  }

  // Takes the answer of board `client_id` (named `client_name`) to this
  // evaluation, checked by CheckEvaluationReport first. FailedPrecondition
  // when the board was not asked (or the report is for another round),
  // AlreadyExists when it answered already, InvalidArgument for a wrong
  // task id or bad figures; a refused report changes nothing.
  absl::Status Accept(const std::string& client_id,
                      const std::string& client_name, uint64_t declared_samples,
                      const v1::EvaluationReport& report,
                      const BoardEvalOptions& options);

  // The figures so far, combined (a board that never answered counts in
  // `asked` only).
  BoardEvalSummary Summarize(absl::Time now, bool regression) const;

  // Board `old_id` joined again as `id`: it is asked (and its answer, if
  // it gave one, kept) under the new id. Nothing when it was not asked.
  void Rename(const std::string& old_id, const std::string& id);

 private:
  const uint64_t round_;
  const std::string task_id_;
  const std::shared_ptr<const runtime::NamedTensors> model_;
  std::set<std::string> asked_;
  const absl::Time opened_;
  size_t answered_ = 0;
  std::set<std::string> declined_;
  std::map<std::string, BoardEvalEntry> figures_;  // by client id
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_BOARD_EVALUATION_H_
