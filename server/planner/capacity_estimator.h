// What the server believes each client can do, learnt from the figures of
// its earlier rounds: seconds per training sample, and download and upload
// seconds per byte. Each figure is the median of the client's most recent
// `window` readings, so one noisy round moves nothing, while a board that
// really slowed down (a watchdog pause, a hot board, a busier link) shows
// after about half a window of rounds.
// Thread-safety: not thread-safe (the round coordinator holds its lock).
#ifndef FEDBERRY_SERVER_PLANNER_CAPACITY_ESTIMATOR_H_
#define FEDBERRY_SERVER_PLANNER_CAPACITY_ESTIMATOR_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>

namespace fedberry::server::planner {

// One round of one client, as measured. Absent: not measured this round.
struct CapacityReading {
  std::optional<double> samples_per_second;  // training throughput
  std::optional<double> download_seconds;    // task + model pull
  std::optional<uint64_t> download_bytes;
  std::optional<double> upload_seconds;  // update push, server-measured
  std::optional<uint64_t> upload_bytes;
};

struct CapacityEstimate {
  double seconds_per_sample = 0;
  double download_seconds_per_byte = 0;
  double upload_seconds_per_byte = 0;
  uint64_t download_bytes = 0;  // most recent transfer sizes
  uint64_t upload_bytes = 0;
  int readings = 0;  // rounds behind the compute figure
  // Predicted model download + update upload.
  double transfer_seconds() const {
    return download_seconds_per_byte * static_cast<double>(download_bytes) +
           upload_seconds_per_byte * static_cast<double>(upload_bytes);
  }
};

// A client's recent readings, oldest first: what the estimates are made of,
// and what a server checkpoint keeps so a restarted server plans with them.
struct CapacityHistory {
  std::deque<double> seconds_per_sample;
  std::deque<double> download_per_byte;
  std::deque<double> upload_per_byte;
  uint64_t download_bytes = 0;
  uint64_t upload_bytes = 0;
};

class CapacityEstimator {
 public:
  explicit CapacityEstimator(int window = 3)
      : window_(window < 1 ? 1 : window) {}

  // Adds a client's round. Readings that are absent, zero, negative or
  // non-finite are ignored.
  void Add(const std::string& client_id, const CapacityReading& reading);
  // Nullopt until the client reported a usable throughput.
  std::optional<CapacityEstimate> Get(const std::string& client_id) const;
  void Forget(const std::string& client_id) { clients_.erase(client_id); }

  // Every client's readings, and putting them back (e.g. from a
  // checkpoint): values that Add would ignore are dropped, and each history
  // is cut to the newest `window` readings.
  const std::map<std::string, CapacityHistory>& histories() const {
    return clients_;
  }
  void Restore(std::map<std::string, CapacityHistory> histories);

 private:
  void Push(std::deque<double>& d, double v) const;

  int window_;
  std::map<std::string, CapacityHistory> clients_;
};

// Median of the values (the mean of the middle two for an even count); 0
// for none.
double Median(std::deque<double> values);

}  // namespace fedberry::server::planner

#endif  // FEDBERRY_SERVER_PLANNER_CAPACITY_ESTIMATOR_H_
