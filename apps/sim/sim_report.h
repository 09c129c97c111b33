// What fedberry-sim shows of a job: the servers' JSON lines read back, each
// round's figures, the per-round table and the per-client resource table,
// printed to stdout in the columns tests and scripts read (tests/e2e,
// scripts/sim.sh, bench/sim_summary.py).
// Thread-safety: functions without shared state; they print to stdout.
#ifndef FEDBERRY_APPS_SIM_SIM_REPORT_H_
#define FEDBERRY_APPS_SIM_SIM_REPORT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fedberry::sim {

// The lines of a JSON-lines file that parse (none when it cannot be read:
// the server may not have written it yet).
std::vector<nlohmann::json> ReadJsonLines(const std::string& path);

// `key`'s number in `j`, or -1 when it has none.
double JsonNumber(const nlohmann::json& j, const char* key);

// A round's evaluation figures: "test accuracy 0.8123, loss 0.5310" (or
// RMSE), then "boards' accuracy 0.8011" when the boards evaluated it;
// "no evaluation" when neither did.
std::string RoundFigures(const nlohmann::json& round);

// The per-round table of rounds.jsonl's lines.
void PrintRoundTable(const std::vector<nlohmann::json>& rounds);

// Per client over the job in `output_dir`: mean CPU, peak RSS, RPC bytes,
// throughput, as the clients measured them ("-": a reading the board could
// not take). Nothing when the job record has no clients.
void PrintClientTable(const std::string& output_dir);

}  // namespace fedberry::sim

#endif  // FEDBERRY_APPS_SIM_SIM_REPORT_H_
