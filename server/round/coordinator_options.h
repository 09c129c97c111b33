// What a job's rounds are made of: how many, who takes part, when a round
// closes, how updates are checked and aggregated, and which kind of round
// (synchronous or asynchronous) runs. The server's flags fill it
// (fedberry-server); the round coordinator reads it.
#ifndef FEDBERRY_SERVER_ROUND_COORDINATOR_OPTIONS_H_
#define FEDBERRY_SERVER_ROUND_COORDINATOR_OPTIONS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "fedberry/v1/federation.pb.h"
#include "server/fleet/site_gateways.h"
#include "server/fleet/version_gate.h"
#include "server/input_checks.h"
#include "server/planner/round_planner.h"
#include "server/round/board_evaluation.h"
#include "server/round/buffered_versions.h"
#include "server/round/cohort_selection.h"
#include "server/round/join_gate.h"
#include "server/round/round_budget.h"
#include "server/round/round_source.h"
#include "server/round/round_types.h"
#include "server/round/secagg_options.h"
#include "server/strategy/strategy.h"

namespace fedberry::server {

struct CoordinatorOptions {
  int rounds = 5;
  // Tiers: rounds come from OfferRound (the parent's tasks) instead of
  // 1..rounds; each closed round's weighted mean goes to `upstream_sink` and
  // the job ends with Shutdown (the parent said DONE). The strategy must be
  // fedavg: the parent applies the job's own.
  bool upstream = false;
  UpstreamSink upstream_sink;
  // Told of each board whose data does not fit the job's plan (it joined
  // with a plan_error), with its name and reason, both escaped. May be
  // empty.
  RefusedBoardSink refused_board_sink;
  // The oldest client release that may join (--min_client_version); an
  // older board is refused at join and told to upgrade.
  VersionGate version_gate;
  // Who may join as a site gateway, forwarding its boards' sum
  // (--site_gateways); a join declaring boards from anyone else is refused.
  SiteGateways site_gateways;
  double fraction = 1.0;  // share of available clients per round
  // Partial participation: a round needs `target_updates` updates (0: the
  // cohort that fraction and min_clients_per_round give), selects
  // over_select times that many boards (as many as are available), and
  // closes on the first updates it needs; later ones are refused and
  // counted (RoundReport::late_updates).
  int target_updates = 0;
  double over_select = 1.0;
  int min_clients_per_round = 2;  // cohort size floor
  int min_clients_to_start = 2;   // available clients needed to open a round
  double quorum = 0.5;            // share of the cohort that closes a round
                                  // at its deadline
  absl::Duration round_deadline = absl::Minutes(10);
  // A client not heard from for this long is not selected (it may be gone).
  absl::Duration liveness = absl::Minutes(2);
  // At the deadline, a round below its quorum waits up to this much longer
  // while selected clients say (by heartbeat, within `liveness`) that their
  // training is paused under memory pressure, or said that they released
  // their memory (no heartbeats follow until their supervisor restarts
  // them, so no liveness applies): such boards are alive, not dead. Zero:
  // no extra wait (paused stragglers are still counted).
  absl::Duration paused_grace = absl::ZeroDuration();
  v1::TrainConfig train;  // model, epochs/steps, batch, lr, momentum
  uint64_t seed = 1;      // cohort selection and data order seeds
  std::string job_id = "job";
  // How local work is spread over the cohort (server/planner/): "uniform"
  // keeps `train` for everyone; greedy and ilp set each client's
  // local_steps from what its earlier rounds measured; with
  // planning.data_moves they move samples between consenting clients
  // instead (see SampleRelay).
  planner::RoundPlanOptions planning;
  // How long a receiver's pull waits for its sender's samples.
  absl::Duration data_move_wait = absl::Minutes(2);
  // An update may move the model at most this many times the global
  // model's L2 norm (see UpdateBound); <= 0: no bound.
  double max_update_ratio = 1000;
  // A board may declare at most this many times the fleet's median
  // samples a board (see DeclaredSizeBound); <= 0: no bound.
  double max_samples_ratio = 10;
  // Bounds on what a board may declare at join.
  InputLimits limits;
  // Registered clients at most; a join beyond it is refused
  // (ResourceExhausted) once boards that never polled are pruned.
  int max_clients = 10000;
  // How a round's updates become the next global model (fedavg when the
  // options cannot make a strategy; the server checks them first).
  StrategyOptions strategy;
  // How boards send updates (v1::Encoding; RAW: whole weights) and the share
  // of values TOPK keeps; how the server sends the model (RAW or FP16).
  v1::Encoding update_encoding = v1::ENCODING_RAW;
  double topk_fraction = 0.01;
  v1::Encoding model_encoding = v1::ENCODING_RAW;
  // The parameters boards train (TrainingPlan.trainable_tensors); empty:
  // all. Updates then carry those and the buffers only, and the frozen
  // tensors stay the initial model's (runtime/trainable_set.h).
  std::vector<std::string> trainable_tensors;
  // Evaluate a round's model while the next round trains instead of before
  // it opens (not for the last round, nor with `upstream`). The model is
  // published once its aggregate is finite and its first
  // kEvaluationProbeSamples evaluate to a finite loss; the whole
  // evaluation then runs on a thread of its own, and the round's report
  // (and a snapshot with its figures) follows when it ends, always before
  // the next round's.
  bool overlap_evaluation = false;
  // Evaluation on the boards (see BoardEvaluation): after the rounds it
  // names, the round's report waits while the boards that are there
  // evaluate its model on their held-out samples, and carries their
  // figures. Not with `upstream` (a gateway's boards evaluate for no one).
  BoardEvalOptions board_eval;
  // Who trains each round (null: SharedCohorts of fraction,
  // target_updates, over_select and min_clients_per_round).
  std::shared_ptr<const CohortSelection> selection;
  // What the job spends round by round (differential privacy); null: none.
  std::shared_ptr<RoundBudget> budget;
  // No training: once min_clients_to_start boards are there, the boards
  // evaluate the initial model (as round 0) and the job ends.
  bool evaluate_only = false;
  // Asynchronous rounds (--mode=async; see BufferedVersions): no cohort is
  // drawn; a board that asks is handed the open round's model at once, and
  // a round closes (publishes its version) once its buffer holds
  // async->buffer updates, each weighted by its staleness. `rounds` counts
  // versions. Unset: synchronous rounds.
  std::optional<AsyncOptions> async;
  // Secure aggregation (--secure_aggregation=secagg+; see SecAggRounds):
  // synchronous rounds whose boards' updates the gateway never sees.
  std::optional<SecAggOptions> secagg;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_COORDINATOR_OPTIONS_H_
