// Everything fedberry-sim's command line says, as a value: the job the
// server runs, the fleet of emulated boards, the tiers, the transport and
// where the output goes. apps/sim/sim_flags.h reads it from the flags (the
// one place they are read); apps/sim/child_args.h turns it into the
// children's command lines; apps/sim/run_sim.h runs it. The defaults are the
// flags' defaults.
// Thread-safety: a plain value and pure functions.
#ifndef FEDBERRY_APPS_SIM_SIM_PLAN_H_
#define FEDBERRY_APPS_SIM_SIM_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "apps/server/server_args.h"
#include "apps/server/server_config.h"
#include "runtime/partition.h"
#include "sim/fleet_profile.h"

namespace fedberry::sim {

// The job fedberry-server runs (its flags of the same names).
struct SimJob {
  int rounds = 5;
  double fraction = 1.0;
  int min_clients = 0;  // 0: all clients
  int local_epochs = 1;
  int local_steps = 0;  // 0: whole epochs
  int batch_size = 32;
  double lr = 0.05;
  double momentum = 0.9;
  absl::Duration round_deadline = absl::Minutes(10);
  std::string model = "lenet5";
  std::string data;  // the flag's default: the Fashion-MNIST folder
  // "auto": `data`; empty: no server-side evaluation.
  std::string eval_data = "auto";
  runtime::PartitionSpec::Kind partition = runtime::PartitionSpec::Kind::kIid;
  double alpha = 0.5;
  uint64_t seed = 1;
  std::string planner = "uniform";
  double planner_max_factor = 4.0;
  bool data_moves = false;
  bool overlap_evaluation = true;
  bool skip_bad_rows = false;  // the server's and every client's
  bool resume = false;         // keep the checkpoints in the output folder
};

// The emulated boards (fedberry-emulated-client processes).
struct SimFleet {
  int clients = 4;                   // unless `boards` is given
  std::string profile_path;          // --fleet_profile; empty: identical boards
  std::vector<BoardProfile> boards;  // read from profile_path
  int threads_per_client = 1;
  int checkpoint_every_batches = 100;
  int attackers = 0;  // the first K clients send poisoned updates
  std::string attack = "scale:10";
  // The peak memory each process may reach (the README's figures for the
  // default job); the closing table flags a process above its budget.
  uint64_t board_rss_budget = uint64_t{150} << 20;
  uint64_t server_rss_budget = uint64_t{170} << 20;  // server and gateways
};

// Boards joining site gateways (fedberry-server --upstream) instead of the
// server.
struct SimTiers {
  int tiers = 1;     // 1 or 2
  int gateways = 2;  // with tiers == 2
  // The gateways' --mode and --async_buffer (--site_mode,
  // --site_async_buffer); none: their defaults.
  std::optional<apps::ModeConfig> site;
};

struct SimTransport {
  bool tls = false;  // mutual TLS with fresh certificates in <output>/pki
};

struct SimOutput {
  std::string dir = "fedberry-sim-out";
  // Folder of fedberry-server and fedberry-emulated-client; SimPlanFromFlags
  // resolves an empty --bin_dir to fedberry-sim's own folder.
  std::string bin_dir;
};

struct SimPlan {
  SimJob job;
  // fedberry-server's settings that fedberry-sim passes through as the
  // server's own flags (apps/server/server_flags_shared.h: --strategy,
  // --dp_*, --mode, ...); the rest stays at the server's defaults, and
  // what SimJob says (rounds, model, ...) is given from the job.
  apps::ServerConfig server = apps::ServerFlagDefaults();
  SimFleet fleet;
  SimTiers tiers;
  SimTransport transport;
  SimOutput output;
};

// Number of clients: the fleet profile's boards, else --clients.
int ClientCount(const SimPlan& plan);
// Number of site gateways: 0 with one tier.
int GatewayCount(const SimPlan& plan);
// Whether some board's link is shaped (it then dials a veth address).
bool HasShapedLinks(const SimPlan& plan);
// The server's --min_clients and --min_clients_to_start: the gateways with
// tiers (each waits for its own clients), else --min_clients or all.
int ServerMinClients(const SimPlan& plan);
// Gateway `g`'s boards: client i joins gateway i % gateways.
int GatewayBoards(const SimPlan& plan, int g);
// Gateway `g`'s name at the root (--upstream_name), sim-gateway-<g>.
std::string GatewayName(int g);
// Gateway `g`'s output folder, <output>/gateway-<g>.
std::string GatewayDir(const SimPlan& plan, int g);

// InvalidArgument, with what is wrong, for combinations fedberry-sim cannot
// run: no clients or rounds, more attackers than clients, tiers other than
// 1 or 2, gateways without clients, site flags without tiers, tiers with
// TLS or a fleet profile.
absl::Status CheckSimPlan(const SimPlan& plan);

}  // namespace fedberry::sim

#endif  // FEDBERRY_APPS_SIM_SIM_PLAN_H_
