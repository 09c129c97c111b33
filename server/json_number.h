// Doubles in JSON records (the federation checkpoint, the privacy budget):
// JSON has no NaN or Infinity, and nlohmann writes them as null, which a
// reader expecting a number refuses. Numbers that are not finite are
// written as protobuf's JSON mapping does ("NaN", "Infinity",
// "-Infinity"), and read back from those strings or from null (what older
// checkpoints hold), so every record the writer can write reads back.
// Thread-safety: pure functions.
#ifndef FEDBERRY_SERVER_JSON_NUMBER_H_
#define FEDBERRY_SERVER_JSON_NUMBER_H_

#include <nlohmann/json.hpp>

namespace fedberry::server {

nlohmann::json Number(double v);

// Throws nlohmann::json::type_error for a value that is neither a number,
// null, nor one of the three strings.
double ReadNumber(const nlohmann::json& j);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_JSON_NUMBER_H_
