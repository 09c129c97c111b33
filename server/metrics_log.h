// Writes a job's figures into its output folder as JSON lines:
// rounds.jsonl (one line per round) and clients.jsonl (one line per client
// per round, with the board's resource readings, and its device facts on a
// client's first line; a board's evaluation of a round's model is a line
// {"event": "evaluation", "round", "client", "samples", "loss",
// "accuracy" or "rmse"/"mae"}). Readings a board could not take are left out of the
// line, never written as 0. Lines are flushed as they are written, so a crashed
// job keeps every finished round. Thread-safety: not thread-safe; the round
// driver calls it.
#ifndef FEDBERRY_SERVER_METRICS_LOG_H_
#define FEDBERRY_SERVER_METRICS_LOG_H_

#include <fstream>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/round/round_types.h"

namespace fedberry::server {

class MetricsLog {
 public:
  // Opens the files in `dir` (creating it), first rewriting them to hold
  // exactly the rounds of `history` (empty for a new job; a resumed job's
  // rounds so far, as summaries): their lines are kept from the files (the
  // per-board lines are only there), lines of later rounds (redone after a
  // restart) are dropped, a round missing from rounds.jsonl is written from
  // its summary, and the plan_refused lines stay.
  // InvalidArgument when the folder cannot be created or written.
  static absl::StatusOr<std::unique_ptr<MetricsLog>> Open(
      const std::string& dir, const std::vector<RoundReport>& history = {});

  void Write(const RoundReport& report);
  // A board that could not join because its data does not fit the plan:
  // a clients.jsonl line {"event": "plan_refused", "client", "reason"}.
  void WriteRefusedBoard(const std::string& name, const std::string& reason);

 private:
  // `described`: client ids whose device facts are already written.
  static void Format(const RoundReport& report, std::ostream& rounds,
                     std::ostream& clients, std::set<std::string>& described);

  absl::Mutex mu_;  // the driver thread writes rounds, handlers refusals
  std::ofstream rounds_;
  std::ofstream clients_;
  std::set<std::string> described_;  // client ids whose device was written
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_METRICS_LOG_H_
