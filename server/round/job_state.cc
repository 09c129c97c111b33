#include "server/round/job_state.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fedberry::server {

absl::Status JobState::Expect(const char* what,
                              std::initializer_list<RoundPhase> allowed) const {
  if (std::find(allowed.begin(), allowed.end(), phase_) != allowed.end()) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "job state: cannot ", what, " while ", PhaseName(phase_), " (round ",
      round_, "); only while ",
      absl::StrJoin(allowed, " or ", [](std::string* out, RoundPhase p) {
        out->append(PhaseName(p));
      })));
}

void JobState::Start(std::shared_ptr<const runtime::NamedTensors> global,
                     v1::TrainConfig train, uint32_t total_rounds, bool ended) {
  global_ = std::move(global);
  train_ = std::move(train);
  total_rounds_ = total_rounds;
  if (ended) phase_ = RoundPhase::kDone;
}

absl::Status JobState::Prepare(RoundSource::Opening opening) {
  if (absl::Status s = Expect("prepare a round", {RoundPhase::kWaiting});
      !s.ok()) {
    return s;
  }
  if (round_ != opening.round || global_ != opening.global) attempt_ = 0;
  round_ = opening.round;
  global_ = std::move(opening.global);
  train_ = std::move(opening.train);
  total_rounds_ = opening.total_rounds;
  return absl::OkStatus();
}

absl::Status JobState::Shape(v1::TrainConfig train) {
  if (absl::Status s = Expect("shape a round's config", {RoundPhase::kWaiting});
      !s.ok()) {
    return s;
  }
  train_ = std::move(train);
  return absl::OkStatus();
}

absl::Status JobState::SkipAttempt() {
  if (absl::Status s = Expect("skip an attempt", {RoundPhase::kWaiting});
      !s.ok()) {
    return s;
  }
  ++attempt_;
  work_pending_ = true;
  return absl::OkStatus();
}

absl::Status JobState::Collect(std::unique_ptr<RoundAggregator> sum,
                               int declining) {
  if (absl::Status s = Expect("open a round", {RoundPhase::kWaiting});
      !s.ok()) {
    return s;
  }
  const absl::Time now = clock_.Now();
  aggregate_ = std::move(sum);
  // Pushes refused while no round collected (a full buffer publishing, or
  // between rounds) count in the next one's report.
  const int rejected_between = pending_.rejected;
  pending_ = RoundReport{};
  pending_.rejected = rejected_between;
  pending_.round = round_;
  pending_.declined = declining;
  round_start_ = now;
  history_.Start(now);
  last_update_ = now;
  phase_ = RoundPhase::kCollecting;
  changed_.SignalAll();
  return absl::OkStatus();
}

absl::Status JobState::StartClosing() {
  if (absl::Status s = Expect("close the round", {RoundPhase::kCollecting});
      !s.ok()) {
    return s;
  }
  phase_ = RoundPhase::kClosing;
  return absl::OkStatus();
}

absl::StatusOr<JobState::Closing> JobState::TakeClosing() {
  if (absl::Status s = Expect("take the closing round", {RoundPhase::kClosing});
      !s.ok()) {
    return s;
  }
  if (!AddsDone()) {
    return absl::FailedPreconditionError(
        absl::StrCat("job state: round ", round_, " still has ",
                     adds_in_flight_, " update(s) being added"));
  }
  Closing closing{std::move(aggregate_), std::move(pending_)};
  pending_ = RoundReport{};
  return closing;
}

absl::Status JobState::Commit(
    std::shared_ptr<const runtime::NamedTensors> model,
    const RoundReport& report) {
  if (absl::Status s = Expect("commit a round", {RoundPhase::kClosing});
      !s.ok()) {
    return s;
  }
  if (model) global_ = std::move(model);
  history_.Add(report);  // its per-board entries: clients.jsonl only
  ++round_;
  attempt_ = 0;
  return absl::OkStatus();
}

absl::Status JobState::Reopen() {
  if (absl::Status s =
          Expect("wait for the next round", {RoundPhase::kClosing});
      !s.ok()) {
    return s;
  }
  phase_ = RoundPhase::kWaiting;
  return absl::OkStatus();
}

absl::Status JobState::Abandon() {
  if (absl::Status s = Expect("give the round up", {RoundPhase::kClosing});
      !s.ok()) {
    return s;
  }
  phase_ = shutdown_ ? RoundPhase::kDone : RoundPhase::kWaiting;
  ++attempt_;
  return absl::OkStatus();
}

absl::Status JobState::HoldForBoards() {
  if (absl::Status s =
          Expect("hold a round for the boards", {RoundPhase::kClosing});
      !s.ok()) {
    return s;
  }
  phase_ = RoundPhase::kEvaluating;
  return absl::OkStatus();
}

absl::Status JobState::HoldEvaluationOnly(const RoundReport& report) {
  if (absl::Status s = Expect("evaluate the given model on the boards",
                              {RoundPhase::kWaiting});
      !s.ok()) {
    return s;
  }
  history_.Add(report);
  phase_ = RoundPhase::kEvaluating;
  return absl::OkStatus();
}

absl::Status JobState::EndBoardEvaluation(const RoundReport& report,
                                          bool finished) {
  // kDone: the job stopped while its boards evaluated.
  if (absl::Status s = Expect("end the boards' evaluation",
                              {RoundPhase::kEvaluating, RoundPhase::kDone});
      !s.ok()) {
    return s;
  }
  history_.AddBoardEvaluation(report);
  // The last round's end is announced once it is published: kClosing until
  // then.
  phase_ = shutdown_ || phase_ == RoundPhase::kDone ? RoundPhase::kDone
           : finished                               ? RoundPhase::kClosing
                                                    : RoundPhase::kWaiting;
  return absl::OkStatus();
}

absl::Status JobState::Finish() {
  if (absl::Status s =
          Expect("end the job", {RoundPhase::kClosing, RoundPhase::kDone});
      !s.ok()) {
    return s;
  }
  phase_ = RoundPhase::kDone;
  return absl::OkStatus();
}

void JobState::Stop() {
  shutdown_ = true;
  if (phase_ != RoundPhase::kClosing) phase_ = RoundPhase::kDone;
  changed_.SignalAll();
}

absl::Status JobState::Restore(
    std::shared_ptr<const runtime::NamedTensors> global, uint64_t next_round,
    std::vector<RoundReport> history, bool ended) {
  if (absl::Status s =
          Expect("restore the job", {RoundPhase::kWaiting, RoundPhase::kDone});
      !s.ok()) {
    return s;
  }
  global_ = std::move(global);
  round_ = next_round;
  history_.Restore(std::move(history));
  phase_ = ended ? RoundPhase::kDone : RoundPhase::kWaiting;
  work_pending_ = true;
  return absl::OkStatus();
}

std::optional<absl::Time> JobState::UploadStart(const std::string& id) const {
  auto it = upload_start_.find(id);
  if (it == upload_start_.end()) return std::nullopt;
  return it->second;
}

void JobState::MoveUpload(const std::string& old_id, const std::string& id,
                          bool keep) {
  auto it = upload_start_.find(old_id);
  if (it == upload_start_.end()) return;
  if (keep) upload_start_[id] = it->second;
  upload_start_.erase(old_id);
}

void JobState::NoteUpdate(ClientRoundReport client) {
  last_update_ = clock_.Now();
  pending_.clients.push_back(std::move(client));
}

}  // namespace fedberry::server
