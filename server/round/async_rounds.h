// Asynchronous rounds (--mode=async, FedBuff) as a kind of round: no cohort
// is drawn; a board that asks is handed the open round's model at once, its
// update is moved onto the current model and weighted by its staleness,
// and the round closes (publishes its version) once its buffer holds
// `buffer` updates. BufferedVersions keeps the tasks, versions and buffer.
//
// Thread-compatible: the coordinator's lock guards it (see RoundKind).
#ifndef FEDBERRY_SERVER_ROUND_ASYNC_ROUNDS_H_
#define FEDBERRY_SERVER_ROUND_ASYNC_ROUNDS_H_

#include <memory>
#include <set>
#include <string>

#include "server/round/buffered_versions.h"
#include "server/round/round_kind.h"
#include "server/round/task_leases.h"

namespace fedberry::server {

struct AsyncRoundOptions {
  AsyncOptions async;
  uint64_t seed = 1;  // names the tasks and draws their data orders
  // A training board not heard about its task (heartbeats, pulls, pushes;
  // not polls) for this long gives its task up (TaskLeases).
  absl::Duration liveness = absl::Minutes(2);
  // A site gateway: its versions are its parent's tasks, numbered by the
  // site (the parent's rounds may skip it or repeat).
  bool site = false;
};

class AsyncRounds final : public RoundKind {
 public:
  AsyncRounds(RoundContext context, AsyncRoundOptions options);

  Cohort Draw(std::vector<std::string> available,
              std::mt19937_64& rng) const override {
    return Cohort{};  // boards take the round's tasks as they ask
  }
  void Open(const Cohort& cohort, std::mt19937_64& rng, int available,
            RoundAggregator& sum) override;
  std::optional<TrainTask> TaskFor(const std::string& id,
                                   const ClientRecord& client) override;
  // A task is claimed once (BufferedVersions::Claim); tasks outlive their
  // round, so no update comes late.
  absl::Status CheckTask(const std::string& id, uint64_t round,
                         const std::string& task_id, TaskUse use) override;
  // No bound kept: each push is checked against the version it trained on.
  absl::StatusOr<TaskBase> BaseOf(const std::string& id) const override;
  bool TakesPush() const override;
  absl::StatusOr<std::optional<int>> Claim(
      const std::string& id,
      const std::shared_ptr<const runtime::NamedTensors>& base) override;
  runtime::NamedTensors Prepare(runtime::NamedTensors whole,
                                const runtime::NamedTensors& base,
                                const runtime::NamedTensors& current,
                                std::optional<int> staleness) const override;
  // Every accepted update is persisted before its board hears it counted.
  Settled Settle(const std::string& id, std::optional<int> staleness,
                 std::optional<runtime::NamedTensors> added,
                 uint64_t samples) override;
  Renamed Rename(const std::string& id, const std::string& new_id) override {
    versions_.Rename(id, new_id);
    leases_.Rename(id, new_id);
    return Renamed{};
  }
  bool Release(const std::string& id, const v1::UpdateHeader* refused) override;
  BoardPart PartOf(const std::string& id) const override;
  bool Closes(CloseDecision& decision) override;
  void Close(RoundReport& report) override;
  std::optional<AsyncState> State() const override { return versions_.State(); }
  void Restore(const std::optional<AsyncState>& state) override;

 private:
  // Frees a slot: boards waiting for one (max_concurrency) may take it.
  void SlotFreed();
  // Whether `client` may take a slot now: not benched after a lease that
  // ended, and its caller holds fewer than its share of max_concurrency.
  bool MayLease(const std::string& id, const ClientRecord& client) const;
  // Ends the leases of boards gone, silent about their task, or past the
  // fleet's task deadline.
  void ExpireLeases();

  RoundContext ctx_;
  const AsyncRoundOptions options_;
  BufferedVersions versions_;
  TaskLeases leases_;
  int declined_ = 0;  // boards that gave a task up declining, this version
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_ASYNC_ROUNDS_H_
