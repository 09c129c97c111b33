#include "server/round/async_rounds.h"

#include <spdlog/spdlog.h>

#include "base/log_text.h"
#include "server/round/staleness.h"

namespace fedberry::server {

AsyncRounds::AsyncRounds(RoundContext context, AsyncRoundOptions options)
    : ctx_(context),
      options_(std::move(options)),
      versions_(options_.async, options_.seed * 1000003u + 0xa5u),
      leases_(options_.liveness) {}

void AsyncRounds::Open(const Cohort& cohort, std::mt19937_64& rng,
                       int available, RoundAggregator& sum) {
  // A site gateway numbers its own versions: its parent's rounds may skip
  // it or hand the same round down again.
  versions_.Open(options_.site ? versions_.open_round() + 1 : ctx_.job.round(),
                 ctx_.job.global());
  // A restarted server's round starts from the updates its buffer held.
  for (const AsyncState::Buffered& b : versions_.buffer()) {
    if (absl::Status s = sum.Add(b.update, b.samples); !s.ok()) {
      spdlog::error("round {}: a checkpointed update cannot be added: {}",
                    ctx_.job.round(), s.ToString());
    }
  }
  if (!versions_.buffer().empty()) {
    spdlog::info("round {}: resumes with the {} update(s) its buffer held",
                 ctx_.job.round(), versions_.buffer().size());
  }
  // Boards waiting between versions (or for a slot) take the new one.
  ctx_.polls.WakeAll();
  if (options_.site) {
    spdlog::info(
        "round {}/{}: the parent's model is this site's version {}; boards "
        "train on it as they ask ({} training), and the next {} updates go "
        "to the parent",
        ctx_.job.round(), ctx_.job.total_rounds(), versions_.open_round(),
        versions_.training(), options_.async.buffer);
  } else {
    spdlog::info(
        "round {}/{}: version {} is out; boards train on it as they ask ({} "
        "training), and the next {} updates make version {}",
        ctx_.job.round(), ctx_.job.total_rounds(), ctx_.job.round() - 1,
        versions_.training(), options_.async.buffer, ctx_.job.round());
  }
}

std::optional<TrainTask> AsyncRounds::TaskFor(const std::string& id,
                                              const ClientRecord& client) {
  const AsyncTask* task = versions_.Find(id);
  if (task == nullptr && ctx_.job.phase() == RoundPhase::kCollecting &&
      client.condition.declined().empty() && MayLease(id, client)) {
    task = versions_.Assign(id);
    if (task != nullptr) leases_.Lease(id, ctx_.job.clock().Now());
  }
  if (task == nullptr || task->claimed) return std::nullopt;
  return TrainTask{task->round, task->task_id, task->seed, std::nullopt};
}

absl::Status AsyncRounds::CheckTask(const std::string& id, uint64_t round,
                                    const std::string& task_id, TaskUse use) {
  // Asynchronous tasks outlive their round: checked against the board's.
  if (ctx_.job.phase() == RoundPhase::kDone) {
    return absl::FailedPreconditionError("the job is done");
  }
  return versions_.Check(id, round, task_id);
}

absl::StatusOr<TaskBase> AsyncRounds::BaseOf(const std::string& id) const {
  const AsyncTask* task = versions_.Find(id);
  std::shared_ptr<const runtime::NamedTensors> model =
      task != nullptr ? versions_.ModelOf(*task) : nullptr;
  if (model == nullptr) {
    return absl::FailedPreconditionError(
        "the model version of this task is no longer kept; ask for a task");
  }
  return TaskBase{std::move(model), nullptr};
}

bool AsyncRounds::TakesPush() const {
  return ctx_.job.phase() == RoundPhase::kCollecting && !versions_.Full();
}

absl::StatusOr<std::optional<int>> AsyncRounds::Claim(
    const std::string& id,
    const std::shared_ptr<const runtime::NamedTensors>& base) {
  absl::StatusOr<int> staleness = versions_.Claim(id);
  if (!staleness.ok()) return staleness.status();
  return std::optional<int>(*staleness);
}

runtime::NamedTensors AsyncRounds::Prepare(runtime::NamedTensors whole,
                                           const runtime::NamedTensors& base,
                                           const runtime::NamedTensors& current,
                                           std::optional<int> staleness) const {
  const double weight =
      StalenessWeight(options_.async.weighting, staleness.value_or(0));
  return Rebase(whole, base, current, weight);
}

Settled AsyncRounds::Settle(const std::string& id, std::optional<int> staleness,
                            std::optional<runtime::NamedTensors> added,
                            uint64_t samples) {
  if (!added) {
    versions_.Unclaim(id);
  } else {
    versions_.Accept(id, staleness.value_or(0), *std::move(added), samples);
    leases_.Finished(id, ctx_.job.clock().Now());
    SlotFreed();
  }
  return Settled{static_cast<size_t>(versions_.buffered()),
                 static_cast<size_t>(options_.async.buffer), true};
}

bool AsyncRounds::MayLease(const std::string& id,
                           const ClientRecord& client) const {
  const absl::Time now = ctx_.job.clock().Now();
  if (leases_.Benched(id, now)) return false;
  const int slots = options_.async.max_concurrency;
  if (slots == 0) return true;
  // Its share: the slots over the callers of the boards that are there.
  std::set<std::string> callers = {client.caller};
  for (const std::string& other :
       ctx_.job.clients().Available(now, options_.liveness)) {
    callers.insert(ctx_.job.clients().At(other).caller);
  }
  const int share = (slots + static_cast<int>(callers.size()) - 1) /
                    static_cast<int>(callers.size());
  int held = 0;
  for (const std::string& other : versions_.TrainingIds()) {
    const ClientRecord* c = ctx_.job.clients().Find(other);
    held += c != nullptr && c->caller == client.caller;
  }
  return held < share;
}

void AsyncRounds::ExpireLeases() {
  const absl::Time now = ctx_.job.clock().Now();
  leases_.RetainOnly(versions_.TrainingIds());
  for (const std::string& id : versions_.TrainingIds()) {
    const ClientRecord* c = ctx_.job.clients().Find(id);
    const AsyncTask* task = versions_.Find(id);
    if (c == nullptr) {
      spdlog::info("round {}: {} is gone; its task is given up",
                   ctx_.job.round(), base::Printable(id));
      versions_.Drop(id);
      leases_.Release(id);
      SlotFreed();
      continue;
    }
    // An update being added holds its slot until it is in.
    leases_.Heard(id, task != nullptr && task->claimed ? now : c->task_heard);
  }
  for (const TaskLeases::Ended& ended : leases_.Expire(now)) {
    const ClientRecord* c = ctx_.job.clients().Find(ended.id);
    spdlog::info("round {}: {} {}; its task is given up and its slot freed",
                 ctx_.job.round(),
                 c != nullptr ? c->name : base::Printable(ended.id), ended.why);
    versions_.Drop(ended.id);
    SlotFreed();
  }
}

void AsyncRounds::Restore(const std::optional<AsyncState>& state) {
  if (!state) return;
  versions_.Restore(*state);
  // A restarted server leases the tasks it kept afresh.
  for (const std::string& id : versions_.TrainingIds()) {
    leases_.Lease(id, ctx_.job.clock().Now());
  }
}

void AsyncRounds::SlotFreed() {
  if (options_.async.max_concurrency > 0) ctx_.polls.WakeAll();
}

bool AsyncRounds::Release(const std::string& id,
                          const v1::UpdateHeader* refused) {
  const AsyncTask* task = versions_.Find(id);
  if (task == nullptr || task->claimed) return false;
  if (refused != nullptr) {
    // It does not send that task again: its slot is free.
    if (task->task_id == refused->task_id()) {
      versions_.Drop(id);
      leases_.Release(id);
    }
    return false;
  }
  // Declining with a task means it was not training it: the slot is free.
  versions_.Drop(id);
  leases_.Release(id);
  ++declined_;
  return true;
}

BoardPart AsyncRounds::PartOf(const std::string& id) const {
  BoardPart part;
  if (const AsyncTask* task = versions_.Find(id)) {
    part.training = true;
    part.held = true;
    part.round = task->round;
  }
  return part;
}

bool AsyncRounds::Closes(CloseDecision& decision) {
  // A board whose lease ended frees its slot; its update, if it comes, is
  // refused (it holds no task) and it asks again.
  ExpireLeases();
  decision = CloseDecision{};
  decision.action = CloseAction::kClose;
  return versions_.buffered() >= options_.async.buffer;
}

void AsyncRounds::Close(RoundReport& report) {
  report.version = versions_.TakeFigures();
  report.participants = report.version->updates;
  report.selected = report.participants;
  report.dropped = 0;
  report.declined += declined_;
  declined_ = 0;
}

}  // namespace fedberry::server
