#include "server/fleet_view.h"

#include "server/round_coordinator.h"
#include "server/server_metrics.h"

namespace fedberry::server {
namespace {

FleetSecAgg FleetSecAggOf(uint64_t round, const SecAggFigures& f) {
  FleetSecAgg s;
  s.round = round;
  s.neighbours = f.neighbours;
  s.threshold = f.threshold;
  s.started = f.started;
  s.survived = f.survived;
  s.dropped_by_stage = f.dropped_by_stage;
  s.seconds_by_stage = f.seconds_by_stage;
  s.bytes_up = f.bytes_up();
  return s;
}

}  // namespace

FleetStatus FleetOf(const RoundCoordinator& coordinator,
                    const ServerMetrics& metrics, const FleetJob& job,
                    absl::Time now) {
  FleetStatus fleet;
  fleet.now = now;
  fleet.job_id = job.job_id;
  fleet.model = job.model;
  fleet.strategy = job.strategy;
  fleet.min_client_version = coordinator.options().version_gate.minimum();
  fleet.state = coordinator.phase();
  fleet.round = coordinator.current_round();
  fleet.total_rounds = coordinator.total_rounds();
  for (const RoundReport& r : coordinator.history()) {
    if (r.eval && r.refused_result.empty() && !r.eval->regression) {
      fleet.accuracy.emplace_back(r.round, r.eval->accuracy);
    }
    if (r.secagg) fleet.secagg = FleetSecAggOf(r.round, *r.secagg);
  }
  fleet.boards = coordinator.Boards();
  metrics.Glance(fleet.boards);
  return fleet;
}

}  // namespace fedberry::server
