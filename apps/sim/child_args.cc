#include "apps/sim/child_args.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "apps/server/server_args.h"
#include "client/client_args.h"

namespace fedberry::sim {
namespace {

// The server's config: the job the plan gives the server (its own flags
// and those the simulator's fill), with what the simulator's fleet and
// tiers say.
apps::ServerConfig ServerConfigOf(const SimPlan& plan) {
  const SimJob& job = plan.job;
  apps::ServerConfig config = plan.server;
  apps::RoundsConfig& rounds = config.rounds;
  rounds.min_clients = ServerMinClients(plan);
  rounds.min_clients_to_start = rounds.min_clients;
  config.plan.eval_data = job.eval_data == "auto" ? job.data : job.eval_data;
  config.threads = std::max(1, plan.fleet.threads_per_client);
  return config;
}

// Where client `index` finds its server's address once it listens.
std::string ServerReadyFile(const SimPlan& plan, int index) {
  const int gateways = GatewayCount(plan);
  return absl::StrCat(plan.output.dir,
                      gateways > 0 ? absl::StrCat("/gateway-", index % gateways)
                                   : std::string(),
                      "/server.addr");
}

// Board `index`'s config: its shard of the job's data, its server, and
// checkpoints in the output folder.
client::ClientConfig ClientConfigOf(const SimPlan& plan, int index,
                                    const std::string& server) {
  client::ClientConfig config = client::ClientFlagDefaults();
  config.transport.server = server;
  config.data.spec = plan.job.data;
  runtime::PartitionSpec& partition = config.data.partition;
  partition.index = index;
  partition.count = ClientCount(plan);
  partition.kind = plan.job.partition;
  partition.alpha = plan.job.alpha;
  config.threads = plan.fleet.threads_per_client;
  config.name = absl::StrCat("sim-client-", index);
  config.give_up_after = absl::Seconds(60);
  // Started with its server: dials once the server listens.
  config.server_ready_file = ServerReadyFile(plan, index);
  config.checkpoint_dir =
      absl::StrCat(plan.output.dir, "/client-checkpoints/client-", index);
  config.checkpoint.every_batches = plan.fleet.checkpoint_every_batches;
  config.allow_data_moves = plan.server.planner.data_moves;
  config.skip_bad_rows = plan.server.plan.skip_bad_rows;
  return config;
}

// Board `index`'s test instruments: the attack and its line of the fleet
// profile, flags of fedberry-emulated-client only.
void AddTestInstruments(const SimPlan& plan, int index,
                        std::vector<std::string>& argv) {
  if (index < plan.fleet.attackers) {
    argv.push_back(absl::StrCat("--attack=", plan.fleet.attack));
  }
  if (plan.fleet.boards.empty()) return;
  const BoardProfile& board = plan.fleet.boards[index];
  argv.push_back(absl::StrCat("--data_fraction=", board.data_fraction));
  argv.push_back(absl::StrCat("--compute_slowdown=", board.compute_slowdown));
  if (board.pause_every > 0) {
    argv.push_back(absl::StrCat("--pause_every=", board.pause_every));
    argv.push_back(absl::StrCat("--pause_seconds=", board.pause_seconds));
  }
  if (board.secagg_forge_signature) {
    argv.push_back("--secagg_forge_signature");
  }
  if (board.secagg_kill_round > 0) {
    argv.push_back(absl::StrCat("--secagg_kill_at=", board.secagg_kill_round,
                                ":", board.secagg_kill_stage));
  }
}

// `config`'s flags after `program`.
template <typename Config>
std::vector<std::string> CommandLine(
    std::string program, const Config& config,
    std::vector<std::string> (*args_from)(const Config&)) {
  std::vector<std::string> argv = {std::move(program)};
  for (std::string& arg : args_from(config)) argv.push_back(std::move(arg));
  return argv;
}

}  // namespace

std::vector<std::string> ServerArgs(const SimPlan& plan, const SimPorts& ports,
                                    const LocalPki* pki) {
  apps::ServerConfig config = ServerConfigOf(plan);
  const bool shaped = HasShapedLinks(plan);
  security::ServerTransportOptions& transport = config.transport.transport;
  transport.listen =
      absl::StrCat(shaped ? "0.0.0.0:" : "127.0.0.1:", ports.server);
  config.output.dir = plan.output.dir;
  // Under tiers secure aggregation runs at the site gateways, each over its
  // own boards; the root takes their sums.
  if (GatewayCount(plan) > 0) config.secagg.mode = "off";
  // The root takes forwarded sums from the simulator's gateways only.
  std::vector<std::string> gateways;
  for (int g = 0; g < GatewayCount(plan); ++g) {
    gateways.push_back(
        absl::StrCat(GatewayName(g), ":", GatewayBoards(plan, g)));
  }
  config.fleet.site_gateways = absl::StrJoin(gateways, ",");
  if (pki != nullptr) {
    transport.tls = {pki->server_cert, pki->server_key, pki->ca_cert};
  } else if (shaped) {
    // Shaped clients dial a veth address, not loopback.
    transport.insecure = true;
  }
  return CommandLine(plan.output.bin_dir + "/fedberry-server", config,
                     &apps::ServerArgsFrom);
}

std::vector<std::string> GatewayArgs(const SimPlan& plan, int g,
                                     const SimPorts& ports) {
  const int boards = GatewayBoards(plan, g);
  apps::ServerConfig config = apps::ServerFlagDefaults();
  config.gateway.link.server = absl::StrCat("127.0.0.1:", ports.server);
  config.gateway.name = GatewayName(g);
  config.transport.transport.listen =
      absl::StrCat("127.0.0.1:", ports.gateways[g]);
  config.output.dir = GatewayDir(plan, g);
  // Under DP a gateway draws its boards with the root's q: a draw of any
  // size runs (a smaller one than --min_clients would be forwarded empty).
  const bool dp = plan.server.dp.noise_multiplier > 0;
  config.rounds.min_clients = dp ? 1 : boards;
  config.rounds.min_clients_to_start = boards;
  config.rounds.round_deadline = plan.server.rounds.round_deadline;
  config.plan.seed = plan.server.plan.seed;
  config.plan.eval_data = "";
  if (!plan.tiers.site_mode.empty()) config.mode.mode = plan.tiers.site_mode;
  if (plan.tiers.site_async_buffer) {
    config.mode.async_buffer = *plan.tiers.site_async_buffer;
  }
  config.secagg = plan.server.secagg;
  return CommandLine(plan.output.bin_dir + "/fedberry-server", config,
                     &apps::ServerArgsFrom);
}

std::vector<std::string> ClientArgs(const SimPlan& plan, int index,
                                    const SimPorts& ports,
                                    const ShapedLink* link,
                                    const LocalPki* pki) {
  const int gateways = GatewayCount(plan);
  const int port =
      gateways > 0 ? ports.gateways[index % gateways] : ports.server;
  client::ClientConfig config = ClientConfigOf(
      plan, index,
      absl::StrCat(link != nullptr ? link->host_address : "127.0.0.1", ":",
                   port));
  if (pki != nullptr) {
    config.transport.tls = {pki->ca_cert, pki->board_certs[index],
                            pki->board_keys[index], pki->server_name};
  } else if (link != nullptr) {
    config.transport.insecure = true;
  }
  std::vector<std::string> argv =
      CommandLine(plan.output.bin_dir + "/fedberry-emulated-client", config,
                  &client::ClientArgsFrom);
  AddTestInstruments(plan, index, argv);
  return argv;
}

}  // namespace fedberry::sim
