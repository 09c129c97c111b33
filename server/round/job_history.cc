#include "server/round/job_history.h"

#include <utility>

namespace fedberry::server {

void JobHistory::Start(absl::Time now) {
  if (start_ == absl::InfiniteFuture()) start_ = now;
}

double JobHistory::ElapsedSeconds(absl::Time now) const {
  return seconds_before_ + absl::ToDoubleSeconds(now - start_);
}

void JobHistory::Add(const RoundReport& report) {
  reports_.push_back(report);
  reports_.back().clients.clear();
}

void JobHistory::AddEvaluation(const RoundReport& report) {
  if (RoundReport* r = Of(report.round); r != nullptr) {
    r->eval = report.eval;
    r->eval_seconds = report.eval_seconds;
    r->eval_overlapped = true;
  }
}

void JobHistory::AddBoardEvaluation(const RoundReport& report) {
  if (RoundReport* r = Of(report.round); r != nullptr) {
    r->board_eval = report.board_eval;
    if (r->board_eval) r->board_eval->per_board.clear();  // in the report only
  }
}

void JobHistory::Restore(std::vector<RoundReport> reports) {
  reports_ = std::move(reports);
  seconds_before_ = reports_.empty() ? 0 : reports_.back().elapsed_seconds;
}

RoundReport* JobHistory::Of(uint64_t round) {
  // The newest first: a round's entry is near the end.
  for (auto it = reports_.rbegin(); it != reports_.rend(); ++it) {
    if (it->round == round) return &*it;
  }
  return nullptr;
}

}  // namespace fedberry::server
