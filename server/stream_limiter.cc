#include "server/stream_limiter.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"

namespace fedberry::server {

StreamLimiter::StreamLimiter(int max_streams, absl::Duration max_duration,
                             Clock& clock, std::string kind, std::string flag,
                             int max_waiting)
    : max_streams_(max_streams),
      max_waiting_(std::max(0, max_waiting)),
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

bool StreamLimiter::Full() const {
  return max_streams_ > 0 &&
         streams_.size() >= static_cast<size_t>(max_streams_);
}

absl::Status StreamLimiter::Refusal() const {
  return absl::ResourceExhaustedError(absl::StrCat(
      "the server serves ", streams_.size(), " ", kind_, ", its limit (", flag_,
      ")",
      waiters_.empty() ? "" : absl::StrCat(", and ", waiters_.size(), " wait"),
      "; try again in a few seconds"));
}

uint64_t StreamLimiter::Enter(std::string what, std::function<void()> cancel) {
  const uint64_t id = next_id_++;
  streams_[id] = {std::move(what), clock_.Now(), std::move(cancel)};
  return id;
}

absl::StatusOr<StreamLimiter::Ticket> StreamLimiter::Admit(
    std::string what, std::function<void()> cancel) {
  absl::MutexLock lock(&mu_);
  // Streams wait only while the limiter is full (Release hands a freed
  // place to the first at once), so none is overtaken here.
  if (Full()) return Refusal();
  return Ticket(this, Enter(std::move(what), std::move(cancel)));
}

absl::StatusOr<StreamLimiter::Admission> StreamLimiter::AdmitInTurn(
    std::string what, std::function<void()> cancel,
    std::function<void(Ticket)> admitted) {
  absl::MutexLock lock(&mu_);
  Admission admission;
  if (!Full()) {
    admission.ticket.emplace(
        Ticket(this, Enter(std::move(what), std::move(cancel))));
    return admission;
  }
  if (waiters_.size() >= static_cast<size_t>(max_waiting_)) return Refusal();
  admission.waiting = next_id_++;
  waiters_[admission.waiting] = {std::move(what), std::move(cancel),
                                 std::move(admitted)};
  return admission;
}

bool StreamLimiter::Withdraw(uint64_t waiting) {
  absl::MutexLock lock(&mu_);
  return waiters_.erase(waiting) > 0;
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

int StreamLimiter::waiting() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(waiters_.size());
}

void StreamLimiter::Release(uint64_t id) {
  std::optional<Waiter> next;
  uint64_t next_id = 0;
  {
    absl::MutexLock lock(&mu_);
    streams_.erase(id);
    if (waiters_.empty() || Full()) return;
    next.emplace(std::move(waiters_.begin()->second));
    waiters_.erase(waiters_.begin());
    next_id = Enter(std::move(next->what), std::move(next->cancel));
  }
  // Outside the lock: the stream starts sending, and may end (and release)
  // at once.
  next->admitted(Ticket(this, next_id));
}

}  // namespace fedberry::server
