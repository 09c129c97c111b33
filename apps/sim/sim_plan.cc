#include "apps/sim/sim_plan.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fedberry::sim {

int ClientCount(const SimPlan& plan) {
  return plan.fleet.boards.empty() ? plan.fleet.clients
                                   : static_cast<int>(plan.fleet.boards.size());
}

int GatewayCount(const SimPlan& plan) {
  return plan.tiers.tiers == 2 ? plan.tiers.gateways : 0;
}

bool HasShapedLinks(const SimPlan& plan) {
  for (const auto& b : plan.fleet.boards) {
    if (b.bandwidth_mbit > 0) return true;
  }
  return false;
}

int ServerMinClients(const SimPlan& plan) {
  if (GatewayCount(plan) > 0) return GatewayCount(plan);
  return plan.job.min_clients > 0 ? plan.job.min_clients : ClientCount(plan);
}

int GatewayBoards(const SimPlan& plan, int g) {
  const int n = ClientCount(plan);
  const int gateways = GatewayCount(plan);
  return n / gateways + (g < n % gateways ? 1 : 0);
}

bool HasSiteMode(const SimPlan& plan) {
  return !plan.tiers.site_mode.empty() ||
         plan.tiers.site_async_buffer.has_value();
}

std::string GatewayName(int g) { return absl::StrCat("sim-gateway-", g); }

std::string GatewayDir(const SimPlan& plan, int g) {
  return absl::StrCat(plan.output.dir, "/gateway-", g);
}

absl::Status CheckSimPlan(const SimPlan& plan) {
  const int n = ClientCount(plan);
  if (n < 1 || plan.server.rounds.rounds < 1) {
    return absl::InvalidArgumentError("--clients and --rounds must be >= 1");
  }
  if (plan.fleet.attackers < 0 || plan.fleet.attackers > n) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--attackers must be between 0 and the number of clients (%d)", n));
  }
  const int tiers = plan.tiers.tiers;
  const int gateways = GatewayCount(plan);
  if (tiers < 1 || tiers > 2 ||
      (tiers == 2 && (gateways < 1 || gateways > n))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--tiers is 1 or 2, and --gateways between 1 and the number of "
        "clients (%d)",
        n));
  }
  if (tiers == 1 && HasSiteMode(plan)) {
    return absl::InvalidArgumentError(
        "--site_mode and --site_async_buffer set the site gateways' rounds: "
        "they need --tiers=2");
  }
  if (tiers == 2 && (plan.transport.tls || !plan.fleet.boards.empty())) {
    return absl::InvalidArgumentError(
        "--tiers=2 runs on loopback without TLS or a fleet profile");
  }
  return absl::OkStatus();
}

}  // namespace fedberry::sim
