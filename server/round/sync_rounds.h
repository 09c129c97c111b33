// Synchronous rounds: each round draws a cohort, hands each selected board
// one task, and closes by the close rule (DecideClose) once every awaited
// board reported, or at its deadline with a quorum. Updates a closed round
// did not wait for are refused as late and counted in the next report.
//
// Thread-compatible: the coordinator's lock guards it (see RoundKind).
#ifndef FEDBERRY_SERVER_ROUND_SYNC_ROUNDS_H_
#define FEDBERRY_SERVER_ROUND_SYNC_ROUNDS_H_

#include <memory>
#include <set>
#include <string>

#include "server/round/open_round.h"
#include "server/round/round_kind.h"

namespace fedberry::server {

struct SyncRoundOptions {
  CloseOptions close;
  absl::Duration liveness = absl::Minutes(2);  // a paused board's heartbeat
  int min_clients_per_round = 2;
  double max_update_ratio = 1000;  // UpdateBound; <= 0: none
};

class SyncRounds final : public RoundKind {
 public:
  // `selection` draws each round's cohort.
  SyncRounds(RoundContext context, SyncRoundOptions options,
             std::shared_ptr<const CohortSelection> selection);

  Cohort Draw(std::vector<std::string> available,
              std::mt19937_64& rng) const override;
  void Open(const Cohort& cohort, std::mt19937_64& rng, int available,
            RoundAggregator& sum) override;
  std::optional<TrainTask> TaskFor(const std::string& id,
                                   const ClientRecord& client) override;
  absl::Status CheckTask(const std::string& id, uint64_t round,
                         const std::string& task_id, TaskUse use) override;
  absl::StatusOr<TaskBase> BaseOf(const std::string& id) const override {
    return TaskBase{ctx_.job.global(), bound_};
  }
  bool TakesPush() const override { return true; }
  absl::StatusOr<std::optional<int>> Claim(
      const std::string& id,
      const std::shared_ptr<const runtime::NamedTensors>& base) override;
  runtime::NamedTensors Prepare(runtime::NamedTensors whole,
                                const runtime::NamedTensors& base,
                                const runtime::NamedTensors& current,
                                std::optional<int> staleness) const override {
    return whole;
  }
  Settled Settle(const std::string& id, std::optional<int> staleness,
                 std::optional<runtime::NamedTensors> added,
                 uint64_t samples) override;
  Renamed Rename(const std::string& id, const std::string& new_id) override;
  bool Release(const std::string& id, const v1::UpdateHeader* refused) override;
  BoardPart PartOf(const std::string& id) const override;
  bool Closes(CloseDecision& decision) override;
  void Close(RoundReport& report) override;
  std::optional<AsyncState> State() const override { return std::nullopt; }
  void Restore(const std::optional<AsyncState>& state) override;

 private:
  // Stops awaiting `id`, a selected board that has not reported; false
  // when it was not awaited.
  bool StopAwaiting(const std::string& id);
  // The late update's refusal when `header` is of the round that closed
  // without it (counted in the next report); OK otherwise.
  absl::Status RefuseLate(const std::string& id, const std::string& task_id);
  // Plans the open cohort's local steps; drops boards planned no work.
  void Plan();
  // Where the open round stands, for DecideClose.
  RoundProgress Progress() const;
  // Counts a round closed at its deadline's stragglers into its report.
  void CountStragglers(const RoundProgress& progress);

  RoundContext ctx_;
  SyncRoundOptions options_;
  const std::shared_ptr<const CohortSelection> selection_;
  // The round in progress: its task, cohort and what each selected board
  // did (refused, declined).
  OpenRound open_;
  absl::Time opened_;
  bool grace_logged_ = false;  // once a round
  // The open round's bound, made on its model.
  std::shared_ptr<const UpdateBound> bound_;
  // The last closed round's task and the boards it closed without, whose
  // updates come late.
  std::string closed_task_;
  uint64_t closed_round_ = 0;
  std::set<std::string> closed_without_;
  int late_updates_ = 0;
  // The open round's figures this kind keeps (selected, the planner's,
  // cut off, stragglers, declined during the round); Close reports them.
  RoundReport figures_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_SYNC_ROUNDS_H_
