// Who may join, decided before a board is registered: a board whose data
// does not fit the job's plan, a client older than the job's minimum
// release, a site gateway --site_gateways does not name, and a join the
// round budget refuses (a site gateway under differential privacy) are
// turned away. Each refusal is logged, told to
// the refused-board sink (clients.jsonl) where the board should hear of it
// again, and kept for the fleet page.
// Thread-safety: thread-safe (its parts are; the budget's Refuses is
// const).
#ifndef FEDBERRY_SERVER_ROUND_JOIN_GATE_H_
#define FEDBERRY_SERVER_ROUND_JOIN_GATE_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "base/clock.h"
#include "fedberry/v1/federation.pb.h"
#include "server/fleet/refused_joins.h"
#include "server/fleet/site_gateways.h"
#include "server/fleet/version_gate.h"
#include "server/round/round_budget.h"

namespace fedberry::server {

using RefusedBoardSink =
    std::function<void(const std::string& name, const std::string& reason)>;

class JoinGate {
 public:
  // `budget` may be null; `refused_sink` may be empty. The rest must
  // outlive the gate.
  JoinGate(VersionGate versions, SiteGateways gateways,
           RefusedBoardSink refused_sink, const RoundBudget* budget,
           RefusedJoins& refused, Clock& clock)
      : versions_(std::move(versions)),
        gateways_(std::move(gateways)),
        refused_sink_(std::move(refused_sink)),
        budget_(budget),
        refused_(refused),
        clock_(clock) {}

  // OK: the board may register (and any earlier refusal of its name is
  // forgotten). Otherwise FailedPrecondition saying why; an old client's
  // carries wire::kReasonClientTooOld.
  absl::Status Admit(const v1::JoinRequest& request);

  const VersionGate& versions() const { return versions_; }

 private:
  absl::Status Refusal(const v1::JoinRequest& request) const;

  const VersionGate versions_;
  const SiteGateways gateways_;
  const RefusedBoardSink refused_sink_;
  const RoundBudget* const budget_;
  RefusedJoins& refused_;
  Clock& clock_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_JOIN_GATE_H_
