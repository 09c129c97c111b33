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
  bool TooFew(const Cohort& cohort) const override { return false; }
  void Open(const Cohort& cohort, std::mt19937_64& rng, int available,
            RoundAggregator& sum) override;
  std::optional<TrainTask> TaskFor(const std::string& id,
                                   const ClientRecord& client) override;
  std::optional<int64_t> PlannedSteps(const std::string& id) const override {
    return std::nullopt;
  }
  absl::Status CheckTask(const std::string& id, uint64_t round,
                         const std::string& task_id) const override;
  // A task is claimed once (BufferedVersions::Claim).
  absl::Status CheckNotCounted(const std::string& id,
                               uint64_t round) const override {
    return absl::OkStatus();
  }
  absl::StatusOr<std::shared_ptr<const runtime::NamedTensors>> BaseModel(
      const std::string& id) const override;
  std::optional<absl::Status> RefuseLate(
      const v1::UpdateHeader& header) override {
    return std::nullopt;  // an unclaimed task stays open across versions
  }
  // None kept: each push is checked against the version it trained on.
  std::shared_ptr<const UpdateBound> BoundFor(
      std::shared_ptr<const runtime::NamedTensors> base) const override {
    return nullptr;
  }
  bool TakesPush() const override;
  absl::StatusOr<std::optional<int>> Claim(
      const std::string& id,
      const std::shared_ptr<const runtime::NamedTensors>& base) override;
  runtime::NamedTensors Prepare(runtime::NamedTensors whole,
                                const runtime::NamedTensors& base,
                                const runtime::NamedTensors& current,
                                std::optional<int> staleness) const override;
  void Unclaim(const std::string& id) override { versions_.Unclaim(id); }
  void Accept(const std::string& id, std::optional<int> staleness,
              runtime::NamedTensors added, uint64_t samples) override;
  std::pair<size_t, size_t> Held() const override {
    return {static_cast<size_t>(versions_.buffered()),
            static_cast<size_t>(options_.async.buffer)};
  }
  bool PersistsEachUpdate() const override { return true; }
  Renamed Rename(const std::string& id, const std::string& new_id) override {
    versions_.Rename(id, new_id);
    leases_.Rename(id, new_id);
    return Renamed{};
  }
  bool Refused(const v1::UpdateHeader& header) override;
  bool Declines(const std::string& id) override;
  BoardPart PartOf(const std::string& id) const override;
  const std::set<std::string>& Members() const override { return none_; }
  bool Closes(CloseDecision& decision) override;
  void Close(RoundReport& report) override;
  void Clear() override {}  // the buffer and its tasks outlive a round
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
  const std::set<std::string> none_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_ASYNC_ROUNDS_H_
