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
  versions_.Open(options_.site ? versions_.open_round() + 1 : ctx_.round,
                 ctx_.global);
  // A restarted server's round starts from the updates its buffer held.
  for (const AsyncState::Buffered& b : versions_.buffer()) {
    if (absl::Status s = sum.Add(b.update, b.samples); !s.ok()) {
      spdlog::error("round {}: a checkpointed update cannot be added: {}",
                    ctx_.round, s.ToString());
    }
  }
  if (!versions_.buffer().empty()) {
    spdlog::info("round {}: resumes with the {} update(s) its buffer held",
                 ctx_.round, versions_.buffer().size());
  }
  // Boards waiting between versions (or for a slot) take the new one.
  ctx_.polls.WakeAll();
  if (options_.site) {
    spdlog::info(
        "round {}/{}: the parent's model is this site's version {}; boards "
        "train on it as they ask ({} training), and the next {} updates go "
        "to the parent",
        ctx_.round, ctx_.total_rounds, versions_.open_round(),
        versions_.training(), options_.async.buffer);
  } else {
    spdlog::info(
        "round {}/{}: version {} is out; boards train on it as they ask ({} "
        "training), and the next {} updates make version {}",
        ctx_.round, ctx_.total_rounds, ctx_.round - 1, versions_.training(),
        options_.async.buffer, ctx_.round);
  }
}

std::optional<TrainTask> AsyncRounds::TaskFor(const std::string& id,
                                              const ClientRecord& client) {
  const AsyncTask* task = versions_.Find(id);
  if (task == nullptr && ctx_.phase == RoundPhase::kCollecting &&
      client.condition.declined().empty() && MayLease(id, client)) {
    task = versions_.Assign(id);
    if (task != nullptr) leases_.Lease(id, ctx_.clock.Now());
  }
  if (task == nullptr || task->claimed) return std::nullopt;
  return TrainTask{task->round, task->task_id, task->seed};
}

absl::Status AsyncRounds::CheckTask(const std::string& id, uint64_t round,
                                    const std::string& task_id) const {
  // Asynchronous tasks outlive their round: checked against the board's.
  if (ctx_.phase == RoundPhase::kDone) {
    return absl::FailedPreconditionError("the job is done");
  }
  return versions_.Check(id, round, task_id);
}

absl::StatusOr<std::shared_ptr<const runtime::NamedTensors>>
AsyncRounds::BaseModel(const std::string& id) const {
  const AsyncTask* task = versions_.Find(id);
  std::shared_ptr<const runtime::NamedTensors> model =
      task != nullptr ? versions_.ModelOf(*task) : nullptr;
  if (model == nullptr) {
    return absl::FailedPreconditionError(
        "the model version of this task is no longer kept; ask for a task");
  }
  return model;
}

bool AsyncRounds::TakesPush() const {
  return ctx_.phase == RoundPhase::kCollecting && !versions_.Full();
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

void AsyncRounds::Accept(const std::string& id, std::optional<int> staleness,
                         runtime::NamedTensors added, uint64_t samples) {
  versions_.Accept(id, staleness.value_or(0), std::move(added), samples);
  leases_.Finished(id, ctx_.clock.Now());
  SlotFreed();
}

bool AsyncRounds::MayLease(const std::string& id,
                           const ClientRecord& client) const {
  const absl::Time now = ctx_.clock.Now();
  if (leases_.Benched(id, now)) return false;
  const int slots = options_.async.max_concurrency;
  if (slots == 0) return true;
  // Its share: the slots over the callers of the boards that are there.
  std::set<std::string> callers = {client.caller};
  for (const std::string& other :
       ctx_.clients.Available(now, options_.liveness)) {
    callers.insert(ctx_.clients.At(other).caller);
  }
  const int share = (slots + static_cast<int>(callers.size()) - 1) /
                    static_cast<int>(callers.size());
  int held = 0;
  for (const std::string& other : versions_.TrainingIds()) {
    const ClientRecord* c = ctx_.clients.Find(other);
    held += c != nullptr && c->caller == client.caller;
  }
  return held < share;
}

void AsyncRounds::ExpireLeases() {
  const absl::Time now = ctx_.clock.Now();
  leases_.RetainOnly(versions_.TrainingIds());
  for (const std::string& id : versions_.TrainingIds()) {
    const ClientRecord* c = ctx_.clients.Find(id);
    const AsyncTask* task = versions_.Find(id);
    if (c == nullptr) {
      spdlog::info("round {}: {} is gone; its task is given up", ctx_.round,
                   base::Printable(id));
      versions_.Drop(id);
      leases_.Release(id);
      SlotFreed();
      continue;
    }
    // An update being added holds its slot until it is in.
    leases_.Heard(id, task != nullptr && task->claimed ? now : c->task_heard);
  }
  for (const TaskLeases::Ended& ended : leases_.Expire(now)) {
    const ClientRecord* c = ctx_.clients.Find(ended.id);
    spdlog::info("round {}: {} {}; its task is given up and its slot freed",
                 ctx_.round, c != nullptr ? c->name : base::Printable(ended.id),
                 ended.why);
    versions_.Drop(ended.id);
    SlotFreed();
  }
}

void AsyncRounds::Restore(const std::optional<AsyncState>& state) {
  if (!state) return;
  versions_.Restore(*state);
  // A restarted server leases the tasks it kept afresh.
  for (const std::string& id : versions_.TrainingIds()) {
    leases_.Lease(id, ctx_.clock.Now());
  }
}

void AsyncRounds::SlotFreed() {
  if (options_.async.max_concurrency > 0) ctx_.polls.WakeAll();
}

bool AsyncRounds::Refused(const v1::UpdateHeader& header) {
  // It does not send that task again: its slot is free.
  if (const AsyncTask* task = versions_.Find(header.client_id());
      task != nullptr && !task->claimed && task->task_id == header.task_id()) {
    versions_.Drop(header.client_id());
    leases_.Release(header.client_id());
  }
  return false;
}

bool AsyncRounds::Declines(const std::string& id) {
  // Asking with a task means it was not training it: the slot is free.
  const AsyncTask* task = versions_.Find(id);
  if (task == nullptr || task->claimed) return false;
  versions_.Drop(id);
  leases_.Release(id);
  ++ctx_.pending.declined;
  return true;
}

BoardPart AsyncRounds::PartOf(const std::string& id) const {
  BoardPart part;
  if (const AsyncTask* task = versions_.Find(id)) {
    part.training = true;
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
}

}  // namespace fedberry::server
