// When an open round closes: a pure function of the round's progress, the
// job's close options and the time since the round opened, with no lock,
// no clock and no threads, so every case is a row of a table test.
//
//   wait     the round goes on;
//   grace    past its deadline and below its quorum while selected boards
//            say they are paused under memory pressure: alive, so the round
//            waits up to paused_grace longer;
//   close    aggregate what was reported;
//   abandon  give the round up (it is opened again).
//
// A round closes as soon as every board it still awaits reported (or, with
// over-selection, as soon as it holds the updates it needs); at its
// deadline it closes with a quorum of its cohort, else it is abandoned.
// It never closes on fewer updates than its strategy aggregates
// (min_updates: Krum's n >= 2f + 3): when no more can come it is abandoned
// at once, saying so, rather than published unchanged as if done.
#ifndef FEDBERRY_SERVER_ROUND_CLOSE_RULE_H_
#define FEDBERRY_SERVER_ROUND_CLOSE_RULE_H_

#include "absl/time/time.h"

namespace fedberry::server {

// Where an open round stands, counted by the coordinator.
struct RoundProgress {
  int selected = 0;  // boards selected when the round opened
  int cohort = 0;    // of those, still registered now (a retired id leaves)
  int refused = 0;   // of the cohort, boards whose update was refused and
                     // that did not send a valid one since
  int reported = 0;  // accepted updates
  int needed = 0;    // updates that close the round (over-selection)
  // Cohort boards yet to report that say they are paused under memory
  // pressure (heard within liveness), and of those, ones that released
  // their memory and await a restart.
  int paused = 0;
  int released = 0;
  absl::Duration elapsed;  // since the round opened
  // Cohort boards that neither reported nor were refused: the stragglers,
  // if the round closes at its deadline.
  int outstanding = 0;
};

struct CloseOptions {
  double quorum = 0.5;  // share of the selected boards that closes a round
                        // at its deadline
  absl::Duration deadline = absl::Minutes(10);
  absl::Duration paused_grace = absl::ZeroDuration();
  int min_updates = 1;  // the strategy's MinUpdates()
};

enum class CloseAction { kWait, kGrace, kClose, kAbandon };

struct CloseDecision {
  CloseAction action = CloseAction::kWait;
  int quorum = 1;  // updates that make a quorum (at least 1)
  // The deadline passed (a round it closes counts stragglers).
  bool late = false;
  // Every awaited board reported, or the updates it needed did: it closes
  // on them, deadline or not.
  bool complete = false;
  // Then: awaited boards still training (over-selection), whose updates
  // will be refused as late.
  int cut_off = 0;
  // Why an abandoned round was given up, for its log line.
  const char* why = "";
};

CloseDecision DecideClose(const RoundProgress& progress,
                          const CloseOptions& options);

// Updates that make a quorum of `selected` boards: at least 1.
int QuorumOf(const CloseOptions& options, int selected);

const char* CloseActionName(CloseAction action);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_CLOSE_RULE_H_
