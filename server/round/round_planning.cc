#include "server/round/round_planning.h"

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fedberry::server {
namespace {

RoundWork PlanSteps(const planner::RoundPlanner& planner,
                    const std::vector<PlanningMember>& cohort,
                    const v1::TrainConfig& train, uint64_t round) {
  RoundWork work;
  work.planner = "uniform";
  std::vector<planner::PlannedClient> planned;
  std::map<std::string, std::string> id_of;  // name -> id
  for (const PlanningMember& m : cohort) {
    planned.push_back({m.name, m.num_samples});
    id_of[m.name] = m.id;
  }
  auto plan = planner.PlanRound(planned, train);
  if (!plan.ok()) {
    // Not expected (the request is built within its bounds); the round
    // runs the job's config rather than not at all.
    spdlog::error("round {}: planning failed, uniform this round: {}", round,
                  plan.status().ToString());
    return work;
  }
  spdlog::info("round {}: {}", round, plan->summary);
  if (plan->steps.empty()) return work;
  work.planner = plan->plan.planner;
  work.planned_makespan_seconds = plan->plan.makespan;
  for (const auto& [name, steps] : plan->steps) {
    const std::string& id = id_of[name];
    if (steps > 0) {
      work.steps[id] = steps;
    } else {
      // No work (no data): not part of this round.
      work.idle.insert(id);
      spdlog::info("round {}: {} has no work planned and sits this round out",
                   round, name);
    }
  }
  return work;
}

RoundWork PlanMoves(const planner::RoundPlanner& planner,
                    const std::vector<PlanningMember>& cohort,
                    const v1::TrainConfig& train, uint64_t round,
                    const std::string& task_id) {
  RoundWork work;
  work.planner = "uniform";
  std::vector<planner::MovePlannedClient> planned;
  for (const PlanningMember& m : cohort) {
    planned.push_back(
        {m.name, m.num_samples, m.allow_data_moves, m.sample_bytes});
  }
  auto plan = planner.PlanMoves(planned, train);
  if (!plan.ok()) {
    spdlog::error("round {}: planning data moves failed, none this round: {}",
                  round, plan.status().ToString());
    return work;
  }
  spdlog::info("round {}: {}", round, plan->summary);
  if (plan->plan.moves.empty()) return work;
  work.planner = absl::StrCat(plan->plan.planner, "+moves");
  work.planned_makespan_seconds = plan->plan.makespan;
  for (const planner::DataMove& m : plan->plan.moves) {
    PlannedMove move;
    move.id = absl::StrFormat("%s-m%d", task_id, work.moves.size() + 1);
    move.from = plan->request.clients[m.from].id;
    move.to = plan->request.clients[m.to].id;
    move.samples = m.samples;
    work.moved_samples += m.samples;
    spdlog::info("round {}: data move {}: {} samples from {} to {}", round,
                 move.id, move.samples, move.from, move.to);
    work.moves.push_back(std::move(move));
  }
  return work;
}

}  // namespace

RoundWork PlanRoundWork(const planner::RoundPlanner* planner,
                        const std::vector<PlanningMember>& cohort,
                        const v1::TrainConfig& train, uint64_t round,
                        const std::string& task_id) {
  if (planner == nullptr) {
    RoundWork uniform;
    uniform.planner = "uniform";
    return uniform;
  }
  return planner->options().data_moves
             ? PlanMoves(*planner, cohort, train, round, task_id)
             : PlanSteps(*planner, cohort, train, round);
}

planner::CapacityReading CapacityOf(const v1::UpdateHeader& header,
                                    std::optional<absl::Duration> upload) {
  planner::CapacityReading reading;
  const v1::ResourceMetrics& m = header.resources();
  if (m.has_samples_per_second()) {
    reading.samples_per_second = m.samples_per_second();
  }
  // The client's round less its training: task, model pull, encoding
  // (and less data moves, whose bytes are not in rpc_received_bytes).
  if (m.has_wall_seconds() && m.has_rpc_received_bytes()) {
    reading.download_seconds = m.wall_seconds() -
                               header.metrics().train_seconds() -
                               m.data_move_seconds();
    reading.download_bytes = m.rpc_received_bytes();
  }
  if (upload && m.has_rpc_sent_bytes()) {
    reading.upload_seconds = absl::ToDoubleSeconds(*upload);
    reading.upload_bytes = m.rpc_sent_bytes();
  }
  return reading;
}

}  // namespace fedberry::server
