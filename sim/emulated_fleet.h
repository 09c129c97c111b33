// Emulated boards for load tests of one server: each speaks the real
// protocol over its own connection (Join, long-polled GetTask, PullModel,
// PushUpdate) but trains nothing: it sends the model it pulled back as its
// update. Thousands run in one process on gRPC's callback API, so the
// generator needs neither a thread nor a model copy per board (boards of
// one task share the pulled model).
// Thread-safe: Run() once; the boards run on gRPC's callback threads.
#ifndef FEDBERRY_SIM_EMULATED_FLEET_H_
#define FEDBERRY_SIM_EMULATED_FLEET_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/clock.h"

namespace fedberry::sim {

struct FleetOptions {
  std::string server;  // host:port
  int boards = 100;
  std::string name_prefix = "load";
  uint64_t num_samples = 100;  // declared at join; the update's weight
  absl::Duration poll_deadline = absl::Seconds(15);
  absl::Duration rpc_deadline = absl::Seconds(60);
  // A board that fails (any refusal but "busy", or no server) for this long
  // gives up; the fleet then ends with an error.
  absl::Duration give_up_after = absl::Minutes(2);
  // Progress every this often on stderr; zero: none.
  absl::Duration progress = absl::Seconds(5);
  // Retries, re-polls, give-up, progress and the report's wall time are on
  // it (RPC deadlines are gRPC's real time). Must outlive the run.
  Clock* clock = &Clock::Real();
};

struct FleetReport {
  int boards = 0;
  int joined = 0;
  int heard_done = 0;  // boards that were told the job is DONE
  int gave_up = 0;
  uint64_t polls = 0;
  uint64_t pulls = 0;
  uint64_t pull_busy_refusals = 0;  // RESOURCE_EXHAUSTED pulls, retried
  uint64_t pushes = 0;              // accepted
  uint64_t busy_refusals = 0;       // RESOURCE_EXHAUSTED, retried
  uint64_t other_refusals = 0;
  uint64_t bytes_pushed = 0;
  absl::Duration wall;
  std::string Describe() const;
};

// Runs the fleet until every board heard DONE or gave up.
// InvalidArgument for bad options.
absl::StatusOr<FleetReport> RunEmulatedFleet(const FleetOptions& options);

}  // namespace fedberry::sim

#endif  // FEDBERRY_SIM_EMULATED_FLEET_H_
