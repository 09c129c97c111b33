#include "server/sample_relay.h"

#include "absl/strings/str_cat.h"

namespace fedberry::server {

void SampleRelay::Open(uint64_t round, std::vector<PlannedMove> moves) {
  absl::MutexLock lock(&mu_);
  ++generation_;
  round_ = round;
  slots_.clear();
  for (PlannedMove& m : moves) {
    std::string id = m.id;
    slots_[id] = Slot{std::move(m), nullptr};
  }
  changed_.SignalAll();
}

void SampleRelay::Close() {
  absl::MutexLock lock(&mu_);
  ++generation_;
  slots_.clear();
  changed_.SignalAll();
}

std::vector<PlannedMove> SampleRelay::MovesFrom(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  std::vector<PlannedMove> out;
  for (const auto& [id, slot] : slots_) {
    if (slot.move.from == name) out.push_back(slot.move);
  }
  return out;
}

std::vector<PlannedMove> SampleRelay::MovesTo(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  std::vector<PlannedMove> out;
  for (const auto& [id, slot] : slots_) {
    if (slot.move.to == name) out.push_back(slot.move);
  }
  return out;
}

void SampleRelay::Cancel(const std::string& sender,
                         const std::string& move_id) {
  absl::MutexLock lock(&mu_);
  auto it = slots_.find(move_id);
  if (it == slots_.end() || it->second.move.from != sender) return;
  it->second.cancelled = true;
  it->second.samples.reset();
  changed_.SignalAll();
}

std::vector<PlannedMove> SampleRelay::Undelivered(
    const std::string& sender) const {
  absl::MutexLock lock(&mu_);
  std::vector<PlannedMove> out;
  for (const auto& [id, slot] : slots_) {
    if (slot.move.from == sender && !slot.samples && !slot.cancelled) {
      out.push_back(slot.move);
    }
  }
  return out;
}

absl::StatusOr<PlannedMove> SampleRelay::Find(
    const std::string& move_id) const {
  absl::MutexLock lock(&mu_);
  auto it = slots_.find(move_id);
  if (it == slots_.end()) {
    return absl::NotFoundError(absl::StrCat("no data move '", move_id,
                                            "' in round ", round_, "'s plan"));
  }
  return it->second.move;
}

absl::Status SampleRelay::Deposit(const std::string& sender,
                                  const std::string& move_id,
                                  runtime::ImageDataset samples) {
  absl::MutexLock lock(&mu_);
  auto it = slots_.find(move_id);
  if (it == slots_.end()) {
    return absl::NotFoundError(absl::StrCat("no data move '", move_id,
                                            "' in round ", round_, "'s plan"));
  }
  Slot& slot = it->second;
  if (slot.move.from != sender) {
    return absl::PermissionDeniedError(
        absl::StrCat("data move ", move_id, " is for client '", slot.move.from,
                     "' to send, not '", sender, "'"));
  }
  if (slot.cancelled) {
    return absl::FailedPreconditionError(absl::StrCat(
        "data move ", move_id, " was cancelled: its sender trained them"));
  }
  if (slot.samples) {
    return absl::AlreadyExistsError(absl::StrCat(
        "the samples of data move ", move_id, " were already received"));
  }
  if (samples.rows < 0 ||
      static_cast<uint64_t>(samples.rows) != slot.move.samples) {
    return absl::InvalidArgumentError(
        absl::StrCat("data move ", move_id, " is planned for ",
                     slot.move.samples, " samples, not ", samples.rows));
  }
  slot.samples =
      std::make_shared<const runtime::ImageDataset>(std::move(samples));
  changed_.SignalAll();
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const runtime::ImageDataset>> SampleRelay::Take(
    const std::string& receiver, const std::string& move_id,
    absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  const uint64_t generation = generation_;
  while (true) {
    if (generation_ != generation) {
      return absl::AbortedError(absl::StrCat(
          "round ", round_, " closed before data move ", move_id, " arrived"));
    }
    auto it = slots_.find(move_id);
    if (it == slots_.end()) {
      return absl::NotFoundError(absl::StrCat(
          "no data move '", move_id, "' in round ", round_, "'s plan"));
    }
    const Slot& slot = it->second;
    if (slot.move.to != receiver) {
      return absl::PermissionDeniedError(
          absl::StrCat("data move ", move_id, " is for client '", slot.move.to,
                       "' to receive, not '", receiver, "'"));
    }
    if (slot.cancelled) {
      return absl::FailedPreconditionError(absl::StrCat(
          "client '", slot.move.from, "' kept the ", slot.move.samples,
          " samples of data move ", move_id, " and trained them itself"));
    }
    if (slot.samples) return slot.samples;
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("client '", slot.move.from, "' has not sent the ",
                       slot.move.samples, " samples of data move ", move_id));
    }
    changed_.WaitWithDeadline(&mu_, deadline);
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
