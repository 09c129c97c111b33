#include "server/round_coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/log_text.h"
#include "base/status_macros.h"
#include "proto/wire.h"
#include "runtime/tensor_codec.h"
#include "server/privacy/forwarded_sum.h"
#include "server/round/async_rounds.h"
#include "server/round/held_evaluation.h"
#include "server/round/join_gate.h"
#include "server/round/round_planning.h"
#include "server/round/staleness.h"
#include "server/round/sync_rounds.h"
#include "server/strategy/keep_frozen.h"
#include "server/strategy/update_layout.h"

namespace fedberry::server {

RoundCoordinator::RoundCoordinator(CoordinatorOptions options,
                                   runtime::NamedTensors initial,
                                   Evaluator evaluator, ReportSink sink,
                                   Clock& clock,
                                   std::unique_ptr<Strategy> strategy)
    : options_(std::move(options)),
      close_options_{options_.quorum, options_.round_deadline,
                     options_.paused_grace, /*min_updates=*/1},
      evaluator_(std::move(evaluator)),
      clock_(clock),
      clients_(options_.max_clients),
      selection_(options_.selection
                     ? options_.selection
                     : std::make_shared<const SharedCohorts>(
                           options_.fraction, options_.target_updates,
                           options_.over_select,
                           options_.min_clients_per_round)),
      budget_(options_.budget),
      join_gate_(options_.version_gate, options_.refused_board_sink,
                 budget_.get(), refused_joins_, clock),
      declared_bound_(options_.max_samples_ratio),
      evaluation_(options_.board_eval, options_.seed),
      publisher_(evaluator_, std::move(sink),
                 [this](const RoundReport& r) { return RecordEvaluation(r); }) {
  auto specs = runtime::SpecsOf(initial);
  if (specs.ok()) specs_ = *std::move(specs);
  global_ = std::make_shared<const runtime::NamedTensors>(std::move(initial));
  train_ = options_.train;
  if (options_.relay) {
    auto upstream = std::make_unique<UpstreamRounds>(options_.relay_sink);
    upstream_ = upstream.get();
    source_ = std::move(upstream);
  } else {
    source_ = std::make_unique<OwnRounds>(options_.rounds, options_.train,
                                          options_.seed);
  }
  // A gateway learns the job's rounds from its parent's first offer.
  total_rounds_ = source_->total_rounds();
  if (source_->EndsBefore(round_)) state_ = RoundPhase::kDone;
  if (strategy) {
    strategy_ = std::move(strategy);
  } else {
    auto made = MakeStrategy(options_.strategy, *global_);
    if (!made.ok()) {
      spdlog::error("aggregation strategy: {}; aggregating with fedavg",
                    made.status().ToString());
      made = MakeStrategy(StrategyOptions{}, *global_);
    }
    strategy_ = *std::move(made);
  }
  if (budget_) strategy_ = budget_->Aggregate(std::move(strategy_));
  InitTrainable(*global_);
  close_options_.min_updates = strategy_->MinUpdates();
  auto planner = planner::RoundPlanner::Create(options_.planning);
  if (planner.ok()) {
    planner_ = *std::move(planner);
  } else {
    spdlog::error("work planner: {}; every client trains the job's config",
                  planner.status().ToString());
  }
  kind_ = MakeKind();
}

std::unique_ptr<RoundKind> RoundCoordinator::MakeKind() {
  RoundContext context{clock_,  clients_, polls_,        relay_,
                       state_,  round_,   total_rounds_, train_,
                       global_, pending_, planner_.get()};
  if (options_.async) {
    return std::make_unique<AsyncRounds>(
        context, AsyncRoundOptions{*options_.async, options_.seed,
                                   options_.liveness, options_.relay});
  }
  return std::make_unique<SyncRounds>(
      context,
      SyncRoundOptions{close_options_, options_.liveness,
                       options_.min_clients_per_round,
                       options_.max_update_ratio},
      selection_);
}

// The job's trainable set over its initial model (server_main checked the
// names against that model); the strategy keeps the frozen tensors exact.
void RoundCoordinator::InitTrainable(const runtime::NamedTensors& model) {
  const int parameters = options_.strategy.parameter_count;
  absl::StatusOr<runtime::TrainableSet> made = runtime::TrainableSet::Make(
      model, parameters < 0 ? model.size() : static_cast<size_t>(parameters),
      options_.trainable_tensors);
  if (!made.ok()) {
    spdlog::error("--trainable: {}; every parameter trains",
                  made.status().ToString());
    return;
  }
  trainable_ = *std::move(made);
  strategy_ = KeepFrozen(std::move(strategy_), trainable_);
}

absl::StatusOr<v1::JoinResponse> RoundCoordinator::Join(
    const v1::JoinRequest& untrusted) {
  v1::JoinRequest request = untrusted;
  FEDBERRY_RETURN_IF_ERROR(CheckJoin(request, options_.limits));
  FEDBERRY_RETURN_IF_ERROR(join_gate_.Admit(request));
  absl::MutexLock lock(&mu_);
  PruneLocked();
  if (absl::Status bounded =
          declared_bound_.CheckJoin(request.num_samples(), request.boards());
      !bounded.ok()) {
    spdlog::warn("refused the join of '{}': {}",
                 base::Printable(request.client_name()),
                 std::string(bounded.message()));
    return bounded;
  }
  FEDBERRY_RETURN_IF_ERROR(clients_.CheckRoom(request.client_name()));
  ClientRecord info;
  info.name = request.client_name();
  info.num_samples = request.num_samples();
  info.device = request.device();
  info.joined = clock_.Now();
  info.last_seen = info.joined;
  info.allow_data_moves = request.allow_data_moves();
  info.sample_bytes = request.sample_bytes();
  info.boards = request.boards();
  info.client_version = base::Printable(request.client_version(), 64);
  const std::string id = clients_.Add(info);
  RetireEarlierIdsLocked(request.client_name(), id);
  spdlog::info("client '{}' joined as {} ({} samples, {} cores, {}{}{})",
               info.name, id, info.num_samples, request.device().cores(),
               base::Printable(request.device().architecture()),
               info.allow_data_moves ? ", allows data moves" : "",
               info.boards > 0
                   ? absl::StrCat(", a gateway for ", info.boards, " boards")
                   : "");
  work_pending_ = true;
  changed_.SignalAll();
  v1::JoinResponse response;
  response.set_client_id(id);
  response.set_job_id(options_.job_id);
  return response;
}

// A board that restarts joins again under its name: its old id retires and
// the new one takes its place in the open round, so it can resume there;
// an update it already pushed stays counted under the new id, so the
// round still waits for the other selected boards.
void RoundCoordinator::RetireEarlierIdsLocked(const std::string& name,
                                              const std::string& id) {
  for (const std::string& old : clients_.IdsNamed(name)) {
    if (old != id) {
      const auto [selected, pushed] = kind_->Rename(old, id);
      if (auto u = upload_start_.find(old); u != upload_start_.end()) {
        if (selected) upload_start_[id] = u->second;
        upload_start_.erase(u);
      }
      spdlog::info("client '{}' joined again as {}; retiring its old id {}{}",
                   name, id, old,
                   pushed     ? " (its update of the open round stays counted)"
                   : selected ? " (it keeps its place in the open round)"
                              : "");
      clients_.Remove(old);
      polls_.Wake(old);  // its poll hears the id is gone
    }
  }
}

absl::StatusOr<std::string> RoundCoordinator::NameOf(
    const std::string& client_id) const {
  absl::MutexLock lock(&mu_);
  return clients_.NameOf(client_id);
}

absl::StatusOr<v1::GetTaskResponse> RoundCoordinator::TaskLocked(
    const std::string& client_id) {
  absl::StatusOr<ClientRecord*> found = clients_.Lookup(client_id);
  if (!found.ok()) return found.status();
  ClientRecord& client = **found;
  client.last_seen = clock_.Now();
  client.polled = true;
  client.heard = true;
  v1::GetTaskResponse response;
  response.set_total_rounds(total_rounds_);
  response.set_round(round_);
  if (state_ == RoundPhase::kDone) {
    client.told_done = true;
    response.set_action(v1::GetTaskResponse::DONE);
    return response;
  }
  if (std::optional<TrainTask> task = kind_->TaskFor(client_id, client)) {
    response.set_action(v1::GetTaskResponse::TRAIN);
    response.set_round(task->round);
    response.set_task_id(task->task_id);
    *response.mutable_config() = TaskConfigLocked(client_id);
    if (task->seed) response.mutable_config()->set_seed(*task->seed);
    for (const PlannedMove& m : relay_.MovesFrom(client.name)) {
      v1::DataMove* move = response.add_send();
      move->set_move_id(m.id);
      move->set_samples(m.samples);
      move->set_peer(m.to);
    }
    for (const PlannedMove& m : relay_.MovesTo(client.name)) {
      v1::DataMove* move = response.add_receive();
      move->set_move_id(m.id);
      move->set_samples(m.samples);
      move->set_peer(m.from);
    }
    return response;
  }
  if (state_ == RoundPhase::kEvaluating &&
      evaluation_.Task(client_id, train_, response)) {
    return response;
  }
  response.set_action(v1::GetTaskResponse::WAIT);
  response.set_retry_after_ms(200);
  return response;
}

v1::TrainConfig RoundCoordinator::TaskConfigLocked(
    const std::string& id) const {
  v1::TrainConfig config = train_;
  if (std::optional<int64_t> steps = kind_->PlannedSteps(id)) {
    config.set_local_steps(static_cast<uint32_t>(*steps));
  }
  return config;
}

std::optional<absl::StatusOr<v1::GetTaskResponse>> RoundCoordinator::PollTask(
    const std::string& client_id, const v1::BoardCondition& condition,
    absl::Time deadline, TaskAnswer answer, uint64_t& poll_id) {
  absl::MutexLock lock(&mu_);
  NoteConditionLocked(client_id, condition);
  absl::StatusOr<v1::GetTaskResponse> task = TaskLocked(client_id);
  if (!task.ok() || task->action() != v1::GetTaskResponse::WAIT ||
      absl::Now() >= deadline) {
    return task;
  }
  // Parked under mu_, so no event that would wake it can slip in between.
  poll_id = polls_.Park(client_id, deadline,
                        [this, client_id, answer = std::move(answer)](bool) {
                          absl::StatusOr<v1::GetTaskResponse> task;
                          {
                            absl::MutexLock lock(&mu_);
                            task = TaskLocked(client_id);
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
  absl::Mutex mu;
  std::optional<absl::StatusOr<v1::GetTaskResponse>> result;
  uint64_t poll_id = 0;
  auto now = PollTask(
      client_id, condition, absl::Now() + max_wait,
      [&](absl::StatusOr<v1::GetTaskResponse> task) {
        absl::MutexLock lock(&mu);
        result = std::move(task);
      },
      poll_id);
  if (now) return *std::move(now);
  absl::MutexLock lock(&mu);
  mu.Await(absl::Condition(
      +[](std::optional<absl::StatusOr<v1::GetTaskResponse>>* r) {
        return r->has_value();
      },
      &result));
  return *std::move(result);
}

absl::Status RoundCoordinator::CheckTaskLocked(
    const std::string& client_id, uint64_t round,
    const std::string& task_id) const {
  FEDBERRY_RETURN_IF_ERROR(clients_.Lookup(client_id).status());
  return kind_->CheckTask(client_id, round, task_id);
}

absl::StatusOr<std::shared_ptr<const runtime::NamedTensors>>
RoundCoordinator::ModelFor(const v1::PullModelRequest& request) {
  absl::MutexLock lock(&mu_);
  if (auto model = evaluation_.ModelFor(request)) {
    FEDBERRY_ASSIGN_OR_RETURN(ClientRecord * client,
                              clients_.Lookup(request.client_id()));
    if (model->ok()) client->last_seen = clock_.Now();
    return *std::move(model);
  }
  FEDBERRY_RETURN_IF_ERROR(
      CheckTaskLocked(request.client_id(), request.round(), request.task_id()));
  clients_.At(request.client_id()).last_seen = clock_.Now();
  return kind_->BaseModel(request.client_id());
}

absl::StatusOr<std::string> RoundCoordinator::ClientNameForTask(
    const std::string& client_id, uint64_t round, const std::string& task_id) {
  absl::MutexLock lock(&mu_);
  FEDBERRY_RETURN_IF_ERROR(CheckTaskLocked(client_id, round, task_id));
  ClientRecord& info = clients_.At(client_id);
  info.last_seen = clock_.Now();
  return info.name;
}

absl::StatusOr<RoundCoordinator::UpdateExpectation>
RoundCoordinator::BeginUpdate(const v1::UpdateHeader& header) {
  absl::MutexLock lock(&mu_);
  if (std::optional<absl::Status> late = kind_->RefuseLate(header)) {
    return *std::move(late);
  }
  FEDBERRY_RETURN_IF_ERROR(CheckHeaderLocked(header));
  // A sender's update counts only once the samples it lent are here for
  // their receivers: after a server restart they are not, and the sender
  // must hand them over again (its receivers are waiting for them).
  const std::string& sender = clients_.At(header.client_id()).name;
  for (const std::string& kept : header.kept_moves()) {
    relay_.Cancel(sender, kept);
  }
  if (auto missing = relay_.Undelivered(sender); !missing.empty()) {
    return wire::WithReason(
        absl::FailedPreconditionError(absl::StrCat(
            "data move samples missing: the ", missing.front().samples,
            " samples of data move ", missing.front().id,
            " are not on the server (it may have restarted); hand them over "
            "again, then send the update")),
        wire::kReasonSamplesMissing);
  }
  clients_.At(header.client_id()).last_seen = clock_.Now();
  upload_start_[header.client_id()] = clock_.Now();
  // Differences are taken from the model the board trained on.
  FEDBERRY_ASSIGN_OR_RETURN(std::shared_ptr<const runtime::NamedTensors> base,
                            kind_->BaseModel(header.client_id()));
  return UpdateExpectation{
      runtime::UpdateSpecs(trainable_.Select(specs_), options_.update_encoding,
                           options_.topk_fraction),
      trainable_.whole() ? base
                         : std::make_shared<const runtime::NamedTensors>(
                               trainable_.Select(*base))};
}

absl::Status RoundCoordinator::CheckHeaderLocked(
    const v1::UpdateHeader& header) const {
  FEDBERRY_RETURN_IF_ERROR(
      CheckTaskLocked(header.client_id(), header.round(), header.task_id()));
  FEDBERRY_RETURN_IF_ERROR(
      kind_->CheckNotCounted(header.client_id(), header.round()));
  const ClientRecord& info = clients_.At(header.client_id());
  const v1::TrainConfig task = TaskConfigLocked(header.client_id());
  uint64_t received = 0;
  for (const PlannedMove& m : relay_.MovesTo(info.name)) received += m.samples;
  FEDBERRY_RETURN_IF_ERROR(CheckUpdateWeight(
      header.num_samples(),
      MaxUpdateWeight(task, declared_bound_.Cap(info.num_samples, info.boards),
                      received, info.boards)));
  return CheckTrainMetrics(header.metrics());
}

absl::StatusOr<runtime::NamedTensors> RoundCoordinator::CheckedWhole(
    const runtime::NamedTensors& update, const runtime::NamedTensors& base,
    const UpdateBound* bound, double& distance) const {
  // A partial update (--trainable) becomes whole with the base model's
  // frozen tensors: the checks and the strategy see the model's layout.
  FEDBERRY_ASSIGN_OR_RETURN(runtime::NamedTensors whole,
                            trainable_.Complete(update, base));
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

std::string RoundCoordinator::CurrentIdLocked(const std::string& id,
                                              const std::string& name) const {
  if (clients_.Find(id) != nullptr) return id;
  std::string current = id;
  for (const std::string& other : clients_.IdsNamed(name)) current = other;
  return current;
}

absl::StatusOr<int> RoundCoordinator::SubmitUpdate(
    const v1::UpdateHeader& untrusted, const runtime::NamedTensors& update) {
  std::shared_ptr<const runtime::NamedTensors> base;
  std::shared_ptr<const UpdateBound> bound;
  {
    absl::MutexLock lock(&mu_);
    FEDBERRY_RETURN_IF_ERROR(CheckHeaderLocked(untrusted));
    FEDBERRY_ASSIGN_OR_RETURN(base, kind_->BaseModel(untrusted.client_id()));
    bound = kind_->BoundFor(base);
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
  runtime::NamedTensors added = kind_->Prepare(
      std::move(whole), *base, *intake.current, intake.staleness);
  // The add, the costly part, runs outside mu_: joins, polls and the
  // other pushes' checks do not queue behind it; adds queue on add_mu_.
  const absl::Status status =
      AddToSum(*intake.sum, untrusted, intake.boards, added);
  FederationSnapshot snapshot;
  int held = 0;
  {
    absl::MutexLock lock(&mu_);
    --adds_in_flight_;
    // The board may have joined again meanwhile (its claim moved to its new
    // id): what follows names it by its current id.
    const std::string id = CurrentIdLocked(untrusted.client_id(), intake.name);
    if (!status.ok()) {
      kind_->Unclaim(id);
      work_pending_ = true;
      changed_.SignalAll();
      return status;
    }
    kind_->Accept(id, intake.staleness, std::move(added),
                  untrusted.num_samples());
    held = AcceptUpdateLocked(id, untrusted, distance, intake.staleness);
    if (!kind_->PersistsEachUpdate()) return held;
    snapshot = SnapshotLocked();
  }
  // Durable before the board hears it counted: a server killed now
  // resumes with it in the buffer.
  publisher_.Persist(snapshot);
  return held;
}

absl::StatusOr<RoundCoordinator::Intake> RoundCoordinator::ClaimUpdate(
    const v1::UpdateHeader& untrusted,
    const std::shared_ptr<const runtime::NamedTensors>& base) {
  absl::MutexLock lock(&mu_);
  // A full buffer is being published: the push joins the next one.
  if (!clock_.AwaitWithDeadline(
          mu_, absl::Condition(this, &RoundCoordinator::TakesPushLocked),
          clock_.Now() + absl::Minutes(1))) {
    return absl::UnavailableError(
        "the server is still publishing a model version; push again");
  }
  // The round may have closed (or the board rejoined) meanwhile.
  FEDBERRY_RETURN_IF_ERROR(CheckHeaderLocked(untrusted));
  Intake intake;
  FEDBERRY_ASSIGN_OR_RETURN(intake.staleness,
                            kind_->Claim(untrusted.client_id(), base));
  // The round cannot close while an add is in flight: `current` and `sum`
  // stay.
  ++adds_in_flight_;
  intake.current = global_;
  intake.sum = aggregate_.get();
  const ClientRecord& client = clients_.At(untrusted.client_id());
  intake.name = client.name;
  intake.boards = client.boards;
  return intake;
}

bool RoundCoordinator::TakesPushLocked() const {
  return shutdown_ || state_ == RoundPhase::kDone || kind_->TakesPush();
}

int RoundCoordinator::AcceptUpdateLocked(const std::string& id,
                                         const v1::UpdateHeader& untrusted,
                                         double distance,
                                         std::optional<int> staleness) {
  v1::UpdateHeader header = untrusted;
  header.set_client_id(id);
  ClientRecord& info = clients_.At(id);
  if (auto cleared = SanitizeResources(*header.mutable_resources());
      !cleared.empty()) {
    spdlog::warn("round {}: dropped implausible resource readings of {}: {}",
                 round_, info.name, absl::StrJoin(cleared, ", "));
  }
  info.last_seen = clock_.Now();
  info.last_round = header.round();
  last_update_ = clock_.Now();
  if (planner_) {
    std::optional<absl::Duration> upload;
    if (auto u = upload_start_.find(id); u != upload_start_.end()) {
      upload = clock_.Now() - u->second;
    }
    planner_->estimator().Add(info.name, CapacityOf(header, upload));
  }
  pending_.clients.push_back({header.client_id(), info.name,
                              header.num_samples(), header.metrics(),
                              header.resources(), info.device});
  const auto [held, of] = kind_->Held();
  spdlog::info(
      "round {}: update {}/{} from {} ({} samples, loss {:.4f}, moves the "
      "model {:.3f} x its norm{})",
      round_, held, of, info.name, header.num_samples(),
      header.metrics().train_loss(), distance,
      staleness ? absl::StrCat("; staleness ", *staleness) : "");
  work_pending_ = true;
  changed_.SignalAll();
  return static_cast<int>(held);
}

absl::Status RoundCoordinator::ReportEvaluation(
    const v1::EvaluationReport& report) {
  absl::MutexLock lock(&mu_);
  FEDBERRY_ASSIGN_OR_RETURN(ClientRecord * client,
                            clients_.Lookup(report.client_id()));
  client->last_seen = clock_.Now();
  FEDBERRY_RETURN_IF_ERROR(evaluation_.Accept(report, *client));
  if (evaluation_.Complete()) WorkChangedLocked();
  return absl::OkStatus();
}

void RoundCoordinator::Seen(const std::string& client_id) {
  absl::MutexLock lock(&mu_);
  if (ClientRecord* client = clients_.Find(client_id)) {
    client->last_seen = clock_.Now();
  }
}

absl::Status RoundCoordinator::Heartbeat(const v1::HeartbeatRequest& request) {
  absl::MutexLock lock(&mu_);
  FEDBERRY_RETURN_IF_ERROR(
      CheckTaskLocked(request.client_id(), request.round(), request.task_id()));
  ClientRecord& info = clients_.At(request.client_id());
  info.last_seen = clock_.Now();
  // A released board is paused too: it is away, and comes back.
  const auto paused = [](v1::HeartbeatRequest::State s) {
    return s == v1::HeartbeatRequest::PAUSED ||
           s == v1::HeartbeatRequest::RELEASED;
  };
  const v1::HeartbeatRequest::State was = info.state;
  info.state = request.state();
  info.steps_planned = request.steps_planned();
  info.steps_done = std::min(request.steps_done(), request.steps_planned());
  if (info.state == v1::HeartbeatRequest::RELEASED &&
      was != v1::HeartbeatRequest::RELEASED) {
    spdlog::warn(
        "round {}: client {} released its memory under lasting pressure "
        "(checkpointed; it rejoins and resumes when its supervisor restarts "
        "it)",
        round_, info.name);
  } else if (paused(info.state) != paused(was)) {
    spdlog::info("round {}: client {} {}", round_, info.name,
                 paused(info.state)
                     ? "paused its training under memory pressure"
                     : "resumed its training");
  }
  work_pending_ = true;
  changed_.SignalAll();
  return absl::OkStatus();
}

void RoundCoordinator::CountRejected() {
  absl::MutexLock lock(&mu_);
  ++pending_.rejected;
}

void RoundCoordinator::CountRefusedUpdate(const v1::UpdateHeader& header,
                                          const std::string& why) {
  absl::MutexLock lock(&mu_);
  ++pending_.rejected;
  const std::string& id = header.client_id();
  if (ClientRecord* client = clients_.Find(id)) {
    client->last_refusal = base::Printable(why, 512);
  }
  if (kind_->Refused(header)) WorkChangedLocked();
}

void RoundCoordinator::WorkChangedLocked() {
  work_pending_ = true;
  changed_.SignalAll();
}

void RoundCoordinator::NoteConditionLocked(
    const std::string& client_id, const v1::BoardCondition& untrusted) {
  ClientRecord* client = clients_.Find(client_id);
  if (client == nullptr) return;  // TaskLocked says NotFound
  v1::BoardCondition condition = SanitizeCondition(untrusted);
  const bool was = !client->condition.declined().empty();
  const bool declines = !condition.declined().empty();
  client->condition = std::move(condition);
  if (declines != was) {
    spdlog::info("client {} {}{}", client->name,
                 declines ? "declines rounds: " : "takes rounds again",
                 client->condition.declined());
  }
  if (declines && kind_->Declines(client_id)) WorkChangedLocked();
}

std::vector<BoardRow> RoundCoordinator::Boards() const {
  std::vector<BoardRow> rows;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = clock_.Now();
    for (const auto& [id, c] : clients_.all()) {
      BoardFacts facts;
      facts.heard_recently = c.heard && now - c.last_seen <= options_.liveness;
      const BoardPart part = kind_->PartOf(id);
      facts.training = part.training;
      facts.update_refused = part.update_refused;
      facts.evaluating =
          state_ == RoundPhase::kEvaluating && evaluation_.Awaits(id);
      facts.declining = !c.condition.declined().empty();
      facts.heartbeat = c.state;
      BoardRow row;
      row.name = c.name;
      row.state = StateOf(facts);
      row.last_seen = c.last_seen;
      row.round = part.round.value_or(c.last_round);
      if (facts.training) {
        row.steps_done = c.steps_done;
        row.steps_planned = c.steps_planned;
      }
      row.client_version = c.client_version;
      row.architecture = c.device.architecture();
      row.boards = c.boards;
      row.condition = c.condition;
      row.last_refusal = c.last_refusal;
      rows.push_back(std::move(row));
    }
  }
  for (BoardRow& row : refused_joins_.Rows()) rows.push_back(std::move(row));
  std::stable_sort(
      rows.begin(), rows.end(),
      [](const BoardRow& a, const BoardRow& b) { return a.name < b.name; });
  return rows;
}

absl::Status RoundCoordinator::OfferRound(UpstreamRound round) {
  if (upstream_ == nullptr) {
    return absl::FailedPreconditionError(
        "this server runs its own rounds; it takes none from a parent");
  }
  if (!round.global) {
    return absl::InvalidArgumentError("the parent's round has no model");
  }
  absl::MutexLock lock(&mu_);
  if (absl::Status s = CheckUpdateLayout(*global_, *round.global); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the parent's model does not fit this gateway's plan: ", s.message()));
  }
  upstream_->Offer(std::move(round));
  work_pending_ = true;
  changed_.SignalAll();
  return absl::OkStatus();
}

bool RoundCoordinator::TryOpenRoundLocked() {
  PruneLocked();
  const absl::Time now = clock_.Now();
  std::optional<RoundSource::Opening> opening = source_->Next(round_, global_);
  if (!opening) return false;  // a gateway waiting for its parent's offer
  // A new round, or a new model for it, starts its attempts afresh.
  if (round_ != opening->round || global_ != opening->global) attempt_ = 0;
  round_ = opening->round;
  global_ = std::move(opening->global);
  train_ = std::move(opening->train);
  total_rounds_ = opening->total_rounds;
  std::vector<std::string> available =
      clients_.Available(now, options_.liveness);
  std::vector<uint64_t> per_board;  // the fleet's declarations
  per_board.reserve(clients_.size());
  for (const auto& [id, info] : clients_.all()) {
    per_board.push_back(SamplesPerBoard(info.num_samples, info.boards));
  }
  declared_bound_.SetFleet(std::move(per_board));
  const int n = static_cast<int>(available.size());
  if (n < std::max(1, options_.min_clients_to_start) ||
      n < options_.min_clients_per_round) {
    return false;
  }
  // Cohort and task id depend only on (seed, round, attempt): a server that
  // restarts from its checkpoint reopens the round with the same task, so
  // clients that were training it can resume and deliver.
  std::mt19937_64 rng(options_.seed * 1000003u + round_ * 7919u + attempt_);
  Cohort cohort = kind_->Draw(std::move(available), rng);
  if (kind_->TooFew(cohort)) {
    SkipShortCohortLocked(cohort);
    return false;
  }
  absl::StatusOr<std::unique_ptr<RoundAggregator>> aggregate =
      strategy_->BeginRound(global_);
  if (!aggregate.ok()) {
    // The round cannot take updates (e.g. no room for the robust rules'
    // store): try again later, saying why now and then.
    if (now - last_begin_error_ >= absl::Seconds(30)) {
      spdlog::error("round {}: cannot open: {}", round_,
                    aggregate.status().ToString());
      last_begin_error_ = now;
    }
    return false;
  }
  (*aggregate)->Expect(cohort.expected);
  if (budget_) budget_->Shape(train_);
  BeginCollectingLocked(*std::move(aggregate), now);
  kind_->Open(cohort, rng, n, *aggregate_);
  changed_.SignalAll();
  return true;
}

void RoundCoordinator::BeginCollectingLocked(
    std::unique_ptr<RoundAggregator> sum, absl::Time now) {
  aggregate_ = std::move(sum);
  // Pushes refused while no round collected (a full buffer publishing, or
  // between rounds) count in the next one's report.
  const int rejected_between = pending_.rejected;
  pending_ = RoundReport{};
  pending_.rejected = rejected_between;
  pending_.round = round_;
  pending_.declined = clients_.Declining(now, options_.liveness);
  round_start_ = now;
  if (job_start_ == absl::InfiniteFuture()) job_start_ = now;
  last_update_ = now;
  upload_start_.clear();
  state_ = RoundPhase::kCollecting;
}

void RoundCoordinator::SkipShortCohortLocked(const Cohort& cohort) {
  // Poisson sampling drew fewer boards than a round needs: the draw is
  // charged all the same (the budget's accountant assumes every draw), and
  // the next attempt draws again.
  RoundReport skipped;
  skipped.round = round_;
  skipped.selected = static_cast<int>(cohort.members.size());
  if (budget_) budget_->Charge(skipped);
  source_->Abandoned(skipped);
  spdlog::warn(
      "round {}: drew {} board(s) (expected {:.1f}), fewer than "
      "--min_clients={}; drawing again",
      round_, cohort.members.size(), cohort.expected,
      options_.min_clients_per_round);
  ++attempt_;
  work_pending_ = true;
}

void RoundCoordinator::PruneLocked() {
  const int pruned =
      clients_.Prune(clock_.Now(), options_.liveness, kind_->Members());
  if (pruned > 0) {
    spdlog::info("forgot {} client(s) that joined but never asked for a task",
                 pruned);
  }
}

bool RoundCoordinator::RunOnce() {
  CloseDecision decision;
  bool evaluated = false;
  {
    absl::MutexLock lock(&mu_);
    work_pending_ = false;
    if (state_ == RoundPhase::kWaiting) {
      return options_.evaluate_only ? TryOpenEvaluationOnlyLocked()
                                    : TryOpenRoundLocked();
    }
    if (state_ == RoundPhase::kEvaluating) {
      evaluated = evaluation_.Over(clock_.Now(), shutdown_);
      if (!evaluated) return false;
    } else if (state_ != RoundPhase::kCollecting || !kind_->Closes(decision)) {
      return false;
    }
    state_ = RoundPhase::kClosing;
  }
  if (evaluated) {
    FinishBoardEvaluation();
  } else {
    CloseRound(decision.action == CloseAction::kAbandon ? decision.why
                                                        : nullptr);
  }
  return true;
}

RoundCoordinator::~RoundCoordinator() { FinishPendingEvaluation(); }

void RoundCoordinator::SetSnapshotSink(SnapshotSink sink) {
  if (!sink) {
    publisher_.SetSnapshotSink(nullptr);
    return;
  }
  publisher_.SetSnapshotSink(
      [this, sink = std::move(sink)](const FederationSnapshot& snapshot) {
        absl::MutexLock lock(&persist_mu_);
        if (snapshot.sequence < persisted_sequence_) return;
        sink(snapshot);
        persisted_sequence_ = snapshot.sequence;
      });
}

void RoundCoordinator::FinishPendingEvaluation() {
  FinishBoardEvaluation();  // a job stopped while its boards evaluated
  publisher_.FinishPending();
}

void RoundCoordinator::CloseRound(const char* abandon) {
  // The previous round reports before this one.
  FinishPendingEvaluation();
  relay_.Close();  // moved samples serve their round only
  ClosingRound closing = TakeClosingRound();
  if (abandon != nullptr) {
    AbandonRound(closing.report, abandon);
    return;
  }
  RoundReport& report = closing.report;
  const RoundResult result =
      MakeRoundResult(*closing.sum, evaluator_, closing.overlap, report);
  FederationSnapshot snapshot;
  bool finished = false;
  bool held_round = false;
  {
    absl::MutexLock lock(&mu_);
    report.round_seconds = absl::ToDoubleSeconds(clock_.Now() - round_start_);
    report.elapsed_seconds =
        elapsed_before_ + absl::ToDoubleSeconds(clock_.Now() - job_start_);
    if (result.model) {
      global_ = result.model;
      // Only a published result moves the strategy's state.
      strategy_->Commit(*closing.sum);
    }
    closing.sum.reset();
    if (budget_) budget_->Charge(report);
    // The per-board entries went to the report sink (clients.jsonl): the
    // history, which every snapshot holds, keeps the round's summary only,
    // so it grows with rounds, not with boards x rounds.
    history_.push_back(report);
    history_.back().clients.clear();
    kind_->Clear();
    ++round_;
    attempt_ = 0;
    snapshot = SnapshotLocked();
    // A gateway's job ends when its parent's does (Shutdown).
    finished = shutdown_ || source_->EndsBefore(round_) || BudgetSpentLocked();
    if (result.model && !shutdown_ &&
        EvaluatesOnBoards(options_.board_eval, report.round, finished)) {
      // The model is durable first; its report waits for the boards.
      OpenBoardEvaluationLocked({report, result, finished});
      held_round = true;
    } else if (!finished) {
      // The end of the job is announced only once the last round is
      // durable: clients that hear "done" exit, and a server that crashed
      // before its checkpoint would redo the round without them.
      state_ = RoundPhase::kWaiting;
    }
    work_pending_ = true;
    changed_.SignalAll();
  }
  if (held_round) {
    publisher_.Persist(snapshot);
    return;
  }
  PublishClosed(report, snapshot, result, finished);
}

void RoundCoordinator::PublishClosed(const RoundReport& report,
                                     const FederationSnapshot& snapshot,
                                     const RoundResult& result, bool finished) {
  publisher_.Publish(report, snapshot, result, finished);
  source_->Closed(report, result.model);
  if (finished) {
    absl::MutexLock lock(&mu_);
    state_ = RoundPhase::kDone;
    polls_.WakeAll();
    work_pending_ = true;
    changed_.SignalAll();
  }
}

void RoundCoordinator::OpenBoardEvaluationLocked(HeldEvaluation::Held held) {
  const absl::Time now = clock_.Now();
  std::set<std::string> asked;
  for (const std::string& id : clients_.Available(now, options_.liveness)) {
    // A site gateway holds no data of its own to evaluate on.
    if (clients_.At(id).boards == 0) asked.insert(id);
  }
  state_ = RoundPhase::kEvaluating;
  for (const std::string& id :
       evaluation_.Open(std::move(held), global_, std::move(asked), now)) {
    polls_.Wake(id);
  }
}

bool RoundCoordinator::TryOpenEvaluationOnlyLocked() {
  PruneLocked();
  const size_t available =
      clients_.Available(clock_.Now(), options_.liveness).size();
  if (available <
      static_cast<size_t>(std::max(1, options_.min_clients_to_start))) {
    return false;
  }
  RoundReport report;  // round 0: the model as given
  report.round = 0;
  history_.push_back(report);
  OpenBoardEvaluationLocked(
      {report, RoundResult{global_, false}, /*finished=*/true});
  return true;
}

void RoundCoordinator::FinishBoardEvaluation() {
  HeldEvaluation::Held held;
  FederationSnapshot snapshot;
  {
    absl::MutexLock lock(&mu_);
    std::optional<HeldEvaluation::Held> finished =
        evaluation_.Finish(clock_.Now());
    if (!finished) return;
    held = *std::move(finished);
    if (RoundReport* r = HistoryOfLocked(held.report.round); r != nullptr) {
      r->board_eval = held.report.board_eval;
      r->board_eval->per_board.clear();  // in the report only
    }
    snapshot = SnapshotLocked();
    // The last round's end is announced once it is published (as
    // CloseRound does): kClosing until then.
    state_ = shutdown_       ? RoundPhase::kDone
             : held.finished ? RoundPhase::kClosing
                             : RoundPhase::kWaiting;
    work_pending_ = true;
    changed_.SignalAll();
  }
  PublishClosed(held.report, snapshot, held.result, held.finished);
}

RoundCoordinator::ClosingRound RoundCoordinator::TakeClosingRound() {
  // Updates being added are part of the round: wait for them (their adds
  // take milliseconds; no new one starts once the round is closing).
  absl::MutexLock lock(
      &mu_, absl::Condition(
                +[](int* adds) { return *adds == 0; }, &adds_in_flight_));
  ClosingRound closing;
  closing.sum = std::move(aggregate_);
  RoundReport& report = closing.report;
  report = std::move(pending_);
  pending_ = RoundReport{};
  kind_->Close(report);
  report.round_seconds = absl::ToDoubleSeconds(clock_.Now() - round_start_);
  report.makespan_seconds = absl::ToDoubleSeconds(last_update_ - round_start_);
  // No round follows the last one to overlap with, and the end of the
  // job is announced only once it is evaluated and durable.
  // A round evaluated on the boards reports once they answered: its
  // server-side evaluation has no next round to overlap with either.
  closing.overlap = options_.overlap_evaluation && evaluator_ && !shutdown_ &&
                    source_->MayOverlap(round_) &&
                    !EvaluatesOnBoards(options_.board_eval, round_, false);
  return closing;
}

void RoundCoordinator::AbandonRound(RoundReport report, const char* why) {
  spdlog::warn(
      "round {}: given up with {} of {} updates ({}; quorum {}, strategy "
      "minimum {}); the round starts over with the same global model",
      report.round, report.participants, report.selected, why,
      QuorumOf(close_options_, report.selected), close_options_.min_updates);
  FederationSnapshot snapshot;
  {
    absl::MutexLock lock(&mu_);
    state_ = shutdown_ ? RoundPhase::kDone : RoundPhase::kWaiting;
    ++attempt_;
    kind_->Clear();
    work_pending_ = true;
    changed_.SignalAll();
    source_->Abandoned(report);
    if (!budget_) return;
    // The attempt is charged; the charge is durable before the next one.
    budget_->Charge(report);
    snapshot = SnapshotLocked();
  }
  publisher_.Persist(snapshot);
}

bool RoundCoordinator::BudgetSpentLocked() const {
  if (!budget_) return false;
  const std::string why = budget_->EndsBefore();
  if (!why.empty())
    spdlog::info("the job ends before round {}: {}", round_, why);
  return !why.empty();
}

FederationSnapshot RoundCoordinator::SnapshotLocked() const {
  FederationSnapshot snapshot;
  snapshot.next_round = round_;
  snapshot.global = global_;
  snapshot.history = history_;
  if (planner_) snapshot.capacities = planner_->estimator().histories();
  snapshot.strategy_state = strategy_->State();
  if (budget_) snapshot.budget_state = budget_->State();
  snapshot.async = kind_->State();
  snapshot.sequence = ++snapshot_sequence_;
  snapshot.clients = clients_.Snapshot();
  return snapshot;
}

FederationSnapshot RoundCoordinator::RecordEvaluation(
    const RoundReport& report) {
  absl::MutexLock lock(&mu_);
  if (RoundReport* r = HistoryOfLocked(report.round); r != nullptr) {
    r->eval = report.eval;
    r->eval_seconds = report.eval_seconds;
    r->eval_overlapped = true;
  }
  return SnapshotLocked();
}

RoundReport* RoundCoordinator::HistoryOfLocked(uint64_t round) {
  // The newest first: a round's entry is near the end.
  for (auto it = history_.rbegin(); it != history_.rend(); ++it) {
    if (it->round == round) return &*it;
  }
  return nullptr;
}

absl::Status RoundCoordinator::Restore(const FederationSnapshot& snapshot) {
  if (!snapshot.global) {
    return absl::InvalidArgumentError("federation snapshot has no model");
  }
  absl::MutexLock lock(&mu_);
  if (absl::Status s = CheckUpdateLayout(*global_, *snapshot.global); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the checkpointed global model does not fit this job's model: ",
        s.message()));
  }
  if (absl::Status s = strategy_->Restore(snapshot.strategy_state); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the checkpointed strategy state does not fit this job: ",
                     s.message()));
  }
  if (budget_) {
    if (absl::Status s = budget_->Restore(snapshot.budget_state); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the checkpointed privacy budget does not fit this job: ",
          s.message()));
    }
  }
  kind_->Restore(snapshot.async);
  global_ = snapshot.global;
  round_ = snapshot.next_round;
  history_ = snapshot.history;
  // The job's clock goes on from the last checkpointed round.
  elapsed_before_ = history_.empty() ? 0 : history_.back().elapsed_seconds;
  if (planner_) planner_->estimator().Restore(snapshot.capacities);
  clients_.RestoreFrom(
      snapshot.clients, clock_.Now(), [this](const RegisteredClient& c) {
        // A job restarted with a higher --min_client_version: an older
        // board joins again, and is told to upgrade.
        if (join_gate_.versions().Admit(c.client_version).ok()) return true;
        spdlog::info("not restoring {} (client {}): below --min_client_version",
                     c.name, c.client_version.empty() ? "?" : c.client_version);
        return false;
      });
  state_ = source_->EndsBefore(round_) || BudgetSpentLocked()
               ? RoundPhase::kDone
               : RoundPhase::kWaiting;
  work_pending_ = true;
  return absl::OkStatus();
}

void RoundCoordinator::WaitForWork(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  if (!work_pending_) changed_.WaitWithTimeout(&mu_, timeout);
}

void RoundCoordinator::Shutdown() {
  relay_.Close();  // receivers waiting for samples return now
  absl::MutexLock lock(&mu_);
  shutdown_ = true;
  if (state_ != RoundPhase::kClosing) state_ = RoundPhase::kDone;
  polls_.WakeAll();
  changed_.SignalAll();
}

const char* RoundCoordinator::phase() const {
  absl::MutexLock lock(&mu_);
  switch (state_) {
    case RoundPhase::kWaiting:
      return "waiting for boards";
    case RoundPhase::kCollecting:
      return "training";
    case RoundPhase::kClosing:
      return "aggregating";
    case RoundPhase::kEvaluating:
      return "evaluating on the boards";
    case RoundPhase::kDone:
      return "done";
  }
  return "unknown";
}

bool RoundCoordinator::done() const {
  absl::MutexLock lock(&mu_);
  return state_ == RoundPhase::kDone;
}

uint64_t RoundCoordinator::current_round() const {
  absl::MutexLock lock(&mu_);
  return round_;
}

uint32_t RoundCoordinator::total_rounds() const {
  absl::MutexLock lock(&mu_);
  return total_rounds_;
}

std::shared_ptr<const runtime::NamedTensors> RoundCoordinator::global_model()
    const {
  absl::MutexLock lock(&mu_);
  return global_;
}

std::vector<RoundReport> RoundCoordinator::history() const {
  absl::MutexLock lock(&mu_);
  return history_;
}

int RoundCoordinator::clients_awaiting_done(absl::Duration heard_within) const {
  absl::MutexLock lock(&mu_);
  return clients_.AwaitingDone(clock_.Now() - heard_within);
}

uint64_t RoundCoordinator::registered_samples() const {
  absl::MutexLock lock(&mu_);
  return clients_.samples();
}

int RoundCoordinator::registered_clients() const {
  absl::MutexLock lock(&mu_);
  return clients_.size();
}

}  // namespace fedberry::server
