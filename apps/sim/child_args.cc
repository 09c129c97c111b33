#include "apps/sim/child_args.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "apps/server/server_args.h"

namespace fedberry::sim {
namespace {

// Appends --name=value for each value given (empty: the child's default).
void AddGivenFlags(
    std::vector<std::string>& argv,
    const std::vector<std::pair<const char*, std::string>>& flags) {
  for (const auto& [name, value] : flags) {
    if (!value.empty()) argv.push_back(absl::StrCat("--", name, "=", value));
  }
}

// The job's flags that the server always gets.
std::vector<std::string> ServerJobArgs(const SimPlan& plan) {
  const SimJob& job = plan.job;
  const int min_clients = ServerMinClients(plan);
  return {
      absl::StrCat("--rounds=", job.rounds),
      absl::StrCat("--fraction=", job.fraction),
      absl::StrCat("--min_clients=", min_clients),
      absl::StrCat("--min_clients_to_start=", min_clients),
      absl::StrCat("--local_epochs=", job.local_epochs),
      absl::StrCat("--local_steps=", job.local_steps),
      absl::StrCat("--batch_size=", job.batch_size),
      absl::StrCat("--lr=", job.lr),
      absl::StrCat("--momentum=", job.momentum),
      absl::StrCat("--round_deadline=",
                   absl::FormatDuration(job.round_deadline)),
      absl::StrCat("--model=", job.model),
      absl::StrCat("--eval_data=",
                   job.eval_data == "auto" ? job.data : job.eval_data),
      absl::StrCat("--seed=", job.seed),
      absl::StrCat("--threads=", std::max(1, plan.fleet.threads_per_client)),
      absl::StrCat("--planner=", job.planner),
      absl::StrCat("--planner_max_factor=", job.planner_max_factor),
      absl::StrCat("--data_moves=", job.data_moves),
      absl::StrCat("--overlap_evaluation=", job.overlap_evaluation),
  };
}

// Where client `index` finds its server's address once it listens.
std::string ServerReadyFile(const SimPlan& plan, int index) {
  const int gateways = GatewayCount(plan);
  return absl::StrCat(plan.output.dir,
                      gateways > 0 ? absl::StrCat("/gateway-", index % gateways)
                                   : std::string(),
                      "/server.addr");
}

// Board `index`'s line of the fleet profile, as the emulated client's flags.
void AddFleetProfile(const SimPlan& plan, int index,
                     std::vector<std::string>& argv) {
  if (plan.fleet.boards.empty()) return;
  const BoardProfile& board = plan.fleet.boards[index];
  argv.push_back(absl::StrCat("--data_fraction=", board.data_fraction));
  argv.push_back(absl::StrCat("--compute_slowdown=", board.compute_slowdown));
  if (board.pause_every > 0) {
    argv.push_back(absl::StrCat("--pause_every=", board.pause_every));
    argv.push_back(absl::StrCat("--pause_seconds=", board.pause_seconds));
  }
}

}  // namespace

std::vector<std::string> ServerArgs(const SimPlan& plan, const SimPorts& ports,
                                    const LocalPki* pki) {
  const bool shaped = HasShapedLinks(plan);
  std::vector<std::string> argv = {
      plan.output.bin_dir + "/fedberry-server",
      absl::StrCat(
          "--listen=", shaped ? "0.0.0.0:" : "127.0.0.1:", ports.server),
      absl::StrCat("--output=", plan.output.dir)};
  for (std::string& arg : ServerJobArgs(plan)) argv.push_back(std::move(arg));
  for (std::string& arg : apps::ServerArgsFrom(plan.server)) {
    argv.push_back(std::move(arg));
  }
  if (plan.job.skip_bad_rows) argv.push_back("--skip_bad_rows");
  if (pki != nullptr) {
    argv.push_back(absl::StrCat("--tls_cert=", pki->server_cert));
    argv.push_back(absl::StrCat("--tls_key=", pki->server_key));
    argv.push_back(absl::StrCat("--client_ca=", pki->ca_cert));
  } else if (shaped) {
    // Shaped clients dial a veth address, not loopback.
    argv.push_back("--insecure");
  }
  return argv;
}

std::vector<std::string> GatewayArgs(const SimPlan& plan, int g,
                                     const SimPorts& ports) {
  const int boards = GatewayBoards(plan, g);
  // Under DP a gateway draws its boards with the root's q: a draw of any
  // size runs (a smaller one than --min_clients would be forwarded empty).
  const bool dp = plan.server.dp.noise_multiplier > 0;
  std::vector<std::string> argv = {
      plan.output.bin_dir + "/fedberry-server",
      absl::StrCat("--upstream=127.0.0.1:", ports.server),
      absl::StrCat("--upstream_name=sim-gateway-", g),
      absl::StrCat("--listen=127.0.0.1:", ports.gateways[g]),
      absl::StrCat("--output=", GatewayDir(plan, g)),
      absl::StrCat("--min_clients=", dp ? 1 : boards),
      absl::StrCat("--min_clients_to_start=", boards),
      absl::StrCat("--round_deadline=",
                   absl::FormatDuration(plan.job.round_deadline)),
      absl::StrCat("--seed=", plan.job.seed),
      "--eval_data="};
  AddGivenFlags(argv, {{"mode", plan.tiers.site_mode},
                       {"async_buffer", plan.tiers.site_async_buffer}});
  return argv;
}

std::vector<std::string> ClientArgs(const SimPlan& plan, int index,
                                    const SimPorts& ports,
                                    const ShapedLink* link,
                                    const LocalPki* pki) {
  const int gateways = GatewayCount(plan);
  const int port =
      gateways > 0 ? ports.gateways[index % gateways] : ports.server;
  const std::string& out = plan.output.dir;
  std::vector<std::string> argv = {
      plan.output.bin_dir + "/fedberry-emulated-client",
      absl::StrCat(
          "--server=",
          link != nullptr ? link->host_address : std::string("127.0.0.1"), ":",
          port),
      absl::StrCat("--data=", plan.job.data),
      absl::StrCat("--partition_index=", index),
      absl::StrCat("--partition_count=", ClientCount(plan)),
      absl::StrCat("--partition=", plan.job.partition),
      absl::StrCat("--alpha=", plan.job.alpha),
      absl::StrCat("--threads=", plan.fleet.threads_per_client),
      absl::StrCat("--name=sim-client-", index),
      "--give_up_after=60s",
      // Started with its server: dials once the server listens.
      absl::StrCat("--server_ready_file=", ServerReadyFile(plan, index)),
      absl::StrCat("--checkpoint_dir=", out, "/client-checkpoints/client-",
                   index),
      absl::StrCat("--checkpoint_every_batches=",
                   plan.fleet.checkpoint_every_batches),
  };
  if (plan.job.data_moves) argv.push_back("--allow_data_moves");
  if (plan.job.skip_bad_rows) argv.push_back("--skip_bad_rows");
  if (index < plan.fleet.attackers) {
    argv.push_back(absl::StrCat("--attack=", plan.fleet.attack));
  }
  if (pki != nullptr) {
    argv.push_back(absl::StrCat("--tls_ca=", pki->ca_cert));
    argv.push_back(absl::StrCat("--tls_cert=", pki->board_certs[index]));
    argv.push_back(absl::StrCat("--tls_key=", pki->board_keys[index]));
    argv.push_back(absl::StrCat("--tls_server_name=", pki->server_name));
  } else if (link != nullptr) {
    argv.push_back("--insecure");
  }
  AddFleetProfile(plan, index, argv);
  return argv;
}

}  // namespace fedberry::sim
