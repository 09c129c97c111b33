#include "server/long_polls.h"

namespace fedberry::server {

LongPolls::LongPolls(Clock& clock)
    : clock_(clock), dispatcher_([this] { Dispatch(); }) {}

LongPolls::~LongPolls() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    while (!polls_.empty()) ReadyLocked(polls_.begin()->first, false);
  }
  dispatcher_.join();
}

uint64_t LongPolls::Park(const std::string& key, absl::Time deadline,
                         Answer answer) {
  absl::MutexLock lock(&mu_);
  const uint64_t id = next_id_++;
  if (stopping_) {
    ready_.emplace_back(std::move(answer), false);
    return id;
  }
  polls_[id] = Poll{key, deadline, std::move(answer)};
  by_key_.emplace(key, id);
  by_deadline_.emplace(deadline, id);
  return id;
}

bool LongPolls::Cancel(uint64_t id) {
  absl::MutexLock lock(&mu_);
  return static_cast<bool>(TakeLocked(id));
}

void LongPolls::Wake(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto [first, last] = by_key_.equal_range(key);
  std::vector<uint64_t> ids;
  for (auto k = first; k != last; ++k) ids.push_back(k->second);
  for (uint64_t id : ids) ReadyLocked(id, true);
}

void LongPolls::WakeAll() {
  absl::MutexLock lock(&mu_);
  while (!polls_.empty()) ReadyLocked(polls_.begin()->first, true);
}

size_t LongPolls::parked() const {
  absl::MutexLock lock(&mu_);
  return polls_.size();
}

LongPolls::Answer LongPolls::TakeLocked(uint64_t id) {
  auto it = polls_.find(id);
  if (it == polls_.end()) return nullptr;
  auto [first, last] = by_key_.equal_range(it->second.key);
  for (auto k = first; k != last; ++k) {
    if (k->second == id) {
      by_key_.erase(k);
      break;
    }
  }
  by_deadline_.erase({it->second.deadline, id});
  Answer answer = std::move(it->second.answer);
  polls_.erase(it);
  return answer;
}

void LongPolls::ReadyLocked(uint64_t id, bool woken) {
  if (Answer answer = TakeLocked(id))
    ready_.emplace_back(std::move(answer), woken);
}

void LongPolls::Dispatch() {
  absl::MutexLock lock(&mu_);
  while (true) {
    const absl::Time now = clock_.Now();
    while (!by_deadline_.empty() && by_deadline_.begin()->first <= now) {
      ReadyLocked(by_deadline_.begin()->second, false);
    }
    if (!ready_.empty()) {
      std::vector<std::pair<Answer, bool>> answers;
      answers.swap(ready_);
      mu_.Unlock();
      for (auto& [answer, woken] : answers) answer(woken);
      answers.clear();  // the answers' captures go outside the lock too
      mu_.Lock();
      continue;
    }
    if (stopping_) return;
    // Wake for answers, and for a poll parked with an earlier deadline
    // than the one waited for.
    const absl::Time until = by_deadline_.empty() ? absl::InfiniteFuture()
                                                  : by_deadline_.begin()->first;
    auto work = [this, until]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || !ready_.empty() ||
             (!by_deadline_.empty() && by_deadline_.begin()->first < until);
    };
    clock_.AwaitWithDeadline(mu_, absl::Condition(&work), until);
  }
}

}  // namespace fedberry::server
