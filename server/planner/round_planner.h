// Plans one round for the round coordinator: turns the selected clients,
// the job's TrainConfig and the capacity estimates into a PlanRequest, runs
// the chosen WorkPlanner and returns each client's local steps.
//
// The round's total work is what the job asked for: local_steps times the
// clients that hold data, or (in epoch mode) the steps of local_epochs whole
// epochs summed over them. Bounds per client: at least
// max(1, min_factor x the uniform share) steps and at most max_factor x the
// uniform share (and at most max_epochs passes over the client's data, when
// set); a client with no data gets 0 steps. When the bounds cannot hold the
// total, the total is clamped and the plan says so in its note.
// Thread-safety: not thread-safe.
#ifndef FEDBERRY_SERVER_PLANNER_ROUND_PLANNER_H_
#define FEDBERRY_SERVER_PLANNER_ROUND_PLANNER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fedberry/v1/federation.pb.h"
#include "server/planner/capacity_estimator.h"
#include "server/planner/data_moves.h"
#include "server/planner/work_plan.h"

namespace fedberry::server::planner {

struct RoundPlanOptions {
  std::string planner = "uniform";  // uniform, greedy, ilp
  double min_factor = 0.0;  // share bounds, relative to the uniform share
  double max_factor = 4.0;
  int max_epochs = 0;  // 0: no bound by the data a client holds
  double ilp_time_limit_seconds = 1.0;
  int estimate_window = 3;  // rounds in each capacity median
  // The opt-in mode for trusted clusters: instead of setting local steps,
  // move training samples from slow clients to fast ones for the round
  // (greedy or ilp only; epoch mode only, where every sample is trained
  // local_epochs times per round by exactly one client).
  bool data_moves = false;
};

struct PlannedClient {
  std::string id;
  uint64_t num_samples = 0;  // samples the client holds
};

struct RoundPlan {
  // Steps per client id. Empty: leave the job's TrainConfig as it is (the
  // uniform planner, or nothing measured yet).
  std::map<std::string, int64_t> steps;
  Plan plan;
  PlanRequest request;
  std::string summary;  // one line for the log
};

// A client as the data-move planner sees it.
struct MovePlannedClient {
  std::string id;
  uint64_t num_samples = 0;
  bool allows_moves = false;  // it joined with --allow_data_moves
  uint64_t sample_bytes = 0;  // one sample on the wire; 0: unknown
};

struct RoundMovePlan {
  MovePlan plan;  // empty moves: nobody moves data this round
  MoveRequest request;
  std::string summary;  // one line for the log
};

class RoundPlanner {
 public:
  // InvalidArgument for an unknown planner name or bad factors.
  static absl::StatusOr<std::unique_ptr<RoundPlanner>> Create(
      const RoundPlanOptions& options);

  const RoundPlanOptions& options() const { return options_; }
  CapacityEstimator& estimator() { return estimator_; }

  // The plan for `clients` under `config`.
  absl::StatusOr<RoundPlan> PlanRound(const std::vector<PlannedClient>& clients,
                                      const v1::TrainConfig& config) const;

  // The data moves for `clients` under `config` (data_moves mode).
  // InvalidArgument when `config` is not in epoch mode.
  absl::StatusOr<RoundMovePlan> PlanMoves(
      const std::vector<MovePlannedClient>& clients,
      const v1::TrainConfig& config) const;

  // Builds the request PlanRound solves (exposed for tests and benches).
  // False when no selected client has a capacity estimate yet.
  bool BuildRequest(const std::vector<PlannedClient>& clients,
                    const v1::TrainConfig& config, PlanRequest* request,
                    std::string* note) const;

 private:
  // What a client not measured yet is taken to do: the median of the
  // measured ones among `ids`. Nullopt when none of them is measured.
  struct MedianCapacity {
    double seconds_per_sample = 0;
    double transfer_seconds = 0;
    double upload_seconds_per_byte = 0;
    double download_seconds_per_byte = 0;
  };
  std::optional<MedianCapacity> MedianOf(
      const std::vector<std::string>& ids) const;

  RoundPlanner(RoundPlanOptions options, std::unique_ptr<WorkPlanner> planner)
      : options_(std::move(options)),
        planner_(std::move(planner)),
        estimator_(options_.estimate_window) {}

  RoundPlanOptions options_;
  std::unique_ptr<WorkPlanner> planner_;
  CapacityEstimator estimator_;
};

}  // namespace fedberry::server::planner

#endif  // FEDBERRY_SERVER_PLANNER_ROUND_PLANNER_H_
