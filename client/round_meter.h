// Collects what one training round costs the client and turns it into the
// ResourceMetrics sent with the update: the ResourceMonitor's /proc readings
// plus the RPC payload bytes the agent counts as it sends and receives. Also
// turns the board's DeviceFacts into the DeviceInfo sent at join.
//
// With a watchdog source set, the round's memory-pressure pauses and time
// paused are reported too (else they stay absent).
// Thread-safety: not thread-safe; the agent's thread uses it.
#ifndef FEDBERRY_CLIENT_ROUND_METER_H_
#define FEDBERRY_CLIENT_ROUND_METER_H_

#include <cstdint>
#include <functional>
#include <utility>

#include "fedberry/v1/federation.pb.h"
#include "runtime/device_facts.h"
#include "runtime/resource_monitor.h"

namespace fedberry::client {

class RoundMeter {
 public:
  // `monitor` may be null (no /proc readings: only RPC bytes and
  // throughput are reported); it must outlive the meter.
  explicit RoundMeter(runtime::ResourceMonitor* monitor) : monitor_(monitor) {}

  // Starts a round whose task poll sent and received these bytes.
  void Begin(uint64_t task_sent_bytes, uint64_t task_received_bytes);
  // The watchdog's running totals (pauses, seconds paused); the meter
  // reports their change over each round.
  void SetWatchdog(std::function<std::pair<uint32_t, double>()> totals) {
    watchdog_ = std::move(totals);
  }
  void AddSent(uint64_t bytes) { sent_ += bytes; }
  void AddReceived(uint64_t bytes) { received_ += bytes; }
  // Ends the round after training `samples` samples in `train_seconds`.
  v1::ResourceMetrics Finish(uint64_t samples, double train_seconds);

 private:
  runtime::ResourceMonitor* monitor_;
  uint64_t sent_ = 0;
  uint64_t received_ = 0;
  std::function<std::pair<uint32_t, double>()> watchdog_;
  std::pair<uint32_t, double> watchdog_at_begin_;
};

// The wire form of the board's facts.
v1::DeviceInfo ToDeviceInfo(const runtime::DeviceFacts& facts);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_ROUND_METER_H_
