// JSON records as text (rounds.jsonl, clients.jsonl, the federation
// checkpoint's state.json, /healthz): nlohmann's writer throws on a string
// that is not valid UTF-8, and a record holds strings boards sent. Every
// writer of such a record goes through JsonText, which writes each invalid
// byte as U+FFFD instead, so no byte string a board sends can abort the
// server or lose a record.
// Thread-safety: pure functions.
#ifndef FEDBERRY_SERVER_JSON_TEXT_H_
#define FEDBERRY_SERVER_JSON_TEXT_H_

#include <nlohmann/json.hpp>
#include <string>

namespace fedberry::server {

// `j` as text, indented by `indent` spaces a level (-1: one line).
std::string JsonText(const nlohmann::json& j, int indent = -1);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_JSON_TEXT_H_
