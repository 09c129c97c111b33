// The JSON records of a federation checkpoint's state.json
// (server/federation_checkpoint.h) that are more than a few fields: a closed
// round's report (its summary: per-board entries live in clients.jsonl), the
// planners' capacity histories, and proto messages (the training plan, a
// board's resources and device) embedded as JSON objects. Non-finite
// numbers go through server/json_number.h, so they read back as written.
// Thread-safety: pure functions.
#ifndef FEDBERRY_SERVER_FEDERATION_STATE_JSON_H_
#define FEDBERRY_SERVER_FEDERATION_STATE_JSON_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "google/protobuf/message.h"
#include "server/planner/capacity_estimator.h"
#include "server/round/round_types.h"

namespace fedberry::server {

// `m` in protobuf's JSON form (absent fields stay absent); null when it
// cannot be printed.
nlohmann::json ProtoToJson(const google::protobuf::Message& m);
// Reads `j[key]` into `m` when present, skipping fields this build does not
// know; a value that does not parse is ignored.
void ProtoFromJson(const nlohmann::json& j, const char* key,
                   google::protobuf::Message* m);

nlohmann::json RoundReportToJson(const RoundReport& r);
// Fields later builds added may be absent (they read as zero or empty).
// Throws nlohmann::json::exception when a field every build wrote is
// missing or of another type (the caller turns it into DataLoss).
RoundReport RoundReportFromJson(const nlohmann::json& j);

// Per board name. CapacitiesFromJson throws as RoundReportFromJson does.
nlohmann::json CapacitiesToJson(
    const std::map<std::string, planner::CapacityHistory>& capacities);
std::map<std::string, planner::CapacityHistory> CapacitiesFromJson(
    const nlohmann::json& j);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_FEDERATION_STATE_JSON_H_
