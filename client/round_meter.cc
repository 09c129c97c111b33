#include "client/round_meter.h"

#include <spdlog/spdlog.h>

#include "absl/strings/str_join.h"

namespace fedberry::client {

void RoundMeter::Begin(uint64_t task_sent_bytes, uint64_t task_received_bytes) {
  sent_ = task_sent_bytes;
  received_ = task_received_bytes;
  if (monitor_ != nullptr) monitor_->BeginRound();
  if (watchdog_) watchdog_at_begin_ = watchdog_();
}

v1::ResourceMetrics RoundMeter::Finish(uint64_t samples, double train_seconds) {
  v1::ResourceMetrics m;
  m.set_rpc_sent_bytes(sent_);
  m.set_rpc_received_bytes(received_);
  if (train_seconds > 0 && samples > 0) {
    m.set_samples_per_second(static_cast<double>(samples) / train_seconds);
  }
  if (watchdog_) {
    const auto [pauses, paused] = watchdog_();
    m.set_watchdog_pauses(pauses - watchdog_at_begin_.first);
    m.set_paused_seconds(paused - watchdog_at_begin_.second);
  }
  if (monitor_ == nullptr) return m;
  runtime::RoundResources r = monitor_->EndRound();
  if (!r.problems.empty()) {
    spdlog::debug("some resource readings are unavailable: {}",
                  absl::StrJoin(r.problems, "; "));
  }
  m.set_wall_seconds(r.wall_seconds);
  if (r.cpu_seconds) m.set_cpu_seconds(*r.cpu_seconds);
  if (r.cpu_utilization) m.set_cpu_utilization(*r.cpu_utilization);
  if (r.rss_bytes) m.set_rss_bytes(*r.rss_bytes);
  if (r.peak_rss_bytes) m.set_peak_rss_bytes(*r.peak_rss_bytes);
  if (r.round_peak_rss_bytes) {
    m.set_round_peak_rss_bytes(*r.round_peak_rss_bytes);
  }
  if (r.interface_rx_bytes) m.set_interface_rx_bytes(*r.interface_rx_bytes);
  if (r.interface_tx_bytes) m.set_interface_tx_bytes(*r.interface_tx_bytes);
  m.set_resource_samples(static_cast<uint32_t>(r.samples));
  return m;
}

v1::DeviceInfo ToDeviceInfo(const runtime::DeviceFacts& facts) {
  v1::DeviceInfo info;
  info.set_hostname(facts.hostname);
  info.set_architecture(facts.architecture);
  info.set_cores(facts.cores);
  if (facts.total_memory_bytes) {
    info.set_total_memory_bytes(*facts.total_memory_bytes);
  }
  if (facts.cpu_model) info.set_cpu_model(*facts.cpu_model);
  info.set_kernel(facts.kernel);
  if (facts.os) info.set_os(*facts.os);
  return info;
}

}  // namespace fedberry::client
