#include "server/json_text.h"

namespace fedberry::server {

std::string JsonText(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false,
                nlohmann::json::error_handler_t::replace);
}

}  // namespace fedberry::server
