// Bounds the streams a server serves: how many run at once, how many one
// caller may hold, how long one may last and how long it may make no
// progress. A client that opens a push and then stalls, or a reader that
// announces a zero receive window and keeps answering pings, would
// otherwise hold its place and buffers until it chose to let go: past
// `max_stall` without a message moved, or `max_duration` in all, its call
// is cancelled (which ends its pending read or write) and the cut-off is
// logged with the caller. A stream beyond `max_streams` is refused at once
// with ResourceExhausted, which clients retry with backoff, or, admitted
// through AdmitInTurn, waits its turn: a model pull, which every board
// makes as a round opens, and an update push. Waiting costs the caller no
// thread, and spares the server thousands of boards asking again every
// half second (at 10,000 boards of a 4.8 MB model that storm of refusals
// held rounds to about one update a second).
// Long polls are not streams and are bounded by their own budget.
// Thread-safe.
#ifndef FEDBERRY_SERVER_STREAM_LIMITER_H_
#define FEDBERRY_SERVER_STREAM_LIMITER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"

namespace fedberry::server {

class StreamLimiter {
 public:
  // Zero or negative limits: no limit.
  struct Options {
    int max_streams = 0;
    // Streams that may wait in AdmitInTurn (0: none wait).
    int max_waiting = 0;
    // Streams, running or waiting, that one caller may hold.
    int max_per_caller = 0;
    absl::Duration max_duration = absl::ZeroDuration();
    // How long a running stream may go without Ticket::Progress().
    absl::Duration max_stall = absl::ZeroDuration();
    // What is limited, and by which flags, for refusals and the log.
    std::string kind = "model and sample streams";
    std::string flag = "--max_streams";
  };

  // `clock` must outlive this object.
  explicit StreamLimiter(Options options, Clock& clock = Clock::Real());

  // A stream admitted: it holds its place until destroyed.
  class Ticket {
   public:
    Ticket(Ticket&& other) noexcept;
    Ticket& operator=(Ticket&&) = delete;
    ~Ticket();

    // The stream moved a message: its stall clock starts again.
    void Progress();

   private:
    friend class StreamLimiter;
    Ticket(StreamLimiter* limiter, uint64_t id) : limiter_(limiter), id_(id) {}
    StreamLimiter* limiter_;
    uint64_t id_;
  };

  // Admits a stream named `what` (for the log) for `caller` (whom the
  // per-caller bound counts; empty: nobody in particular), or
  // ResourceExhausted when max_streams run already or the caller holds its
  // share. `cancel` ends the call (ServerContext::TryCancel); it is called
  // at most once, from CancelOverdue().
  absl::StatusOr<Ticket> Admit(std::string what, std::string caller,
                               std::function<void()> cancel);

  // Admits a stream at once when a place is free (`ticket` set), or queues
  // it (`waiting` set, an id for Withdraw): `admitted` is then called with
  // its ticket when a place frees up, first come first served, on the
  // thread that freed it and outside the limiter's lock. ResourceExhausted
  // when max_waiting wait already or the caller holds its share.
  struct Admission {
    std::optional<Ticket> ticket;
    uint64_t waiting = 0;
  };
  absl::StatusOr<Admission> AdmitInTurn(std::string what, std::string caller,
                                        std::function<void()> cancel,
                                        std::function<void(Ticket)> admitted);

  // Takes a waiting stream out of the queue (its caller went away). False
  // when it is no longer waiting: `admitted` has been or is being called.
  bool Withdraw(uint64_t waiting);

  // Cancels, and logs, every stream that has run longer than max_duration
  // or made no progress for max_stall; returns how many. Called
  // periodically by the server.
  int CancelOverdue();

  int active() const;
  int waiting() const;
  // Streams cancelled by CancelOverdue, and streams refused because their
  // caller held its share, since the start.
  struct CutOffs {
    int64_t stalled = 0;
    int64_t overdue = 0;
    int64_t caller_share = 0;
  };
  CutOffs cut_offs() const;

 private:
  struct Stream {
    std::string what;
    std::string caller;
    absl::Time started;
    absl::Time progressed;
    std::function<void()> cancel;
    bool cancelled = false;
  };
  struct Waiter {
    std::string what;
    std::string caller;
    std::function<void()> cancel;
    std::function<void(Ticket)> admitted;
  };
  bool Full() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Refusal() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The caller's share is held: the refusal (logged at most every few
  // seconds), else OK.
  absl::Status CheckCallerShare(const std::string& caller,
                                const std::string& what)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  uint64_t Enter(std::string what, std::string caller,
                 std::function<void()> cancel)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Hold(const std::string& caller) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void LetGo(const std::string& caller) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Why `s` is overdue at `now` (`stalled`: for want of progress), or
  // empty.
  std::string OverdueReason(const Stream& s, absl::Time now,
                            bool* stalled) const;
  void Release(uint64_t id);
  void Progress(uint64_t id);

  const Options options_;
  Clock& clock_;
  mutable absl::Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, Stream> streams_ ABSL_GUARDED_BY(mu_);
  // By id, which grows: the first is the one waiting longest. Never empty
  // unless `streams_` is full.
  std::map<uint64_t, Waiter> waiters_ ABSL_GUARDED_BY(mu_);
  // Streams, running or waiting, by caller.
  std::map<std::string, int> held_ ABSL_GUARDED_BY(mu_);
  CutOffs cut_offs_ ABSL_GUARDED_BY(mu_);
  absl::Time last_share_log_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

// One call's turn in a StreamLimiter's queue (AdmitInTurn), for a reactor:
// its place is recorded before another thread can admit it, its ticket is
// held (and its progress told) until the turn is destroyed, and a caller
// that goes away leaves the queue. Thread-safe.
class StreamTurn {
 public:
  // Asks `limiter` (must outlive the turn) for a place. True: admitted now;
  // false: queued, and `admitted` runs once it is admitted (on the thread
  // that freed the place); ResourceExhausted when refused.
  absl::StatusOr<bool> Request(StreamLimiter& limiter, std::string what,
                               std::string caller, std::function<void()> cancel,
                               std::function<void()> admitted);
  // The stream moved a message (StreamLimiter::Ticket::Progress).
  void Progress();
  // Its caller went away: true when it was still queued and has left the
  // queue (`admitted` will not run), false when it was admitted already.
  bool Withdraw();

 private:
  absl::Mutex mu_;
  StreamLimiter* limiter_ ABSL_GUARDED_BY(mu_) = nullptr;
  uint64_t waiting_ ABSL_GUARDED_BY(mu_) = 0;  // its place in the queue
  std::optional<StreamLimiter::Ticket> ticket_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_STREAM_LIMITER_H_
