#include "server/json_number.h"

#include <cmath>
#include <limits>
#include <string>

namespace fedberry::server {

nlohmann::json Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

double ReadNumber(const nlohmann::json& j) {
  if (j.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    // Any other string: get<double>() throws the usual type error.
  }
  return j.get<double>();
}

}  // namespace fedberry::server
