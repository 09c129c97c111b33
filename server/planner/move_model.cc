#include "server/planner/move_model.h"

#include <algorithm>
#include <utility>

namespace fedberry::server::planner {

double MakespanTolerance(double makespan) {
  return 1e-9 * std::max(1.0, makespan);
}

uint64_t KeepAtLeast(const MoveRequest& r, size_t i) {
  return std::min(r.clients[i].samples, r.unit);
}

uint64_t SamplesOut(const MoveRequest& r, const std::vector<uint64_t>& x,
                    size_t i) {
  const uint64_t held = r.clients[i].samples;
  return x[i] < held ? held - x[i] : 0;
}

uint64_t SamplesIn(const MoveRequest& r, const std::vector<uint64_t>& x,
                   size_t i) {
  const uint64_t held = r.clients[i].samples;
  return x[i] > held ? x[i] - held : 0;
}

double SenderWait(const MoveRequest& r, const std::vector<uint64_t>& x) {
  const double bytes = static_cast<double>(r.bytes_per_sample);
  double wait = 0;
  for (size_t j = 0; j < r.clients.size() && j < x.size(); ++j) {
    if (const uint64_t out = SamplesOut(r, x, j); out > 0) {
      wait = std::max(wait, static_cast<double>(out) * bytes *
                                r.clients[j].upload_seconds_per_byte);
    }
  }
  return wait;
}

double ClientSeconds(const MoveRequest& r, const std::vector<uint64_t>& x,
                     size_t i, double wait) {
  const MoveClient& c = r.clients[i];
  if (x[i] == 0 && c.samples == 0) return 0;  // takes no part
  const double bytes = static_cast<double>(r.bytes_per_sample);
  const double train = static_cast<double>(r.epochs) *
                       static_cast<double>(x[i]) * c.seconds_per_sample;
  if (const uint64_t in = SamplesIn(r, x, i); in > 0) {
    return c.fixed_seconds + wait +
           static_cast<double>(in) * bytes * c.download_seconds_per_byte +
           train;
  }
  return c.fixed_seconds +
         static_cast<double>(SamplesOut(r, x, i)) * bytes *
             c.upload_seconds_per_byte +
         train;
}

std::vector<uint64_t> HeldCounts(const MoveRequest& r) {
  std::vector<uint64_t> x;
  x.reserve(r.clients.size());
  for (const MoveClient& c : r.clients) x.push_back(c.samples);
  return x;
}

Span Measure(const MoveRequest& r, const std::vector<uint64_t>& x,
             std::vector<double>& times) {
  const size_t n = r.clients.size();
  const double wait = SenderWait(r, x);
  times.resize(n);
  Span s;
  for (size_t i = 0; i < n; ++i) {
    times[i] = ClientSeconds(r, x, i, wait);
    s.makespan = std::max(s.makespan, times[i]);
  }
  const double tol = MakespanTolerance(s.makespan);
  for (size_t i = 0; i < n; ++i) s.at_makespan += times[i] >= s.makespan - tol;
  return s;
}

void MoveBackUnneeded(const MoveRequest& r, std::vector<uint64_t>& x) {
  const size_t n = r.clients.size();
  const uint64_t unit = r.unit;
  std::vector<double> times;
  const double limit = Measure(r, x, times).makespan;
  for (bool moved = true; moved;) {
    moved = false;
    for (size_t s = 0; s < n; ++s) {
      for (size_t d = 0; d < n; ++d) {
        while (SamplesOut(r, x, s) >= unit && SamplesIn(r, x, d) >= unit) {
          x[s] += unit;
          x[d] -= unit;
          if (Measure(r, x, times).makespan > limit) {
            x[s] -= unit;
            x[d] += unit;
            break;
          }
          moved = true;
        }
      }
    }
  }
}

uint64_t SamplesMoved(const MovePlan& plan) {
  uint64_t moved = 0;
  for (const DataMove& m : plan.moves) moved += m.samples;
  return moved;
}

MovePlan MakeMovePlan(const MoveRequest& r, std::vector<uint64_t> x,
                      std::string planner) {
  MovePlan plan;
  plan.samples = std::move(x);
  plan.moves = PairMoves(r, plan.samples);
  plan.makespan = MoveMakespan(r, plan.samples);
  plan.planner = std::move(planner);
  return plan;
}

}  // namespace fedberry::server::planner
