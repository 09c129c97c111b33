// Wires the memory-pressure watchdog (runtime/watchdog.h) into local
// training. Poll() takes one set of readings and steps the state machine; a
// PeriodicSampler calls it every poll interval on its own thread. The
// trainer calls AtBatchBoundary() between batches: under soft pressure the
// next batch is split into micro-batches; when the watchdog pauses, the
// trainer blocks at the boundary after returning freed heap to the OS
// (malloc_trim), until the watchdog resumes it or releases. Every
// transition is logged (with the readings) and counted; a long pause is
// logged again every report interval, so it never waits silently.
//
// A paused trainer holds its model, optimizer and data but allocates
// nothing more: pausing stops growth and frees only what malloc_trim can
// give back. Only the release path (checkpoint, then exit or a CRIU dump to
// disk) frees the process's memory. After a CRIU restore the same process
// trains on from the boundary where it was dumped.
// Thread-safety: thread-safe.
#ifndef FEDBERRY_CLIENT_WATCHDOG_GATE_H_
#define FEDBERRY_CLIENT_WATCHDOG_GATE_H_

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "client/training_gate.h"
#include "runtime/memory_readings.h"
#include "runtime/watchdog.h"

namespace fedberry::client {

struct WatchdogGateHooks {
  // Returns freed heap to the OS when training pauses; default malloc_trim.
  std::function<void()> trim;
  // Called (on the polling thread) when training pauses or resumes, and on
  // every "still paused" report, e.g. to tell the server in a heartbeat.
  std::function<void(bool paused, absl::Duration paused_for)> on_pause;
  // Called (on the training thread) once training is checkpointed for a
  // release, before the process exits or is dumped, e.g. to tell the
  // server that this board is away until its supervisor restarts it.
  std::function<void()> on_release;
  // Set when a release is a CRIU dump of this process (see
  // client/criu_signals.h): asks for the dump once training is
  // checkpointed; returns OK after the restore, or why there was none.
  std::function<absl::Status()> dump;
};

class WatchdogGate : public TrainingGate {
 public:
  // `read` takes one set of readings (e.g. MemoryReader::Read). `clock`
  // must outlive the gate.
  WatchdogGate(runtime::WatchdogOptions options,
               std::function<runtime::MemoryReadings()> read, Clock& clock,
               WatchdogGateHooks hooks = {});

  // One reading and state-machine step; logs and acts on its events.
  void Poll();

  int micro_batches() override;
  absl::Status AtBatchBoundary(const std::atomic<bool>& stop) override;
  // With a dump hook: the dump, then RUNNING again after the restore.
  absl::Status Release(absl::Status release) override;
  // Under memory pressure (training paused, shrunk or released): why.
  std::string BusyReason() override;

  runtime::WatchdogState state() const;
  runtime::WatchdogCounters counters() const;
  // When memory pressure last held training paused (or released): now
  // while it does, else when the last pause ended (by the gate's clock);
  // nullopt: never. For the board's cool-down (client/eligibility.h).
  std::optional<absl::Time> LastPaused() const;
  // Times the trainer has waited at a boundary, and whether it waits now.
  int boundary_waits() const;
  bool trainer_waiting() const;

 private:
  const std::function<runtime::MemoryReadings()> read_;
  Clock& clock_;
  WatchdogGateHooks hooks_;
  mutable absl::Mutex mu_;
  absl::CondVar changed_;
  runtime::Watchdog watchdog_ ABSL_GUARDED_BY(mu_);
  std::string release_reason_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Time> pause_ended_ ABSL_GUARDED_BY(mu_);
  int boundary_waits_ ABSL_GUARDED_BY(mu_) = 0;
  bool trainer_waiting_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_WATCHDOG_GATE_H_
