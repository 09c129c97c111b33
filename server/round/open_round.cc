#include "server/round/open_round.h"

#include <utility>

namespace fedberry::server {

void OpenRound::Start(std::string task_id,
                      const std::vector<std::string>& members, size_t needed) {
  Clear();
  task_id_ = std::move(task_id);
  cohort_ = std::set<std::string>(members.begin(), members.end());
  needed_ = needed;
  planned_steps_.clear();
}

void OpenRound::Clear() {
  cohort_.clear();
  reported_.clear();
  refused_.clear();
  declined_.clear();
}

bool OpenRound::Awaits(const std::string& id) const {
  return Selected(id) && !reported_.count(id) && !refused_.count(id);
}

bool OpenRound::UpdateRefused(const std::string& id) const {
  return Selected(id) && refused_.count(id) && !declined_.count(id);
}

bool OpenRound::StopAwaiting(const std::string& id) {
  if (!Selected(id) || reported_.count(id)) return false;
  return refused_.insert(id).second;
}

void OpenRound::Plan(std::map<std::string, int64_t> steps,
                     const std::set<std::string>& idle) {
  planned_steps_ = std::move(steps);
  for (const std::string& id : idle) cohort_.erase(id);
}

std::optional<int64_t> OpenRound::PlannedSteps(const std::string& id) const {
  auto it = planned_steps_.find(id);
  if (it == planned_steps_.end()) return std::nullopt;
  return it->second;
}

OpenRound::Renamed OpenRound::Rename(const std::string& old_id,
                                     const std::string& id) {
  Renamed was;
  was.selected = cohort_.erase(old_id) > 0;
  was.reported = reported_.erase(old_id) > 0;
  // A board whose update was refused stays refused under its new id.
  const bool refused = refused_.erase(old_id) > 0;
  const bool declined = declined_.erase(old_id) > 0;
  if (was.selected) cohort_.insert(id);
  if (was.reported) reported_.insert(id);
  if (refused) refused_.insert(id);
  if (declined) declined_.insert(id);
  if (auto p = planned_steps_.find(old_id); p != planned_steps_.end()) {
    if (was.selected) planned_steps_[id] = p->second;
    planned_steps_.erase(p);
  }
  return was;
}

void OpenRound::Count(RoundProgress& progress) const {
  progress.cohort = static_cast<int>(cohort_.size());
  // A refused board that then sent a valid update is awaited again (its
  // update counts): counting it as refused too would close the round one
  // awaited board short.
  progress.refused = 0;
  for (const auto& id : refused_) {
    progress.refused += Selected(id) && !reported_.count(id) ? 1 : 0;
  }
  progress.reported = static_cast<int>(reported_.size());
  progress.needed = static_cast<int>(needed_);
}

std::set<std::string> OpenRound::Unreported() const {
  std::set<std::string> ids;
  for (const auto& id : cohort_) {
    if (!reported_.count(id)) ids.insert(id);
  }
  return ids;
}

}  // namespace fedberry::server
