// FleetPage: the fleet as one HTML page, drawn on the server so it needs
// no script: a gateway without internet serves it whole, and board-given
// text can only ever be text (XmlEscape), never markup.
#include <map>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/log_text.h"
#include "secagg/session_messages.h"
#include "server/fleet/fleet_status.h"
#include "server/svg_chart.h"

namespace fedberry::server {
namespace {

// A page a browser draws quickly; a 10,000-board gateway's full list is
// in the JSON. Rows also stop at kMaxRowBytes, so rows of hostile-sized
// texts (a few kilobytes each once cut) cannot make it megabytes.
constexpr size_t kMaxRows = 1000;
constexpr size_t kMaxRowBytes = 512 << 10;

constexpr char kStyle[] = R"css(
body{font-family:sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em;margin:0 0 .3em}
.job span{margin-right:1.5em}
table{border-collapse:collapse;margin-top:1em;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f0f0f0}
td.num{text-align:right}
.state-training,.state-evaluating{color:#1f6f1f;font-weight:bold}
.state-paused,.state-released,.state-declined{color:#a06000;font-weight:bold}
.state-refused,.state-gone{color:#b00020;font-weight:bold}
footer{margin-top:1em;color:#666;font-size:.8em}
)css";

// A board's text as page text: valid UTF-8 of at most `max_bytes`, each
// control character (a newline, an ANSI escape) shown as U+FFFD, so a
// page saved or fetched into a terminal or a log carries none, then
// escaped so it can only ever be text.
std::string Text(const std::string& text, size_t max_bytes) {
  std::string shown;
  for (char c : base::ValidUtf8(text, max_bytes)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      shown += "\xEF\xBF\xBD";
    } else {
      shown += c;
    }
  }
  return XmlEscape(shown);
}

std::string Ago(const BoardRow& b, absl::Time now) {
  if (b.last_seen == absl::InfinitePast()) return "never";
  const int64_t s = absl::ToInt64Seconds(now - b.last_seen);
  if (s < 1) return "just now";
  if (s < 120) return absl::StrCat(s, " s ago");
  if (s < 7200) return absl::StrCat(s / 60, " min ago");
  return absl::StrCat(s / 3600, " h ago");
}

std::string Progress(const BoardRow& b) {
  if (b.steps_planned == 0) return "";
  const double pct = 100.0 * static_cast<double>(b.steps_done) /
                     static_cast<double>(b.steps_planned);
  return absl::StrFormat("%d/%d steps (%.0f%%)", b.steps_done, b.steps_planned,
                         pct);
}

std::string Memory(const BoardRow& b) {
  std::string s;
  if (b.peak_rss_bytes) {
    s = absl::StrFormat("peak %.0f MiB", *b.peak_rss_bytes / 1048576.0);
  }
  if (b.condition.has_memory_pressure() && b.condition.memory_pressure()) {
    absl::StrAppend(&s, s.empty() ? "" : ", ", "under pressure");
  }
  if (b.watchdog_pauses && *b.watchdog_pauses > 0) {
    absl::StrAppend(&s, s.empty() ? "" : ", ", *b.watchdog_pauses, " pauses");
  }
  return s;
}

std::string Heat(const BoardRow& b) {
  std::string s;
  if (b.condition.has_soc_celsius()) {
    s = absl::StrFormat("%.1f &deg;C", b.condition.soc_celsius());
  }
  if (b.condition.has_throttled() && b.condition.throttled() != 0) {
    absl::StrAppend(&s, s.empty() ? "" : ", ",
                    absl::StrFormat("throttled 0x%x", b.condition.throttled()));
  }
  return s;
}

// Why it is not training: its decline, else its last refusal.
std::string Why(const BoardRow& b) {
  if (!b.condition.declined().empty()) {
    return absl::StrCat("declines: ", b.condition.declined());
  }
  return b.last_refusal;
}

std::string Row(const BoardRow& b, absl::Time now) {
  const std::string state = BoardStateName(b.state);
  const std::string name = Text(b.name, kShownNameBytes);
  std::string shown_name = name;
  if (b.boards > 0) {
    absl::StrAppend(&shown_name, " (gateway, ", b.boards, " boards)");
  }
  const std::string rate = b.samples_per_second
                               ? absl::StrFormat("%.1f", *b.samples_per_second)
                               : "";
  return absl::StrCat(
      "<tr data-board=\"", name, "\" data-state=\"", state, "\"><td>",
      shown_name, "</td><td class=\"state-", state, "\">", state, "</td><td>",
      Ago(b, now), "</td><td class=\"num\">",
      b.round > 0 ? absl::StrCat(b.round) : "", "</td><td>", Progress(b),
      "</td><td class=\"num\">", rate, "</td><td>", Memory(b), "</td><td>",
      Heat(b), "</td><td>", Text(b.client_version, kShownVersionBytes),
      "</td><td>", Text(b.architecture, kShownTextBytes),
      "</td><td class=\"why\">", Text(Why(b), kShownTextBytes), "</td></tr>\n");
}

// The rows that fit, by name, and a line saying how many did not.
std::string Rows(const FleetStatus& fleet) {
  std::string rows;
  size_t shown = 0;
  for (const BoardRow& b : fleet.boards) {
    if (shown == kMaxRows) break;
    std::string row = Row(b, fleet.now);
    if (rows.size() + row.size() > kMaxRowBytes) break;
    rows += row;
    ++shown;
  }
  absl::StrAppend(&rows, "</tbody></table>\n");
  if (shown < fleet.boards.size()) {
    absl::StrAppend(&rows, "<p id=\"rows-cut\">", shown, " of ",
                    fleet.boards.size(),
                    " boards shown (by name); every board is in "
                    "/api/fleet.json</p>\n");
  }
  return rows;
}

std::string Counts(const FleetStatus& fleet) {
  std::map<std::string, int> by_state;
  for (const BoardRow& b : fleet.boards) ++by_state[BoardStateName(b.state)];
  std::vector<std::string> parts;
  for (const auto& [state, n] : by_state) {
    parts.push_back(absl::StrCat(n, " ", state));
  }
  return parts.empty() ? "no boards yet" : absl::StrJoin(parts, ", ");
}

std::string Job(const FleetStatus& fleet) {
  std::string round = absl::StrCat(fleet.round);
  if (fleet.total_rounds > 0)
    absl::StrAppend(&round, " of ", fleet.total_rounds);
  std::string s =
      absl::StrCat("<p class=\"job\"><span>job <b>", XmlEscape(fleet.job_id),
                   "</b></span><span>model <b>", XmlEscape(fleet.model),
                   "</b></span><span>strategy <b>", XmlEscape(fleet.strategy),
                   "</b></span><span>round <b id=\"round\">", round,
                   "</b></span><span>state <b id=\"job-state\">",
                   XmlEscape(fleet.state), "</b></span>");
  if (!fleet.min_client_version.empty()) {
    absl::StrAppend(&s, "<span>minimum client <b>",
                    XmlEscape(fleet.min_client_version), "</b></span>");
  }
  absl::StrAppend(&s, "</p>\n<p id=\"board-counts\">", fleet.boards.size(),
                  " boards: ", Counts(fleet), "</p>\n");
  return s;
}

std::string AccuracyChart(const FleetStatus& fleet) {
  ChartOptions options;
  options.title = "Test accuracy by round";
  options.x_label = "round";
  options.y_label = "accuracy";
  options.height = 220;
  options.empty_message = "no round evaluated yet";
  Series series{"accuracy", {}};
  for (const auto& [round, acc] : fleet.accuracy) {
    series.points.emplace_back(static_cast<double>(round), acc);
  }
  return LineChart(options, {series});
}

// The last secure-aggregation session, a line and a small table by stage.
std::string SecAggPart(const std::optional<FleetSecAgg>& secagg) {
  if (!secagg) return "";
  const FleetSecAgg& s = *secagg;
  std::string part = absl::StrFormat(
      "<div id=\"secagg\"><p>Secure aggregation, round %d: <b "
      "id=\"secagg-counted\">%d of %d</b> boards' updates counted "
      "(%d neighbours each, threshold %d), %.1f MiB up</p>\n"
      "<table><thead><tr><th>Stage</th><th>Dropped</th><th>Seconds</th>"
      "</tr></thead><tbody>\n",
      s.round, s.survived, s.started, s.neighbours, s.threshold,
      static_cast<double>(s.bytes_up) / 1048576.0);
  for (int i = 0; i < secagg::kStageCount; ++i) {
    absl::StrAppend(
        &part, absl::StrFormat("<tr><td>%s</td><td class=\"num\">%d</td>"
                               "<td class=\"num\">%.2f</td></tr>\n",
                               secagg::StageName(static_cast<secagg::Stage>(i)),
                               s.dropped_by_stage[i], s.seconds_by_stage[i]));
  }
  return part + "</tbody></table></div>\n";
}

}  // namespace

std::string FleetPage(const FleetStatus& fleet, int refresh_seconds) {
  std::string page = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"refresh\" content=\"",
      refresh_seconds, "\"><title>fedberry fleet</title><style>", kStyle,
      "</style></head>\n<body><h1>fedberry fleet</h1>\n", Job(fleet),
      "<div id=\"accuracy\">", AccuracyChart(fleet), "</div>\n",
      SecAggPart(fleet.secagg),
      "<table id=\"boards\"><thead><tr><th>Board</th><th>State</th>"
      "<th>Last seen</th><th>Round</th><th>Progress</th><th>Samples/s</th>"
      "<th>Memory</th><th>SoC</th><th>Client</th><th>Arch</th>"
      "<th>Why not training</th></tr></thead><tbody>\n");
  absl::StrAppend(&page, Rows(fleet));
  absl::StrAppend(
      &page, "<footer>",
      absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", fleet.now, absl::UTCTimeZone()),
      "; reloads every ", refresh_seconds,
      " s; the same data for scripts: "
      "<a href=\"/api/fleet.json\">/api/fleet.json</a>; "
      "Prometheus: <a href=\"/metrics\">/metrics</a></footer>\n"
      "</body></html>\n");
  return page;
}

}  // namespace fedberry::server
