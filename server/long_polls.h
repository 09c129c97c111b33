// Long polls parked without a thread each. A poll is parked under a key (a
// client id) with a deadline and an answer, and is answered exactly once:
// when woken (Wake for its key, WakeAll), at its deadline, or never when
// Cancel takes it first. Answers run on this object's one dispatcher
// thread, outside its lock, so they may call back into whoever woke them
// (the round coordinator wakes polls while it holds its own lock).
// Deadlines are on the injected Clock: real time in production, like the
// callers' RPC deadlines.
// Thread-safe.
#ifndef FEDBERRY_SERVER_LONG_POLLS_H_
#define FEDBERRY_SERVER_LONG_POLLS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"

namespace fedberry::server {

class LongPolls {
 public:
  // `woken`: true when an event woke the poll, false at its deadline or
  // when this object is destroyed.
  using Answer = std::function<void(bool woken)>;

  explicit LongPolls(Clock& clock = Clock::Real());
  // Answers every parked poll (woken false) and stops the dispatcher.
  ~LongPolls();
  LongPolls(const LongPolls&) = delete;
  LongPolls& operator=(const LongPolls&) = delete;

  // The clock deadlines are on: a caller computes them from it.
  Clock& clock() const { return clock_; }

  // Parks `answer` under `key` until woken or `deadline`; returns the poll's
  // id (never 0).
  uint64_t Park(const std::string& key, absl::Time deadline, Answer answer);
  // Takes a parked poll back: true when it had not been answered (then its
  // answer never runs); false when it is answered or being answered.
  bool Cancel(uint64_t id);
  // Answers the polls parked under `key` / all parked polls.
  void Wake(const std::string& key);
  void WakeAll();

  size_t parked() const;

 private:
  struct Poll {
    std::string key;
    absl::Time deadline;
    Answer answer;
  };
  // Unlinks a parked poll; null when it is not parked.
  Answer TakeLocked(uint64_t id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves a parked poll to the ready queue.
  void ReadyLocked(uint64_t id, bool woken) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Dispatch();

  Clock& clock_;
  mutable absl::Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, Poll> polls_ ABSL_GUARDED_BY(mu_);
  std::multimap<std::string, uint64_t> by_key_ ABSL_GUARDED_BY(mu_);
  std::set<std::pair<absl::Time, uint64_t>> by_deadline_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<Answer, bool>> ready_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread dispatcher_;
};

// Blocks the calling thread on a long poll: `start(answer)` returns the
// answer now, or nullopt and calls `answer` once, later, on another thread.
template <typename T, typename Start>
T AwaitAnswer(Start start) {
  absl::Mutex mu;
  std::optional<T> result;
  std::optional<T> now = start([&](T answer) {
    absl::MutexLock lock(&mu);
    result = std::move(answer);
  });
  if (now) return *std::move(now);
  absl::MutexLock lock(&mu);
  mu.Await(absl::Condition(
      +[](std::optional<T>* r) { return r->has_value(); }, &result));
  return *std::move(result);
}

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_LONG_POLLS_H_
