#include "server/planner/capacity_estimator.h"

#include <algorithm>
#include <cmath>

namespace fedberry::server::planner {

double Median(std::deque<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

namespace {
bool Usable(const std::optional<double>& v) {
  return v.has_value() && std::isfinite(*v) && *v > 0;
}
}  // namespace

void CapacityEstimator::Push(std::deque<double>& d, double v) const {
  d.push_back(v);
  while (d.size() > static_cast<size_t>(window_)) d.pop_front();
}

void CapacityEstimator::Add(const std::string& client_id,
                            const CapacityReading& r) {
  CapacityHistory& h = clients_[client_id];
  if (Usable(r.samples_per_second)) {
    Push(h.seconds_per_sample, 1.0 / *r.samples_per_second);
  }
  if (Usable(r.download_seconds) && r.download_bytes.value_or(0) > 0) {
    Push(h.download_per_byte,
         *r.download_seconds / static_cast<double>(*r.download_bytes));
    h.download_bytes = *r.download_bytes;
  }
  if (Usable(r.upload_seconds) && r.upload_bytes.value_or(0) > 0) {
    Push(h.upload_per_byte,
         *r.upload_seconds / static_cast<double>(*r.upload_bytes));
    h.upload_bytes = *r.upload_bytes;
  }
}

void CapacityEstimator::Restore(
    std::map<std::string, CapacityHistory> histories) {
  clients_.clear();
  for (auto& [id, h] : histories) {
    CapacityHistory& kept = clients_[id];
    for (auto [from, to] :
         {std::pair{&h.seconds_per_sample, &kept.seconds_per_sample},
          std::pair{&h.download_per_byte, &kept.download_per_byte},
          std::pair{&h.upload_per_byte, &kept.upload_per_byte}}) {
      for (double v : *from) {
        if (Usable(v)) Push(*to, v);
      }
    }
    kept.download_bytes = h.download_bytes;
    kept.upload_bytes = h.upload_bytes;
  }
}

std::optional<CapacityEstimate> CapacityEstimator::Get(
    const std::string& client_id) const {
  auto it = clients_.find(client_id);
  if (it == clients_.end() || it->second.seconds_per_sample.empty()) {
    return std::nullopt;
  }
  const CapacityHistory& h = it->second;
  CapacityEstimate e;
  e.seconds_per_sample = Median(h.seconds_per_sample);
  e.download_seconds_per_byte = Median(h.download_per_byte);
  e.upload_seconds_per_byte = Median(h.upload_per_byte);
  e.download_bytes = h.download_bytes;
  e.upload_bytes = h.upload_bytes;
  e.readings = static_cast<int>(h.seconds_per_sample.size());
  return e;
}

}  // namespace fedberry::server::planner
