// The fleet at one moment, as an operator sees it: the job's figures and a
// row per board (registered, or refused at the door), and its two
// renderings: /api/fleet.json for scripts and the self-refreshing page at
// /. Nothing secret is in it: no keys, ids or model bytes; every text that
// came from a board is escaped (HTML) or JSON-encoded.
// Thread-safety: values and pure functions, thread-safe.
#ifndef FEDBERRY_SERVER_FLEET_FLEET_STATUS_H_
#define FEDBERRY_SERVER_FLEET_FLEET_STATUS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "fedberry/v1/federation.pb.h"
#include "server/fleet/board_state.h"

namespace fedberry::server {

// The most of each board-given text a row keeps or shows, in bytes of
// valid UTF-8 cut on a character boundary: its name (CheckJoin allows no
// more), its client version, and any other text (architecture, a decline,
// a refusal). With them a row costs the page and the JSON a few kilobytes
// at most, whatever a board sent.
inline constexpr size_t kShownNameBytes = 128;
inline constexpr size_t kShownVersionBytes = 64;
inline constexpr size_t kShownTextBytes = 512;

struct BoardRow {
  std::string name;
  BoardState state = BoardState::kIdle;
  absl::Time last_seen = absl::InfinitePast();
  // The open round it trains, else the last round it delivered to (0:
  // none yet).
  uint64_t round = 0;
  uint64_t steps_done = 0;  // of the training it reports (0 planned: unknown)
  uint64_t steps_planned = 0;
  std::string client_version;  // empty: did not say (older than 0.1.0)
  std::string architecture;
  uint32_t boards = 0;  // a site gateway's boards; 0 for a board
  // Its last task poll's readings and, when declining, why.
  v1::BoardCondition condition;
  std::string last_refusal;  // why it was last refused; empty: never
  // From its latest update's resource figures (absent until one came).
  std::optional<double> samples_per_second;
  std::optional<uint64_t> peak_rss_bytes;
  std::optional<uint32_t> watchdog_pauses;
};

// The last securely aggregated round's session (--secure_aggregation):
// rounds.jsonl's secagg_* figures of the newest round that has them.
struct FleetSecAgg {
  uint64_t round = 0;
  int neighbours = 0;  // K
  int threshold = 0;   // t
  int started = 0;
  int survived = 0;  // the boards whose inputs the sum counted
  // In stage order: advertise keys, share keys, masked input, unmask.
  std::array<int, 4> dropped_by_stage{};
  std::array<double, 4> seconds_by_stage{};
  uint64_t bytes_up = 0;
};

struct FleetStatus {
  absl::Time now = absl::InfinitePast();
  std::string job_id;
  std::string model;
  std::string strategy;
  std::string state;  // "waiting for boards", "training", "done", ...
  uint64_t round = 0;
  uint32_t total_rounds = 0;
  std::string min_client_version;  // empty: no gate
  // The test accuracy of each published round that was evaluated.
  std::vector<std::pair<uint64_t, double>> accuracy;
  std::vector<BoardRow> boards;       // by name
  std::optional<FleetSecAgg> secagg;  // absent: no such round yet
};

// The JSON object of /api/fleet.json: the job's figures and `boards`,
// each with at least name, state, last_seen (RFC 3339) and round; every
// board, each text cut to its kShown* bound; under secure aggregation,
// `secagg` with the last session's figures under their rounds.jsonl names.
std::string FleetJson(const FleetStatus& fleet);

// The page at /: self-contained HTML (inline style and SVG, no script, no
// external asset) that reloads itself every `refresh_seconds`. Its rows
// show each text cut to its kShown* bound, control characters as U+FFFD,
// and stop at 1,000 rows or 512 KiB of rows, saying how many it left out
// (they are all in the JSON).
std::string FleetPage(const FleetStatus& fleet, int refresh_seconds = 5);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_FLEET_FLEET_STATUS_H_
