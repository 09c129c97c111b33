// What a round produces and what the server persists after it: the round's
// report (with each board's figures), the registered boards, and the
// snapshot a restarted server continues from; and the callbacks that
// receive them. Shared by the coordinator, the metrics log, the checkpoint,
// the metrics page and the tiers, none of which needs the coordinator.
#ifndef FEDBERRY_SERVER_ROUND_ROUND_TYPES_H_
#define FEDBERRY_SERVER_ROUND_ROUND_TYPES_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/model.h"
#include "runtime/trainer.h"
#include "server/planner/capacity_estimator.h"
#include "server/round/client_registry.h"

namespace fedberry::server {

struct ClientRoundReport {
  std::string client_id;
  std::string client_name;
  uint64_t num_samples = 0;
  v1::TrainMetrics metrics;
  v1::ResourceMetrics resources;  // what the round cost the board
  v1::DeviceInfo device;          // the board's facts, as sent at join
};

// A model's figures on one board's held-out samples (evaluation on the
// boards), as the board reported them.
struct BoardEvalEntry {
  std::string client_name;
  runtime::EvalResult global;                       // the published model
  std::optional<runtime::EvalResult> personalized;  // after local steps
};

// A round's model evaluated on the boards: the boards' figures combined,
// each weighted by its samples, and their spread.
struct BoardEvalSummary {
  int asked = 0;     // boards given the EVALUATE task
  int boards = 0;    // that reported figures
  int declined = 0;  // that said they could not (memory pressure, ...)
  runtime::EvalResult combined;  // samples summed, the rest weighted means
  // The spread of the boards' accuracy (classification) or RMSE
  // (regression).
  double min = 0;
  double median = 0;
  double max = 0;
  // The same after the boards' personalisation steps; absent when off.
  std::optional<runtime::EvalResult> personalized;
  double seconds = 0;  // from asking to combining, on the server's clock
  std::vector<BoardEvalEntry> per_board;  // in the report, not the history
};

// Differential privacy's figures after a round (server/privacy/): what the
// job has spent so far, and the round's own settings.
struct PrivacyFigures {
  double epsilon = 0;  // spent so far, at `delta`
  double delta = 0;
  int64_t steps = 0;  // round attempts charged so far
  double sampling_rate = 0;
  double noise_multiplier = 0;
  double clip = 0;
  // Of the round's updates, the share that reached the clip bound.
  double clipped_fraction = 0;
  // Local DP: epsilon and steps are the most spent by one board (the rounds
  // it took part in), not the job's.
  bool local = false;
};

// An asynchronous round (--mode=async): the version it published is the
// round's number; its buffer's updates and how stale they were (versions
// published between a board's pull and its push).
struct VersionFigures {
  int updates = 0;
  double staleness_mean = 0;
  int staleness_max = 0;
};

// A securely aggregated round's session (--secure_aggregation=secagg+):
// the boards it started with, those whose inputs the sum counts, and per
// stage (advertise keys, share keys, masked input, unmask) who dropped, how
// long it took and the bytes boards sent.
struct SecAggFigures {
  int neighbours = 0;  // K
  int threshold = 0;   // t
  int started = 0;
  int survived = 0;
  // The counted boards' weights summed, as the unmasked sum gave it: their
  // samples (each capped at the cohort's largest), or 1 each under DP. A
  // site gateway forwards it as its update's weight (no board pushed one).
  double weight = 0;
  std::array<int, 4> dropped_by_stage{};
  std::array<double, 4> seconds_by_stage{};
  std::array<uint64_t, 4> bytes_up_by_stage{};
  uint64_t bytes_up() const {
    return bytes_up_by_stage[0] + bytes_up_by_stage[1] + bytes_up_by_stage[2] +
           bytes_up_by_stage[3];
  }
};

struct RoundReport {
  uint64_t round = 0;
  int selected = 0;
  int participants = 0;
  int dropped = 0;   // selected but no accepted update
  int rejected = 0;  // updates refused as bad input
  // Boards that sat the round out by their own decision (board-side
  // eligibility: heat, throttling, memory pressure, schedule, too little
  // data): those declining when it opened, and selected ones that declined
  // before training. Not failures: not in `dropped`.
  int declined = 0;
  // Selected clients still out when the round closed at its deadline.
  int stragglers = 0;
  // Selected boards still training when the round closed on the updates it
  // needed (over-selection), and updates of an earlier round that came
  // after it closed (refused; counted in the report of the round they
  // reached).
  int cut_off = 0;
  int late_updates = 0;
  // Of those, the ones whose last heartbeat said they were paused under
  // memory pressure (alive, not dead), and of these, the ones that had
  // released their memory and were waiting to be restarted.
  int paused_stragglers = 0;
  int released_stragglers = 0;
  double round_seconds = 0;
  // Wall time from the job's first round opening to this round's close
  // (time a server was down before a resume not counted): runs compare by
  // it, whatever their rounds are.
  double elapsed_seconds = 0;
  // Open to last accepted update (before aggregation and evaluation).
  double makespan_seconds = 0;
  std::string planner;                  // who planned the round's work
  double planned_makespan_seconds = 0;  // its prediction; 0: none
  uint64_t moved_samples = 0;           // data moves planned for the round
  double aggregation_seconds = 0;
  double eval_seconds = 0;
  // The evaluation ran while the next round trained (overlap_evaluation):
  // eval_seconds is not part of round_seconds.
  bool eval_overlapped = false;
  std::optional<runtime::EvalResult> eval;
  // Why the round's aggregate was refused (not finite, or its evaluation
  // not finite) and the previous global model kept; empty: accepted.
  std::string refused_result;
  // The round's model evaluated on the boards' held-out samples
  // (--evaluate_on_boards); absent when not asked this round.
  std::optional<BoardEvalSummary> board_eval;
  // Under differential privacy (--dp_noise_multiplier); absent otherwise.
  std::optional<PrivacyFigures> privacy;
  // Under --mode=async; absent for synchronous rounds.
  std::optional<VersionFigures> version;
  // Under --secure_aggregation=secagg+; absent otherwise.
  std::optional<SecAggFigures> secagg;
  std::vector<ClientRoundReport> clients;
};

// Asynchronous rounds' state (see BufferedVersions), persisted after every
// update the buffer takes, so a restarted server publishes the versions an
// uninterrupted one would have.
struct AsyncState {
  struct Task {
    std::string client_id;
    uint64_t round = 0;  // whose model it pulled
    std::string task_id;
    uint64_t seed = 0;
  };
  struct Buffered {
    runtime::NamedTensors update;  // as added: rebased and weighted
    uint64_t samples = 0;
    int staleness = 0;
  };
  std::vector<Task> tasks;  // unclaimed ones (a claim is not yet an update)
  std::map<std::string, uint64_t> expired;  // board id -> round
  // The models tasks pulled, by round.
  std::map<uint64_t, std::shared_ptr<const runtime::NamedTensors>> models;
  std::vector<Buffered> buffer;  // the open round's, in the order added
  std::string rng;  // the task generator's state (std::mt19937_64 text)
};

// What the server must persist after a round to continue the job after a
// restart (see server/federation_checkpoint.h).
struct FederationSnapshot {
  uint64_t next_round = 1;
  std::shared_ptr<const runtime::NamedTensors> global;
  std::vector<RegisteredClient> clients;
  // Each round's summary, without its per-board entries (those are in
  // clients.jsonl): it grows with rounds, not with boards x rounds.
  std::vector<RoundReport> history;
  // The work planner's capacity readings, by client name: a restarted
  // server plans with them instead of uniformly until it measures again.
  std::map<std::string, planner::CapacityHistory> capacities;
  // The aggregation strategy's state (server optimizer moments; empty for
  // stateless strategies).
  runtime::NamedTensors strategy_state;
  // The round budget's state (RoundBudget::State); empty: none.
  std::string budget_state;
  // Asynchronous rounds' tasks, models and buffer; absent for synchronous
  // rounds.
  std::optional<AsyncState> async;
  // Taken later than every snapshot of a lower number: a writer that gets
  // two out of order keeps the later (not persisted).
  uint64_t sequence = 0;
};

// Evaluates a model on the server's evaluation set: its first
// `max_samples` samples, or all of them for 0.
using Evaluator = std::function<absl::StatusOr<runtime::EvalResult>(
    const runtime::NamedTensors&, int64_t max_samples)>;
using ReportSink = std::function<void(const RoundReport&)>;
// Called on the driver thread after each round, before the ReportSink.
using SnapshotSink = std::function<void(const FederationSnapshot&)>;

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_ROUND_TYPES_H_
