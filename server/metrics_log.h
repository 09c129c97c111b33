// Writes a job's figures into its output folder as JSON lines:
// rounds.jsonl (one line per round) and clients.jsonl (one line per client
// per round). Lines are flushed as they are written, so a crashed job keeps
// every finished round.
// Thread-safety: not thread-safe; the round driver calls it.
#ifndef FEDBERRY_SERVER_METRICS_LOG_H_
#define FEDBERRY_SERVER_METRICS_LOG_H_

#include <fstream>
#include <string>

#include "absl/status/statusor.h"
#include "server/round_coordinator.h"

namespace fedberry::server {

class MetricsLog {
 public:
  // Opens the files in `dir` (creating it), first rewriting them to hold
  // exactly `history` (empty for a new job; a resumed job's rounds so far).
  // InvalidArgument when the folder cannot be created or written.
  static absl::StatusOr<std::unique_ptr<MetricsLog>> Open(
      const std::string& dir, const std::vector<RoundReport>& history = {});

  void Write(const RoundReport& report);

 private:
  static void Format(const RoundReport& report, std::ostream& rounds,
                     std::ostream& clients);

  std::ofstream rounds_;
  std::ofstream clients_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_METRICS_LOG_H_
