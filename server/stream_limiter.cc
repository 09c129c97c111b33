#include "server/stream_limiter.h"

#include <spdlog/spdlog.h>

#include <vector>

#include "absl/strings/str_cat.h"

namespace fedberry::server {

StreamLimiter::StreamLimiter(int max_streams, absl::Duration max_duration,
                             Clock& clock, std::string kind, std::string flag)
    : max_streams_(max_streams),
      max_duration_(max_duration),
      kind_(std::move(kind)),
      flag_(std::move(flag)),
      clock_(clock) {}

StreamLimiter::Ticket::Ticket(Ticket&& other) noexcept
    : limiter_(other.limiter_), id_(other.id_) {
  other.limiter_ = nullptr;
}

StreamLimiter::Ticket::~Ticket() {
  if (limiter_ != nullptr) limiter_->Release(id_);
}

absl::StatusOr<StreamLimiter::Ticket> StreamLimiter::Admit(
    std::string what, std::function<void()> cancel) {
  absl::MutexLock lock(&mu_);
  if (max_streams_ > 0 &&
      streams_.size() >= static_cast<size_t>(max_streams_)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the server serves ", streams_.size(), " ", kind_,
                     ", its limit (", flag_, "); try again in a few seconds"));
  }
  const uint64_t id = next_id_++;
  streams_[id] = {std::move(what), clock_.Now(), std::move(cancel)};
  return Ticket(this, id);
}

int StreamLimiter::CancelOverdue() {
  if (max_duration_ <= absl::ZeroDuration()) return 0;
  std::vector<std::function<void()>> overdue;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = clock_.Now();
    for (auto& [id, s] : streams_) {
      if (s.cancelled || now - s.started <= max_duration_) continue;
      s.cancelled = true;
      spdlog::warn("cancelled {}: it ran longer than {} (--max_stream_time)",
                   s.what, absl::FormatDuration(max_duration_));
      overdue.push_back(s.cancel);
    }
  }
  // Outside the lock: cancelling wakes the handler, which releases its
  // ticket.
  for (auto& cancel : overdue) cancel();
  return static_cast<int>(overdue.size());
}

int StreamLimiter::active() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(streams_.size());
}

void StreamLimiter::Release(uint64_t id) {
  absl::MutexLock lock(&mu_);
  streams_.erase(id);
}

}  // namespace fedberry::server
