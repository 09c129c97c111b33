#include "server/round_coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "proto/wire.h"
#include "runtime/log_text.h"
#include "runtime/status_macros.h"
#include "runtime/tensor_codec.h"
#include "server/privacy/forwarded_sum.h"
#include "server/round/join_gate.h"
#include "server/round/round_planning.h"
#include "server/round/staleness.h"
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
  if (source_->EndsBefore(round_)) state_ = State::kDone;
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
  if (options_.async) {
    versions_ = std::make_unique<BufferedVersions>(
        *options_.async, options_.seed * 1000003u + 0xa5u);
  }
  auto planner = planner::RoundPlanner::Create(options_.planning);
  if (planner.ok()) {
    planner_ = *std::move(planner);
  } else {
    spdlog::error("work planner: {}; every client trains the job's config",
                  planner.status().ToString());
  }
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
  RETURN_IF_ERROR(CheckJoin(request, options_.limits));
  RETURN_IF_ERROR(join_gate_.Admit(request));
  absl::MutexLock lock(&mu_);
  PruneLocked();
  if (absl::Status bounded =
          declared_bound_.CheckJoin(request.num_samples(), request.boards());
      !bounded.ok()) {
    spdlog::warn("refused the join of '{}': {}",
                 runtime::Printable(request.client_name()),
                 std::string(bounded.message()));
    return bounded;
  }
  RETURN_IF_ERROR(clients_.CheckRoom(request.client_name()));
  ClientRecord info;
  info.name = request.client_name();
  info.num_samples = request.num_samples();
  info.device = request.device();
  info.joined = clock_.Now();
  info.last_seen = info.joined;
  info.allow_data_moves = request.allow_data_moves();
  info.sample_bytes = request.sample_bytes();
  info.boards = request.boards();
  info.client_version = runtime::Printable(request.client_version(), 64);
  const std::string id = clients_.Add(info);
  RetireEarlierIdsLocked(request.client_name(), id);
  spdlog::info("client '{}' joined as {} ({} samples, {} cores, {}{}{})",
               info.name, id, info.num_samples, request.device().cores(),
               runtime::Printable(request.device().architecture()),
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
      const auto [selected, pushed] = open_.Rename(old, id);
      if (auto u = upload_start_.find(old); u != upload_start_.end()) {
        if (selected) upload_start_[id] = u->second;
        upload_start_.erase(u);
      }
      spdlog::info("client '{}' joined again as {}; retiring its old id {}{}",
                   name, id, old,
                   pushed     ? " (its update of the open round stays counted)"
                   : selected ? " (it keeps its place in the open round)"
                              : "");
      if (versions_) versions_->Rename(old, id);
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
  if (state_ == State::kDone) {
    client.told_done = true;
    response.set_action(v1::GetTaskResponse::DONE);
    return response;
  }
  if (std::optional<TrainTask> task = TrainTaskLocked(client_id, client)) {
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
  if (state_ == State::kEvaluating && evaluation_->Awaits(client_id)) {
    response.set_action(v1::GetTaskResponse::EVALUATE);
    response.set_round(evaluation_->round());
    response.set_task_id(evaluation_->task_id());
    *response.mutable_config() = train_;
    return response;
  }
  response.set_action(v1::GetTaskResponse::WAIT);
  response.set_retry_after_ms(200);
  return response;
}

std::optional<RoundCoordinator::TrainTask> RoundCoordinator::TrainTaskLocked(
    const std::string& id, const ClientRecord& client) {
  if (!versions_) {
    if (state_ != State::kCollecting || !open_.Awaits(id)) return std::nullopt;
    return TrainTask{round_, open_.task_id(), std::nullopt};
  }
  const AsyncTask* task = versions_->Find(id);
  if (task == nullptr && state_ == State::kCollecting &&
      client.condition.declined().empty()) {
    task = versions_->Assign(id);
  }
  if (task == nullptr || task->claimed) return std::nullopt;
  return TrainTask{task->round, task->task_id, task->seed};
}

v1::TrainConfig RoundCoordinator::TaskConfigLocked(
    const std::string& id) const {
  v1::TrainConfig config = train_;
  if (std::optional<int64_t> steps = open_.PlannedSteps(id)) {
    config.set_local_steps(static_cast<uint32_t>(*steps));
  }
  return config;
}

absl::StatusOr<std::shared_ptr<const runtime::NamedTensors>>
RoundCoordinator::BaseModelLocked(const std::string& id) const {
  if (!versions_) return global_;
  const AsyncTask* task = versions_->Find(id);
  std::shared_ptr<const runtime::NamedTensors> model =
      task != nullptr ? versions_->ModelOf(*task) : nullptr;
  if (model == nullptr) {
    return absl::FailedPreconditionError(
        "the model version of this task is no longer kept; ask for a task");
  }
  return model;
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
  RETURN_IF_ERROR(clients_.Lookup(client_id).status());
  if (versions_) {
    // Asynchronous tasks outlive their round: checked against the board's.
    if (state_ == State::kDone) {
      return absl::FailedPreconditionError("the job is done");
    }
    return versions_->Check(client_id, round, task_id);
  }
  if (state_ == State::kClosing && round == round_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "round ", round,
        " is closing (every selected client reported, or its deadline "
        "passed); it takes no more updates"));
  }
  if (state_ != State::kCollecting || round != round_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "round ", round, " is not open (",
        state_ == State::kCollecting
            ? absl::StrCat("the server is collecting round ", round_)
        : state_ == State::kDone
            ? std::string("the job is done")
            : absl::StrCat("the server waits to open round ", round_),
        ")"));
  }
  if (task_id != open_.task_id()) {
    return absl::InvalidArgumentError(
        absl::StrCat("task id '", runtime::Printable(task_id),
                     "' does not match round ", round_, "'s task"));
  }
  if (!open_.Selected(client_id)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "client ", client_id, " was not selected for round ", round_));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const runtime::NamedTensors>>
RoundCoordinator::ModelFor(const v1::PullModelRequest& request) {
  absl::MutexLock lock(&mu_);
  if (evaluation_ && request.task_id() == evaluation_->task_id() &&
      request.round() == evaluation_->round()) {
    ASSIGN_OR_RETURN(ClientRecord * client,
                     clients_.Lookup(request.client_id()));
    if (!evaluation_->Awaits(request.client_id())) {
      return absl::FailedPreconditionError(
          absl::StrCat("client ", request.client_id(),
                       " is not asked to evaluate round ", request.round()));
    }
    client->last_seen = clock_.Now();
    return evaluation_->model();
  }
  RETURN_IF_ERROR(
      CheckTaskLocked(request.client_id(), request.round(), request.task_id()));
  clients_.At(request.client_id()).last_seen = clock_.Now();
  return BaseModelLocked(request.client_id());
}

absl::StatusOr<std::string> RoundCoordinator::ClientNameForTask(
    const std::string& client_id, uint64_t round, const std::string& task_id) {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckTaskLocked(client_id, round, task_id));
  ClientRecord& info = clients_.At(client_id);
  info.last_seen = clock_.Now();
  return info.name;
}

absl::StatusOr<RoundCoordinator::UpdateExpectation>
RoundCoordinator::BeginUpdate(const v1::UpdateHeader& header) {
  absl::MutexLock lock(&mu_);
  if (header.task_id() == closed_task_ &&
      closed_without_.erase(header.client_id()) > 0) {
    ++late_updates_;
    const ClientRecord* late = clients_.Find(header.client_id());
    const std::string name =
        late != nullptr ? late->name : runtime::Printable(header.client_id());
    spdlog::warn(
        "round {}: a late update from {} ({} samples) is refused: the round "
        "closed without it",
        closed_round_, name, header.num_samples());
    return wire::WithReason(
        absl::FailedPreconditionError(absl::StrCat(
            "late update: round ", closed_round_,
            " closed before this update arrived (it had the updates it needed, "
            "or its deadline passed); it is not counted, and the server logged "
            "it")),
        wire::kReasonLateUpdate);
  }
  RETURN_IF_ERROR(CheckHeaderLocked(header));
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
  ASSIGN_OR_RETURN(std::shared_ptr<const runtime::NamedTensors> base,
                   BaseModelLocked(header.client_id()));
  return UpdateExpectation{
      runtime::UpdateSpecs(trainable_.Select(specs_), options_.update_encoding,
                           options_.topk_fraction),
      trainable_.whole() ? base
                         : std::make_shared<const runtime::NamedTensors>(
                               trainable_.Select(*base))};
}

absl::Status RoundCoordinator::CheckHeaderLocked(
    const v1::UpdateHeader& header) const {
  RETURN_IF_ERROR(
      CheckTaskLocked(header.client_id(), header.round(), header.task_id()));
  // (An asynchronous task is claimed once: BufferedVersions::Claim.)
  if (!versions_ && open_.HasReported(header.client_id())) {
    return absl::AlreadyExistsError(
        absl::StrCat("client ", header.client_id(),
                     " already sent its update for round ", header.round()));
  }
  const ClientRecord& info = clients_.At(header.client_id());
  const v1::TrainConfig task = TaskConfigLocked(header.client_id());
  uint64_t received = 0;
  for (const PlannedMove& m : relay_.MovesTo(info.name)) received += m.samples;
  RETURN_IF_ERROR(CheckUpdateWeight(
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
  ASSIGN_OR_RETURN(runtime::NamedTensors whole,
                   trainable_.Complete(update, base));
  RETURN_IF_ERROR(CheckUpdateLayout(base, whole));
  distance = 0;
  if (bound != nullptr) {
    ASSIGN_OR_RETURN(distance, bound->Check(whole));
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
  if (options_.async) return SubmitBufferedUpdate(untrusted, update);
  std::shared_ptr<const runtime::NamedTensors> global;
  std::shared_ptr<const UpdateBound> bound;
  {
    absl::MutexLock lock(&mu_);
    RETURN_IF_ERROR(CheckHeaderLocked(untrusted));
    global = global_;
    bound = bound_;
  }
  // The checks read only the round's model and bound: outside the lock, so
  // joins, polls and other pushes do not queue behind a large update's.
  double distance = 0;
  ASSIGN_OR_RETURN(const runtime::NamedTensors whole,
                   CheckedWhole(update, *global, bound.get(), distance));
  RoundAggregator* sum;
  std::string name;
  uint32_t boards = 0;  // a site gateway's: bounds its forwarded sum
  {
    absl::MutexLock lock(&mu_);
    // The round may have closed (or the board rejoined) meanwhile.
    RETURN_IF_ERROR(CheckHeaderLocked(untrusted));
    if (global_ != global) {
      return absl::FailedPreconditionError(
          absl::StrCat("round ", untrusted.round(),
                       " moved on while the update was checked"));
    }
    // Claimed before it is added, so a second push of this board is
    // refused meanwhile; the round waits for its adds before it closes.
    open_.Report(untrusted.client_id());
    ++adds_in_flight_;
    sum = aggregate_.get();
    name = clients_.At(untrusted.client_id()).name;
    boards = clients_.At(untrusted.client_id()).boards;
  }
  // The add, the costly part, runs outside mu_: joins, polls and the
  // other pushes' checks do not queue behind it; adds queue on add_mu_.
  const absl::Status added = AddToSum(*sum, untrusted, boards, whole);
  absl::MutexLock lock(&mu_);
  --adds_in_flight_;
  // The board may have joined again meanwhile (its claim moved to its new
  // id): what follows names it by its current id.
  const std::string id = CurrentIdLocked(untrusted.client_id(), name);
  if (!added.ok()) {
    open_.Unreport(id);
    work_pending_ = true;
    changed_.SignalAll();
    return added;
  }
  return AcceptUpdateLocked(id, untrusted, distance);
}

bool RoundCoordinator::BufferTakesLocked() const {
  return shutdown_ || state_ == State::kDone ||
         (state_ == State::kCollecting && !versions_->Full());
}

absl::StatusOr<int> RoundCoordinator::SubmitBufferedUpdate(
    const v1::UpdateHeader& untrusted, const runtime::NamedTensors& update) {
  std::shared_ptr<const runtime::NamedTensors> pulled;
  {
    absl::MutexLock lock(&mu_);
    RETURN_IF_ERROR(CheckHeaderLocked(untrusted));
    ASSIGN_OR_RETURN(pulled, BaseModelLocked(untrusted.client_id()));
  }
  // Checked against the version the board trained on, outside the lock.
  const UpdateBound bound(pulled, options_.max_update_ratio);
  double distance = 0;
  ASSIGN_OR_RETURN(const runtime::NamedTensors whole,
                   CheckedWhole(update, *pulled, &bound, distance));
  int staleness = 0;
  std::shared_ptr<const runtime::NamedTensors> current;
  RoundAggregator* sum;
  std::string name;
  uint32_t boards = 0;
  {
    absl::MutexLock lock(&mu_);
    // A full buffer is being published: the push joins the next one.
    if (!mu_.AwaitWithTimeout(
            absl::Condition(this, &RoundCoordinator::BufferTakesLocked),
            absl::Minutes(1))) {
      return absl::UnavailableError(
          "the server is still publishing a model version; push again");
    }
    RETURN_IF_ERROR(CheckHeaderLocked(untrusted));
    ASSIGN_OR_RETURN(staleness, versions_->Claim(untrusted.client_id()));
    // The round cannot close while an add is in flight: `current` stays.
    current = global_;
    ++adds_in_flight_;
    sum = aggregate_.get();
    name = clients_.At(untrusted.client_id()).name;
    boards = clients_.At(untrusted.client_id()).boards;
  }
  const double weight = StalenessWeight(options_.async->weighting, staleness);
  runtime::NamedTensors rebased = Rebase(whole, *pulled, *current, weight);
  const absl::Status added = AddToSum(*sum, untrusted, boards, rebased);
  FederationSnapshot snapshot;
  int held = 0;
  {
    absl::MutexLock lock(&mu_);
    --adds_in_flight_;
    const std::string id = CurrentIdLocked(untrusted.client_id(), name);
    if (!added.ok()) {
      versions_->Unclaim(id);
      return added;
    }
    versions_->Accept(id, staleness, std::move(rebased),
                      untrusted.num_samples());
    // A slot is free: boards waiting for one may take it.
    if (options_.async->max_concurrency > 0) polls_.WakeAll();
    held = AcceptUpdateLocked(id, untrusted, distance, staleness);
    snapshot = SnapshotLocked();
  }
  // Durable before the board hears it counted: a server killed now
  // resumes with it in the buffer.
  publisher_.Persist(snapshot);
  return held;
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
  // An asynchronous round holds its buffer's updates (a board may add
  // more than one), out of the buffer's size.
  const size_t held = versions_ ? versions_->buffered() : open_.reported();
  const size_t of = versions_ ? options_.async->buffer : open_.cohort().size();
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
  ASSIGN_OR_RETURN(ClientRecord * client, clients_.Lookup(report.client_id()));
  client->last_seen = clock_.Now();
  if (!evaluation_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "board ", client->name, " was not asked to evaluate round ",
        report.round(), " (no evaluation is open)"));
  }
  RETURN_IF_ERROR(evaluation_->Accept(report.client_id(), client->name,
                                      client->num_samples, report,
                                      options_.board_eval));
  if (!report.declined().empty()) {
    spdlog::info("round {}: board {} declined to evaluate: {}",
                 evaluation_->round(), client->name,
                 runtime::Printable(report.declined()));
  }
  if (evaluation_->Complete()) {
    work_pending_ = true;
    changed_.SignalAll();
  }
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
  RETURN_IF_ERROR(
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
    client->last_refusal = runtime::Printable(why, 512);
  }
  if (versions_) {
    // It does not send that task again: its slot is free.
    if (const AsyncTask* task = versions_->Find(id);
        task != nullptr && !task->claimed &&
        task->task_id == header.task_id()) {
      versions_->Drop(id);
    }
    return;
  }
  if (header.round() != round_ || header.task_id() != open_.task_id() ||
      !StopAwaitingLocked(id)) {
    return;
  }
  const ClientRecord* client = clients_.Find(id);
  spdlog::info("round {}: not waiting for {} any more (its update was refused)",
               round_,
               client != nullptr ? client->name : runtime::Printable(id));
}

bool RoundCoordinator::StopAwaitingLocked(const std::string& id) {
  if (state_ != State::kCollecting || !open_.StopAwaiting(id)) return false;
  work_pending_ = true;
  changed_.SignalAll();
  return true;
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
  if (declines && versions_) {
    // Asking with a task means it was not training it: the slot is free.
    if (const AsyncTask* task = versions_->Find(client_id);
        task != nullptr && !task->claimed) {
      versions_->Drop(client_id);
      ++pending_.declined;
    }
    return;
  }
  if (!declines || !StopAwaitingLocked(client_id)) return;
  ++pending_.declined;
  open_.Decline(client_id);
  spdlog::info("round {}: not waiting for {} (it declines: {})", round_,
               client->name, client->condition.declined());
}

std::vector<BoardRow> RoundCoordinator::Boards() const {
  std::vector<BoardRow> rows;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = clock_.Now();
    for (const auto& [id, c] : clients_.all()) {
      BoardFacts facts;
      facts.heard_recently = c.heard && now - c.last_seen <= options_.liveness;
      const bool open = state_ == State::kCollecting;
      facts.training = open && open_.Awaits(id);
      const AsyncTask* task = versions_ ? versions_->Find(id) : nullptr;
      if (task != nullptr) facts.training = true;
      facts.update_refused = open && open_.UpdateRefused(id);
      facts.evaluating =
          state_ == State::kEvaluating && evaluation_->Awaits(id);
      facts.declining = !c.condition.declined().empty();
      facts.heartbeat = c.state;
      BoardRow row;
      row.name = c.name;
      row.state = StateOf(facts);
      row.last_seen = c.last_seen;
      row.round = task != nullptr  ? task->round
                  : facts.training ? round_
                                   : c.last_round;
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
  Cohort cohort = DrawCohortLocked(std::move(available), rng);
  if (!versions_ &&
      cohort.members.size() <
          static_cast<size_t>(std::max(1, options_.min_clients_per_round))) {
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
  if (versions_) {
    OpenVersionLocked(*std::move(aggregate), now);
  } else {
    StartRoundLocked(cohort, *std::move(aggregate), rng, n, now);
  }
  return true;
}

void RoundCoordinator::StartRoundLocked(const Cohort& cohort,
                                        std::unique_ptr<RoundAggregator> sum,
                                        std::mt19937_64& rng, int available,
                                        absl::Time now) {
  if (budget_) budget_->Shape(train_);
  const int k = static_cast<int>(cohort.members.size());
  open_.Start(absl::StrFormat("r%d-%08x", round_,
                              static_cast<uint32_t>(rng() & 0xffffffff)),
              cohort.members, cohort.needed);
  // Heartbeats speak of a task: a board still paused says so again in the
  // new one (at its first batch boundary).
  clients_.ResetStates();
  BeginCollectingLocked(std::move(sum), now);
  pending_.selected = k;
  PlanRoundLocked();
  for (const std::string& id : open_.cohort()) polls_.Wake(id);
  spdlog::info(
      "round {}/{}: selected {} of {} available clients (task {}){}", round_,
      total_rounds_, k, available, open_.task_id(),
      open_.needed() < open_.cohort().size()
          ? absl::StrCat("; the first ", open_.needed(), " updates close it")
          : "");
  changed_.SignalAll();
}

Cohort RoundCoordinator::DrawCohortLocked(std::vector<std::string> available,
                                          std::mt19937_64& rng) const {
  // An asynchronous round draws no cohort: boards take its tasks as they
  // ask.
  if (versions_) return Cohort{};
  std::vector<uint32_t> boards;  // a site gateway's; 0 for a board
  for (const std::string& id : available) {
    boards.push_back(clients_.At(id).boards);
  }
  return selection_->Choose(std::move(available), boards, rng);
}

void RoundCoordinator::BeginCollectingLocked(
    std::unique_ptr<RoundAggregator> sum, absl::Time now) {
  aggregate_ = std::move(sum);
  bound_ =
      std::make_shared<const UpdateBound>(global_, options_.max_update_ratio);
  // Pushes refused while no round collected (a full buffer publishing, or
  // between rounds) count in the next one's report.
  const int rejected_between = pending_.rejected;
  pending_ = RoundReport{};
  pending_.rejected = rejected_between;
  pending_.round = round_;
  pending_.declined = clients_.Declining(now, options_.liveness);
  round_start_ = now;
  if (job_start_ == absl::InfiniteFuture()) job_start_ = now;
  grace_logged_ = false;
  last_update_ = now;
  upload_start_.clear();
  state_ = State::kCollecting;
}

void RoundCoordinator::OpenVersionLocked(std::unique_ptr<RoundAggregator> sum,
                                         absl::Time now) {
  if (budget_) budget_->Shape(train_);
  BeginCollectingLocked(std::move(sum), now);
  // A site gateway numbers its own versions: its parent's rounds may skip
  // it or hand the same round down again.
  versions_->Open(upstream_ ? versions_->open_round() + 1 : round_, global_);
  // A restarted server's round starts from the updates its buffer held.
  for (const AsyncState::Buffered& b : versions_->buffer()) {
    if (absl::Status s = aggregate_->Add(b.update, b.samples); !s.ok()) {
      spdlog::error("round {}: a checkpointed update cannot be added: {}",
                    round_, s.ToString());
    }
  }
  if (!versions_->buffer().empty()) {
    spdlog::info("round {}: resumes with the {} update(s) its buffer held",
                 round_, versions_->buffer().size());
  }
  // Boards waiting between versions (or for a slot) take the new one.
  polls_.WakeAll();
  if (upstream_) {
    spdlog::info(
        "round {}/{}: the parent's model is this site's version {}; boards "
        "train on it as they ask ({} training), and the next {} updates go "
        "to the parent",
        round_, total_rounds_, versions_->open_round(), versions_->training(),
        options_.async->buffer);
  } else {
    spdlog::info(
        "round {}/{}: version {} is out; boards train on it as they ask ({} "
        "training), and the next {} updates make version {}",
        round_, total_rounds_, round_ - 1, versions_->training(),
        options_.async->buffer, round_);
  }
  changed_.SignalAll();
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
      clients_.Prune(clock_.Now(), options_.liveness, open_.cohort());
  if (pruned > 0) {
    spdlog::info("forgot {} client(s) that joined but never asked for a task",
                 pruned);
  }
}

void RoundCoordinator::PlanRoundLocked() {
  std::vector<PlanningMember> members;
  members.reserve(open_.cohort().size());
  for (const auto& id : open_.cohort()) {
    const ClientRecord& c = clients_.At(id);
    members.push_back(
        {id, c.name, c.num_samples, c.allow_data_moves, c.sample_bytes});
  }
  RoundWork work =
      PlanRoundWork(planner_.get(), members, train_, round_, open_.task_id());
  open_.Plan(std::move(work.steps), work.idle);
  pending_.selected = static_cast<int>(open_.cohort().size());
  pending_.planner = std::move(work.planner);
  pending_.planned_makespan_seconds = work.planned_makespan_seconds;
  pending_.moved_samples = work.moved_samples;
  relay_.Open(round_, std::move(work.moves));
}

bool RoundCoordinator::RunOnce() {
  CloseDecision decision;
  bool evaluated = false;
  {
    absl::MutexLock lock(&mu_);
    work_pending_ = false;
    if (state_ == State::kWaiting) {
      return options_.evaluate_only ? TryOpenEvaluationOnlyLocked()
                                    : TryOpenRoundLocked();
    }
    if (state_ == State::kEvaluating) {
      evaluated = BoardEvaluationOverLocked();
      if (!evaluated) return false;
    } else if (state_ != State::kCollecting ||
               !(versions_ ? DecideVersionCloseLocked()
                           : DecideCloseLocked(decision))) {
      return false;
    }
  }
  if (evaluated) {
    FinishBoardEvaluation();
  } else {
    CloseRound(decision.action == CloseAction::kAbandon ? decision.why
                                                        : nullptr);
  }
  return true;
}

bool RoundCoordinator::DecideCloseLocked(CloseDecision& decision) {
  const RoundProgress progress = ProgressLocked();
  decision = DecideClose(progress, close_options_);
  if (decision.action == CloseAction::kWait) return false;
  if (decision.action == CloseAction::kGrace) {
    LogGraceLocked(progress, decision);
    return false;
  }
  if (decision.complete) {
    pending_.cut_off = decision.cut_off;
    if (pending_.cut_off > 0) {
      spdlog::info(
          "round {}: closing on its first {} updates; {} over-selected "
          "board(s) still training are cut off (their updates will be "
          "refused as late)",
          round_, open_.reported(), pending_.cut_off);
    }
  } else if (decision.late) {
    CountStragglersLocked(progress);
  }
  state_ = State::kClosing;
  return true;
}

bool RoundCoordinator::DecideVersionCloseLocked() {
  // A board not heard from within liveness frees its slot; its update, if
  // it comes, is refused (it holds no task) and it asks again.
  const absl::Time now = clock_.Now();
  for (const std::string& id : versions_->TrainingIds()) {
    const ClientRecord* c = clients_.Find(id);
    if (c == nullptr || now - c->last_seen > options_.liveness) {
      spdlog::info("round {}: {} went silent; its task is given up", round_,
                   c != nullptr ? c->name : runtime::Printable(id));
      versions_->Drop(id);
      if (options_.async->max_concurrency > 0) polls_.WakeAll();
    }
  }
  if (versions_->buffered() < options_.async->buffer) return false;
  state_ = State::kClosing;
  return true;
}

RoundProgress RoundCoordinator::ProgressLocked() const {
  RoundProgress p;
  p.selected = pending_.selected;
  open_.Count(p);
  // Selected clients that have not reported but say they are paused under
  // memory pressure, and were heard from recently: alive, not dead. One
  // that released its memory is silent until restarted, so no liveness
  // applies to it; the grace bounds the wait.
  for (const auto& id : open_.cohort()) {
    if (!open_.Awaits(id)) continue;
    ++p.outstanding;
    const ClientRecord* found = clients_.Find(id);
    if (found == nullptr) continue;
    const ClientRecord& info = *found;
    if (info.state == v1::HeartbeatRequest::RELEASED) {
      ++p.paused;
      ++p.released;
    } else if (info.state == v1::HeartbeatRequest::PAUSED &&
               clock_.Now() - info.last_seen <= options_.liveness) {
      ++p.paused;
    }
  }
  p.elapsed = clock_.Now() - round_start_;
  return p;
}

void RoundCoordinator::LogGraceLocked(const RoundProgress& progress,
                                      const CloseDecision& decision) {
  if (grace_logged_) return;
  spdlog::info(
      "round {}: deadline passed below the quorum ({} of {} needed) while {} "
      "selected client(s) are paused under memory pressure; waiting up to {} "
      "more",
      round_, progress.reported, decision.quorum, progress.paused,
      absl::FormatDuration(options_.paused_grace));
  grace_logged_ = true;
}

void RoundCoordinator::CountStragglersLocked(const RoundProgress& p) {
  pending_.stragglers += p.outstanding;
  pending_.paused_stragglers = p.paused;
  pending_.released_stragglers = p.released;
  if (p.paused > 0) {
    spdlog::info(
        "round {}: {} straggler(s) are paused under memory pressure (alive; "
        "{} of them released their memory), {} silent",
        round_, p.paused, p.released, pending_.stragglers - p.paused);
  }
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
    open_.Clear();
    ++round_;
    attempt_ = 0;
    snapshot = SnapshotLocked();
    // A gateway's job ends when its parent's does (Shutdown).
    finished = shutdown_ || source_->EndsBefore(round_) || BudgetSpentLocked();
    if (result.model && !shutdown_ &&
        EvaluatesOnBoards(options_.board_eval, report.round, finished)) {
      // The model is durable first; its report waits for the boards.
      OpenBoardEvaluationLocked(report.round);
      held_ = HeldRound{report, result, finished};
      held_round = true;
    } else if (!finished) {
      // The end of the job is announced only once the last round is
      // durable: clients that hear "done" exit, and a server that crashed
      // before its checkpoint would redo the round without them.
      state_ = State::kWaiting;
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
    state_ = State::kDone;
    polls_.WakeAll();
    work_pending_ = true;
    changed_.SignalAll();
  }
}

void RoundCoordinator::OpenBoardEvaluationLocked(uint64_t round) {
  const absl::Time now = clock_.Now();
  std::set<std::string> asked;
  for (const std::string& id : clients_.Available(now, options_.liveness)) {
    // A site gateway holds no data of its own to evaluate on.
    if (clients_.At(id).boards == 0) asked.insert(id);
  }
  std::mt19937_64 rng(options_.seed * 1000003u + round * 7919u + 0xe7a1u);
  std::string task_id = absl::StrFormat(
      "e%d-%08x", round, static_cast<uint32_t>(rng() & 0xffffffff));
  spdlog::info(
      "round {}: asking {} board(s) to evaluate its model on their held-out "
      "samples (task {})",
      round, asked.size(), task_id);
  evaluation_.emplace(round, std::move(task_id), global_, std::move(asked),
                      now);
  state_ = State::kEvaluating;
  for (const std::string& id : evaluation_->asked()) polls_.Wake(id);
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
  OpenBoardEvaluationLocked(0);
  held_ = HeldRound{report, RoundResult{global_, false}, /*finished=*/true};
  return true;
}

bool RoundCoordinator::BoardEvaluationOverLocked() const {
  return evaluation_->Complete() || shutdown_ ||
         evaluation_->PastDeadline(clock_.Now(), options_.board_eval.deadline);
}

void RoundCoordinator::FinishBoardEvaluation() {
  HeldRound held;
  FederationSnapshot snapshot;
  {
    absl::MutexLock lock(&mu_);
    if (!held_) return;
    held = *std::move(held_);
    held_.reset();
    BoardEvalSummary summary =
        evaluation_->Summarize(clock_.Now(), options_.board_eval.regression);
    evaluation_.reset();
    spdlog::info("round {}: {}", held.report.round,
                 DescribeBoardEvaluation(summary));
    held.report.board_eval = summary;
    if (RoundReport* r = HistoryOfLocked(held.report.round); r != nullptr) {
      r->board_eval = std::move(summary);
      r->board_eval->per_board.clear();  // in the report only
    }
    snapshot = SnapshotLocked();
    // The last round's end is announced once it is published (as
    // CloseRound does): kClosing until then.
    state_ = shutdown_       ? State::kDone
             : held.finished ? State::kClosing
                             : State::kWaiting;
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
  bound_.reset();
  RoundReport& report = closing.report;
  report = std::move(pending_);
  pending_ = RoundReport{};
  report.late_updates += late_updates_;
  late_updates_ = 0;
  // Selected boards that did not report: what they push now is late.
  closed_task_ = open_.task_id();
  closed_round_ = round_;
  closed_without_ = open_.Unreported();
  report.participants = static_cast<int>(open_.reported());
  if (versions_) {
    report.version = versions_->TakeFigures();
    report.participants = report.version->updates;
    report.selected = report.participants;
  }
  report.dropped = report.selected - report.participants -
                   static_cast<int>(open_.declined());
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
    state_ = shutdown_ ? State::kDone : State::kWaiting;
    ++attempt_;
    open_.Clear();
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
  if (versions_) snapshot.async = versions_->State();
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
  if (versions_ && snapshot.async) {
    versions_->Restore(*snapshot.async);
  } else if (snapshot.async) {
    spdlog::warn(
        "the checkpoint is of asynchronous rounds; this server runs "
        "synchronous ones (--mode=sync): its buffer of {} update(s) is "
        "dropped",
        snapshot.async->buffer.size());
  }
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
  state_ = source_->EndsBefore(round_) || BudgetSpentLocked() ? State::kDone
                                                              : State::kWaiting;
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
  if (state_ != State::kClosing) state_ = State::kDone;
  polls_.WakeAll();
  changed_.SignalAll();
}

const char* RoundCoordinator::phase() const {
  absl::MutexLock lock(&mu_);
  switch (state_) {
    case State::kWaiting:
      return "waiting for boards";
    case State::kCollecting:
      return "training";
    case State::kClosing:
      return "aggregating";
    case State::kEvaluating:
      return "evaluating on the boards";
    case State::kDone:
      return "done";
  }
  return "unknown";
}

bool RoundCoordinator::done() const {
  absl::MutexLock lock(&mu_);
  return state_ == State::kDone;
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
