#include "server/round/task_leases.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"

namespace fedberry::server {

void TaskLeases::Lease(const std::string& id, absl::Time now) {
  leases_[id] = Held{now, now};
  benched_until_.erase(id);
}

void TaskLeases::Heard(const std::string& id, absl::Time heard) {
  if (auto it = leases_.find(id); it != leases_.end()) {
    it->second.heard = std::max(it->second.heard, heard);
  }
}

void TaskLeases::Finished(const std::string& id, absl::Time now) {
  auto it = leases_.find(id);
  if (it == leases_.end()) return;
  observed_.push_back(now - it->second.leased);
  if (observed_.size() > static_cast<size_t>(kObserved)) observed_.pop_front();
  leases_.erase(it);
}

void TaskLeases::Rename(const std::string& old_id, const std::string& id) {
  if (auto it = leases_.find(old_id); it != leases_.end()) {
    leases_[id] = it->second;
    leases_.erase(it);
  }
  if (auto it = benched_until_.find(old_id); it != benched_until_.end()) {
    benched_until_[id] = it->second;
    benched_until_.erase(it);
  }
}

void TaskLeases::RetainOnly(const std::vector<std::string>& training) {
  const std::set<std::string> keep(training.begin(), training.end());
  for (auto it = leases_.begin(); it != leases_.end();) {
    it = keep.count(it->first) ? std::next(it) : leases_.erase(it);
  }
}

std::optional<absl::Duration> TaskLeases::Deadline() const {
  if (observed_.size() < static_cast<size_t>(kMinObserved)) {
    return std::nullopt;
  }
  std::vector<absl::Duration> times(observed_.begin(), observed_.end());
  auto middle = times.begin() + times.size() / 2;
  std::nth_element(times.begin(), middle, times.end());
  return std::max(kMinDeadline, 4 * *middle);
}

std::vector<TaskLeases::Ended> TaskLeases::Expire(absl::Time now) {
  std::vector<Ended> ended;
  const std::optional<absl::Duration> deadline = Deadline();
  for (auto it = leases_.begin(); it != leases_.end();) {
    const Held& held = it->second;
    std::string why;
    if (now - held.heard > silence_) {
      why = absl::StrCat("not heard about its task for ",
                         absl::FormatDuration(now - held.heard));
    } else if (deadline && now - held.leased > *deadline) {
      why = absl::StrCat("still training after ",
                         absl::FormatDuration(now - held.leased),
                         ", past the fleet's task deadline of ",
                         absl::FormatDuration(*deadline));
    }
    if (why.empty()) {
      ++it;
      continue;
    }
    benched_until_[it->first] = now + (now - held.leased);
    ended.push_back({it->first, std::move(why)});
    it = leases_.erase(it);
  }
  for (auto it = benched_until_.begin(); it != benched_until_.end();) {
    it = it->second <= now ? benched_until_.erase(it) : std::next(it);
  }
  return ended;
}

bool TaskLeases::Benched(const std::string& id, absl::Time now) const {
  auto it = benched_until_.find(id);
  return it != benched_until_.end() && now < it->second;
}

}  // namespace fedberry::server
