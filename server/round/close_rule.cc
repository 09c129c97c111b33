#include "server/round/close_rule.h"

#include <algorithm>
#include <cmath>

namespace fedberry::server {

CloseDecision DecideClose(const RoundProgress& p, const CloseOptions& o) {
  CloseDecision d;
  d.quorum = static_cast<int>(std::max(1.0, std::ceil(o.quorum * p.selected)));
  d.late = p.elapsed >= o.deadline;
  // Boards whose update was refused are not awaited.
  const int awaited = p.cohort - p.refused;
  d.complete = p.reported > 0 && p.reported >= std::min(awaited, p.needed);
  if (d.complete) {
    d.action = CloseAction::kClose;
    d.cut_off = std::max(0, awaited - p.reported);
  } else if (d.late && p.reported < d.quorum && p.paused > 0 &&
             p.elapsed < o.deadline + o.paused_grace) {
    d.action = CloseAction::kGrace;
  } else if (d.late || (p.cohort == 0 && p.reported == 0)) {
    d.action =
        p.reported >= d.quorum ? CloseAction::kClose : CloseAction::kAbandon;
  }
  return d;
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
