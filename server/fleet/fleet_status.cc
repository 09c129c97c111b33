#include "server/fleet/fleet_status.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/log_text.h"
#include "nlohmann/json.hpp"
#include "server/svg_chart.h"

namespace fedberry::server {
namespace {

std::string Rfc3339(absl::Time t) {
  if (t == absl::InfinitePast()) return "";
  return absl::FormatTime(absl::RFC3339_sec, t, absl::UTCTimeZone());
}

nlohmann::json ConditionJson(const v1::BoardCondition& c) {
  nlohmann::json j = nlohmann::json::object();
  if (!c.declined().empty()) {
    j["declined"] = base::ValidUtf8(c.declined(), kShownTextBytes);
  }
  if (c.has_soc_celsius()) j["soc_celsius"] = c.soc_celsius();
  if (c.has_throttled()) j["throttled"] = c.throttled();
  if (c.has_memory_pressure()) j["memory_pressure"] = c.memory_pressure();
  return j;
}

nlohmann::json BoardJson(const BoardRow& b, absl::Time now) {
  nlohmann::json j = {
      {"name", base::ValidUtf8(b.name, kShownNameBytes)},
      {"state", BoardStateName(b.state)},
      {"last_seen", Rfc3339(b.last_seen)},
      {"round", b.round},
      {"client_version", base::ValidUtf8(b.client_version, kShownVersionBytes)},
      {"architecture", base::ValidUtf8(b.architecture, kShownTextBytes)}};
  if (b.last_seen != absl::InfinitePast()) {
    j["seconds_since_seen"] = absl::ToDoubleSeconds(now - b.last_seen);
  }
  if (b.steps_planned > 0) {
    j["steps_done"] = b.steps_done;
    j["steps_planned"] = b.steps_planned;
  }
  if (b.boards > 0) j["boards"] = b.boards;
  j["condition"] = ConditionJson(b.condition);
  if (!b.last_refusal.empty()) {
    j["last_refusal"] = base::ValidUtf8(b.last_refusal, kShownTextBytes);
  }
  if (b.samples_per_second) j["samples_per_second"] = *b.samples_per_second;
  if (b.peak_rss_bytes) j["peak_rss_bytes"] = *b.peak_rss_bytes;
  if (b.watchdog_pauses) j["watchdog_pauses"] = *b.watchdog_pauses;
  return j;
}

nlohmann::json SecAggJson(const FleetSecAgg& s) {
  return {{"round", s.round},
          {"secagg_neighbours", s.neighbours},
          {"secagg_threshold", s.threshold},
          {"secagg_boards_started", s.started},
          {"secagg_boards_survived", s.survived},
          {"secagg_dropped_by_stage", s.dropped_by_stage},
          {"secagg_seconds_by_stage", s.seconds_by_stage},
          {"secagg_bytes_up", s.bytes_up}};
}

}  // namespace

std::string FleetJson(const FleetStatus& fleet) {
  nlohmann::json accuracy = nlohmann::json::array();
  for (const auto& [round, acc] : fleet.accuracy) {
    accuracy.push_back({{"round", round}, {"accuracy", acc}});
  }
  nlohmann::json boards = nlohmann::json::array();
  for (const BoardRow& b : fleet.boards)
    boards.push_back(BoardJson(b, fleet.now));
  nlohmann::json j = {{"time", Rfc3339(fleet.now)},
                      {"job_id", fleet.job_id},
                      {"model", fleet.model},
                      {"strategy", fleet.strategy},
                      {"state", fleet.state},
                      {"round", fleet.round},
                      {"total_rounds", fleet.total_rounds},
                      {"min_client_version", fleet.min_client_version},
                      {"accuracy", std::move(accuracy)},
                      {"boards", std::move(boards)}};
  if (fleet.secagg) j["secagg"] = SecAggJson(*fleet.secagg);
  // Text from a board that is not UTF-8 is replaced rather than failing
  // the whole answer.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace fedberry::server
