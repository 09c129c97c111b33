#include "server/fleet/refused_joins.h"

#include <algorithm>

#include "base/log_text.h"

namespace fedberry::server {

void RefusedJoins::Refused(const std::string& given_name,
                           const std::string& reason,
                           const std::string& client_version, absl::Time when) {
  if (capacity_ == 0) return;
  // Cut before the lock and before anything is kept: up to 1,024 rows of a
  // board's megabytes would make every page megabytes.
  const std::string name = base::ValidUtf8(given_name, kShownNameBytes);
  absl::MutexLock lock(&mu_);
  if (!rows_.count(name) && rows_.size() >= capacity_) {
    rows_.erase(std::min_element(
        rows_.begin(), rows_.end(), [](const auto& a, const auto& b) {
          return a.second.last_seen < b.second.last_seen;
        }));
  }
  BoardRow& row = rows_[name];
  row.name = name;
  row.state = BoardState::kRefused;
  row.last_seen = when;
  row.client_version = base::ValidUtf8(client_version, kShownVersionBytes);
  row.last_refusal = base::ValidUtf8(reason, kKeptReasonBytes);
}

void RefusedJoins::Joined(const std::string& name) {
  const std::string kept = base::ValidUtf8(name, kShownNameBytes);
  absl::MutexLock lock(&mu_);
  rows_.erase(kept);
}

std::vector<BoardRow> RefusedJoins::Rows() const {
  absl::MutexLock lock(&mu_);
  std::vector<BoardRow> rows;
  rows.reserve(rows_.size());
  for (const auto& [name, row] : rows_) rows.push_back(row);
  return rows;
}

}  // namespace fedberry::server
