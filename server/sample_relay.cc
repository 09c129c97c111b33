#include "server/sample_relay.h"

#include "absl/strings/str_cat.h"
#include "base/log_text.h"
#include "proto/wire.h"

namespace fedberry::server {
namespace {

// A move id as it may appear in a refusal: the caller's bytes, escaped and
// cut, since refusals are logged and sent back.
std::string Shown(const std::string& move_id) {
  return base::Printable(move_id, 64);
}

}  // namespace

void SampleRelay::Open(uint64_t round, std::vector<PlannedMove> moves) {
  absl::MutexLock lock(&mu_);
  ++generation_;
  round_ = round;
  slots_.clear();
  for (PlannedMove& m : moves) {
    std::string id = m.id;
    slots_[id] = Slot{std::move(m), nullptr};
  }
  ++changes_;
}

void SampleRelay::Close() {
  absl::MutexLock lock(&mu_);
  ++generation_;
  slots_.clear();
  ++changes_;
}

template <typename Keep>
std::vector<PlannedMove> SampleRelay::Select(Keep keep) const {
  absl::MutexLock lock(&mu_);
  std::vector<PlannedMove> out;
  for (const auto& [id, slot] : slots_) {
    if (keep(slot)) out.push_back(slot.move);
  }
  return out;
}

std::vector<PlannedMove> SampleRelay::MovesFrom(const std::string& name) const {
  return Select([&](const Slot& s) { return s.move.from == name; });
}

std::vector<PlannedMove> SampleRelay::MovesTo(const std::string& name) const {
  return Select([&](const Slot& s) { return s.move.to == name; });
}

void SampleRelay::AddMovesTo(const std::string& name,
                             v1::GetTaskResponse& task) const {
  for (const PlannedMove& m : MovesFrom(name)) {
    v1::DataMove* move = task.add_send();
    move->set_move_id(m.id);
    move->set_samples(m.samples);
    move->set_peer(m.to);
  }
  for (const PlannedMove& m : MovesTo(name)) {
    v1::DataMove* move = task.add_receive();
    move->set_move_id(m.id);
    move->set_samples(m.samples);
    move->set_peer(m.from);
  }
}

void SampleRelay::Cancel(const std::string& sender,
                         const std::string& move_id) {
  absl::MutexLock lock(&mu_);
  auto it = slots_.find(move_id);
  if (it == slots_.end() || it->second.move.from != sender) return;
  it->second.cancelled = true;
  it->second.samples.reset();
  ++changes_;
}

std::vector<PlannedMove> SampleRelay::Undelivered(
    const std::string& sender) const {
  return Select([&](const Slot& s) {
    return s.move.from == sender && !s.samples && !s.cancelled;
  });
}

absl::Status SampleRelay::CheckLent(const std::string& sender,
                                    const std::vector<std::string>& kept) {
  for (const std::string& move_id : kept) Cancel(sender, move_id);
  const std::vector<PlannedMove> missing = Undelivered(sender);
  if (missing.empty()) return absl::OkStatus();
  return wire::WithReason(
      absl::FailedPreconditionError(absl::StrCat(
          "data move samples missing: the ", missing.front().samples,
          " samples of data move ", missing.front().id,
          " are not on the server (it may have restarted); hand them over "
          "again, then send the update")),
      wire::kReasonSamplesMissing);
}

uint64_t SampleRelay::SamplesTo(const std::string& receiver) const {
  uint64_t samples = 0;
  for (const PlannedMove& m : MovesTo(receiver)) samples += m.samples;
  return samples;
}

absl::StatusOr<SampleRelay::Slot*> SampleRelay::SlotLocked(
    const std::string& move_id) {
  auto it = slots_.find(move_id);
  if (it == slots_.end()) {
    return absl::NotFoundError(absl::StrCat("no data move '", Shown(move_id),
                                            "' in round ", round_, "'s plan"));
  }
  return &it->second;
}

absl::StatusOr<SampleRelay::Slot*> SampleRelay::DepositSlotLocked(
    const std::string& sender, const std::string& move_id) {
  absl::StatusOr<Slot*> found = SlotLocked(move_id);
  if (!found.ok()) return found.status();
  Slot& slot = **found;
  if (slot.move.from != sender) {
    return absl::PermissionDeniedError(
        absl::StrCat("data move ", Shown(move_id), " is for client '",
                     slot.move.from, "' to send, not '", sender, "'"));
  }
  if (slot.cancelled) {
    return absl::FailedPreconditionError(
        absl::StrCat("data move ", Shown(move_id),
                     " was cancelled: its sender trained them"));
  }
  if (slot.samples) {
    return absl::AlreadyExistsError(absl::StrCat(
        "the samples of data move ", Shown(move_id), " were already received"));
  }
  return &slot;
}

absl::StatusOr<PlannedMove> SampleRelay::MoveToDeposit(
    const std::string& sender, const std::string& move_id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Slot*> slot = DepositSlotLocked(sender, move_id);
  if (!slot.ok()) return slot.status();
  return (*slot)->move;
}

absl::Status SampleRelay::Deposit(const std::string& sender,
                                  const std::string& move_id,
                                  runtime::ImageDataset samples) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Slot*> slot = DepositSlotLocked(sender, move_id);
  if (!slot.ok()) return slot.status();
  if (samples.rows < 0 ||
      static_cast<uint64_t>(samples.rows) != (*slot)->move.samples) {
    return absl::InvalidArgumentError(
        absl::StrCat("data move ", Shown(move_id), " is planned for ",
                     (*slot)->move.samples, " samples, not ", samples.rows));
  }
  (*slot)->samples =
      std::make_shared<const runtime::ImageDataset>(std::move(samples));
  ++changes_;
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const runtime::ImageDataset>> SampleRelay::Take(
    const std::string& receiver, const std::string& move_id,
    absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  const uint64_t generation = generation_;
  while (true) {
    if (generation_ != generation) {
      return absl::AbortedError(absl::StrCat("round ", round_,
                                             " closed before data move ",
                                             Shown(move_id), " arrived"));
    }
    absl::StatusOr<Slot*> found = SlotLocked(move_id);
    if (!found.ok()) return found.status();
    const Slot& slot = **found;
    if (slot.move.to != receiver) {
      return absl::PermissionDeniedError(
          absl::StrCat("data move ", Shown(move_id), " is for client '",
                       slot.move.to, "' to receive, not '", receiver, "'"));
    }
    if (slot.cancelled) {
      return absl::FailedPreconditionError(
          absl::StrCat("client '", slot.move.from, "' kept the ",
                       slot.move.samples, " samples of data move ",
                       Shown(move_id), " and trained them itself"));
    }
    if (slot.samples) return slot.samples;
    if (clock_.Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "client '", slot.move.from, "' has not sent the ", slot.move.samples,
          " samples of data move ", Shown(move_id)));
    }
    const uint64_t seen = changes_;
    auto changed = [this, seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return changes_ != seen;
    };
    clock_.AwaitWithDeadline(mu_, absl::Condition(&changed), deadline);
  }
}

uint64_t SampleRelay::held_bytes() const {
  absl::MutexLock lock(&mu_);
  uint64_t bytes = 0;
  for (const auto& [id, slot] : slots_) {
    if (slot.samples) {
      bytes += slot.samples->pixels.size() + slot.samples->labels.size();
    }
  }
  return bytes;
}

}  // namespace fedberry::server
