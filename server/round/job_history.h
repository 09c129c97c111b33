// The job's closed rounds as every checkpoint keeps them (their summaries;
// per-board entries go to the report sink only, so the history grows with
// rounds, not with boards x rounds), the evaluations that report after
// their round closed, and the job's elapsed time across restarts.
// Thread-safety: not thread-safe; the coordinator keeps it under its lock.
#ifndef FEDBERRY_SERVER_ROUND_JOB_HISTORY_H_
#define FEDBERRY_SERVER_ROUND_JOB_HISTORY_H_

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "server/round/round_types.h"

namespace fedberry::server {

class JobHistory {
 public:
  // This server's first round opens at `now` (later calls keep the first).
  void Start(absl::Time now);
  // The job's seconds at `now`: this server's, plus those before its
  // restart (RoundReport::elapsed_seconds).
  double ElapsedSeconds(absl::Time now) const;

  // A closed round's summary (its per-board entries left out).
  void Add(const RoundReport& report);
  // An overlapped evaluation's figures, for the round they measured.
  void AddEvaluation(const RoundReport& report);
  // The boards' evaluation of a round, without its per-board figures.
  void AddBoardEvaluation(const RoundReport& report);

  const std::vector<RoundReport>& reports() const { return reports_; }
  // A checkpoint's history; the job's clock goes on from its last round.
  void Restore(std::vector<RoundReport> reports);

 private:
  // The entry of `round`; null when it has none.
  RoundReport* Of(uint64_t round);

  std::vector<RoundReport> reports_;
  absl::Time start_ = absl::InfiniteFuture();
  double seconds_before_ = 0;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_JOB_HISTORY_H_
