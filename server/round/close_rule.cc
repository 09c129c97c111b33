#include "server/round/close_rule.h"

#include <algorithm>
#include <cmath>

namespace fedberry::server {

CloseDecision DecideClose(const RoundProgress& p, const CloseOptions& o) {
  CloseDecision d;
  d.quorum = QuorumOf(o, p.selected);
  d.late = p.elapsed >= o.deadline;
  const int least = std::max(d.quorum, o.min_updates);
  // Boards whose update was refused are not awaited (until a valid update
  // of theirs counts: then they are not in `refused`).
  const int awaited = p.cohort - p.refused;
  const int enough = std::max(p.needed, o.min_updates);
  d.complete = p.reported > 0 && p.reported >= std::min(awaited, enough) &&
               p.reported >= o.min_updates;
  if (d.complete) {
    d.action = CloseAction::kClose;
    d.cut_off = std::max(0, awaited - p.reported);
  } else if (p.reported > 0 && p.reported >= awaited) {
    // All that can come came, and the strategy needs more: waiting for
    // the deadline would only delay the round's retry.
    d.action = CloseAction::kAbandon;
    d.why = "no more updates can come and the strategy needs more";
  } else if (p.cohort == 0 && p.reported == 0) {
    d.action = CloseAction::kAbandon;
    d.why = "every selected board left";
  } else if (d.late && p.reported < least && p.paused > 0 &&
             p.elapsed < o.deadline + o.paused_grace) {
    d.action = CloseAction::kGrace;
  } else if (d.late) {
    d.action =
        p.reported >= least ? CloseAction::kClose : CloseAction::kAbandon;
    d.why = p.reported < o.min_updates
                ? "deadline passed with fewer updates than the strategy needs"
                : "deadline passed below the quorum";
  }
  return d;
}

int QuorumOf(const CloseOptions& options, int selected) {
  return static_cast<int>(
      std::max(1.0, std::ceil(options.quorum * static_cast<double>(selected))));
}

const char* CloseActionName(CloseAction action) {
  switch (action) {
    case CloseAction::kWait:
      return "wait";
    case CloseAction::kGrace:
      return "grace";
    case CloseAction::kClose:
      return "close";
    case CloseAction::kAbandon:
      return "abandon";
  }
  return "?";
}

}  // namespace fedberry::server
