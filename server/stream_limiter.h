// Bounds the model and sample streams a server serves: how many run at once
// and how long one may last. A client that opens a push and then stalls (or
// a reader that stops reading) would otherwise hold its buffers until it
// chose to let go; past `max_duration` its call is cancelled, which ends
// its pending read or write. A stream beyond `max_streams` is
// refused at once with ResourceExhausted, which clients retry with backoff,
// or, admitted through AdmitInTurn, waits its turn: a model pull, which
// every board makes as a round opens. Waiting costs the caller no thread,
// and spares the server thousands of boards asking again every half second
// (at 10,000 boards of a 4.8 MB model that storm of refusals held rounds to
// about one update a second).
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
#include "runtime/clock.h"

namespace fedberry::server {

class StreamLimiter {
 public:
  // `clock` must outlive this object. Zero or negative limits: no limit.
  // `kind` and `flag` name what is limited, and by which flag, in the
  // refusal.
  // `max_waiting` bounds the streams that wait in AdmitInTurn (0: none
  // wait).
  StreamLimiter(int max_streams, absl::Duration max_duration,
                Clock& clock = Clock::Real(),
                std::string kind = "model and sample streams",
                std::string flag = "--max_streams", int max_waiting = 0);

  // A stream admitted: it holds its place until destroyed.
  class Ticket {
   public:
    Ticket(Ticket&& other) noexcept;
    Ticket& operator=(Ticket&&) = delete;
    ~Ticket();

   private:
    friend class StreamLimiter;
    Ticket(StreamLimiter* limiter, uint64_t id) : limiter_(limiter), id_(id) {}
    StreamLimiter* limiter_;
    uint64_t id_;
  };

  // Admits a stream named `what` (for the log), or ResourceExhausted when
  // max_streams run already. `cancel` ends the call (ServerContext::
  // TryCancel); it is called at most once, from CancelOverdue().
  absl::StatusOr<Ticket> Admit(std::string what, std::function<void()> cancel);

  // Admits a stream at once when a place is free (`ticket` set), or queues
  // it (`waiting` set, an id for Withdraw): `admitted` is then called with
  // its ticket when a place frees up, first come first served, on the
  // thread that freed it and outside the limiter's lock. ResourceExhausted
  // when max_waiting wait already.
  struct Admission {
    std::optional<Ticket> ticket;
    uint64_t waiting = 0;
  };
  absl::StatusOr<Admission> AdmitInTurn(std::string what,
                                        std::function<void()> cancel,
                                        std::function<void(Ticket)> admitted);

  // Takes a waiting stream out of the queue (its caller went away). False
  // when it is no longer waiting: `admitted` has been or is being called.
  bool Withdraw(uint64_t waiting);

  // Cancels every stream that has run longer than max_duration; returns
  // how many. Called periodically by the server.
  int CancelOverdue();

  int active() const;
  int waiting() const;

 private:
  struct Stream {
    std::string what;
    absl::Time started;
    std::function<void()> cancel;
    bool cancelled = false;
  };
  struct Waiter {
    std::string what;
    std::function<void()> cancel;
    std::function<void(Ticket)> admitted;
  };
  bool Full() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Refusal() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  uint64_t Enter(std::string what, std::function<void()> cancel)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Release(uint64_t id);

  const int max_streams_;
  const int max_waiting_;
  const absl::Duration max_duration_;
  const std::string kind_;
  const std::string flag_;
  Clock& clock_;
  mutable absl::Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, Stream> streams_ ABSL_GUARDED_BY(mu_);
  // By id, which grows: the first is the one waiting longest. Never empty
  // unless `streams_` is full.
  std::map<uint64_t, Waiter> waiters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_STREAM_LIMITER_H_
