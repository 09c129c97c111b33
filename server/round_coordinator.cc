#include "server/round_coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/log_text.h"
#include "base/status_macros.h"
#include "runtime/tensor_codec.h"
#include "server/privacy/forwarded_sum.h"
#include "server/round/board_joins.h"
#include "server/round/board_tasks.h"
#include "server/round/round_closing.h"
#include "server/round/round_opening.h"
#include "server/round/round_planning.h"
#include "server/round/secagg_rounds.h"
#include "server/strategy/update_layout.h"

namespace fedberry::server {

absl::StatusOr<std::unique_ptr<RoundCoordinator>> RoundCoordinator::Create(
    CoordinatorOptions options, runtime::NamedTensors initial,
    Evaluator evaluator, ReportSink sink, Clock& clock,
    std::unique_ptr<Strategy> strategy) {
  auto coordinator = std::unique_ptr<RoundCoordinator>(
      new RoundCoordinator(std::move(options), std::move(evaluator), clock));
  FEDBERRY_RETURN_IF_ERROR(coordinator->Wire(
      std::move(initial), std::move(sink), std::move(strategy)));
  return coordinator;
}

RoundCoordinator::RoundCoordinator(CoordinatorOptions options,
                                   Evaluator evaluator, Clock& clock)
    : options_(std::move(options)),
      evaluator_(std::move(evaluator)),
      clock_(clock),
      job_(clock, options_.max_clients),
      join_gate_(options_.version_gate, options_.site_gateways,
                 options_.refused_board_sink, options_.budget.get(),
                 refused_joins_, clock),
      declared_bound_(options_.max_samples_ratio) {}

absl::Status RoundCoordinator::Wire(runtime::NamedTensors initial,
                                    ReportSink sink,
                                    std::unique_ptr<Strategy> strategy) {
  absl::MutexLock lock(&job_.mu);
  auto specs = runtime::SpecsOf(initial);
  if (specs.ok()) specs_ = *std::move(specs);
  FEDBERRY_ASSIGN_OR_RETURN(
      rules_, JobRules::Create(options_, initial, std::move(strategy), job_,
                               polls_, relay_));
  RoundSource& source = rules_->source();
  // A gateway learns the job's rounds from its parent's first offer.
  job_.Start(std::make_shared<const runtime::NamedTensors>(std::move(initial)),
             options_.train, source.total_rounds(), source.EndsBefore(1));
  closing_ = std::make_unique<RoundClosing>(
      ClosingParts{options_, evaluator_, job_, *rules_, polls_, relay_},
      std::move(sink));
  opening_ = std::make_unique<RoundOpening>(
      OpeningParts{options_, job_, *rules_, declared_bound_, *closing_});
  joins_ = std::make_unique<BoardJoins>(
      JoinParts{job_, rules_->kind(), polls_, declared_bound_, *closing_});
  tasks_ = std::make_unique<BoardTasks>(
      TaskParts{job_, rules_->kind(), *closing_, relay_});
  return absl::OkStatus();
}

absl::StatusOr<v1::JoinResponse> RoundCoordinator::Join(
    const v1::JoinRequest& untrusted, const std::string& caller) {
  v1::JoinRequest request = untrusted;
  FEDBERRY_RETURN_IF_ERROR(CheckJoin(request, options_.limits));
  FEDBERRY_RETURN_IF_ERROR(join_gate_.Admit(request));
  absl::MutexLock lock(&job_.mu);
  opening_->Prune();
  FEDBERRY_ASSIGN_OR_RETURN(std::string id, joins_->Add(request, caller));
  v1::JoinResponse response;
  response.set_client_id(std::move(id));
  response.set_job_id(options_.job_id);
  return response;
}

absl::StatusOr<std::string> RoundCoordinator::NameOf(
    const std::string& client_id) const {
  absl::MutexLock lock(&job_.mu);
  return job_.clients().NameOf(client_id);
}

std::optional<absl::StatusOr<v1::GetTaskResponse>> RoundCoordinator::PollTask(
    const std::string& client_id, const v1::BoardCondition& condition,
    absl::Time deadline, TaskAnswer answer, uint64_t& poll_id) {
  absl::MutexLock lock(&job_.mu);
  tasks_->NoteCondition(client_id, condition);
  absl::StatusOr<v1::GetTaskResponse> task = tasks_->Answer(client_id);
  if (!task.ok() || task->action() != v1::GetTaskResponse::WAIT ||
      polls_.clock().Now() >= deadline) {
    return task;
  }
  // Parked under job_.mu, so no event that would wake it can slip in between.
  poll_id = polls_.Park(client_id, deadline,
                        [this, client_id, answer = std::move(answer)](bool) {
                          absl::StatusOr<v1::GetTaskResponse> task;
                          {
                            absl::MutexLock lock(&job_.mu);
                            task = tasks_->Answer(client_id);
                          }
                          answer(std::move(task));
                        });
  return std::nullopt;
}

bool RoundCoordinator::CancelTaskPoll(uint64_t poll_id) {
  return polls_.Cancel(poll_id);
}

absl::StatusOr<v1::GetTaskResponse> RoundCoordinator::GetTask(
    const std::string& client_id, absl::Duration max_wait,
    const v1::BoardCondition& condition) {
  return AwaitAnswer<absl::StatusOr<v1::GetTaskResponse>>(
      [&](TaskAnswer answer) {
        uint64_t poll_id = 0;
        return PollTask(client_id, condition, polls_.clock().Now() + max_wait,
                        std::move(answer), poll_id);
      });
}

absl::StatusOr<std::shared_ptr<const runtime::NamedTensors>>
RoundCoordinator::ModelFor(const v1::PullModelRequest& request) {
  absl::MutexLock lock(&job_.mu);
  return tasks_->ModelFor(request);
}

absl::StatusOr<std::string> RoundCoordinator::ClientNameForTask(
    const std::string& client_id, uint64_t round, const std::string& task_id) {
  absl::MutexLock lock(&job_.mu);
  return tasks_->NameForTask(client_id, round, task_id);
}

absl::StatusOr<RoundCoordinator::UpdateExpectation>
RoundCoordinator::BeginUpdate(const v1::UpdateHeader& header) {
  absl::MutexLock lock(&job_.mu);
  FEDBERRY_RETURN_IF_ERROR(CheckHeaderLocked(header, TaskUse::kPushBegin));
  // A sender's update counts only once the samples it lent are here for
  // their receivers.
  FEDBERRY_RETURN_IF_ERROR(relay_.CheckLent(
      job_.clients().At(header.client_id()).name,
      {header.kept_moves().begin(), header.kept_moves().end()}));
  job_.clients().At(header.client_id()).last_seen = clock_.Now();
  job_.StartUpload(header.client_id());
  // Differences are taken from the model the board trained on.
  FEDBERRY_ASSIGN_OR_RETURN(TaskBase base,
                            rules_->kind().BaseOf(header.client_id()));
  const runtime::TrainableSet& trainable = rules_->trainable();
  return UpdateExpectation{
      runtime::UpdateSpecs(trainable.Select(specs_), options_.update_encoding,
                           options_.topk_fraction),
      trainable.whole() ? base.model
                        : std::make_shared<const runtime::NamedTensors>(
                              trainable.Select(*base.model))};
}

absl::Status RoundCoordinator::CheckHeaderLocked(const v1::UpdateHeader& header,
                                                 TaskUse use) {
  FEDBERRY_RETURN_IF_ERROR(
      tasks_->Check(header.client_id(), header.round(), header.task_id(), use));
  const ClientRecord& info = job_.clients().At(header.client_id());
  const v1::TrainConfig task = tasks_->ConfigFor(header.client_id());
  FEDBERRY_RETURN_IF_ERROR(CheckUpdateWeight(
      header.num_samples(),
      MaxUpdateWeight(task, declared_bound_.Cap(info.num_samples, info.boards),
                      relay_.SamplesTo(info.name), info.boards)));
  return CheckTrainMetrics(header.metrics());
}

absl::StatusOr<runtime::NamedTensors> RoundCoordinator::CheckedWhole(
    const runtime::NamedTensors& update, const runtime::NamedTensors& base,
    const UpdateBound* bound, double& distance) const {
  // A partial update (--trainable) becomes whole with the base model's
  // frozen tensors: the checks and the strategy see the model's layout.
  FEDBERRY_ASSIGN_OR_RETURN(runtime::NamedTensors whole,
                            rules_->trainable().Complete(update, base));
  FEDBERRY_RETURN_IF_ERROR(CheckUpdateLayout(base, whole));
  distance = 0;
  if (bound != nullptr) {
    FEDBERRY_ASSIGN_OR_RETURN(distance, bound->Check(whole));
  }
  return whole;
}

absl::Status RoundCoordinator::AddToSum(RoundAggregator& sum,
                                        const v1::UpdateHeader& header,
                                        uint32_t boards,
                                        const runtime::NamedTensors& whole) {
  absl::MutexLock add_lock(&add_mu_);
  return AddToRound(sum, header, boards, whole);
}

absl::StatusOr<int> RoundCoordinator::SubmitUpdate(
    const v1::UpdateHeader& untrusted, const runtime::NamedTensors& update) {
  std::shared_ptr<const runtime::NamedTensors> base;
  std::shared_ptr<const UpdateBound> bound;
  {
    absl::MutexLock lock(&job_.mu);
    FEDBERRY_RETURN_IF_ERROR(CheckHeaderLocked(untrusted, TaskUse::kPush));
    FEDBERRY_ASSIGN_OR_RETURN(TaskBase task,
                              rules_->kind().BaseOf(untrusted.client_id()));
    base = std::move(task.model);
    bound = std::move(task.bound);
  }
  if (bound == nullptr) {
    bound =
        std::make_shared<const UpdateBound>(base, options_.max_update_ratio);
  }
  // The checks read only the model the board trained on and its bound:
  // outside the lock, so joins, polls and other pushes do not queue behind
  // a large update's.
  double distance = 0;
  FEDBERRY_ASSIGN_OR_RETURN(runtime::NamedTensors whole,
                            CheckedWhole(update, *base, bound.get(), distance));
  FEDBERRY_ASSIGN_OR_RETURN(Intake intake, ClaimUpdate(untrusted, base));
  runtime::NamedTensors added = rules_->kind().Prepare(
      std::move(whole), *base, *intake.current, intake.staleness);
  // The add, the costly part, runs outside job_.mu: joins, polls and the
  // other pushes' checks do not queue behind it; adds queue on add_mu_.
  const absl::Status status =
      AddToSum(*intake.sum, untrusted, intake.boards, added);
  FederationSnapshot snapshot;
  int held = 0;
  {
    absl::MutexLock lock(&job_.mu);
    job_.EndAdd();
    // The board may have joined again meanwhile (its claim moved to its new
    // id): what follows names it by its current id.
    const std::string id =
        job_.clients().CurrentId(untrusted.client_id(), intake.name);
    if (!status.ok()) {
      rules_->kind().Settle(id, intake.staleness, std::nullopt, 0);
      job_.WorkChanged();
      return status;
    }
    const Settled settled = rules_->kind().Settle(
        id, intake.staleness, std::move(added), untrusted.num_samples());
    held =
        AcceptUpdateLocked(id, untrusted, distance, intake.staleness, settled);
    if (!settled.persist) return held;
    snapshot = closing_->Snapshot();
  }
  // Durable before the board hears it counted: a server killed now
  // resumes with it in the buffer.
  closing_->Persist(snapshot);
  return held;
}

absl::StatusOr<RoundCoordinator::Intake> RoundCoordinator::ClaimUpdate(
    const v1::UpdateHeader& untrusted,
    const std::shared_ptr<const runtime::NamedTensors>& base) {
  absl::MutexLock lock(&job_.mu);
  // A full buffer is being published: the push joins the next one.
  if (!clock_.AwaitWithDeadline(
          job_.mu, absl::Condition(this, &RoundCoordinator::TakesPushLocked),
          clock_.Now() + absl::Minutes(1))) {
    return absl::UnavailableError(
        "the server is still publishing a model version; push again");
  }
  // The round may have closed (or the board rejoined) meanwhile.
  FEDBERRY_RETURN_IF_ERROR(CheckHeaderLocked(untrusted, TaskUse::kPush));
  Intake intake;
  FEDBERRY_ASSIGN_OR_RETURN(intake.staleness,
                            rules_->kind().Claim(untrusted.client_id(), base));
  // The round cannot close while an add is in flight: `current` and `sum`
  // stay.
  job_.BeginAdd();
  intake.current = job_.global();
  intake.sum = job_.sum();
  const ClientRecord& client = job_.clients().At(untrusted.client_id());
  intake.name = client.name;
  intake.boards = client.boards;
  return intake;
}

bool RoundCoordinator::TakesPushLocked() const {
  return job_.stopping() || job_.phase() == RoundPhase::kDone ||
         rules_->kind().TakesPush();
}

int RoundCoordinator::AcceptUpdateLocked(const std::string& id,
                                         const v1::UpdateHeader& untrusted,
                                         double distance,
                                         std::optional<int> staleness,
                                         const Settled& settled) {
  v1::UpdateHeader header = untrusted;
  header.set_client_id(id);
  ClientRecord& info = job_.clients().At(id);
  if (auto cleared = SanitizeResources(*header.mutable_resources());
      !cleared.empty()) {
    spdlog::warn("round {}: dropped implausible resource readings of {}: {}",
                 job_.round(), info.name, absl::StrJoin(cleared, ", "));
  }
  info.last_seen = clock_.Now();
  info.last_round = header.round();
  if (planner::RoundPlanner* planner = rules_->planner()) {
    std::optional<absl::Duration> upload;
    if (std::optional<absl::Time> started = job_.UploadStart(id)) {
      upload = clock_.Now() - *started;
    }
    planner->estimator().Add(info.name, CapacityOf(header, upload));
  }
  job_.NoteUpdate({header.client_id(), info.name, header.num_samples(),
                   header.metrics(), header.resources(), info.device});
  const auto [held, of, persist] = settled;
  spdlog::info(
      "round {}: update {}/{} from {} ({} samples, loss {:.4f}, moves the "
      "model {:.3f} x its norm{})",
      job_.round(), held, of, info.name, header.num_samples(),
      header.metrics().train_loss(), distance,
      staleness ? absl::StrCat("; staleness ", *staleness) : "");
  job_.WorkChanged();
  return static_cast<int>(held);
}

absl::Status RoundCoordinator::ReportEvaluation(
    const v1::EvaluationReport& report) {
  absl::MutexLock lock(&job_.mu);
  return tasks_->AcceptEvaluation(report, declared_bound_);
}

absl::StatusOr<v1::SecAggResponse> RoundCoordinator::SecAggStep(
    const v1::SecAggRequest& request, const std::string& peer_certificate) {
  absl::MutexLock lock(&job_.mu);
  return SecAggStepLocked(request, peer_certificate);
}

std::optional<absl::StatusOr<v1::SecAggResponse>>
RoundCoordinator::PollSecAggStep(const v1::SecAggRequest& request,
                                 const std::string& peer_certificate,
                                 absl::Time deadline, SecAggAnswer answer,
                                 uint64_t& poll_id) {
  absl::MutexLock lock(&job_.mu);
  absl::StatusOr<v1::SecAggResponse> now =
      SecAggStepLocked(request, peer_certificate);
  if (!now.ok() || now->action() != v1::SecAggResponse::WAIT ||
      request.message_case() != v1::SecAggRequest::kAwait ||
      polls_.clock().Now() >= deadline) {
    return now;
  }
  // Parked under job_.mu, so no stage can close between the answer and
  // the park. A wait carries no certificate to check.
  poll_id = polls_.Park(SecAggRounds::WaitKey(request.client_id()), deadline,
                        [this, request, answer = std::move(answer)](bool) {
                          absl::StatusOr<v1::SecAggResponse> r;
                          {
                            absl::MutexLock lock(&job_.mu);
                            r = SecAggStepLocked(request, "");
                          }
                          answer(std::move(r));
                        });
  return std::nullopt;
}

absl::StatusOr<v1::SecAggResponse> RoundCoordinator::SecAggStepLocked(
    const v1::SecAggRequest& request, const std::string& peer_certificate) {
  SecAggRounds* secagg = rules_->secagg();
  if (secagg == nullptr) {
    return absl::FailedPreconditionError(
        "this server does not aggregate securely (--secure_aggregation=off)");
  }
  FEDBERRY_RETURN_IF_ERROR(job_.clients().Lookup(request.client_id()).status());
  if (job_.phase() != RoundPhase::kCollecting) {
    v1::SecAggResponse wait;
    wait.set_action(v1::SecAggResponse::WAIT);
    wait.set_retry_after_ms(200);
    return wait;
  }
  return secagg->Step(request, peer_certificate);
}

void RoundCoordinator::Seen(const std::string& client_id) {
  absl::MutexLock lock(&job_.mu);
  if (ClientRecord* client = job_.clients().Find(client_id)) {
    client->last_seen = clock_.Now();
  }
}

absl::Status RoundCoordinator::Heartbeat(const v1::HeartbeatRequest& request) {
  absl::MutexLock lock(&job_.mu);
  return tasks_->Heartbeat(request);
}

void RoundCoordinator::CountRejected() {
  absl::MutexLock lock(&job_.mu);
  job_.CountRejected();
}

void RoundCoordinator::CountRefusedUpdate(const v1::UpdateHeader& header,
                                          const std::string& why) {
  absl::MutexLock lock(&job_.mu);
  job_.CountRejected();
  const std::string& id = header.client_id();
  if (ClientRecord* client = job_.clients().Find(id)) {
    client->last_refusal = base::Printable(why, 512);
  }
  if (rules_->kind().Release(id, &header)) job_.WorkChanged();
}

std::vector<BoardRow> RoundCoordinator::Boards() const {
  std::vector<BoardRow> rows;
  {
    absl::MutexLock lock(&job_.mu);
    rows = tasks_->Rows(options_.liveness);
  }
  for (BoardRow& row : refused_joins_.Rows()) rows.push_back(std::move(row));
  std::stable_sort(
      rows.begin(), rows.end(),
      [](const BoardRow& a, const BoardRow& b) { return a.name < b.name; });
  return rows;
}

absl::Status RoundCoordinator::OfferRound(UpstreamRound round) {
  UpstreamRounds* upstream = rules_->upstream();
  if (upstream == nullptr) {
    return absl::FailedPreconditionError(
        "this server runs its own rounds; it takes none from a parent");
  }
  absl::MutexLock lock(&job_.mu);
  FEDBERRY_RETURN_IF_ERROR(upstream->Offer(std::move(round), *job_.global()));
  job_.WorkChanged();
  return absl::OkStatus();
}

bool RoundCoordinator::RunOnce() {
  CloseDecision decision;
  bool evaluated = false;
  {
    absl::MutexLock lock(&job_.mu);
    job_.TakeWork();
    const RoundPhase phase = job_.phase();
    if (phase == RoundPhase::kWaiting) return opening_->TryOpen();
    if (phase == RoundPhase::kEvaluating) {
      evaluated = closing_->evaluation().Over(clock_.Now(), job_.stopping());
      if (!evaluated) return false;
    } else if (phase != RoundPhase::kCollecting ||
               !rules_->kind().Closes(decision)) {
      return false;
    } else if (absl::Status closing = job_.StartClosing(); !closing.ok()) {
      spdlog::error("{}", closing.ToString());
      return false;
    }
  }
  if (evaluated) {
    closing_->FinishBoardEvaluation();
  } else {
    closing_->Close(decision.action == CloseAction::kAbandon ? decision.why
                                                             : nullptr);
  }
  return true;
}

RoundCoordinator::~RoundCoordinator() { FinishPendingEvaluation(); }

void RoundCoordinator::SetSnapshotSink(SnapshotSink sink) {
  closing_->SetSnapshotSink(std::move(sink));
}

void RoundCoordinator::FinishPendingEvaluation() { closing_->FinishPending(); }

absl::Status RoundCoordinator::Restore(const FederationSnapshot& snapshot) {
  absl::MutexLock lock(&job_.mu);
  return closing_->Restore(snapshot, [this](const RegisteredClient& c) {
    // A job restarted with a higher --min_client_version: an older board
    // joins again, and is told to upgrade.
    if (join_gate_.versions().Admit(c.client_version).ok()) return true;
    spdlog::info("not restoring {} (client {}): below --min_client_version",
                 c.name, c.client_version.empty() ? "?" : c.client_version);
    return false;
  });
}

void RoundCoordinator::WaitForWork(absl::Duration timeout) {
  absl::MutexLock lock(&job_.mu);
  job_.WaitForWork(timeout);
}

void RoundCoordinator::Shutdown() {
  relay_.Close();  // receivers waiting for samples return now
  absl::MutexLock lock(&job_.mu);
  job_.Stop();
  polls_.WakeAll();
}

const char* RoundCoordinator::phase() const {
  absl::MutexLock lock(&job_.mu);
  return PhaseName(job_.phase());
}

bool RoundCoordinator::done() const {
  absl::MutexLock lock(&job_.mu);
  return job_.phase() == RoundPhase::kDone;
}

uint64_t RoundCoordinator::current_round() const {
  absl::MutexLock lock(&job_.mu);
  return job_.round();
}

uint32_t RoundCoordinator::total_rounds() const {
  absl::MutexLock lock(&job_.mu);
  return job_.total_rounds();
}

std::shared_ptr<const runtime::NamedTensors> RoundCoordinator::global_model()
    const {
  absl::MutexLock lock(&job_.mu);
  return job_.global();
}

std::vector<RoundReport> RoundCoordinator::history() const {
  absl::MutexLock lock(&job_.mu);
  return job_.history().reports();
}

int RoundCoordinator::clients_awaiting_done(absl::Duration heard_within) const {
  absl::MutexLock lock(&job_.mu);
  return job_.clients().AwaitingDone(clock_.Now() - heard_within);
}

uint64_t RoundCoordinator::registered_samples() const {
  absl::MutexLock lock(&job_.mu);
  return job_.clients().samples();
}

int RoundCoordinator::registered_clients() const {
  absl::MutexLock lock(&job_.mu);
  return job_.clients().size();
}

}  // namespace fedberry::server
