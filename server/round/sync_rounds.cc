#include "server/round/sync_rounds.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/log_text.h"
#include "base/status_macros.h"
#include "proto/wire.h"
#include "server/round/round_planning.h"

namespace fedberry::server {

SyncRounds::SyncRounds(RoundContext context, SyncRoundOptions options,
                       std::shared_ptr<const CohortSelection> selection)
    : ctx_(context),
      options_(std::move(options)),
      selection_(std::move(selection)) {}

Cohort SyncRounds::Draw(std::vector<std::string> available,
                        std::mt19937_64& rng) const {
  std::vector<uint32_t> boards;  // a site gateway's; 0 for a board
  boards.reserve(available.size());
  for (const std::string& id : available) {
    boards.push_back(ctx_.job.clients().At(id).boards);
  }
  Cohort cohort = selection_->Choose(std::move(available), boards, rng);
  cohort.too_few =
      cohort.members.size() <
      static_cast<size_t>(std::max(1, options_.min_clients_per_round));
  return cohort;
}

void SyncRounds::Open(const Cohort& cohort, std::mt19937_64& rng, int available,
                      RoundAggregator& sum) {
  const JobState& job = ctx_.job;
  figures_ = RoundReport{};
  open_.Start(absl::StrFormat("r%d-%08x", job.round(),
                              static_cast<uint32_t>(rng() & 0xffffffff)),
              cohort.members, cohort.needed);
  // Heartbeats speak of a task: a board still paused says so again in the
  // new one (at its first batch boundary).
  ctx_.job.clients().ResetStates();
  bound_ = std::make_shared<const UpdateBound>(job.global(),
                                               options_.max_update_ratio);
  opened_ = job.clock().Now();
  grace_logged_ = false;
  Plan();
  for (const std::string& id : open_.cohort()) ctx_.polls.Wake(id);
  spdlog::info(
      "round {}/{}: selected {} of {} available clients (task {}){}",
      job.round(), job.total_rounds(), cohort.members.size(), available,
      open_.task_id(),
      open_.needed() < open_.cohort().size()
          ? absl::StrCat("; the first ", open_.needed(), " updates close it")
          : "");
}

void SyncRounds::Plan() {
  std::vector<PlanningMember> members;
  members.reserve(open_.cohort().size());
  for (const auto& id : open_.cohort()) {
    const ClientRecord& c = ctx_.job.clients().At(id);
    members.push_back(
        {id, c.name, c.num_samples, c.allow_data_moves, c.sample_bytes});
  }
  RoundWork work = PlanRoundWork(ctx_.planner, members, ctx_.job.train(),
                                 ctx_.job.round(), open_.task_id());
  open_.Plan(std::move(work.steps), work.idle);
  figures_.selected = static_cast<int>(open_.cohort().size());
  figures_.planner = std::move(work.planner);
  figures_.planned_makespan_seconds = work.planned_makespan_seconds;
  figures_.moved_samples = work.moved_samples;
  ctx_.relay.Open(ctx_.job.round(), std::move(work.moves));
}

std::optional<TrainTask> SyncRounds::TaskFor(const std::string& id,
                                             const ClientRecord& client) {
  if (ctx_.job.phase() != RoundPhase::kCollecting || !open_.Awaits(id)) {
    return std::nullopt;
  }
  return TrainTask{ctx_.job.round(), open_.task_id(), std::nullopt,
                   std::nullopt};
}

absl::Status SyncRounds::CheckTask(const std::string& id, uint64_t round,
                                   const std::string& task_id, TaskUse use) {
  if (use == TaskUse::kPushBegin) {
    FEDBERRY_RETURN_IF_ERROR(RefuseLate(id, task_id));
  }
  const RoundPhase phase = ctx_.job.phase();
  const uint64_t open = ctx_.job.round();
  if (phase == RoundPhase::kClosing && round == open) {
    return absl::FailedPreconditionError(absl::StrCat(
        "round ", round,
        " is closing (every selected client reported, or its deadline "
        "passed); it takes no more updates"));
  }
  if (phase != RoundPhase::kCollecting || round != open) {
    return absl::FailedPreconditionError(absl::StrCat(
        "round ", round, " is not open (",
        phase == RoundPhase::kCollecting
            ? absl::StrCat("the server is collecting round ", open)
        : phase == RoundPhase::kDone
            ? std::string("the job is done")
            : absl::StrCat("the server waits to open round ", open),
        ")"));
  }
  if (task_id != open_.task_id()) {
    return absl::InvalidArgumentError(
        absl::StrCat("task id '", base::Printable(task_id),
                     "' does not match round ", open, "'s task"));
  }
  if (!open_.Selected(id)) {
    return absl::FailedPreconditionError(
        absl::StrCat("client ", id, " was not selected for round ", open));
  }
  if (use != TaskUse::kFollow && open_.HasReported(id)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "client ", id, " already sent its update for round ", round));
  }
  return absl::OkStatus();
}

absl::Status SyncRounds::RefuseLate(const std::string& id,
                                    const std::string& task_id) {
  if (task_id != closed_task_ || closed_without_.erase(id) == 0) {
    return absl::OkStatus();
  }
  ++late_updates_;
  const ClientRecord* late = ctx_.job.clients().Find(id);
  const std::string name = late != nullptr ? late->name : base::Printable(id);
  spdlog::warn(
      "round {}: a late update from {} is refused: the round closed without "
      "it",
      closed_round_, name);
  return wire::WithReason(
      absl::FailedPreconditionError(absl::StrCat(
          "late update: round ", closed_round_,
          " closed before this update arrived (it had the updates it needed, "
          "or its deadline passed); it is not counted, and the server logged "
          "it")),
      wire::kReasonLateUpdate);
}

absl::StatusOr<std::optional<int>> SyncRounds::Claim(
    const std::string& id,
    const std::shared_ptr<const runtime::NamedTensors>& base) {
  if (ctx_.job.global() != base) {
    return absl::FailedPreconditionError(absl::StrCat(
        "round ", ctx_.job.round(), " moved on while the update was checked"));
  }
  // Claimed before it is added, so a second push of this board is refused
  // meanwhile; the round waits for its adds before it closes.
  open_.Report(id);
  return std::nullopt;
}

Settled SyncRounds::Settle(const std::string& id, std::optional<int> staleness,
                           std::optional<runtime::NamedTensors> added,
                           uint64_t samples) {
  if (!added) open_.Unreport(id);
  return Settled{open_.reported(), open_.cohort().size(), false};
}

RoundKind::Renamed SyncRounds::Rename(const std::string& id,
                                      const std::string& new_id) {
  const OpenRound::Renamed was = open_.Rename(id, new_id);
  return Renamed{was.selected, was.reported};
}

bool SyncRounds::StopAwaiting(const std::string& id) {
  return ctx_.job.phase() == RoundPhase::kCollecting && open_.StopAwaiting(id);
}

bool SyncRounds::Release(const std::string& id,
                         const v1::UpdateHeader* refused) {
  const uint64_t round = ctx_.job.round();
  if (refused != nullptr) {
    if (refused->round() != round || refused->task_id() != open_.task_id() ||
        !StopAwaiting(id)) {
      return false;
    }
    const ClientRecord* client = ctx_.job.clients().Find(id);
    spdlog::info(
        "round {}: not waiting for {} any more (its update was refused)", round,
        client != nullptr ? client->name : base::Printable(id));
    return true;
  }
  if (!StopAwaiting(id)) return false;
  ++figures_.declined;
  open_.Decline(id);
  const ClientRecord& client = ctx_.job.clients().At(id);
  spdlog::info("round {}: not waiting for {} (it declines: {})", round,
               client.name, client.condition.declined());
  return true;
}

BoardPart SyncRounds::PartOf(const std::string& id) const {
  const bool open = ctx_.job.phase() == RoundPhase::kCollecting;
  BoardPart part;
  part.training = open && open_.Awaits(id);
  part.update_refused = open && open_.UpdateRefused(id);
  part.held = open_.cohort().count(id) > 0;
  part.planned_steps = open_.PlannedSteps(id);
  if (part.training) part.round = ctx_.job.round();
  return part;
}

bool SyncRounds::Closes(CloseDecision& decision) {
  const RoundProgress progress = Progress();
  decision = DecideClose(progress, options_.close);
  if (decision.action == CloseAction::kWait) return false;
  if (decision.action == CloseAction::kGrace) {
    if (!grace_logged_) {
      spdlog::info(
          "round {}: deadline passed below the quorum ({} of {} needed) while "
          "{} selected client(s) are paused under memory pressure; waiting up "
          "to {} more",
          ctx_.job.round(), progress.reported, decision.quorum, progress.paused,
          absl::FormatDuration(options_.close.paused_grace));
      grace_logged_ = true;
    }
    return false;
  }
  if (decision.complete) {
    figures_.cut_off = decision.cut_off;
    if (decision.cut_off > 0) {
      spdlog::info(
          "round {}: closing on its first {} updates; {} over-selected "
          "board(s) still training are cut off (their updates will be "
          "refused as late)",
          ctx_.job.round(), open_.reported(), decision.cut_off);
    }
  } else if (decision.late) {
    CountStragglers(progress);
  }
  return true;
}

RoundProgress SyncRounds::Progress() const {
  RoundProgress p;
  p.selected = figures_.selected;
  open_.Count(p);
  // Selected clients that have not reported but say they are paused under
  // memory pressure, and were heard from recently: alive, not dead. One
  // that released its memory is silent until restarted, so no liveness
  // applies to it; the grace bounds the wait.
  const absl::Time now = ctx_.job.clock().Now();
  for (const auto& id : open_.cohort()) {
    if (!open_.Awaits(id)) continue;
    ++p.outstanding;
    const ClientRecord* info = ctx_.job.clients().Find(id);
    if (info == nullptr) continue;
    if (info->state == v1::HeartbeatRequest::RELEASED) {
      ++p.paused;
      ++p.released;
    } else if (info->state == v1::HeartbeatRequest::PAUSED &&
               info->SeenWithin(now, options_.liveness)) {
      ++p.paused;
    }
  }
  p.elapsed = now - opened_;
  return p;
}

void SyncRounds::CountStragglers(const RoundProgress& p) {
  RoundReport& report = figures_;
  report.stragglers += p.outstanding;
  report.paused_stragglers = p.paused;
  report.released_stragglers = p.released;
  if (p.paused > 0) {
    spdlog::info(
        "round {}: {} straggler(s) are paused under memory pressure (alive; "
        "{} of them released their memory), {} silent",
        ctx_.job.round(), p.paused, p.released, report.stragglers - p.paused);
  }
}

void SyncRounds::Close(RoundReport& report) {
  report.selected = figures_.selected;
  report.planner = std::move(figures_.planner);
  report.planned_makespan_seconds = figures_.planned_makespan_seconds;
  report.moved_samples = figures_.moved_samples;
  report.cut_off = figures_.cut_off;
  report.stragglers += figures_.stragglers;
  report.paused_stragglers = figures_.paused_stragglers;
  report.released_stragglers = figures_.released_stragglers;
  report.declined += figures_.declined;
  report.late_updates += late_updates_;
  late_updates_ = 0;
  // Selected boards that did not report: what they push now is late.
  closed_task_ = open_.task_id();
  closed_round_ = ctx_.job.round();
  closed_without_ = open_.Unreported();
  report.participants = static_cast<int>(open_.reported());
  report.dropped = report.selected - report.participants -
                   static_cast<int>(open_.declined());
  bound_.reset();
  figures_ = RoundReport{};
  open_.Clear();  // no round is open: nothing to task, await or hold
}

void SyncRounds::Restore(const std::optional<AsyncState>& state) {
  if (!state) return;
  spdlog::warn(
      "the checkpoint is of asynchronous rounds; this server runs "
      "synchronous ones (--mode=sync): its buffer of {} update(s) is dropped",
      state->buffer.size());
}

}  // namespace fedberry::server
