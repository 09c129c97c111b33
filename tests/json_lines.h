// Reads a JSON-lines file (rounds.jsonl, clients.jsonl) for the tests.
#ifndef FEDBERRY_TESTS_JSON_LINES_H_
#define FEDBERRY_TESTS_JSON_LINES_H_

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fedberry::testing {

// Each non-empty line of `path` parsed; none when it cannot be read.
inline std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

}  // namespace fedberry::testing

#endif  // FEDBERRY_TESTS_JSON_LINES_H_
