// How a round's local work is spread over its cohort: the work planner's
// steps per board, or (data-move mode) the samples boards hand each other.
// A pure step of opening a round: the coordinator applies what it returns
// (steps into each board's task, boards with no work out of the cohort,
// the moves into the sample relay).
// Thread-safety: const on the planner, as thread-safe as it.
#ifndef FEDBERRY_SERVER_ROUND_ROUND_PLANNING_H_
#define FEDBERRY_SERVER_ROUND_ROUND_PLANNING_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "fedberry/v1/federation.pb.h"
#include "server/planner/round_planner.h"
#include "server/sample_relay.h"

namespace fedberry::server {

// A board of the cohort as the planners see it.
struct PlanningMember {
  std::string id;
  std::string name;
  uint64_t num_samples = 0;
  bool allow_data_moves = false;
  uint64_t sample_bytes = 0;
};

struct RoundWork {
  std::string planner;  // who planned it ("uniform": nobody)
  double planned_makespan_seconds = 0;
  std::map<std::string, int64_t> steps;  // by id; absent: the job's config
  std::set<std::string> idle;            // ids with no work: not in the round
  std::vector<PlannedMove> moves;        // data-move mode
  uint64_t moved_samples = 0;
};

// The work of round `round` (task `task_id`, which names its moves) for
// `cohort` under `train`. `planner` null: uniform. A planner that fails
// leaves the round uniform, saying so in the log.
RoundWork PlanRoundWork(const planner::RoundPlanner* planner,
                        const std::vector<PlanningMember>& cohort,
                        const v1::TrainConfig& train, uint64_t round,
                        const std::string& task_id);

// What an accepted update says of its board's capacity, for the planner's
// estimates: its training throughput, its round less training and data
// moves as the model's download, and `upload` (from the push's start to
// its end, when known) as the update's upload.
planner::CapacityReading CapacityOf(const v1::UpdateHeader& header,
                                    std::optional<absl::Duration> upload);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_ROUND_PLANNING_H_
