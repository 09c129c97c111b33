#include "server/stream_limiter.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"

namespace fedberry::server {
namespace {

// A caller refused for its share is logged at most this often: one that
// asks in a loop must not flood the log.
constexpr absl::Duration kShareLogEvery = absl::Seconds(10);

}  // namespace

StreamLimiter::StreamLimiter(Options options, Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

StreamLimiter::Ticket::Ticket(Ticket&& other) noexcept
    : limiter_(other.limiter_), id_(other.id_) {
  other.limiter_ = nullptr;
}

StreamLimiter::Ticket::~Ticket() {
  if (limiter_ != nullptr) limiter_->Release(id_);
}

void StreamLimiter::Ticket::Progress() {
  if (limiter_ != nullptr) limiter_->Progress(id_);
}

bool StreamLimiter::Full() const {
  return options_.max_streams > 0 &&
         streams_.size() >= static_cast<size_t>(options_.max_streams);
}

absl::Status StreamLimiter::Refusal() const {
  return absl::ResourceExhaustedError(absl::StrCat(
      "the server serves ", streams_.size(), " ", options_.kind,
      ", its limit (", options_.flag, ")",
      waiters_.empty() ? "" : absl::StrCat(", and ", waiters_.size(), " wait"),
      "; try again in a few seconds"));
}

absl::Status StreamLimiter::CheckCallerShare(const std::string& caller,
                                             const std::string& what) {
  if (caller.empty() || options_.max_per_caller <= 0) return absl::OkStatus();
  auto it = held_.find(caller);
  if (it == held_.end() || it->second < options_.max_per_caller) {
    return absl::OkStatus();
  }
  ++cut_offs_.caller_share;
  const absl::Time now = clock_.Now();
  if (now - last_share_log_ >= kShareLogEvery) {
    last_share_log_ = now;
    spdlog::warn(
        "refused {}: {} holds {} {} already (--max_streams_per_caller)", what,
        caller, it->second, options_.kind);
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "this caller holds ", it->second, " ", options_.kind,
      " already, its share (--max_streams_per_caller); finish one first"));
}

void StreamLimiter::Hold(const std::string& caller) {
  if (!caller.empty()) ++held_[caller];
}

void StreamLimiter::LetGo(const std::string& caller) {
  if (caller.empty()) return;
  auto it = held_.find(caller);
  if (it != held_.end() && --it->second <= 0) held_.erase(it);
}

uint64_t StreamLimiter::Enter(std::string what, std::string caller,
                              std::function<void()> cancel) {
  const uint64_t id = next_id_++;
  const absl::Time now = clock_.Now();
  streams_[id] = {std::move(what), std::move(caller), now, now,
                  std::move(cancel)};
  return id;
}

absl::StatusOr<StreamLimiter::Ticket> StreamLimiter::Admit(
    std::string what, std::string caller, std::function<void()> cancel) {
  absl::MutexLock lock(&mu_);
  // Streams wait only while the limiter is full (Release hands a freed
  // place to the first at once), so none is overtaken here.
  if (Full()) return Refusal();
  if (absl::Status s = CheckCallerShare(caller, what); !s.ok()) return s;
  Hold(caller);
  return Ticket(this,
                Enter(std::move(what), std::move(caller), std::move(cancel)));
}

absl::StatusOr<StreamLimiter::Admission> StreamLimiter::AdmitInTurn(
    std::string what, std::string caller, std::function<void()> cancel,
    std::function<void(Ticket)> admitted) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = CheckCallerShare(caller, what); !s.ok()) return s;
  Admission admission;
  if (!Full()) {
    Hold(caller);
    admission.ticket.emplace(Ticket(
        this, Enter(std::move(what), std::move(caller), std::move(cancel))));
    return admission;
  }
  if (waiters_.size() >= static_cast<size_t>(options_.max_waiting)) {
    return Refusal();
  }
  Hold(caller);
  admission.waiting = next_id_++;
  waiters_[admission.waiting] = {std::move(what), std::move(caller),
                                 std::move(cancel), std::move(admitted)};
  return admission;
}

bool StreamLimiter::Withdraw(uint64_t waiting) {
  absl::MutexLock lock(&mu_);
  auto it = waiters_.find(waiting);
  if (it == waiters_.end()) return false;
  LetGo(it->second.caller);
  waiters_.erase(it);
  return true;
}

std::string StreamLimiter::OverdueReason(const Stream& s, absl::Time now,
                                         bool* stalled) const {
  *stalled = options_.max_stall > absl::ZeroDuration() &&
             now - s.progressed > options_.max_stall;
  if (*stalled) {
    return absl::StrCat("it moved nothing for ",
                        absl::FormatDuration(now - s.progressed),
                        " (--stream_stall_time ",
                        absl::FormatDuration(options_.max_stall), ")");
  }
  if (options_.max_duration > absl::ZeroDuration() &&
      now - s.started > options_.max_duration) {
    return absl::StrCat("it ran longer than ",
                        absl::FormatDuration(options_.max_duration),
                        " (--max_stream_time)");
  }
  return "";
}

int StreamLimiter::CancelOverdue() {
  std::vector<std::function<void()>> overdue;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = clock_.Now();
    for (auto& [id, s] : streams_) {
      if (s.cancelled) continue;
      bool stalled = false;
      std::string reason = OverdueReason(s, now, &stalled);
      if (reason.empty()) continue;
      s.cancelled = true;
      ++(stalled ? cut_offs_.stalled : cut_offs_.overdue);
      spdlog::warn("cut off {}: {}", s.what, reason);
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

StreamLimiter::CutOffs StreamLimiter::cut_offs() const {
  absl::MutexLock lock(&mu_);
  return cut_offs_;
}

void StreamLimiter::Progress(uint64_t id) {
  absl::MutexLock lock(&mu_);
  auto it = streams_.find(id);
  if (it != streams_.end()) it->second.progressed = clock_.Now();
}

void StreamLimiter::Release(uint64_t id) {
  std::optional<Waiter> next;
  uint64_t next_id = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = streams_.find(id);
    if (it != streams_.end()) {
      LetGo(it->second.caller);
      streams_.erase(it);
    }
    if (waiters_.empty() || Full()) return;
    next.emplace(std::move(waiters_.begin()->second));
    waiters_.erase(waiters_.begin());
    // Its caller's hold moves from the queue to the stream.
    next_id = Enter(std::move(next->what), std::move(next->caller),
                    std::move(next->cancel));
  }
  // Outside the lock: the stream starts sending, and may end (and release)
  // at once.
  next->admitted(Ticket(this, next_id));
}

absl::StatusOr<bool> StreamTurn::Request(StreamLimiter& limiter,
                                         std::string what, std::string caller,
                                         std::function<void()> cancel,
                                         std::function<void()> admitted) {
  // An admission from another thread waits on mu_ until this one is
  // recorded.
  absl::MutexLock lock(&mu_);
  limiter_ = &limiter;
  auto admission = limiter.AdmitInTurn(
      std::move(what), std::move(caller), std::move(cancel),
      [this, admitted = std::move(admitted)](StreamLimiter::Ticket ticket) {
        {
          absl::MutexLock lock(&mu_);
          waiting_ = 0;
          ticket_.emplace(std::move(ticket));
        }
        admitted();
      });
  if (!admission.ok()) return admission.status();
  if (admission->ticket) {
    ticket_.emplace(std::move(*admission->ticket));
    return true;
  }
  waiting_ = admission->waiting;
  return false;
}

void StreamTurn::Progress() {
  absl::MutexLock lock(&mu_);
  if (ticket_) ticket_->Progress();
}

bool StreamTurn::Withdraw() {
  uint64_t waiting;
  StreamLimiter* limiter;
  {
    absl::MutexLock lock(&mu_);
    waiting = waiting_;
    limiter = limiter_;
  }
  // Outside mu_: an admission under way takes mu_ after the limiter's lock.
  return waiting != 0 && limiter->Withdraw(waiting);
}

}  // namespace fedberry::server
