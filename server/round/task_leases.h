// Asynchronous rounds' training slots (--max_concurrency) as leases: a
// board holds a slot while it shows it is training its task, not merely
// while it is connected. Boards that kept polling and never pushed held
// every slot, and an honest board waited without end.
//
// A lease ends when its board was not heard about its task (a heartbeat, a
// pull of the task's model, a push: polls do not count) for `silence`, or
// when it has run past the deadline the fleet's own task times give: 4 x
// the median time from lease to accepted update of the last 32 tasks, at
// least kMinDeadline; none before 3 tasks finished. A board whose lease
// ended gets no new one for as long as the lease ran (its bench), so the
// slot goes to a board that asks meanwhile.
//
// Thread-compatible: the round coordinator's lock guards it.
#ifndef FEDBERRY_SERVER_ROUND_TASK_LEASES_H_
#define FEDBERRY_SERVER_ROUND_TASK_LEASES_H_

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace fedberry::server {

class TaskLeases {
 public:
  static constexpr absl::Duration kMinDeadline = absl::Seconds(30);
  static constexpr int kObserved = 32;    // task times the deadline uses
  static constexpr int kMinObserved = 3;  // before this many: no deadline

  explicit TaskLeases(absl::Duration silence) : silence_(silence) {}

  // Board `id` takes a slot at `now`.
  void Lease(const std::string& id, absl::Time now);
  // Board `id` was heard about its task at `heard`.
  void Heard(const std::string& id, absl::Time heard);
  // Its update was accepted at `now`: the slot is free and the task's time
  // is observed.
  void Finished(const std::string& id, absl::Time now);
  // Its slot is free for another reason (refused, declined, dropped).
  void Release(const std::string& id) { leases_.erase(id); }
  void Rename(const std::string& old_id, const std::string& id);
  // Forgets the leases of boards not in `training` (their tasks went
  // another way: a stale task dropped when a version opened).
  void RetainOnly(const std::vector<std::string>& training);

  // The leases that ended by `now` (they are released and their boards
  // benched), with why for the log.
  struct Ended {
    std::string id;
    std::string why;
  };
  std::vector<Ended> Expire(absl::Time now);
  // Whether board `id` sits out after a lease that ended.
  bool Benched(const std::string& id, absl::Time now) const;

  // The deadline the fleet's task times give; nullopt while fewer than
  // kMinObserved tasks finished.
  std::optional<absl::Duration> Deadline() const;

 private:
  struct Held {
    absl::Time leased;
    absl::Time heard;
  };

  const absl::Duration silence_;
  std::map<std::string, Held> leases_;
  std::map<std::string, absl::Time> benched_until_;
  std::deque<absl::Duration> observed_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_TASK_LEASES_H_
