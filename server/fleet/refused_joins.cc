#include "server/fleet/refused_joins.h"

#include <algorithm>

namespace fedberry::server {

void RefusedJoins::Refused(const std::string& name, const std::string& reason,
                           const std::string& client_version, absl::Time when) {
  if (capacity_ == 0) return;
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
  row.client_version = client_version;
  row.last_refusal = reason;
}

void RefusedJoins::Joined(const std::string& name) {
  absl::MutexLock lock(&mu_);
  rows_.erase(name);
}

std::vector<BoardRow> RefusedJoins::Rows() const {
  absl::MutexLock lock(&mu_);
  std::vector<BoardRow> rows;
  rows.reserve(rows_.size());
  for (const auto& [name, row] : rows_) rows.push_back(row);
  return rows;
}

}  // namespace fedberry::server
