// Everything fedberry-sim's command line says, as a value: the job the
// server runs, the fleet of emulated boards, the tiers, the transport and
// where the output goes. apps/sim/sim_flags.h reads it from the flags (the
// one place they are read); apps/sim/child_args.h turns it into the
// children's command lines; apps/sim/run_sim.h runs it. The defaults are the
// flags' defaults (sim_flag_table.h; a test holds them equal).
// Thread-safety: a plain value and pure functions.
#ifndef FEDBERRY_APPS_SIM_SIM_PLAN_H_
#define FEDBERRY_APPS_SIM_SIM_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "apps/server/server_args.h"
#include "apps/server/server_config.h"
#include "runtime/image_dataset.h"
#include "runtime/partition.h"
#include "sim/fleet_profile.h"

namespace fedberry::sim {

// The job's settings that are the simulator's own; the rest of the job
// (rounds, model, lr, planner, ...) is the server's, SimPlan::server.
struct SimJob {
  int min_clients = 0;  // 0: all clients
  std::string data = runtime::kDefaultFashionMnistDir;
  // "auto": `data`; empty: no server-side evaluation.
  std::string eval_data = "auto";
  runtime::PartitionSpec::Kind partition = runtime::PartitionSpec::Kind::kIid;
  double alpha = 0.5;
  bool resume = false;  // keep the checkpoints in the output folder
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
  // --site_async_buffer); empty, none: their defaults.
  std::string site_mode;
  std::optional<int> site_async_buffer;
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
  // The server's job: the settings fedberry-sim passes through as the
  // server's own flags (apps/server/server_flags_shared.h: --strategy,
  // --dp_*, --mode, ...) and those its own flags fill (sim_flags.inc:
  // --rounds, --model, --lr, --planner, ...); the rest stays at the
  // server's defaults. ServerArgs adds what SimJob and the fleet say.
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

// Whether --site_mode or --site_async_buffer is given.
bool HasSiteMode(const SimPlan& plan);

// InvalidArgument, with what is wrong, for combinations fedberry-sim cannot
// run: no clients or rounds, more attackers than clients, tiers other than
// 1 or 2, gateways without clients, site flags without tiers, tiers with
// TLS or a fleet profile.
absl::Status CheckSimPlan(const SimPlan& plan);

}  // namespace fedberry::sim

#endif  // FEDBERRY_APPS_SIM_SIM_PLAN_H_
