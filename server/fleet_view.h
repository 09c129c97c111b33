// The fleet as the live page shows it, gathered at request time from the
// round coordinator (boards, rounds, accuracy so far) and the server's
// metrics (each board's latest resource figures).
// Thread-safety: thread-safe (the parts are).
#ifndef FEDBERRY_SERVER_FLEET_VIEW_H_
#define FEDBERRY_SERVER_FLEET_VIEW_H_

#include <string>

#include "absl/time/time.h"
#include "server/fleet/fleet_status.h"

namespace fedberry::server {

class RoundCoordinator;
class ServerMetrics;

// What the page says of the job that the coordinator does not know.
struct FleetJob {
  std::string job_id;
  std::string model;
  std::string strategy;
};

FleetStatus FleetOf(const RoundCoordinator& coordinator,
                    const ServerMetrics& metrics, const FleetJob& job,
                    absl::Time now);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_FLEET_VIEW_H_
