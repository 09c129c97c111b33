// The synchronous round in progress, as a value: its task id, the boards
// selected for it and what each did since (reported, refused, declined),
// and the local steps the planner gave each. The coordinator opens one per
// round attempt and asks it who the round still awaits; it holds no lock,
// clock or registry, so every case is a few lines of a test.
// Thread-safety: none; the coordinator's lock guards it.
#ifndef FEDBERRY_SERVER_ROUND_OPEN_ROUND_H_
#define FEDBERRY_SERVER_ROUND_OPEN_ROUND_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "server/round/close_rule.h"

namespace fedberry::server {

class OpenRound {
 public:
  // A new attempt: `members` selected, of which the first `needed` updates
  // close it. Forgets the previous attempt's boards and plan.
  void Start(std::string task_id, const std::vector<std::string>& members,
             size_t needed);
  // No round is open (its boards are forgotten; the task id stays, for
  // late pushes to be told which round they missed).
  void Clear();

  const std::string& task_id() const { return task_id_; }
  const std::set<std::string>& cohort() const { return cohort_; }
  size_t needed() const { return needed_; }
  size_t reported() const { return reported_.size(); }
  size_t declined() const { return declined_.size(); }

  bool Selected(const std::string& id) const { return cohort_.count(id) > 0; }
  bool HasReported(const std::string& id) const {
    return reported_.count(id) > 0;
  }
  // Selected, and neither reported nor refused: the round waits for it.
  bool Awaits(const std::string& id) const;
  // Its update was refused (and it sent no valid one since), not because
  // it declined the round.
  bool UpdateRefused(const std::string& id) const;

  // Claims `id`'s update before it is added (false: already claimed).
  bool Report(const std::string& id) { return reported_.insert(id).second; }
  // The add failed: the board may push again.
  void Unreport(const std::string& id) { reported_.erase(id); }
  // The round no longer waits for `id` (its update was refused, or it
  // declines); false when it did not wait for it.
  bool StopAwaiting(const std::string& id);
  // Of those, `id` declined the round: not a failure.
  void Decline(const std::string& id) { declined_.insert(id); }

  // The planner's work: local steps per board, and boards given none
  // (they leave the cohort).
  void Plan(std::map<std::string, int64_t> steps,
            const std::set<std::string>& idle);
  std::optional<int64_t> PlannedSteps(const std::string& id) const;

  // A board that joined again under `id` takes `old_id`'s place, its
  // update, refusal and plan; returns whether `old_id` was selected and
  // whether it had reported.
  struct Renamed {
    bool selected = false;
    bool reported = false;
  };
  Renamed Rename(const std::string& old_id, const std::string& id);

  // The counts DecideClose reads (selected, paused, released and elapsed
  // are the coordinator's).
  void Count(RoundProgress& progress) const;
  // Selected boards that did not report: what they push after the round
  // closed is late.
  std::set<std::string> Unreported() const;

 private:
  std::string task_id_;
  std::set<std::string> cohort_;
  std::set<std::string> reported_;
  // Selected boards no longer awaited: their update was refused, or they
  // declined. Of those, the ones that declined.
  std::set<std::string> refused_;
  std::set<std::string> declined_;
  size_t needed_ = 0;
  std::map<std::string, int64_t> planned_steps_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_OPEN_ROUND_H_
